#!/usr/bin/env bash
# SciNCL k-hard sweep (paper Fig. 3) on the hep-th val queries, k+ fixed; plot + table.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
reproduce k_hard --corpus hepth --seeds 0 --split val "${RECIPE[@]}" --values 100,500,2000 "$@"
