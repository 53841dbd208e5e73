#!/usr/bin/env bash
# SciNCL k+ sweep (paper Fig. 2) on the hep-th val queries, k-hard fixed; plot + table.
# The experiment is data: experiments/hepth_k_pos.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_k_pos "$@"
