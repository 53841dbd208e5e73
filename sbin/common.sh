#!/usr/bin/env bash
# Shared settings of the sbin/ Slurm scripts (sourced by each of them, never run directly).
#
# Every variable below can be exported before `sbatch` (Slurm passes the environment on); the
# defaults follow the original SciNCL README. A variable that sets a flag is the flag's name in capitals
# (BASE_MODEL_NAME_OR_PATH is --base_model_name_or_path; BASE_MODEL and ANN_FAISS_FACTORY, the names of the
# original README, are aliases of BASE_MODEL_NAME_OR_PATH and FAISS_STRING_FACTORY). Submit from the repository root:
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
: "${BASE_MODEL_NAME_OR_PATH:=${BASE_MODEL:-allenai/scibert_scivocab_uncased}}"  # paper §4: SciBERT initialisation
: "${FAISS_STRING_FACTORY:=${ANN_FAISS_FACTORY:-Flat}}"     # exact kNN, as in the paper
# ANN_INDEX_PATH: unset = the pipeline's own per-corpus index (<corpus ids>.<factory>.faiss next to the
# run's s2orc_paper_ids.seed_S.json), so runs with different corpus seeds never share an index. Set it
# only to reuse one index for runs of the same corpus (the triples stage refuses an index of another corpus).
# shellcheck disable=SC2034  # used by the scripts that source this file
ANN_INDEX_ARGS=()
# shellcheck disable=SC2034
if [[ -n "${ANN_INDEX_PATH:-}" ]]; then ANN_INDEX_ARGS=(--ann_index_path "${ANN_INDEX_PATH}"); fi
: "${WORKERS:=${SLURM_CPUS_PER_TASK:-$(nproc)}}"
: "${GPUS_PER_NODE:=${SLURM_GPUS_ON_NODE:-1}}"
: "${SEED:=0}"
: "${SAVE_STEPS:=2000}"   # checkpoint every 2,000 of ~42.7k steps (~1.3 GB each, the Trainer keeps the last 2)
: "${WANDB_MODE:=offline}"                                   # `wandb sync` later, or set online
export WANDB_MODE
# Since Slurm 22.05 srun does not inherit the job's --cpus-per-task: without this every step of
# `srun python` would run on one core while WORKERS asks for all of them.
if [[ -n "${SLURM_CPUS_PER_TASK:-}" ]]; then export SRUN_CPUS_PER_TASK="${SLURM_CPUS_PER_TASK}"; fi
# Rendezvous ports (torchrun, BigGraph's gloo group) derived from the job id: two jobs sharing a
# node must not both listen on one fixed port.
: "${MASTER_PORT:=$(( 20000 + ${SLURM_JOB_ID:-0} % 20000 ))}"

# The Python launcher: one `srun` task inside a Slurm allocation, plain `python` elsewhere.
# Override with e.g. PY="srun --gpus=1 python" or PY="apptainer exec --nv scincl.sif python".
: "${PYTHON:=python}"
if [[ -z "${PY:-}" ]]; then
    if [[ -n "${SLURM_JOB_ID:-}" ]]; then PY="srun --nodes=1 --ntasks=1 ${PYTHON}"; else PY="${PYTHON}"; fi
fi
# shellcheck disable=SC2034  # used by the scripts that source this file
read -r -a PY_CMD <<< "${PY}"

# run CMD...: execute, or print it when DRY_RUN=1 (used by tests/slurm/test_sbin.py and for checking paths).
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

# array_task ARRAY: this Slurm array task's entry of `experiments/paper_ablations.py ARRAY` (ablations, sweep,
# seeds; the data of the array scripts): sets TASK_NAME (its output folder) and TASK_FLAGS (its flags).
array_task() {
    local tasks task="${SLURM_ARRAY_TASK_ID:-0}"
    mapfile -t tasks < <("${PYTHON}" experiments/paper_ablations.py "$1")
    if (( ${#tasks[@]} == 0 )); then echo "experiments/paper_ablations.py $1 listed no task" >&2; exit 2; fi
    if (( task >= ${#tasks[@]} )); then echo "array task ${task} out of range 0-$(( ${#tasks[@]} - 1 ))" >&2; exit 2; fi
    read -r -a TASK_FLAGS <<< "${tasks[${task}]}"
    # shellcheck disable=SC2034  # used by the scripts that call array_task
    TASK_NAME="${TASK_FLAGS[0]}"
    TASK_FLAGS=("${TASK_FLAGS[@]:1}")
}
