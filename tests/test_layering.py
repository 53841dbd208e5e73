"""Layering rules of DESIGN.md: the library never imports a ``cli_*`` front end; front ends are tables."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from scincl.cli import commands_of
from tests.conftest import REPO_ROOT as REPO, run_front_end

FRONT_ENDS = ("cli_s2orc", "cli_graph", "cli_triples", "cli_pipeline")


def _module_names() -> dict[str, Path]:
    return {".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): p
            for p in (REPO / "scincl").rglob("*.py")}


def _import_graph(unit) -> dict[str, set[str]]:
    """``unit(module) -> units it imports`` over every import of ``scincl/`` (also inside functions)."""
    modules = _module_names()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        imported = {m for m in targets if m in modules}  # `from scincl.x import y`: y a module or a name in x
        edges.setdefault(unit(name), set()).update(unit(m) for m in imported if unit(m) != unit(name))
    return edges


def _cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``edges`` (a path that returns to its start), or ``[]``."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return []

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return []


def test_no_import_cycles_between_packages_or_modules():
    """No package of scincl/ reaches itself through another (e.g. eval -> model -> triples -> eval), no module cycle."""
    packages = _import_graph(lambda m: ".".join(m.split(".")[:2]))  # scincl.graph, scincl.eval, scincl.corpus, ...
    assert {"scincl.scidocs_io", "scincl.corpus"} <= packages["scincl.triples"]  # the graph is real
    assert _cycle(packages) == []
    modules = _import_graph(lambda m: m)
    assert "scincl.pipeline.runner" in modules["scincl.pipeline.scincl_plan"]  # the graph is real
    assert _cycle(modules) == []  # also inside a package (e.g. corpus.detect -> corpus.s2ag -> corpus.detect)
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # the check sees a cycle


def test_the_settings_package_imports_only_the_errors():
    """scincl/settings/__init__.py's rule: the settings sit below every package that acts on them (these import
    their choices and defaults from it), so any of them may import it; checks needing those packages live in
    scincl/pipeline/scincl_plan.py."""
    packages = _import_graph(lambda m: ".".join(m.split(".")[:2]))
    assert packages["scincl.settings"] == {"scincl.errors"}
    assert "scincl.settings" in packages["scincl.graph"] and "scincl.settings" in packages["scincl.corpus"]


def test_the_pipeline_imports_nothing_from_the_cli_layer():
    """issue 39: scincl/pipeline imported the CLI's converters and help builders inside functions (run_checks,
    run_flags, experiment_kinds); the converter is a setting's (scincl/settings/values.py), the help rows are the
    CLI's (scincl/cli.py). Function-level imports count (the graph walks every import)."""
    packages = _import_graph(lambda m: ".".join(m.split(".")[:2]))
    assert "scincl.cli" not in packages["scincl.pipeline"]
    assert "scincl.pipeline" in packages["scincl.cli"]  # the graph is real: the CLI layer sits above


def test_the_evaluation_imports_nothing_from_the_pipeline():
    """issue 39 step 3: the pipeline plans and runs; the reports of finished runs (tables, plots, results pages,
    runs.csv) are scincl/eval's and take plain inputs (run folders, files, labels), so eval sits below the pipeline.
    The docs' tables read the runs through eval, not through the planner."""
    packages = _import_graph(lambda m: ".".join(m.split(".")[:2]))
    assert "scincl.pipeline" not in packages["scincl.eval"]
    assert "scincl.pipeline" not in packages["scincl.docs_tables"]
    assert "scincl.eval" in packages["scincl.pipeline"]  # the graph is real: the pipeline calls the reports


def _cli_imports(path: Path) -> list[str]:
    """``file:line name`` of every import of a ``cli_*`` module (statements, importlib, __import__)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                names = [str(node.args[0].value)]
        found += [f"{path.relative_to(REPO)}:{node.lineno} {n}" for n in names if n.split(".")[0].startswith("cli_")]
    return found


def test_no_library_module_imports_a_front_end():
    offenders = [hit for path in sorted((REPO / "scincl").rglob("*.py")) for hit in _cli_imports(path)]
    assert offenders == []


def test_the_check_sees_each_import_form(tmp_path):
    sample = REPO / "scincl" / "_layering_probe.py"
    sample.write_text("import cli_graph\nfrom cli_s2orc import get_citations\nimport importlib\n"
                      "importlib.import_module('cli_triples')\n__import__('cli_pipeline')\nimport scincl.cli\n")
    try:
        assert [h.split(" ")[1] for h in _cli_imports(sample)] == list(("cli_graph", "cli_s2orc", "cli_triples",
                                                                        "cli_pipeline"))
    finally:
        sample.unlink()


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_front_ends_are_tables_of_library_commands(front_end):
    module = __import__(front_end)
    library = __import__(f"scincl.commands.{front_end[4:]}", fromlist=["_"])
    assert {n: c.function for n, c in module.COMMANDS.items()} == {n: c.function for n, c in commands_of(library).items()}
    assert all(c.function.__module__.startswith("scincl.") for c in module.COMMANDS.values())
    functions = [n for n in ast.parse((REPO / f"{front_end}.py").read_text()).body
                 if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert functions == [], f"{front_end}.py defines code; commands belong in scincl/commands/"


def test_misspelled_flag_is_rejected_before_work_with_the_closest_name(tmp_path):
    done = run_front_end("cli_graph.py", "build_faiss", tmp_path / "e.h5", tmp_path / "i", "--do_normalise",
                         timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "cli_graph.py: error: --do_normalise: unknown flag for build_faiss (did you mean --do_normalize?)")
    assert not (tmp_path / "i").exists()


def test_run_specter_takes_exactly_the_flags_its_help_lists():
    """The planner's list of run_specter's flags (no CLI import), the CLI's --help_all rows and the command's
    signature (what fire routes by) name the same flags."""
    import cli_pipeline
    from scincl.cli import run_specter_flag_info
    from scincl.pipeline.scincl_plan import run_specter_flag_groups

    assert {row.name for row in run_specter_flag_info()} == set(run_specter_flag_groups())
    assert set(inspect.signature(cli_pipeline.COMMANDS["run_specter"]).parameters) == {
        "output_dir", *run_specter_flag_groups(), "wait"}
