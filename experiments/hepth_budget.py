"""Budget curve on hep-th, w/o leakage (issue 17): SPECTER-like vs SciNCL at 1,000, 2,500 and 6,840
triplets (6,840 = the paper's 1 % budget, Table 2), 5 per query, the same query papers for both arms
of a seed, seeds 0-2, mean pooling, test queries; plus the base encoder. Every arm x seed x budget
is cached under runs/test/t<budget>_... (shared with hepth_main at 1,000): a rerun retrains nothing."""


def get_experiment():
    return {"kind": "budget", "corpus": "hepth", "seeds": [0, 1, 2], "split": "test",
            "arms": ["specter_like", "scincl"], "values": [1000, 2500, 6840]}
