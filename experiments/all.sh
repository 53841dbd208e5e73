#!/usr/bin/env bash
# Every experiment of docs/results.md in the order they were run (val studies first, then test).
set -euo pipefail
here="$(dirname "$0")"
for name in hepth_tuning hepth_k_pos hepth_k_hard hepth_main citeseer_main hepth_losses hepth_collisions hepth_graph \
            hepth_budget; do  # hepth_budget: hours on 2 cores (section 7)
    echo "=== $name"
    bash "$here/$name.sh"
done
bash "$here/collect.sh"
