"""The paper's runs on the full S2ORC corpus that sbin/ runs as Slurm arrays, one array task per entry, in this
order: each a ``cli_pipeline.py run_specter`` run of the paper recipe with these flags changed, its outputs in
``${OUTPUT_DIR}/<array>/<name>``. Not ``run_experiment`` definitions (those are the CPU-scale real-corpus
experiments); the same data shape, read by the sbatch scripts:

- ``ablations`` (``sbin/ablations.sbatch``): SciNCL, SPECTER-like triplets, 1 % / 10 % of the queries, BitFit;
- ``sweep`` (``sbin/sweep_knn.sbatch``): k+ and k-hard of Figs. 2-3, one flag changed from the paper's
  25 / 4000 (``scincl/settings/schema.py``), each band's start derived from its count (k+ - 5, k-hard - 2);
  folders ``k_pos/<k+>`` and ``k_hard/<k-hard>``, the layout of ``compare_results --sweep_dir``;
- ``seeds`` (``sbin/seeds.sbatch``): SciNCL over seeds 0..9 (paper §5, Table 1's mean), corpus seed fixed at 0.

``python experiments/paper_ablations.py [ablations|sweep|seeds]`` prints one line per array task,
``NAME --flag value ...`` (what ``array_task`` of ``sbin/common.sh`` reads)."""
import sys

EASY_POSITIVES_K_MAX = [5, 10, 25, 50, 100, 500]  # k+ of paper Fig. 2
HARD_NEGATIVES_K_MAX = [100, 500, 1000, 2000, 4000, 8000]  # k-hard of paper Fig. 3
SEEDS = range(10)  # paper §5: Table 1 averages seeds 0..9


def get_ablations():
    return [{"name": "scincl", "flags": {}},
            {"name": "specter_like", "flags": {"triples_source": "specter_like"}},  # citations instead of kNN
            {"name": "queries_0.01", "flags": {"sample_queries_ratio": 0.01}},  # 1 % of the query papers
            {"name": "queries_0.1", "flags": {"sample_queries_ratio": 0.1}},  # 10 % (sample efficiency)
            {"name": "bitfit", "flags": {"bitfit": True, "learning_rate": "1e-4"}}]  # bias terms only, paper §7.2


def get_sweep():
    return ([{"name": f"k_pos/{k}", "flags": {"easy_positives_k_max": k}} for k in EASY_POSITIVES_K_MAX]
            + [{"name": f"k_hard/{k}", "flags": {"hard_negatives_k_max": k}} for k in HARD_NEGATIVES_K_MAX])


def get_seeds():
    return [{"name": f"seed_{seed}", "flags": {"seed": seed, "corpus_seed": 0}} for seed in SEEDS]


ARRAYS = {"ablations": get_ablations, "sweep": get_sweep, "seeds": get_seeds}

if __name__ == "__main__":  # one line per array task, "NAME --flag value ...": what sbin/common.sh:array_task reads
    for run in ARRAYS[sys.argv[1] if len(sys.argv) > 1 else "ablations"]():
        flags = [f"--{k}" if v is True else f"--{k} {v}" for k, v in run["flags"].items()]
        print(" ".join([run["name"], *flags]))
