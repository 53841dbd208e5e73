#!/usr/bin/env bash
# Choosing the recipe on the hep-th val queries: pooling (MiniLM's native mean vs CLS) for the
# SciNCL arm at the default recipe, and a doubled triplet budget (docs/results.md, "Choosing the
# recipe on val").
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
# the SPECTER-like arm at the default recipe, for reference (its val scores: results/hepth/runs/val/<recipe>/specter_like)
reproduce tuning --corpus hepth --seeds 0 --split val "${RECIPE[@]}" --arms specter_like "$@"
reproduce tuning --corpus hepth --seeds 0 --split val "${RECIPE[@]}" --arms scincl --variants pooling=cls,triplets=2000 "$@"
