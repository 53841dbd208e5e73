#!/usr/bin/env bash
# Citation-graph embeddings: link prediction (64/128-d, dot vs cos), held-out-citation retrieval,
# and the graph alone as a retriever on the SciDocs test queries vs the text encoders.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
reproduce graph --corpus hepth --split test "${RECIPE[@]}" "$@"
