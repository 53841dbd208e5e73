#!/usr/bin/env bash
# The one entry point of the real-corpus experiments of docs/results.md:
#   bash experiments/run.sh NAME [FLAGS]   run experiments/NAME.py: `cli_pipeline.py run_experiment NAME [FLAGS]`
#   bash experiments/run.sh all            every experiment in the order they were run (val studies first), then collect
#   bash experiments/run.sh collect        copy the tables, plots and wall times into docs/results/ (below)
#   bash experiments/run.sh collect_runs NAME DIR   a paired experiment's finished runs + runs.csv into DIR (docs)
#   bash experiments/run.sh list           the experiment names
# Each experiment is data: experiments/<name>.py (corpus, arms, seeds, split, recipe changes, sweep values),
# run by one grid runner (scincl/pipeline/grid.py). The recipe's defaults are defined once, in
# scincl/settings/recipe.py (Recipe). Override with environment variables: SCINCL_DATA (the corpora),
# SCINCL_RESULTS (outputs), PYTHON, and any recipe value under its flag's name in capitals, e.g.
# HARD_NEGATIVES_K_MAX=2000 bash experiments/run.sh hepth_main (= --hard_negatives_k_max 2000; BASE_MODEL is
# BASE_MODEL_NAME_OR_PATH's alias, as in sbin/common.sh; the former K_HARD, K_POS, POOLING, ... are refused).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DATA_DIR="${SCINCL_DATA:-../shared/data}"
RESULTS_DIR="${SCINCL_RESULTS:-results}"
PYTHON="${PYTHON:-.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python
# `all`: the order of docs/results.md (hepth_budget last: hours on 2 cores, section 7)
ALL=(hepth_tuning hepth_k_pos hepth_k_hard hepth_main citeseer_main hepth_losses hepth_collisions hepth_graph
     hepth_budget)
# the recipe values taken from the environment: each flag's name in capitals (--hard_negatives_k_max is
# HARD_NEGATIVES_K_MAX), the fields of Recipe plus eval_max_sequence_length
FLAGS=(triplets easy_positives_k_max hard_negatives_k_max pooling_strategy learning_rate loss max_sequence_length
       eval_max_sequence_length per_device_train_batch_size num_train_epochs graph_dim bf16 eval_bf16
       base_model_name_or_path)
if [ -n "${BASE_MODEL:-}" ]; then  # the alias sbin/common.sh and docs/REPRODUCE.md share
    if [ -n "${BASE_MODEL_NAME_OR_PATH:-}" ] && [ "$BASE_MODEL_NAME_OR_PATH" != "$BASE_MODEL" ]; then
        echo "run.sh: BASE_MODEL is the alias of BASE_MODEL_NAME_OR_PATH: set one" >&2; exit 2
    fi
    BASE_MODEL_NAME_OR_PATH="$BASE_MODEL"
fi
# the former names: refused rather than ignored, so a run never silently takes the default
for pair in K_POS:EASY_POSITIVES_K_MAX K_HARD:HARD_NEGATIVES_K_MAX POOLING:POOLING_STRATEGY MAX_LEN:MAX_SEQUENCE_LENGTH \
            EVAL_MAX_LEN:EVAL_MAX_SEQUENCE_LENGTH BATCH_SIZE:PER_DEVICE_TRAIN_BATCH_SIZE EPOCHS:NUM_TRAIN_EPOCHS; do
    old="${pair%%:*}" new="${pair#*:}"
    if [ -n "${!old:-}" ]; then echo "run.sh: $old is now $new (--${new,,} in capitals)" >&2; exit 2; fi
done
CHANGES=()
for flag in "${FLAGS[@]}"; do
    variable="${flag^^}"
    if [ -n "${!variable:-}" ]; then CHANGES+=("--$flag" "${!variable}"); fi
done

experiment() {
    local name="$1"
    shift
    "$PYTHON" cli_pipeline.py run_experiment "$name" --output_dir "$RESULTS_DIR" --data_dir "$DATA_DIR" \
        ${CHANGES[@]+"${CHANGES[@]}"} "$@"
}

# collect_runs NAME DIR: the runs of experiments/NAME.py (kind paired) as the same environment names them
collect_runs() {
    "$PYTHON" cli_pipeline.py collect_runs "$1" "$2" --results_dir "$RESULTS_DIR" --data_dir "$DATA_DIR" \
        ${CHANGES[@]+"${CHANGES[@]}"} "${@:3}"
}

# collect: the tables (results*.md), plots (*.png) and wall times (timings*.json) the experiments wrote under
# $SCINCL_RESULTS go to docs/results/<corpus>/<experiment>/ (what docs/results.md shows). Keyed by encoder: a
# table whose "Encoder:" line names another encoder than the packaged all-MiniLM-L6-v2 goes to
# docs/results/<corpus>/<encoder>/<experiment>/ (<encoder>: the model folder's name, or $ENCODER_DIR, e.g.
# ENCODER_DIR=pretrained for docs/results/hepth/pretrained/), so another encoder's sweep or tuning never
# overwrites the MiniLM files; its plots and timings follow the table they belong to. The main and budget
# tables are in recipe-keyed folders already.

# the table a file belongs to: itself, results_<family>*.md for timings_<family>.json and <family>_*.png
# (sweeps: k_pos, k_hard), else the results.md beside it
table_of() {
    local file="$1" dir name family
    dir="$(dirname "$file")" name="$(basename "$file")"
    case "$name" in
        results*.md) echo "$file"; return ;;
        timings_*.json) family="${name#timings_}" family="${family%.json}" ;;
        k_pos_*.png) family=k_pos ;;
        k_hard_*.png) family=k_hard ;;
        *) family="" ;;
    esac
    if [ -n "$family" ] && [ -f "$dir/results_$family.md" ]; then echo "$dir/results_$family.md"
    else echo "$dir/results.md"; fi
}

# "" for the packaged MiniLM (or a table naming no encoder), else the folder the encoder's files go to
encoder_dir() {
    local table="$1" encoder
    [ -f "$table" ] || return 0
    encoder="$(sed -n 's/.*Encoder: \(.*\)\.$/\1/p' "$table" | head -n 1)"
    case "$encoder" in
        "" | "all-MiniLM-L6-v2 (packaged)") ;;
        *) echo "${ENCODER_DIR:-$(basename "${encoder%/}")}" ;;
    esac
}

collect() {
    local corpus file rel key dest
    for corpus in hepth citeseer; do
        [ -d "$RESULTS_DIR/$corpus" ] || continue
        find "$RESULTS_DIR/$corpus" -path "$RESULTS_DIR/$corpus/runs" -prune -o -path "$RESULTS_DIR/$corpus/shared" -prune \
            -o \( -name 'results*.md' -o -name '*.png' -o -name 'timings*.json' \) -print | while read -r file; do
            rel="${file#"$RESULTS_DIR"/"$corpus"/}"
            key="$(encoder_dir "$(table_of "$file")")"
            dest="docs/results/$corpus/${key:+$key/}$rel"
            mkdir -p "$(dirname "$dest")"
            cp "$file" "$dest"
        done
    done
    find docs/results -type f | sort
}

case "${1:-}" in
    "" | -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    list) "$PYTHON" -c 'from scincl.settings.experiment import experiment_names; print(*experiment_names())' ;;
    collect) collect ;;
    collect_runs) shift; collect_runs "$@" ;;
    all)
        for name in "${ALL[@]}"; do
            echo "=== $name"
            experiment "$name"
        done
        collect ;;
    *) experiment "$@" ;;
esac
