"""What the hardware can do: was a GPU asked for, is CUDA usable, which precision runs natively.

The decisions are small pure functions of plain values (environment variables, a CUDA compute
capability, CPU flags), so they are unit-tested on a CPU machine; only the ``detect_*`` helpers
read the real hardware.

- :func:`gpu_request` / :func:`check_gpu_usable`: a job that asked for a GPU (``--device cuda``,
  ``CUDA_VISIBLE_DEVICES``, Slurm's GPU variables) but whose CUDA does not work (driver too old for
  the wheel, a CPU-only torch) stops with one error line instead of silently training on CPU.
- :func:`choose_bf16`: ``--bf16 auto`` uses bf16 autocast only where the device has native bf16
  arithmetic; emulated bf16 (V100, T4, CPUs without AVX512-BF16/AMX) is slower than fp32.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Tuple

from scincl.errors import InputError
from scincl.settings.choices import parse_bf16_request

logger = logging.getLogger(__name__)

# Slurm sets these when a job or step holds GPUs (sbatch/srun man pages, "OUTPUT ENVIRONMENT VARIABLES"):
# GPU counts ("0" = none) and GPU index lists ("0" = the first GPU).
SLURM_GPU_COUNT_VARIABLES = ("SLURM_GPUS_ON_NODE", "SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK")
SLURM_GPU_LIST_VARIABLES = ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS")
# CUDA_VISIBLE_DEVICES values that mean "no GPU" (NoDevFiles: older Slurm without a GPU for the step).
NO_GPU_VALUES = ("", "-1", "none", "NoDevFiles")

# bf16 tensor cores arrive with Ampere, compute capability 8.0 (NVIDIA A100 whitepaper); V100 (7.0)
# and T4 (7.5) run bf16 by emulation, which torch.cuda.is_bf16_supported() counts as supported.
CUDA_NATIVE_BF16_CAPABILITY = (8, 0)
# /proc/cpuinfo flags of native bf16 arithmetic: x86 AVX512-BF16 / AMX-BF16, AArch64 "bf16" (Armv8.6).
CPU_NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


def default_device() -> str:
    """Where a run trains and embeds when no device is given: ``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def gpu_request(environ: Mapping[str, str], device: Optional[str] = None) -> Optional[str]:
    """Why this process is expected to use a GPU (``None`` when nothing asked for one)."""
    if device is not None and str(device).lower().startswith("cuda"):
        return f"--device {device}"
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() not in NO_GPU_VALUES:
        return f"CUDA_VISIBLE_DEVICES={visible}"
    for name in SLURM_GPU_COUNT_VARIABLES + SLURM_GPU_LIST_VARIABLES:
        value = environ.get(name, "").strip()
        if value and value != "(null)" and not (name in SLURM_GPU_COUNT_VARIABLES and value == "0"):
            return f"{name}={value}"
    return None


def cuda_unusable_reason() -> Optional[str]:
    """Why torch cannot use CUDA here (``None`` when it can)."""
    import torch

    if torch.version.cuda is None:
        return f"torch {torch.__version__} is a CPU-only build"
    try:
        if torch.cuda.is_available() and torch.cuda.device_count() > 0:
            return None
        torch.cuda.init()  # raises with the driver's own message (e.g. "driver too old")
    except Exception as exc:  # noqa: BLE001 - any CUDA initialisation error is the reason we report
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return "torch.cuda.is_available() is False"


def check_gpu_usable(device: Optional[str] = None, environ: Optional[Mapping[str, str]] = None,
                     unusable_reason: Optional[str] = "detect") -> None:
    """Raise :class:`InputError` when a GPU was requested but CUDA is unusable.

    ``unusable_reason`` is the result of :func:`cuda_unusable_reason` (detected when left at
    ``"detect"``); tests pass it directly.
    """
    env = os.environ if environ is None else environ
    if device is not None and str(device).lower() == "cpu":
        return
    requested = gpu_request(env, device)
    if requested is None:
        return
    reason = cuda_unusable_reason() if unusable_reason == "detect" else unusable_reason
    if reason is None:
        return
    raise InputError(f"a GPU was requested ({requested}) but CUDA is unusable: {reason}; "
                     "fix the CUDA setup, or run on CPU on purpose with --use_cpu true (train) / --device cpu")


# ----------------------------------------------------------------------------------- precision

def native_bf16(device_type: str, cuda_capability: Optional[Tuple[int, int]] = None,
                cpu_flags: Iterable[str] = ()) -> bool:
    """True when ``device_type`` computes in bf16 natively (not by emulation)."""
    if device_type == "cuda":
        return cuda_capability is not None and tuple(cuda_capability) >= CUDA_NATIVE_BF16_CAPABILITY
    if device_type == "cpu":
        return bool(set(cpu_flags) & set(CPU_NATIVE_BF16_FLAGS))
    return False


def choose_bf16(request: Any, device_type: str, cuda_capability: Optional[Tuple[int, int]] = None,
                cpu_flags: Iterable[str] = ()) -> Tuple[bool, str]:
    """``(use bf16 autocast, why)`` for a ``--bf16`` request on a device with these features."""
    wanted = parse_bf16_request(request)
    native = native_bf16(device_type, cuda_capability, cpu_flags)
    what = (f"compute capability {cuda_capability[0]}.{cuda_capability[1]}" if device_type == "cuda"
            and cuda_capability else device_type)
    if wanted == "false":
        return False, "fp32 (--bf16 false)"
    if wanted == "true":
        return True, f"bf16 (--bf16 true; {'native' if native else 'EMULATED, slower than fp32'} on {what})"
    if native:
        return True, f"bf16 (--bf16 auto: native on {what})"
    return False, f"fp32 (--bf16 auto: no native bf16 on {what})"


def detect_cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset:
    """The CPU's feature flags (x86 ``flags``, AArch64 ``Features``); empty where unreadable."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def detect_cuda_capability(device_index: int = 0) -> Optional[Tuple[int, int]]:
    """Compute capability of a CUDA device (GPU-only path; ``None`` without CUDA)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return tuple(torch.cuda.get_device_capability(device_index))  # type: ignore[return-value]


_LOGGED = set()


def resolve_bf16(request: Any, device_type: str) -> bool:
    """:func:`choose_bf16` for the real device; the decision is logged once per process."""
    capability = detect_cuda_capability() if device_type == "cuda" else None
    flags = detect_cpu_flags() if device_type == "cpu" else frozenset()
    use, why = choose_bf16(request, device_type, capability, flags)
    if (device_type, why) not in _LOGGED:
        _LOGGED.add((device_type, why))
        logger.info("precision: %s", why)
    return use


def torch_threads() -> int:
    """torch's intra-op thread count now (read at start-up, before a stage changed it)."""
    import torch

    return torch.get_num_threads()


def reset_torch_threads(threads: int) -> None:
    """Give torch back its start-up thread count before training/embedding: faiss' ``omp_set_num_threads`` (``ann``,
    ``--workers``) also sets torch's OpenMP pool, and a rerun that reuses the index would sum floats in another
    order and train a slightly different model."""
    import torch

    if torch.get_num_threads() != threads:
        logger.info("torch threads: %d -> %d (start-up value, for reproducible training)",
                    torch.get_num_threads(), threads)
        torch.set_num_threads(threads)
