#!/usr/bin/env bash
# Docker entry point: the first argument names a CLI, the rest are its arguments.
#   docker run --gpus all -v /data:/data scincl pipeline run_specter /data/out ...
#   docker run scincl s2orc get_citations /data/s2orc/metadata /data/out
# s2orc | graph | triples | pipeline -> python cli_<name>.py; demo -> run_specter; gpu-check ->
# benchmarks/gpu_check.py (make gpu-check); anything else runs as given
# (torchbiggraph_train, torchrun, bash, ...). No argument: the pipeline's help.
set -euo pipefail
cd "${SCINCL_DIR:-/opt/scincl}"
PYTHON="${PYTHON:-python}"
if [[ $# -eq 0 ]]; then
    exec "${PYTHON}" cli_pipeline.py --help
fi
case "$1" in
    s2orc|graph|triples|pipeline)
        name="$1"; shift
        exec "${PYTHON}" "cli_${name}.py" "$@" ;;
    demo)
        shift
        exec "${PYTHON}" cli_pipeline.py run_specter "$@" ;;
    gpu-check)
        shift
        exec "${PYTHON}" benchmarks/gpu_check.py "$@" ;;
    *)
        exec "$@" ;;
esac
