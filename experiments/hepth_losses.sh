#!/usr/bin/env bash
# Loss comparison on the same SciNCL triplets (triplet vs InfoNCE vs CoSENT vs AnglE), hep-th val queries.
# The experiment is data: experiments/hepth_losses.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_losses "$@"
