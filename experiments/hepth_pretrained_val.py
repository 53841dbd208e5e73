"""Issue 26 (deliverable 3, val part): the recipe for the domain encoder pre-trained here
(`cli_pipeline.py pretrain`, docs/results.md section 8) chosen on the hep-th val queries, before any
test query is scored: pooling (the paper's [CLS] vs mean) and k-hard in {100, 500, 2000} for SciNCL,
seed 0, 1,000 triplets. The encoder is `results/pretrain/hepth_citeseer_mini` (the pretrain output
dir, copied or linked there; `BASE_MODEL=DIR` points elsewhere). Read the two tables, then run
`experiments/hepth_pretrained.sh` with the chosen `POOLING=` and `K_HARD=`."""

ENCODER = {"base_model": "results/pretrain/hepth_citeseer_mini", "pooling": "cls"}


def get_experiment():
    return [{"kind": "tuning", "corpus": "hepth", "seeds": [0], "split": "val", "arms": ["scincl"],
             "recipe": ENCODER, "variants": ["pooling=mean"]},
            {"kind": "k_hard", "corpus": "hepth", "seeds": [0], "split": "val", "values": [100, 500, 2000],
             "recipe": ENCODER}]
