# SciNCL pipeline image: CUDA PyTorch base + FAISS GPU + the project's requirements.
#   docker build -t scincl .
#   docker run --gpus all -v /data:/data scincl pipeline run_specter /data/out --scidocs_dir /data/scidocs ...
#   docker run scincl demo               # the embedded demo (CPU works too)
#   docker run --gpus all scincl gpu-check   # benchmarks/gpu_check.py: what works on this GPU node, how fast
# The entry point (sbin/docker_entrypoint.sh) maps s2orc|graph|triples|pipeline to cli_<name>.py;
# any other command (torchbiggraph_train, torchrun, bash) runs as given. Slurm: see sbin/ and
# docs/REPRODUCE.md (apptainer/enroot can run this image with srun).
ARG BASE_IMAGE=pytorch/pytorch:2.13.0-cuda12.8-cudnn9-runtime
FROM ${BASE_IMAGE}

ARG FAISS_GPU_PACKAGE=faiss-gpu==1.15.1
# hadolint ignore=DL3064  # TOKENIZERS_PARALLELISM is a switch, not a secret token
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    WANDB_MODE=offline \
    TOKENIZERS_PARALLELISM=false \
    SCINCL_DIR=/opt/scincl

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# git: commit hash in manifest.json; procps: ps/free for job monitoring
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git procps \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/scincl

# Requirements first (cached layer). torch comes from the CUDA base image (the pin torch==2.13.0
# matches its +cuXXX build); faiss-cpu is swapped for the GPU build.
COPY requirements.txt ./
RUN grep -v -E '^faiss-cpu' requirements.txt > /tmp/requirements-gpu.txt \
    && pip install -r /tmp/requirements-gpu.txt "${FAISS_GPU_PACKAGE}" \
    && python -c "import torch, faiss, torchbiggraph, transformers; print('torch', torch.__version__, 'faiss', faiss.__version__)"

COPY scincl/ scincl/
COPY biggraph_configs/ biggraph_configs/
COPY sbin/ sbin/
# experiments/: run_experiment's definitions; benchmarks/: gpu_check.py (docker run --gpus all scincl gpu-check)
COPY experiments/ experiments/
COPY benchmarks/ benchmarks/
COPY cli_s2orc.py cli_graph.py cli_triples.py cli_pipeline.py Makefile pyproject.toml README.md ./

ENTRYPOINT ["/opt/scincl/sbin/docker_entrypoint.sh"]
CMD ["pipeline", "--help"]
