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
: "${BIGGRAPH_DIR:=${DATA_DIR}/biggraph}"                   # the w/ leakage graph (01), distributed PBG (02b)
: "${BIGGRAPH_CONFIG:=${BASE_DIR}/biggraph_configs/s2orc_768d_dot.py}"
: "${OUTPUT_DIR:=${DATA_DIR}/scincl}"                       # run_specter experiments
# Graph embeddings: exported S2ORC_EMBEDDINGS + S2ORC_PAPER_IDS (e.g. downloaded) are given to run_specter
# (--graph_embeddings_path: its plan has no citations and graph stages); unset, the plan builds them
# (01_citations, 02_biggraph) in OUTPUT_DIR/graph/, where the seeds, sweep and ablation scripts read them.
GRAPH_ARGS=(--biggraph_config "${BIGGRAPH_CONFIG}")
if [[ -n "${S2ORC_EMBEDDINGS:-}" ]]; then
    GRAPH_ARGS=(--graph_paper_ids_path "${S2ORC_PAPER_IDS:?set S2ORC_PAPER_IDS with S2ORC_EMBEDDINGS}"
                --graph_embeddings_path "${S2ORC_EMBEDDINGS}")
fi
: "${S2ORC_EMBEDDINGS:=${OUTPUT_DIR}/graph/embeddings.h5}"
: "${S2ORC_PAPER_IDS:=${OUTPUT_DIR}/graph/entity_names_paper_id_0.json}"
# BIGGRAPH_OVERRIDES="key=value ...": PBG config overrides of the plan's graph stage (e.g. num_epochs=10); part of
# the graph's recorded settings, so every script of the plan must see the same value (export it once).
if [[ -n "${BIGGRAPH_OVERRIDES:-}" ]]; then GRAPH_ARGS+=(--biggraph_overrides "${BIGGRAPH_OVERRIDES}"); fi
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

# The one run_specter plan of 01_citations, 02_biggraph, 03_faiss and run_specter.sbatch (the original README's
# command; the graph built by the plan unless S2ORC_EMBEDDINGS is exported). Each script runs a --stages selection
# of it with the same OUTPUT_DIR and settings, so a later one reuses what the runner recorded for an earlier one
# (a stage whose settings differ runs again): give every script the same extra arguments.
# shellcheck disable=SC2034  # used by the scripts that source this file
RUN_SPECTER=("${PY_CMD[@]}" cli_pipeline.py run_specter "${OUTPUT_DIR}" --auto_output_dir
    --scidocs_dir "${SCIDOCS_DIR}" --s2orc_metadata_dir "${S2ORC_METADATA_DIR}"
    --specter_triples_path "${SPECTER_DIR}/train_triples.csv"
    --s2id_to_s2orc_input_path "${SPECTER_DIR}/s2id_to_s2orc_paper_id.json"
    "${GRAPH_ARGS[@]}" --graph_limit specter
    --ann_metric inner_product --ann_workers 1 --ann_backend faiss --faiss_string_factory "${FAISS_STRING_FACTORY}"
    "${ANN_INDEX_ARGS[@]}"
    --val_or_test_or_both both --eval_steps 1 --save_steps "${SAVE_STEPS}"
    --triples_per_query 5 --workers "${WORKERS}" --gzip
    --base_model_name_or_path "${BASE_MODEL_NAME_OR_PATH}"
    --easy_positives_count 5 --easy_positives_strategy knn --easy_positives_k_min 20 --easy_positives_k_max 25
    --easy_negatives_count 3 --easy_negatives_strategy random_without_knn
    --hard_negatives_count 2 --hard_negatives_strategy knn --hard_negatives_k_min 3998 --hard_negatives_k_max 4000
    --seed "${SEED}")

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
