"""GPU-only decisions, tested on CPU: faiss GPU placement and cloner options, GPU-index detection
through wrappers, bf16 only where native, an error when a requested GPU is unusable, gradient
checkpointing, rank-0-only checkpoint cleanup (issue 19)."""
from __future__ import annotations

import os
import sys

import faiss
import numpy as np
import pytest
import torch

from scincl.knn import ann
from scincl.errors import InputError
from scincl.model.checkpoints import last_complete_checkpoint
from scincl.model.device import (
    check_gpu_usable, choose_bf16, detect_cpu_flags, gpu_request, native_bf16, parse_bf16_request,
)
from scincl.model.encoder import DocumentEncoder, load_backbone
from scincl.model.losses import build_loss
from scincl.model.objective import ContrastiveModel
from scincl.model.train import build_training_arguments
from tests.conftest import run_command

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ------------------------------------------------------------------ faiss: which indexes go to a GPU

@pytest.mark.parametrize("factory, dim, classes, use_gpu, options", [
    ("Flat", 32, ("IndexFlat",), True, {}),
    ("IVF16,Flat", 32, ("IndexIVFFlat",), True, {}),
    ("IVF16,PQ16", 64, ("IndexIVFPQ",), True, {}),  # 16 x 256 x 4 B = 16 KiB tables: fit
    ("IVF16,PQ64", 768, ("IndexIVFPQ",), True, {"useFloat16": True}),  # 03_faiss.sbatch's suggestion: 64 KiB
    ("IVF16,PQ96", 768, ("IndexIVFPQ",), True, {"useFloat16": True}),  # exactly 48 KiB in float16
    ("IVF16,PQ192", 768, ("IndexIVFPQ",), False, {}),  # no GPU kernel for 192-byte codes
    ("PCA16,IVF8,PQ4", 32, ("IndexPreTransform", "IndexIVFPQ"), True, {}),
    ("HNSW32", 32, ("IndexHNSWFlat",), False, {}),  # README's HNSW32: no GPU implementation
    ("IVF16_HNSW32,Flat", 32, ("IndexIVFFlat",), False, {}),  # HNSW coarse quantizer: CPU
    ("PQ8", 32, ("IndexPQ",), False, {}),
])
def test_gpu_plan_of_real_cpu_indexes(factory, dim, classes, use_gpu, options):
    layout = ann.index_layout(faiss.index_factory(dim, factory))
    assert layout.classes == classes
    plan = ann.gpu_plan(layout)
    assert (plan.use_gpu, plan.options) == (use_gpu, options), plan.reason
    if not use_gpu:
        assert "GPU" in plan.reason


def test_ivfpq_layout_records_code_size():
    layout = ann.index_layout(faiss.index_factory(768, "IVF16,PQ64"))
    assert (layout.quantizer, layout.pq_m, layout.pq_nbits) == ("IndexFlat", 64, 8)
    assert "65536 B in float32" in ann.gpu_plan(layout).reason


def test_gpu_index_detected_through_a_pre_transform_wrapper():
    cpu = ann.index_layout(faiss.index_factory(32, "PCA16,IVF8,PQ4"))
    assert not ann.is_gpu_layout(cpu)
    # what index_cpu_to_gpu returns for PCA64,IVF4096,PQ16: the wrapper stays, the inner index moves
    assert ann.is_gpu_layout(ann.IndexLayout(("IndexPreTransform", "GpuIndexIVFPQ"), "GpuIndexFlat", 16, 8))
    assert ann.is_gpu_layout(ann.IndexLayout(("GpuIndexFlat",)))


def test_pre_transformed_index_is_written_and_searched_beyond_the_gpu_k_limit(tmp_path):
    vectors = np.random.default_rng(0).standard_normal((2100, 32)).astype(np.float32)
    index = ann.build_index(vectors, string_factory="PCA16,IVF8,PQ4x4", metric="l2", seed=0, workers=1)
    ids = [f"p{i}" for i in range(len(vectors))]
    ann.write_index(index, tmp_path / "pt.faiss", ids)
    loaded, loaded_ids = ann.read_index(tmp_path / "pt.faiss")
    assert loaded_ids == ids and type(loaded).__name__ == "IndexPreTransform"
    ann.set_search_parameter(loaded, "nprobe", 8)
    k = ann.GPU_MAX_SELECTION_K + 10
    distances, rows = ann.knn_search(loaded, vectors[:3], k, show_progress=False)
    assert rows.shape == (3, k) and (rows >= 0).all()
    assert (np.diff(distances, axis=1) >= -1e-4).all()  # l2: nearest first


def test_index_to_device_keeps_cpu_without_gpu_faiss(caplog):
    index = faiss.index_factory(8, "Flat")
    with caplog.at_level("INFO"):
        assert ann.index_to_device(index, 0) is index
    assert "has no GPU" in caplog.text or "using CPU" in caplog.text


# ------------------------------------------------------------------ precision: bf16 only where native

@pytest.mark.parametrize("request_, device, capability, flags, expected, says", [
    ("auto", "cuda", (7, 0), (), False, "no native bf16 on compute capability 7.0"),  # V100
    ("auto", "cuda", (7, 5), (), False, "no native bf16"),  # T4
    ("auto", "cuda", (8, 0), (), True, "native on compute capability 8.0"),  # A100
    ("auto", "cuda", (9, 0), (), True, "native"),  # H100
    ("auto", "cpu", None, ("avx2", "avx512f"), False, "no native bf16 on cpu"),
    ("auto", "cpu", None, ("avx512f", "avx512_bf16"), True, "native on cpu"),
    ("auto", "cpu", None, ("amx_bf16",), True, "native"),
    ("auto", "mps", None, (), False, "no native bf16"),
    (True, "cuda", (7, 0), (), True, "EMULATED"),
    ("true", "cuda", (8, 6), (), True, "native"),
    ("false", "cuda", (9, 0), (), False, "fp32 (--bf16 false)"),
    (False, "cpu", None, ("avx512_bf16",), False, "fp32"),
])
def test_bf16_chosen_by_native_support(request_, device, capability, flags, expected, says):
    use, why = choose_bf16(request_, device, capability, flags)
    assert use is expected and says in why


def test_bf16_request_parsing():
    assert [parse_bf16_request(v) for v in (True, False, "AUTO", "yes", "0")] == ["true", "false", "auto", "true",
                                                                                  "false"]
    with pytest.raises(InputError, match="--bf16 'sometimes': choose one of auto, true, false"):
        parse_bf16_request("sometimes")


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n")
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n")
    assert native_bf16("cpu", cpu_flags=detect_cpu_flags(x86))
    assert native_bf16("cpu", cpu_flags=detect_cpu_flags(arm))
    assert detect_cpu_flags(tmp_path / "missing") == frozenset()


@pytest.mark.parametrize("flag", ["auto", "false", True])
def test_training_arguments_resolve_bf16(tmp_path, flag):
    args = build_training_arguments(str(tmp_path), {"bf16": flag, "use_cpu": True})
    expected = {"auto": native_bf16("cpu", cpu_flags=detect_cpu_flags()), "false": False, True: True}[flag]
    assert args.bf16 is expected


def test_a_process_seeing_several_gpus_trains_on_one_without_dataparallel(tmp_path, caplog):
    from types import SimpleNamespace

    from transformers.training_args import ParallelMode

    from scincl.model.train import one_gpu_per_process

    # what TrainingArguments reports in one process on a 4-GPU node (the Trainer would use DataParallel)
    several = SimpleNamespace(parallel_mode=ParallelMode.NOT_DISTRIBUTED, n_gpu=4, _n_gpu=4, device="cuda:0")
    with caplog.at_level("WARNING"):
        assert one_gpu_per_process(several)._n_gpu == 1
    assert "4 GPUs visible to one process: training on cuda:0 only" in caplog.text
    ddp = SimpleNamespace(parallel_mode=ParallelMode.DISTRIBUTED, n_gpu=1, _n_gpu=1, device="cuda:1")
    assert one_gpu_per_process(ddp)._n_gpu == 1
    cpu = build_training_arguments(str(tmp_path), {"use_cpu": True})  # the real path on this machine
    assert cpu.parallel_mode == ParallelMode.NOT_PARALLEL and cpu.n_gpu == 0


def test_training_defaults_to_bf16_where_native_and_records_precision_in_run_keys(tmp_path):
    from scincl.pipeline.layout import recipe_key
    from scincl.settings.recipe import Recipe

    native = native_bf16("cpu", cpu_flags=detect_cpu_flags())
    assert build_training_arguments(str(tmp_path), {"use_cpu": True}).bf16 is native  # default --bf16 auto
    fp32 = Recipe(bf16="false")
    assert recipe_key(fp32) == "t1000_kp25_kh500_mean_lr5e-05_triplet_len64_bs16_ep1_g64"  # fp32 keeps its old name
    assert recipe_key(Recipe(bf16=True)) == recipe_key(fp32) + "_bf16"  # fire's boolean for --bf16 true
    assert recipe_key(Recipe(bf16="false", eval_bf16="true")) == recipe_key(fp32) + "_ebf16"
    assert recipe_key(Recipe()) == recipe_key(fp32) + ("_bf16" if native else "")
    assert Recipe().training_arguments()["bf16"] == "auto" and Recipe().eval_bf16 == "false"
    with pytest.raises(InputError, match="--bf16 'half': choose one of auto, true, false"):
        Recipe(eval_bf16="half")


def test_a_bf16_run_does_not_leave_bf16_to_the_next_fp32_run_in_the_process(tmp_path, monkeypatch):
    # transformers exports ACCELERATE_MIXED_PRECISION=bf16 for a bf16 run and, when neither --bf16 nor
    # --fp16 is set, takes the precision from it: the next run of the process trained under bf16 autocast
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "no")
    build_training_arguments(str(tmp_path), {"bf16": True, "use_cpu": True})
    assert os.environ["ACCELERATE_MIXED_PRECISION"] == "bf16"
    args = build_training_arguments(str(tmp_path), {"bf16": "false", "use_cpu": True})
    assert args.bf16 is False and os.environ["ACCELERATE_MIXED_PRECISION"] == "no"
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp16")  # exported by a shell: the flags still decide
    assert build_training_arguments(str(tmp_path), {"use_cpu": True, "bf16": "false"}).fp16 is False
    assert os.environ["ACCELERATE_MIXED_PRECISION"] == "no"


# ------------------------------------------------------------------ a requested GPU must be usable

@pytest.mark.parametrize("env, device, expected", [
    ({}, None, None),
    ({"CUDA_VISIBLE_DEVICES": "0,1"}, None, "CUDA_VISIBLE_DEVICES=0,1"),
    ({"CUDA_VISIBLE_DEVICES": ""}, None, None),
    ({"CUDA_VISIBLE_DEVICES": "-1"}, None, None),
    ({"CUDA_VISIBLE_DEVICES": "NoDevFiles"}, None, None),
    ({"SLURM_GPUS_ON_NODE": "4"}, None, "SLURM_GPUS_ON_NODE=4"),
    ({"SLURM_GPUS_ON_NODE": "0"}, None, None),
    ({"SLURM_JOB_GPUS": "2,3"}, None, "SLURM_JOB_GPUS=2,3"),
    ({}, "cuda:1", "--device cuda:1"),
    ({}, "cpu", None),
])
def test_gpu_request_from_flags_and_environment(env, device, expected):
    assert gpu_request(env, device) == expected


def test_unusable_cuda_is_an_error_when_a_gpu_was_requested():
    with pytest.raises(InputError, match=r"a GPU was requested \(SLURM_STEP_GPUS=0\) but CUDA is unusable: "
                                         r"driver too old"):
        check_gpu_usable(environ={"SLURM_STEP_GPUS": "0"}, unusable_reason="driver too old")
    check_gpu_usable(environ={"SLURM_STEP_GPUS": "0"}, unusable_reason=None)  # CUDA works: fine
    check_gpu_usable(device="cpu", environ={"CUDA_VISIBLE_DEVICES": "0"}, unusable_reason="broken")  # CPU on purpose
    check_gpu_usable(environ={}, unusable_reason="broken")  # nobody asked for a GPU


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine where CUDA is unusable")
def test_train_refuses_cpu_fallback_when_a_gpu_was_requested(toy_train_files, tmp_path):
    root = toy_train_files["root"]
    cmd = [sys.executable, "cli_pipeline.py", "train", str(root / "train.csv"), str(root / "metadata.jsonl"),
           str(tmp_path / "model"), "--base_model_name_or_path", str(toy_train_files["bert"]), "--max_steps", "1"]
    done = run_command(cmd, env={"CUDA_VISIBLE_DEVICES": "0"}, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert "a GPU was requested (CUDA_VISIBLE_DEVICES=0) but CUDA is unusable" in last
    assert "Traceback" not in done.stderr and not (tmp_path / "model" / "train_args.json").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine where CUDA is unusable")
def test_use_cpu_trains_on_cpu_on_purpose_under_a_gpu_request(toy_train_files, tmp_path, monkeypatch):
    from scincl.model.train import train

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    root = toy_train_files["root"]
    out = train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(tmp_path / "model"),
                base_model_name_or_path=str(toy_train_files["bert"]), max_steps=1, per_device_train_batch_size=4,
                max_sequence_length=16, cache_dir=str(tmp_path / "cache"), use_cpu=True, disable_tqdm=True)
    assert (out / "train_args.json").exists()


# ------------------------------------------------------------------ gradient checkpointing, checkpoints

def _batch(tokenizer):
    texts = ["graph node edge", "protein folding cell", "galaxy star orbit", "graph citation network"]
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    return dict(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                query_index=torch.tensor([0]), positive_index=torch.tensor([3]), negative_index=torch.tensor([1]))


def test_gradient_checkpointing_gives_the_same_gradients(toy_train_files):
    grads = []
    for checkpointing in (False, True):
        backbone, tokenizer = load_backbone(str(toy_train_files["bert"]))
        model = ContrastiveModel(DocumentEncoder(backbone, "cls"), build_loss("triplet"))
        if checkpointing:
            model.gradient_checkpointing_enable()  # what the Trainer calls for --gradient_checkpointing
            assert model.is_gradient_checkpointing
        model.train()  # HF checkpoints only in training mode; the same seed gives both runs the same dropout
        torch.manual_seed(0)
        model(**_batch(tokenizer))["loss"].backward()
        grads.append(backbone.encoder.layer[0].attention.self.query.weight.grad.clone())
    assert grads[0].abs().sum() > 0
    torch.testing.assert_close(grads[0], grads[1])


def test_only_the_main_process_removes_interrupted_checkpoints(tmp_path):
    (tmp_path / "checkpoint-4").mkdir()
    (tmp_path / "checkpoint-4" / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoint-8").mkdir()  # interrupted: no trainer_state.json
    assert last_complete_checkpoint(tmp_path, remove_incomplete=False) == tmp_path / "checkpoint-4"
    assert (tmp_path / "checkpoint-8").exists()  # another rank leaves it alone
    assert last_complete_checkpoint(tmp_path) == tmp_path / "checkpoint-4"
    assert not (tmp_path / "checkpoint-8").exists()
