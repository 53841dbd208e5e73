#!/usr/bin/env bash
# Budget curve on hep-th, w/o leakage: SPECTER-like vs SciNCL at 1,000 / 2,500 / 6,840 triplets,
# 3 seeds, test queries, plus the base encoder (docs/results.md, "Budget curve").
# Runs budget by budget (all seeds of 1,000 first) and rewrites its tables after every run, so an
# interrupted curve resumes where it stopped and its partial table is readable meanwhile.
# The experiment is data: experiments/hepth_budget.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_budget "$@"
