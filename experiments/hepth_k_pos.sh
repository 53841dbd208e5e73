#!/usr/bin/env bash
# SciNCL k+ sweep (paper Fig. 2) on the hep-th val queries, k-hard fixed; plot + table.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
reproduce k_pos --corpus hepth --seeds 0 --split val "${RECIPE[@]}" --values 10,25,50 "$@"
