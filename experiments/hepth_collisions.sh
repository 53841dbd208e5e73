#!/usr/bin/env bash
# Collisions vs the k+ .. k-hard margin (paper Fig. 5) on the hep-th citation graph (2,000 queries).
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
reproduce collisions --corpus hepth "${RECIPE[@]}" --values 30,50,100,250,500,1000,2000,4000 "$@"
