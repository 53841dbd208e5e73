"""Issue 26 (deliverables 3-4): Table 1 and Table 2 again, from the domain encoder pre-trained here
(`cli_pipeline.py pretrain` on hep-th + CiteSeer text without the SciDocs query papers, docs/results.md
section 8) instead of all-MiniLM-L6-v2, which was trained on citation pairs. Test queries, w/o
leakage: base vs SPECTER-like vs SciNCL vs continuous co-citation at 1,000 triplets (Table 1), then
SPECTER-like vs SciNCL at 1,000 / 2,500 / 6,840 triplets (Table 2), seeds 0-2, with the recipe the
val part chose (experiments/hepth_pretrained_val.py, docs/results.md section 8): mean pooling (+4.48
Avg over the paper's [CLS] on val: the MLM never trains [CLS]), k-hard 500, k+ 10 (+0.51 over 25). Every run is keyed by the encoder
(`_mhepth_citeseer_mini-<sha8>`): nothing of the MiniLM runs is reused."""

# chosen on val (experiments/hepth_pretrained_val.py): mean pooling, k+ 10; k-hard 500 is the default
ENCODER = {"base_model_name_or_path": "results/pretrain/hepth_citeseer_mini", "pooling_strategy": "mean",
           "easy_positives_k_max": 10}


def get_experiment():
    return [{"kind": "main", "corpus": "hepth", "seeds": [0, 1, 2], "split": "test", "recipe": ENCODER},
            {"kind": "budget", "corpus": "hepth", "seeds": [0, 1, 2], "split": "test",
             "arms": ["specter_like", "scincl"], "values": [1000, 2500, 6840], "recipe": ENCODER}]
