#!/usr/bin/env bash
# Citation-graph embeddings: link prediction (64/128-d, dot vs cos), held-out-citation retrieval,
# and the graph alone as a retriever on the SciDocs test queries vs the text encoders.
# The experiment is data: experiments/hepth_graph.py.
# shellcheck source=experiments/common.sh
source "$(dirname "$0")/common.sh"
experiment hepth_graph "$@"
