#!/usr/bin/env python3
"""PyTorch-BigGraph config: S2ORC citation graph, 128-d dot-product embeddings
(dimension ablation, paper Table 4 / thesis Table 6).

Paper settings (SciNCL §4 "Citation embeddings", Appendix; thesis Table 6): dot comparator,
margin 0.15, learning rate 0.1, 20 epochs; this ablation changes only the dimension to 128.
Batch size / edge chunks / no uniform negatives follow PBG's Twitter-scale config
(github.com/facebookresearch/PyTorch-BigGraph/issues/86), as the original SciNCL configs do.

Data paths come from the environment (defaults = the original README layout) and can be
overridden with ``-p key=value``:

    BIGGRAPH_DATA_DIR         entity_path; edge_paths = DIR/train_partitioned, DIR/test_partitioned
    BIGGRAPH_CHECKPOINT_PATH  checkpoint_path (the trained embeddings end up here)

    torchbiggraph_import_from_tsv --lhs-col=0 --rhs-col=1 $CONFIG citations.train.tsv citations.test.tsv
    torchbiggraph_train $CONFIG -p edge_paths=$BIGGRAPH_DATA_DIR/train_partitioned
    torchbiggraph_eval  $CONFIG -p edge_paths=$BIGGRAPH_DATA_DIR/test_partitioned
    # or all three + export + metrics table in one go:
    python cli_graph.py train_biggraph $CONFIG --train_edges citations.train.tsv --test_edges citations.test.tsv

Scale-out knobs (see s2orc_full.py for a multi-machine example): entities.paper_id.num_partitions,
num_edge_chunks, workers, num_machines + distributed_init_method. One partition holds every
embedding in RAM (52.6M x dimension floats); ``embed_graph --method pbg --config THIS --memory_limit 32GB``
sets ``entities.paper_id.num_partitions`` to the fewest whose two held partitions (lhs + rhs) plus
PBG's buffers fit, from measured costs (``cli_graph.py plan_memory``; docs/SCALE.md "Will it fit?").
"""
import os


def get_torchbiggraph_config():
    data_dir = os.environ.get("BIGGRAPH_DATA_DIR", "./data/biggraph/s2orc_train_test")
    return {
        # I/O
        "entity_path": data_dir,
        "edge_paths": [f"{data_dir}/train_partitioned", f"{data_dir}/test_partitioned"],
        "checkpoint_path": os.environ.get("BIGGRAPH_CHECKPOINT_PATH", "./data/biggraph/models/s2orc_128d_dot"),
        "checkpoint_preservation_interval": 10,
        # Graph structure
        "entities": {"paper_id": {"num_partitions": 1}},
        "relations": [{"name": "cites", "lhs": "paper_id", "rhs": "paper_id", "operator": "none"}],
        # Scoring model
        "dimension": 128,
        "comparator": "dot",
        "max_norm": 1.0,
        "global_emb": False,
        # Training (paper: margin 0.15, lr 0.1, 20 epochs)
        "num_epochs": 20,
        "margin": 0.15,
        "lr": 0.1,
        "batch_size": 10_000,
        "num_edge_chunks": 10,
        "num_uniform_negs": 0,
        "eval_fraction": 0,  # train on all training edges; the test split is evaluated separately
    }
