#!/usr/bin/env bash
# The same arms on CiteSeer: topic classification F1 (MAG-style) + cite MAP/nDCG on the 150 test queries.
# CiteSeer papers link to ~1.6 others, so only ~160 papers can give SPECTER-like 5 positives: 800 triplets.
# Co-citations counted once are edges (pairs co-cited twice are rare here).
# k+ and k-hard keep hep-th's share of the graph (~2.7k CiteSeer graph papers vs ~28k hep-th).
source "$(dirname "$0")/common.sh"
TRIPLETS=800 K_POS=10 K_HARD=100
recipe_flags
reproduce main --corpus citeseer --seeds 0,1,2 --split test "${RECIPE[@]}" --cocitation_min_count 1 "$@"
