# shellcheck shell=bash
# Shared settings of the real-corpus experiments (sourced by experiments/*.sh; see docs/results.md).
# Each experiment is data: experiments/<name>.py (corpus, arms, seeds, split, recipe changes, sweep
# values), run by `cli_pipeline.py run_experiment <name>`. The recipe's defaults are defined once, in
# scincl/pipeline/real_corpus.py (Recipe). Override with environment variables: SCINCL_DATA (the
# corpora), SCINCL_RESULTS (outputs), PYTHON, and any recipe value, e.g.
# K_HARD=2000 bash experiments/hepth_main.sh (or pass flags: bash experiments/hepth_main.sh --hard_negatives_k_max 2000;
# the recipe's former flag names, --k_hard etc., still work: RECIPE_ALIASES there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA_DIR="${SCINCL_DATA:-../shared/data}"
RESULTS_DIR="${SCINCL_RESULTS:-results}"
PYTHON="${PYTHON:-.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python
CHANGES=()
for pair in triplets:TRIPLETS easy_positives_k_max:K_POS hard_negatives_k_max:K_HARD pooling_strategy:POOLING \
            learning_rate:LEARNING_RATE loss:LOSS max_sequence_length:MAX_LEN eval_max_sequence_length:EVAL_MAX_LEN \
            per_device_train_batch_size:BATCH_SIZE num_train_epochs:EPOCHS graph_dim:GRAPH_DIM bf16:BF16 \
            eval_bf16:EVAL_BF16 base_model_name_or_path:BASE_MODEL; do
    variable="${pair#*:}"
    if [ -n "${!variable:-}" ]; then CHANGES+=("--${pair%%:*}" "${!variable}"); fi
done
experiment() {
    local name="$1"
    shift
    "$PYTHON" cli_pipeline.py run_experiment "$name" --output_dir "$RESULTS_DIR" --data_dir "$DATA_DIR" \
        ${CHANGES[@]+"${CHANGES[@]}"} "$@"
}
