"""Trainer checkpoints that can be resumed from (a SIGKILL can leave a half-written one)."""
from __future__ import annotations

import json
import logging
import shutil
import struct
import zipfile
from pathlib import Path
from typing import Optional

logger = logging.getLogger(__name__)


# Trainer arguments that change logs, never the model's bytes (left out of a run's fingerprint)
LOGGING_ONLY_ARGS = ("report_to", "run_name", "logging_dir", "logging_steps", "disable_tqdm", "resume_from_checkpoint")


def damaged_file(checkpoint: Path) -> Optional[str]:
    """The first file of ``checkpoint`` that cannot be read back, with why, or ``None`` (issue 29).

    Cheap structural checks, no tensor is loaded: ``torch.save`` files (``optimizer.pt``,
    ``scheduler.pt``, ``rng_state.pth``, ``training_args.bin``) are zip archives whose central
    directory sits at the end, so a truncated one does not open; a ``.safetensors`` file must be as
    long as its header says; a ``.json`` file must parse.
    """
    for path in sorted(checkpoint.iterdir()):
        if not path.is_file():
            continue
        try:
            if path.suffix in (".pt", ".pth", ".bin"):
                with zipfile.ZipFile(path) as archive:
                    archive.infolist()
            elif path.suffix == ".safetensors":
                with open(path, "rb") as fh:
                    header_len = struct.unpack("<Q", fh.read(8))[0]
                    header = json.loads(fh.read(header_len))
                end = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
                if path.stat().st_size != 8 + header_len + end:
                    return f"{path.name} is {path.stat().st_size} bytes, its header says {8 + header_len + end}"
            elif path.suffix == ".json":
                json.loads(path.read_text())
        except (zipfile.BadZipFile, struct.error, ValueError, KeyError, TypeError, OSError) as exc:
            return f"{path.name} cannot be read ({type(exc).__name__}: {exc})"
    return None


def last_complete_checkpoint(model_dir: Path, remove_incomplete: bool = True) -> Optional[Path]:
    """The newest ``checkpoint-N`` the Trainer finished writing.

    The Trainer writes ``trainer_state.json`` last when saving a checkpoint, so a checkpoint
    without it was interrupted (SIGKILL, node failure) and cannot be resumed from; one with a file
    that cannot be read back (:func:`damaged_file`: a truncated ``optimizer.pt`` after a full
    disk) cannot either, and the next older complete one is used (issue 29). Such a checkpoint is
    removed when ``remove_incomplete`` (pass it on one rank only: in a multi-process job every rank
    looks at the same directory) and skipped otherwise.
    """
    if not model_dir.is_dir():
        return None
    checkpoints = []
    for path in model_dir.glob("checkpoint-*"):
        step = path.name.rsplit("-", 1)[-1]
        if not path.is_dir() or not step.isdigit():
            continue
        if (path / "trainer_state.json").exists():
            checkpoints.append((int(step), path))
        elif remove_incomplete:
            logger.warning("train: removing the interrupted checkpoint %s (no trainer_state.json)", path)
            shutil.rmtree(path)
        else:
            logger.info("train: skipping the interrupted checkpoint %s (the main process removes it)", path)
    for _, path in sorted(checkpoints, reverse=True):
        why = damaged_file(path)
        if why is None:
            return path
        if remove_incomplete:
            logger.warning("train: removing the damaged checkpoint %s (%s); falling back to an older one", path, why)
            shutil.rmtree(path)
        else:
            logger.info("train: skipping the damaged checkpoint %s (%s)", path, why)
    return None
