"""Issue 40: SciNCL vs SPECTER-like from the domain encoder, pre-registered in docs/results.md section 8.6 before any
run. Test queries, w/o leakage, section 8.1's recipe (mean pooling, k-hard 500, k+ 10: experiments/hepth_pretrained.py
ENCODER), fresh seeds only (0-2 are section 8's and stay apart):

1. 1,000 triplets, seeds 3-22: SPECTER-like, SciNCL (k+ 10) and the k+ 25 control (SciNCL with k+ 25), every arm of a
   seed on the same query papers, all three arms of a seed before the next seed (the ``paired`` kind);
   primary test: SciNCL - SPECTER-like, two-sided paired t-test on the per-seed Avg, alpha 0.05;
2. 6,840 triplets, seeds 3-12: SPECTER-like and SciNCL (k+ 10), after part 1.

Run with the rebuilt encoder and one torch thread, as pre-registered (docs/results.md section 8.6):
    OMP_NUM_THREADS=1 BASE_MODEL_NAME_OR_PATH=/work/runs/pretrain/hepth_citeseer_mini bash experiments/run.sh hepth_powered
and copy the finished runs into the docs with ``bash experiments/run.sh collect_runs hepth_powered
docs/results/hepth/pretrained/powered`` (the same environment), then ``python -m scincl.docs_tables --norerun_blocks``.
"""
from scincl.settings.experiment import experiment_data

ENCODER = experiment_data("hepth_pretrained").ENCODER  # section 8.1's choice; the encoder path is overridden
ARMS = ["specter_like", "scincl"]
PRIMARY_SEEDS = list(range(3, 23))  # 20 fresh seeds
LARGE_BUDGET_SEEDS = list(range(3, 13))  # 10 of them at 6,840 triplets

# the docs' tables (scincl/eval/paired_runs.py docs_text): arm ids of runs.csv -> labels, in table order, and the
# pre-registered comparisons (second, first, triplets, role): second minus first on the per-seed Avg
LABELS = {"specter_like": "SPECTER-like", "scincl": "SciNCL (k+ 10)", "scincl_kp25": "SciNCL k+ 25 (control)"}
COMPARISONS = [("scincl", "specter_like", 1000, "primary"),
               ("scincl_kp25", "specter_like", 1000, "secondary: k+ 25 control"),
               ("scincl", "scincl_kp25", 1000, "secondary: k+ 10 vs 25"),
               ("scincl", "specter_like", 6840, "secondary: 6,840 triplets")]
EFFECT = 0.3  # Avg: the power statement's effect, section 8.3's SciNCL - SPECTER-like at 1,000 triplets (+0.30)


def get_experiment():
    return [{"kind": "paired", "corpus": "hepth", "seeds": PRIMARY_SEEDS, "split": "test", "arms": ARMS,
             "variants": ["easy_positives_k_max=25"], "recipe": {**ENCODER, "triplets": 1000}},
            {"kind": "paired", "corpus": "hepth", "seeds": LARGE_BUDGET_SEEDS, "split": "test", "arms": ARMS,
             "recipe": {**ENCODER, "triplets": 6840}}]
