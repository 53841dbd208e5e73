#!/usr/bin/env bash
# Main comparison on hep-th, w/o leakage: base vs SPECTER-like vs SciNCL vs continuous co-citation,
# 3 seeds, cite + co-cite MAP/nDCG on the 300 test queries (docs/results.md, Table 1).
# The experiment is data: experiments/hepth_main.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_main "$@"
