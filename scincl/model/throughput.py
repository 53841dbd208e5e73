"""Training throughput figures: model FLOPs of a BERT-style encoder step, MFU, projected run time.

Pure functions of plain numbers (unit-tested on CPU); ``benchmarks/gpu_check.py`` feeds them the
batches a measured training step encoded and the GPU's name.

Model FLOPs follow PaLM (Chowdhery et al. 2022, appendix B; not in ../shared/papers): a token of
a dense Transformer costs ``6 N + 12 L H Q T`` matmul FLOPs for forward plus backward, where N is
the number of non-embedding parameters, L the layers, H the heads, Q the head dimension (H Q is
the hidden size) and T the sequence length. Model FLOPs utilisation (MFU) is those FLOPs per
second over the hardware's peak; recomputation (gradient checkpointing) does not count, so the
same step has the same model FLOPs with and without it.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

# The paper's training set: 136,820 queries x 5 triplets (paper §4.3; docs/REPRODUCE.md row 5). Its
# epochs are PAPER_TRAINING_DEFAULTS["num_train_epochs"] (scincl/model/train.py).
PAPER_TRIPLETS = 684_100

# Dense (no sparsity) bf16 tensor-core peaks in TFLOPS, from NVIDIA's product datasheets and the
# Ampere/Ada architecture whitepapers (GeForce/RTX: bf16 with fp32 accumulation). Patterns are
# matched against torch.cuda.get_device_name() in order, so the more specific come first.
# V100/T4 are absent on purpose: no bf16 tensor cores (bf16 runs emulated there).
KNOWN_BF16_PEAK_TFLOPS: Tuple[Tuple[str, float], ...] = (
    (r"\bB200\b", 2250.0),
    (r"\bGH200\b", 989.4),
    (r"\bH200\b", 989.4),
    (r"\bH100\b.*\bPCIe\b", 756.0),
    (r"\bH100\b.*\bNVL\b", 835.0),
    (r"\bH100\b", 989.4),  # SXM (torch names it "NVIDIA H100 80GB HBM3")
    (r"\bA100\b", 312.0),
    (r"\bA800\b", 312.0),
    (r"\bA30\b", 165.0),
    (r"\bA40\b", 149.7),
    (r"\bA10\b", 125.0),
    (r"\bL40S\b", 362.05),
    (r"\bL40\b", 181.05),
    (r"\bL4\b", 121.0),
    (r"\bRTX A6000\b", 154.8),
    (r"\bRTX 4090\b", 165.2),
    (r"\bRTX 3090\b", 71.0),
)


def published_bf16_peak_tflops(gpu_name: str) -> Optional[float]:
    """The published dense bf16 peak of a GPU by its name (``None`` when unknown or without bf16 cores)."""
    for pattern, tflops in KNOWN_BF16_PEAK_TFLOPS:
        if re.search(pattern, gpu_name, flags=re.IGNORECASE):
            return tflops
    return None


def matmul_flops_per_token(non_embedding_params: int, layers: int, hidden_size: int, sequence_length: int) -> float:
    """Forward + backward matmul FLOPs of one token: ``6 N + 12 L H Q T`` (PaLM appendix B; H Q = hidden size)."""
    return 6.0 * non_embedding_params + 12.0 * layers * hidden_size * sequence_length


def batch_matmul_flops(shapes: Sequence[Tuple[int, int]], non_embedding_params: int, layers: int,
                       hidden_size: int) -> float:
    """Model FLOPs of encoding batches of ``(sequences, padded length)`` forward and backward."""
    return sum(n * t * matmul_flops_per_token(non_embedding_params, layers, hidden_size, t) for n, t in shapes)


def model_flops_utilisation(flops: float, seconds: float, peak_tflops: Optional[float]) -> Optional[float]:
    """Achieved model FLOPs per second over the peak (a fraction); ``None`` without a known peak."""
    if not peak_tflops or seconds <= 0:
        return None
    return flops / seconds / (peak_tflops * 1e12)


def projected_seconds(triplets_per_second: float, epochs: int, triplets: int = PAPER_TRIPLETS) -> float:
    """Seconds to train ``epochs`` over ``triplets`` (default: the paper's) at a measured rate."""
    if triplets_per_second <= 0:
        raise ValueError(f"triplets_per_second must be > 0, got {triplets_per_second}")
    return triplets * epochs / triplets_per_second
