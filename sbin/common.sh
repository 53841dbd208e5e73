#!/usr/bin/env bash
# Shared settings of the sbin/ Slurm scripts (sourced by each of them, never run directly).
#
# Every variable below can be exported before `sbatch` (Slurm passes the environment on); the
# defaults follow the original SciNCL README. Submit from the repository root:
#   export S2ORC_METADATA_DIR=/data/s2orc/20200705v1/full/metadata SCIDOCS_DIR=/data/scidocs
#   sbatch sbin/run_specter.sbatch
# DRY_RUN=1 prints each command (shell-quoted, prefixed by "+") instead of running it.
set -euo pipefail

: "${BASE_DIR:=${SCINCL_DIR:-$(pwd)}}"                      # repository checkout
: "${DATA_DIR:=${BASE_DIR}/data}"                           # everything the pipeline writes
: "${S2ORC_METADATA_DIR:=${DATA_DIR}/s2orc/20200705v1/full/metadata}"  # metadata_{0..99}.jsonl.gz
: "${S2ORC_PDF_PARSES_DIR:=${DATA_DIR}/s2orc/20200705v1/full/pdf_parses}"
: "${SCIDOCS_DIR:=${DATA_DIR}/scidocs}"                     # aws s3 sync ... specter/scidocs/
: "${SCIDOCS_PAPER_IDS:=${DATA_DIR}/scidocs_s2orc/s2orc_paper_ids.json}"  # excluded from the graph
: "${SPECTER_DIR:=${DATA_DIR}/specter}"                     # train_triples.csv, id mappings
: "${BIGGRAPH_DIR:=${DATA_DIR}/biggraph}"                   # citation TSVs + PBG checkpoints
: "${BIGGRAPH_CONFIG:=${BASE_DIR}/biggraph_configs/s2orc_768d_dot.py}"
: "${S2ORC_EMBEDDINGS:=${BIGGRAPH_DIR}/s2orc_768d_dot/embeddings.h5}"           # sbin/02_biggraph.sbatch
: "${S2ORC_PAPER_IDS:=${BIGGRAPH_DIR}/s2orc_768d_dot/entity_names_paper_id_0.json}"
: "${OUTPUT_DIR:=${DATA_DIR}/scincl}"                       # run_specter experiments
: "${BASE_MODEL:=allenai/scibert_scivocab_uncased}"          # paper §4: SciBERT initialisation
: "${ANN_FAISS_FACTORY:=Flat}"                              # exact kNN, as in the paper
: "${ANN_INDEX_PATH:=${OUTPUT_DIR}/${ANN_FAISS_FACTORY}.faiss}"
: "${WORKERS:=${SLURM_CPUS_PER_TASK:-$(nproc)}}"
: "${GPUS_PER_NODE:=${SLURM_GPUS_ON_NODE:-1}}"
: "${SEED:=0}"
: "${WANDB_MODE:=offline}"                                   # `wandb sync` later, or set online
export WANDB_MODE

# The Python launcher: `srun python` inside a Slurm allocation, plain `python` elsewhere.
# Override with e.g. PY="srun --gpus=1 python" or PY="apptainer exec --nv scincl.sif python".
if [[ -z "${PY:-}" ]]; then
    if [[ -n "${SLURM_JOB_ID:-}" ]]; then PY="srun python"; else PY="python"; fi
fi
# shellcheck disable=SC2034  # used by the scripts that source this file
read -r -a PY_CMD <<< "${PY}"

# run CMD...: execute, or print it when DRY_RUN=1 (used by tests/test_sbin.py and for checking paths).
run() {
    if [[ "${DRY_RUN:-0}" == "1" ]]; then
        printf '+'
        printf ' %q' "$@"
        printf '\n'
    else
        echo "[$(date -u +%H:%M:%S)] $*" >&2
        "$@"
    fi
}

mkdir_unless_dry() {
    if [[ "${DRY_RUN:-0}" != "1" ]]; then mkdir -p "$@"; fi
}
