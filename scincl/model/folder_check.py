"""Model folders checked before any work (issue 41, class 3).

A command given a model (``run_specter --base_model_name_or_path``, ``train``, ``embed``, ``evaluate
--model_dirs``) checks it before its first stage or output, and names what is missing in one line:

- :func:`model_files_problem`: the files of a saved model folder: a ``config.json`` that is a JSON
  object with a ``model_type`` transformers knows, weights (``model.safetensors`` whose header covers the
  file, ``pytorch_model.bin`` that is a readable torch archive, or a sharded index and its shards) and a
  tokenizer (``tokenizer.json``, ``vocab.txt``, ...). Cheap: no tensor is read.
- :func:`scincl.model.encoder.check_encoder`: those files, then the model loaded and one short document
  encoded: the architecture must give one finite vector per document (what embedding and training need).

A hub name (not a folder) is only checked for being in the local Hugging Face cache when offline.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

from scincl.errors import InputError

WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
SHARDED_INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model")


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` of an exception (for one-line errors)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _config_problem(folder: Path) -> Optional[str]:
    from transformers import CONFIG_MAPPING

    config = folder / "config.json"
    if not config.is_file():
        seen = ", ".join(sorted(p.name for p in folder.iterdir())[:6]) or "nothing"
        return f"no config.json: not a saved model folder (it holds {seen})"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"config.json is not readable JSON ({first_line(exc)})"
    if not isinstance(data, dict) or not data.get("model_type"):
        return "config.json has no model_type"
    if data["model_type"] not in CONFIG_MAPPING:
        return f"config.json's model_type {data['model_type']!r} is not one this transformers version knows"
    return None


def _weights_file_problem(path: Path) -> Optional[str]:
    """Why one weights file cannot be read (header / archive only, no tensor data), or None."""
    try:
        if path.name.endswith(".safetensors"):
            from safetensors import safe_open

            with safe_open(str(path), framework="pt") as fh:
                fh.keys()
        else:
            import zipfile

            if not zipfile.is_zipfile(path):
                return f"{path.name} is not a torch archive (truncated or corrupted?)"
            with zipfile.ZipFile(path) as archive:
                archive.infolist()
    except Exception as exc:  # noqa: BLE001 - any failure to read the file is the user's file, named in one line
        return f"{path.name} is unreadable (truncated or corrupted? {first_line(exc)})"
    return None


def _weights_problem(folder: Path) -> Optional[str]:
    for name in SHARDED_INDEX_FILES:
        index = folder / name
        if index.is_file():
            try:
                shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                return f"{name} is not a weights index ({first_line(exc)})"
            for shard in shards:
                if not (folder / shard).is_file():
                    return f"weights shard {shard} listed in {name} is missing"
                problem = _weights_file_problem(folder / shard)
                if problem:
                    return problem
            return None
    present = [folder / name for name in WEIGHT_FILES if (folder / name).is_file()]
    if not present:
        return f"no weights ({' or '.join(WEIGHT_FILES)})"
    return _weights_file_problem(present[0])


def model_files_problem(folder: Path) -> Optional[str]:
    """What a saved model folder lacks (config, weights, tokenizer), or None when its files look complete."""
    folder = Path(folder)
    if not folder.is_dir():
        return "not a folder"
    for problem in (_config_problem(folder), _weights_problem(folder)):
        if problem:
            return problem
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return f"no tokenizer ({', '.join(TOKENIZER_FILES[:2])}, ...)"
    return None


def _is_offline() -> bool:
    return any(os.environ.get(name, "0").lower() in ("1", "true", "yes")
               for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def check_model_files(name_or_path: str, flag: str = "model") -> None:
    """The cheap check of :func:`model_files_problem` (a local folder) or of a hub name's local copy (offline)."""
    path = Path(str(name_or_path)).expanduser()
    if path.is_dir():
        problem = model_files_problem(path)
    elif path.exists():
        problem = "a file, not a model folder"
    elif str(name_or_path).startswith((".", "/", "~")) or str(name_or_path).count("/") > 1:
        problem = "no such folder"
    elif _is_offline():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(str(name_or_path), "config.json")
        problem = None if isinstance(cached, str) else "not a folder, and not in the local Hugging Face cache (offline)"
    else:
        problem = None
    if problem:
        raise InputError(f"{flag}: {problem}", path=name_or_path)
