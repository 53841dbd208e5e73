#!/usr/bin/env bash
# Issue 26: the SciNCL vs SPECTER-like comparison from the domain encoder pre-trained here
# (docs/results.md section 8). The experiment is data: experiments/hepth_pretrained_val.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_pretrained_val "$@"
