#!/usr/bin/env bash
# SciNCL k-hard sweep (paper Fig. 3) on the hep-th val queries, k+ fixed; plot + table.
# The experiment is data: experiments/hepth_k_hard.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_k_hard "$@"
