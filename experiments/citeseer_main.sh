#!/usr/bin/env bash
# The same arms on CiteSeer: topic classification F1 (MAG-style) + cite MAP/nDCG on the 150 test queries.
# CiteSeer papers link to ~1.6 others: only 123 papers have the 5 linked papers SPECTER-like needs and
# are in the co-citation graph too, so every arm gets 600 triplets (120 queries) per seed.
# Co-citations counted once are edges (pairs co-cited twice are rare here).
# k+ = 10, k-hard = 100 on the ~2.7k-paper CiteSeer graph (hep-th: 25 and 500 of ~26k): the hard
# negatives stay a few per cent of the graph away, the positives inside the closest 0.4 %.
# The experiment is data: experiments/citeseer_main.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment citeseer_main "$@"
