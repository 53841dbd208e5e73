# shellcheck shell=bash
# Shared settings of the real-corpus experiments (sourced by experiments/*.sh; see docs/results.md).
# Override with environment variables: SCINCL_DATA (the corpora), SCINCL_RESULTS (outputs), PYTHON.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA_DIR="${SCINCL_DATA:-../shared/data}"
RESULTS_DIR="${SCINCL_RESULTS:-results}"
PYTHON="${PYTHON:-.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python
# The recipe chosen on the hep-th val queries (docs/results.md, "Choosing the recipe on val").
# A script may change a value before calling recipe_flags (e.g. TRIPLETS=600 for CiteSeer).
# Each value can also come from the environment (e.g. K_HARD=2000 bash experiments/hepth_main.sh).
TRIPLETS=${TRIPLETS:-1000} K_POS=${K_POS:-25} K_HARD=${K_HARD:-500} POOLING=${POOLING:-mean}
LEARNING_RATE=${LEARNING_RATE:-5e-5} LOSS=${LOSS:-triplet} MAX_LEN=${MAX_LEN:-64} EVAL_MAX_LEN=${EVAL_MAX_LEN:-128}
BATCH_SIZE=${BATCH_SIZE:-16} EPOCHS=${EPOCHS:-1} GRAPH_DIM=${GRAPH_DIM:-64}
# shellcheck disable=SC2034  # RECIPE is used by the scripts that source this file
recipe_flags() {
    RECIPE=(--triplets "$TRIPLETS" --k_pos "$K_POS" --k_hard "$K_HARD" --pooling "$POOLING"
            --learning_rate "$LEARNING_RATE" --loss "$LOSS" --max_sequence_length "$MAX_LEN"
            --eval_max_sequence_length "$EVAL_MAX_LEN" --batch_size "$BATCH_SIZE" --epochs "$EPOCHS"
            --graph_dim "$GRAPH_DIM")
}
recipe_flags
reproduce() {
    "$PYTHON" cli_pipeline.py reproduce "$@" --output_dir "$RESULTS_DIR" --data_dir "$DATA_DIR"
}
