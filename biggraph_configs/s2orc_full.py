#!/usr/bin/env python3
"""PyTorch-BigGraph config: the FULL S2ORC citation graph (no test split), 768-d dot, cluster-ready.

The graph behind the released SciNCL model (paper §4: ~52.6M papers, ~463M citations). Same
model settings as ``s2orc_768d_dot.py`` (dot comparator, margin 0.15, lr 0.1, 20 epochs), plus the
knobs that make a graph of this size fit, all readable from the environment so a Slurm script
(sbin/) sets them without editing this file:

    BIGGRAPH_DATA_DIR            entity_path; edge_paths = DIR/train_partitioned
    BIGGRAPH_CHECKPOINT_PATH     checkpoint_path (on a file system shared by all machines)
    BIGGRAPH_NUM_PARTITIONS      entities.paper_id.num_partitions. 1 keeps all 52.6M x 768 floats
                                 (~160 GB) in RAM; P partitions hold 2/P of them at a time (one lhs
                                 + one rhs partition), so P = 2 saves nothing and P >= 4 does.
                                 Distributed training needs P >= 2 * machines. For one machine's
                                 memory: `cli_graph.py plan_memory --method pbg --papers 52600000
                                 --edges 463000000 --dimension 768 --memory_limit 32GB` names the
                                 fewest partitions that fit (measured costs, docs/SCALE.md "Will it
                                 fit?"), and `embed_graph --method pbg --memory_limit 32GB` sets them.
    BIGGRAPH_NUM_EDGE_CHUNKS     num_edge_chunks: split each bucket's edges so partitions are swapped
                                 more often (better mixing, bounded edge memory).
    BIGGRAPH_WORKERS             workers: Hogwild! processes per machine (default: all cores).
    BIGGRAPH_NUM_MACHINES        num_machines: trainer ranks; start one `torchbiggraph_train CONFIG
                                 --rank R` (or `cli_graph.py train_biggraph CONFIG --rank R`) per machine.
    BIGGRAPH_INIT_METHOD         distributed_init_method, e.g. tcp://HEAD_NODE:30050 or
                                 file:///shared/fs/pbg_rendezvous (gloo backend, CPU).
    BIGGRAPH_PARTITION_SERVERS   num_partition_servers: -1 = each trainer also serves partitions,
                                 0 = swap partitions through the shared checkpoint directory.

Import once (single machine), then train on every machine with the same config:

    torchbiggraph_import_from_tsv --lhs-col=0 --rhs-col=1 $CONFIG citations.tsv
    torchbiggraph_train $CONFIG -p edge_paths=$BIGGRAPH_DATA_DIR/train_partitioned [--rank R]

``tests/graph/test_biggraph_distributed.py`` runs exactly this distributed mode (two ranks, loopback,
partitioned entities, partition servers) on the demo graph.
"""
import os


def get_torchbiggraph_config():
    data_dir = os.environ.get("BIGGRAPH_DATA_DIR", "./data/biggraph/s2orc_full")
    workers = os.environ.get("BIGGRAPH_WORKERS")
    num_machines = int(os.environ.get("BIGGRAPH_NUM_MACHINES", "1"))
    config = {
        # I/O
        "entity_path": data_dir,
        "edge_paths": [f"{data_dir}/train_partitioned"],
        "checkpoint_path": os.environ.get("BIGGRAPH_CHECKPOINT_PATH", "./data/biggraph/models/s2orc_full"),
        "checkpoint_preservation_interval": 5,
        # Graph structure
        "entities": {"paper_id": {"num_partitions": int(os.environ.get("BIGGRAPH_NUM_PARTITIONS", "1"))}},
        "relations": [{"name": "cites", "lhs": "paper_id", "rhs": "paper_id", "operator": "none"}],
        # Scoring model
        "dimension": 768,
        "comparator": "dot",
        "max_norm": 1.0,
        "global_emb": False,
        # Training (paper: margin 0.15, lr 0.1, 20 epochs)
        "num_epochs": 20,
        "margin": 0.15,
        "lr": 0.1,
        "batch_size": 10_000,
        "num_edge_chunks": int(os.environ.get("BIGGRAPH_NUM_EDGE_CHUNKS", "10")),
        "num_uniform_negs": 0,
        "eval_fraction": 0,
        # Scale-out
        "workers": int(workers) if workers else None,
        "bucket_order": "affinity",  # consecutive buckets share a partition: fewer partition swaps
        "num_machines": num_machines,
        "num_partition_servers": int(os.environ.get("BIGGRAPH_PARTITION_SERVERS", "-1")),
    }
    if num_machines > 1:
        config["distributed_init_method"] = os.environ["BIGGRAPH_INIT_METHOD"]
    return config
