#!/usr/bin/env bash
# Choosing the recipe on the hep-th val queries: pooling (MiniLM's native mean vs CLS) for the
# SciNCL arm at the default recipe, and a doubled triplet budget (docs/results.md, "Choosing the
# recipe on val").
# Also the SPECTER-like arm at the default recipe, for reference (results/hepth/runs/val/<recipe>/specter_like).
# The experiment is data: experiments/hepth_tuning.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_tuning "$@"
