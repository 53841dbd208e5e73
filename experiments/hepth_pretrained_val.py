"""Issue 26 (deliverable 3, val part): the recipe for the domain encoder pre-trained here
(`cli_pipeline.py pretrain`, docs/results.md section 8) chosen on the hep-th val queries, before any
test query is scored: pooling (the paper's [CLS] vs mean) and k-hard in {100, 500, 2000} for SciNCL,
seed 0, 1,000 triplets. Pooling is chosen first (the tuning table: mean, +4.48 Avg over [CLS]), then
k-hard at that pooling (500), then k+ in {10, 25, 50} at both (a first k-hard sweep at [CLS] is in
docs/results.md section 8). The encoder is `results/pretrain/hepth_citeseer_mini` (the pretrain output
dir, copied or linked there; `BASE_MODEL_NAME_OR_PATH=DIR` points elsewhere). Its choices are written into
`experiments/hepth_pretrained.py`."""

ENCODER = {"base_model_name_or_path": "results/pretrain/hepth_citeseer_mini", "pooling_strategy": "cls"}


def get_experiment():
    return [{"kind": "tuning", "corpus": "hepth", "seeds": [0], "split": "val", "arms": ["scincl"],
             "recipe": ENCODER, "variants": ["pooling=mean"]},
            {"kind": "k_hard", "corpus": "hepth", "seeds": [0], "split": "val", "values": [100, 500, 2000],
             "recipe": {**ENCODER, "pooling_strategy": "mean"}},
            {"kind": "k_pos", "corpus": "hepth", "seeds": [0], "split": "val", "values": [10, 25, 50],
             "recipe": {**ENCODER, "pooling_strategy": "mean"}}]
