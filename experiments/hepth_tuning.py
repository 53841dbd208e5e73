"""Recipe variants on the hep-th val queries (docs/results.md, "Choosing the recipe on val"): the
SPECTER-like reference run, then SciNCL with CLS pooling and with 2,000 triplets."""


def get_experiment():
    return [{"kind": "tuning", "corpus": "hepth", "seeds": [0], "split": "val", "arms": ["specter_like"]},
            {"kind": "tuning", "corpus": "hepth", "seeds": [0], "split": "val", "arms": ["scincl"],
             "variants": ["pooling=cls", "triplets=2000"]}]
