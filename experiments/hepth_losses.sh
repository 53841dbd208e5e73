#!/usr/bin/env bash
# Loss comparison on the same SciNCL triplets (triplet vs InfoNCE vs CoSENT vs AnglE), hep-th val queries.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
reproduce losses --corpus hepth --seeds 0 --split val "${RECIPE[@]}" --losses triplet,infonce,cosent,angle "$@"
