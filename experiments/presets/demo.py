"""The embedded demo (``make demo``): every stage on CPU in a few minutes on the bundled 1.5k-paper corpus
(packaged all-MiniLM-L6-v2, one short epoch). What ``run_specter`` runs when no data argument is given
(``--preset demo``). A preset is data: ``run_specter`` settings by their flag names (see paper.py).
"""
from scincl.settings.run import CPU_TRAINING


def get_preset():
    return {
        "graph_limit": "graph",  # every graph paper: the demo has no SPECTER triples to replicate
        "biggraph_config": "demo.py",  # a small PBG config (biggraph_configs/demo.py)
        "graph_test_ratio": 0.05,
        # beyond the ~130-paper topic of the 1.5k-paper demo corpus (paper: k- = 4000 of 52M)
        "hard_negatives_k_max": 200,
        "sample_queries_ratio": 0.1,  # 10 % of the papers as queries
        "pooling_strategy": "mean",  # MiniLM was trained with mean pooling; keeps base vs tuned comparable
        "max_sequence_length": 64,  # title + the start of the abstract, a CPU budget
        "eval_max_sequence_length": 128,  # a CPU budget for the SciDocs embeddings
        "training_options": {"num_train_epochs": 1, "per_device_train_batch_size": 16, "learning_rate": 5e-5,
                             **CPU_TRAINING, "save_steps": 50, "save_total_limit": 1},
    }
