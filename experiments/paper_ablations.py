"""The paper's ablations on the full S2ORC corpus (``sbin/ablations.sbatch``: one Slurm array task per
entry, in this order, outputs in ``${OUTPUT_DIR}/ablations/<name>``): each a ``cli_pipeline.py
run_specter`` run of the paper recipe with these flags changed. Not a ``run_experiment`` definition
(those are the CPU-scale real-corpus experiments); the same data shape, read by the sbatch script."""


def get_ablations():
    return [{"name": "scincl", "flags": {}},
            {"name": "specter_like", "flags": {"triples_source": "specter_like"}},  # citations instead of kNN
            {"name": "queries_0.01", "flags": {"sample_queries_ratio": 0.01}},  # 1 % of the query papers
            {"name": "queries_0.1", "flags": {"sample_queries_ratio": 0.1}},  # 10 % (sample efficiency)
            {"name": "bitfit", "flags": {"bitfit": True, "learning_rate": "1e-4"}}]  # bias terms only, paper §7.2


if __name__ == "__main__":  # one line per array task, "NAME --flag value ...": what sbin/ablations.sbatch reads
    for ablation in get_ablations():
        flags = [f"--{k}" if v is True else f"--{k} {v}" for k, v in ablation["flags"].items()]
        print(" ".join([ablation["name"], *flags]))
