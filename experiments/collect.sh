#!/usr/bin/env bash
# Copy the tables (results*.md), plots (*.png) and wall times (timings*.json) the experiments wrote
# under $SCINCL_RESULTS into docs/results/<corpus>/<experiment>/ (what docs/results.md shows).
# Keyed by encoder: a table whose "Encoder:" line names another encoder than the packaged
# all-MiniLM-L6-v2 goes to docs/results/<corpus>/<encoder>/<experiment>/ (<encoder>: the model
# folder's name, or $ENCODER_DIR, e.g. ENCODER_DIR=pretrained for docs/results/hepth/pretrained/),
# so another encoder's sweep or tuning never overwrites the MiniLM files; its plots and timings
# follow the table they belong to. The main and budget tables are in recipe-keyed folders already.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"

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

for corpus in hepth citeseer; do
    [ -d "$RESULTS_DIR/$corpus" ] || continue
    find "$RESULTS_DIR/$corpus" -path "$RESULTS_DIR/$corpus/runs" -prune -o -path "$RESULTS_DIR/$corpus/shared" -prune -o \
        \( -name 'results*.md' -o -name '*.png' -o -name 'timings*.json' \) -print | while read -r file; do
        rel="${file#"$RESULTS_DIR"/$corpus/}"
        key="$(encoder_dir "$(table_of "$file")")"
        dest="docs/results/$corpus/${key:+$key/}$rel"
        mkdir -p "$(dirname "$dest")"
        cp "$file" "$dest"
    done
done
find docs/results -type f | sort
