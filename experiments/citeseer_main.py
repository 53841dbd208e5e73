"""The same arms on CiteSeer (docs/results.md): a smaller corpus whose papers cite ~1.3 others, so a
smaller budget and neighbourhood (600 triplets, k+ 10, k-hard 100) and co-citation pairs seen once."""


def get_experiment():
    return {"kind": "main", "corpus": "citeseer", "seeds": [0, 1, 2], "split": "test",
            "recipe": {"triplets": 600, "easy_positives_k_max": 10, "hard_negatives_k_max": 100},
            "cocitation_min_count": 1}
