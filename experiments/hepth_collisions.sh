#!/usr/bin/env bash
# Collisions vs the k+ .. k-hard margin (paper Fig. 5) on the hep-th citation graph (2,000 queries).
# The experiment is data: experiments/hepth_collisions.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_collisions "$@"
