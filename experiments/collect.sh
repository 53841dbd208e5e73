#!/usr/bin/env bash
# Copy the tables (results*.md), plots (*.png) and wall times (timings*.json) the experiments wrote
# under $SCINCL_RESULTS into docs/results/<corpus>/<experiment>/ (what docs/results.md shows).
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
for corpus in hepth citeseer; do
    [ -d "$RESULTS_DIR/$corpus" ] || continue
    find "$RESULTS_DIR/$corpus" -path "$RESULTS_DIR/$corpus/runs" -prune -o -path "$RESULTS_DIR/$corpus/shared" -prune -o \
        \( -name 'results*.md' -o -name '*.png' -o -name 'timings*.json' \) -print | while read -r file; do
        rel="${file#"$RESULTS_DIR"/}"
        mkdir -p "docs/results/$(dirname "$rel")"
        cp "$file" "docs/results/$rel"
    done
done
find docs/results -type f | sort
