#!/usr/bin/env python
"""Which files one ``run_specter`` flag's value passes through: a structural measurement, not a timing.

Runs ``cli_pipeline.py run_specter OUTPUT_DIR --<flag> <value> [more flags]`` in this process under
:func:`sys.settrace` and lists, in the order first reached, every function of the project whose arguments or locals
hold the value (up to five levels deep inside dicts, lists, dataclasses, attrs classes and ``__slots__``). The value
is followed by identity: the ``int`` object the front end parsed from the command line, so a paper id or a token id
that happens to be equal is not mistaken for it (ints above 256 are distinct objects in CPython; a value below is
refused). A value computed from it (a band's start, ``k_max - count``) is a new object and is not followed. Rerun on
a copy of a finished run so that only what the flag changes is rebuilt:

    cp -r runs/demo /tmp/route && python benchmarks/setting_route.py /tmp/route --flag hard_negatives_k_max --value 487

Files are split in two: the **route** (where the value is declared, converted, checked, planned or used: a reader
following the flag opens these) and the **carriers** (:data:`CARRIERS`: code that moves, records or range-checks every
setting alike and names none; each with the reason). Both lists are printed: the route's count is the one the
one-spec redesign (issue 39) targets, the sum of both is every file the value enters. The run is traced whole, training included, so it takes
several times as long as the run itself.
"""
from __future__ import annotations

import argparse
import runpy
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

ROOT = Path(__file__).resolve().parents[1]
FRONT_END = {"cli_pipeline.py": "parses the command line", "scincl/cli.py": "parses and routes flags",
             "scincl/commands/pipeline.py": "the command table; prints the run's summary"}
CARRIERS = {
    "scincl/pipeline/runner.py": "runs any stage and writes manifest.json (the arguments as given)",
    "scincl/provenance.py": "fingerprints, compares and writes any stage's recorded settings (its marker)",
    "scincl/settings/values.py": "converts any flag's value to its type",
    "scincl/settings/rules.py": "the interval check every range-checked setting shares (its Rule is declared on "
                                "the spec's field)",
    "scincl/workload.py": "announces the plan's size",
    "scincl/output_lock.py": "locks any command's outputs",
    "scincl/io.py": "writes any JSON",
}
LEAVES = (str, bytes, float, bool, type(None), Path)


class Followed:
    """The value's ``int`` object, once the front end has it (the first equal ``int`` seen in a front-end file)."""

    def __init__(self, value: int) -> None:
        self.value, self.object, self.in_front_end = value, None, False

    def matches(self, obj: int) -> bool:
        """``obj`` is the followed object (taken here when first seen in the front end)."""
        if self.object is None and self.in_front_end and obj == self.value:
            self.object = obj
        return self.object is not None and obj is self.object


def holds(obj: Any, value: Followed, depth: int, seen: Set[int]) -> bool:
    """``obj`` is the followed value or holds it within ``depth`` levels (containers, instance dicts, slots)."""
    if type(obj) is int:
        return value.matches(obj)
    function = hasattr(obj, "__code__") or hasattr(obj, "__func__")
    if depth == 0 or id(obj) in seen or isinstance(obj, LEAVES) or isinstance(obj, type) or function:
        return False
    seen.add(id(obj))
    if type(obj).__module__.split(".")[0] in ("numpy", "torch", "faiss", "transformers", "logging", "datasets"):
        return False
    if isinstance(obj, dict):
        items: List[Any] = list(obj.values())[:300]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)[:300]
    else:
        items = list(getattr(obj, "__dict__", {}).values())[:300]
        for cls in type(obj).__mro__:
            slots = getattr(cls, "__slots__", ())
            for slot in (slots,) if isinstance(slots, str) else slots:
                items.append(getattr(obj, slot, None))
    return any(holds(item, value, depth - 1, seen) for item in items)


def trace_run(output_dir: str, flag: str, value: int, more: List[str]) -> Dict[str, Dict[str, int]]:
    """``{file: {function: calls}}`` of the project's functions that held ``value`` during the run."""
    if value <= 256:
        raise SystemExit(f"--value {value}: pick an int above 256 (CPython shares the objects of smaller ones)")
    reached: Dict[str, Dict[str, int]] = {}
    root, followed = f"{ROOT}/", Followed(value)

    def tracer(frame: Any, event: str, arg: Any) -> None:
        path = frame.f_code.co_filename
        if event != "call" or not path.startswith(root) or "/.venv/" in path or "/tests/" in path:
            return None
        followed.in_front_end = path[len(root):] in FRONT_END
        if any(holds(local, followed, 5, set()) for local in list(frame.f_locals.values())):
            functions = reached.setdefault(path[len(root):], {})
            name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
            functions[name] = functions.get(name, 0) + 1
        return None

    sys.argv = ["cli_pipeline.py", "run_specter", output_dir, f"--{flag}", str(value), *more]
    sys.path.insert(0, str(ROOT))
    sys.settrace(tracer)
    threading.settrace(tracer)
    try:
        runpy.run_path(str(ROOT / "cli_pipeline.py"), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    return reached


def report(reached: Dict[str, Dict[str, int]], flag: str, value: int) -> Tuple[str, int]:
    """The route and the carriers as text, and the route's file count."""
    def rows(files: List[str]) -> List[str]:
        return [f"  {path}: " + ", ".join(f"{fn} x{n}" for fn, n in reached[path].items()) for path in files]

    front = [p for p in reached if p in FRONT_END]
    carriers = [p for p in reached if p in CARRIERS]
    route = [p for p in reached if p not in FRONT_END and p not in CARRIERS]
    lines = [f"run_specter --{flag} {value}", f"front end ({len(front)} files):", *rows(front),
             f"route after the front end ({len(route)} files):", *rows(route),
             f"carriers ({len(carriers)} files; every setting alike):",
             *(row + f"  [{CARRIERS[path]}]" for path, row in zip(carriers, rows(carriers)))]
    return "\n".join(lines), len(route)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output_dir", help="a run_specter OUTPUT_DIR (a copy of a finished run: only the flag's "
                                           "stages rerun)")
    parser.add_argument("--flag", default="hard_negatives_k_max")
    parser.add_argument("--value", type=int, default=487, help="an int no other setting or size of the run has")
    args, more = parser.parse_known_args()
    text, _ = report(trace_run(args.output_dir, args.flag, args.value, more), args.flag, args.value)
    print(text)


if __name__ == "__main__":
    main()
