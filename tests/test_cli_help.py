"""`--help` / `--help_all` of every subcommand of the four cli_*.py (scincl/cli.py): exit 0, stdout;
`--help_all` lists every flag of the command's signature with type, default and source, `--help` the ones a user
sets (issue 42 item 7); no spurious commands; a stray positional argument is an error."""
from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

from scincl.cli import commands_of, run_cli
from tests.conftest import REPO_ROOT as REPO

FRONT_ENDS = ("cli_s2orc", "cli_graph", "cli_triples", "cli_pipeline")
SUBCOMMANDS = [(m, name) for m in FRONT_ENDS for name in commands_of(importlib.import_module(m))]


def _help(monkeypatch, capsys, argv):
    monkeypatch.setattr(sys, "argv", argv)
    run_cli(commands_of(importlib.import_module(argv[0][:-3])))  # returns (exit code 0), never runs the command
    out, err = capsys.readouterr()
    return out


@pytest.mark.parametrize("module,name", SUBCOMMANDS, ids=[f"{m}.{n}" for m, n in SUBCOMMANDS])
def test_every_subcommand_help_all_lists_every_flag_with_type_default_and_source(module, name, monkeypatch, capsys):
    out = _help(monkeypatch, capsys, [f"{module}.py", name, "--help_all"])
    assert out.startswith(f"usage: {module}.py {name}")
    command = commands_of(importlib.import_module(module))[name]
    flags = set(inspect.signature(command).parameters) - {"wait"} - set(command.aliases)  # the full signature
    assert not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(command).parameters.values())
    listed = {line.split()[0].lstrip("-"): line for line in out.splitlines()
              if line.startswith("  ") and not line.startswith("      ") and "  default: " in line}
    assert set(flags) <= set(listed), sorted(set(flags) - set(listed))
    for line in listed.values():  # NAME TYPE  default: X  [source]
        assert len(line.split()) >= 4 and line.rstrip().endswith("]") and "[" in line
    count = int(out.split("\nFlags (")[1].split(";")[0])
    assert count == len([n for n, line in listed.items() if line.lstrip().startswith("--")])


def test_command_lists_have_no_spurious_commands(monkeypatch, capsys):
    out = _help(monkeypatch, capsys, ["cli_pipeline.py", "--help"])
    names = [line.split()[0] for line in out.split("Commands:\n")[1].splitlines() if line.strip()]
    assert names == list(commands_of(importlib.import_module("cli_pipeline")))
    detail = _help(monkeypatch, capsys, ["cli_pipeline.py", "run_specter", "--help"])
    assert "extra_flags" not in out + detail and "COMMAND" not in detail
    from scincl.pipeline.experiment_kinds import KINDS  # reproduce --help: the kinds of the registry, every one

    reproduce = _help(monkeypatch, capsys, ["cli_pipeline.py", "reproduce", "--help"])
    assert f"experiment: {' | '.join(KINDS)}." in reproduce
    # the EXPERIMENT row too (it printed the docstring's "{kinds}." before the fill reached the rows)
    assert "{kinds}" not in reproduce and f"EXPERIMENT str\n      {' | '.join(KINDS)}." in reproduce


def test_run_specter_help_on_stdout_exit_0_and_stray_positional_is_an_error(tmp_path):
    done = subprocess.run([sys.executable, "cli_pipeline.py", "run_specter", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--hard_negatives_k_max int  default: paper 4000 / demo 200" in done.stdout
    assert "--learning_rate float  default: 2e-05 (demo 5e-05" in done.stdout
    # issue 42 item 7: the flags a user sets with one line of help each, no TrainingArguments rows, no sources;
    # usage shows flags as flags
    flags = [line for line in done.stdout.splitlines() if line.startswith("  --")]
    assert 12 <= len(flags) <= 25 and "--graph_leakage" not in done.stdout and "--fp16" in done.stdout
    assert not any(line.rstrip().endswith("]") for line in flags) and "Union[" not in done.stdout
    assert done.stdout.startswith("usage: cli_pipeline.py run_specter [OUTPUT_DIR] [--flag value ...]\n")
    every = subprocess.run([sys.executable, "cli_pipeline.py", "run_specter", "--help_all"], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert every.returncode == 0 and "--graph_leakage bool  default: False" in every.stdout
    assert "--fp16 bool  default: False  [transformers.TrainingArguments]" in every.stdout
    # a positional beyond OUTPUT_DIR and SEEDS is refused before any stage runs (fire ran the pipeline first)
    stray = subprocess.run([sys.executable, "cli_pipeline.py", "run_specter", str(tmp_path / "out"), "0", "extra_flags"],
                           cwd=REPO, capture_output=True, text=True, timeout=120)
    assert stray.returncode == 2 and "unexpected argument 'extra_flags'" in stray.stderr
    assert not (tmp_path / "out").exists()


def test_a_flag_renamed_to_the_library_parameter_keeps_its_old_name_as_an_alias(monkeypatch, capsys, tmp_path):
    """`evaluate` is run_evaluation itself: --model_dirs / --classifier_backend, with the documented old names as
    parameters of its signature (no argv rewriting)."""
    from scincl.errors import InputError

    command = commands_of(importlib.import_module("cli_pipeline"))["evaluate"]
    assert {"model_dir", "classifier", "model_dirs"} <= set(inspect.signature(command).parameters)
    assert command.renamed({"model_dir": "m1,m2", "classifier": "sklearn", "n_jobs": 1}) == {
        "model_dirs": "m1,m2", "classifier_backend": "sklearn", "n_jobs": 1}
    with pytest.raises(InputError, match="^--model_dir is the old name of --model_dirs: give one$"):
        command("sd", str(tmp_path / "out"), model_dir="a", model_dirs="b")
    out = _help(monkeypatch, capsys, ["cli_pipeline.py", "evaluate", "--help"])
    assert "(also --model_dir, its old name)" in out and "(also --classifier, its old name)" in out


def test_an_old_name_of_a_positional_parameter_works_from_the_command_line(monkeypatch, capsys, tmp_path):
    """fire passes every positional parameter, --model_dirs' default () included: `evaluate ... --model_dir a` was
    refused with 'give one' although one was given; the old name's value now takes its parameter's place."""
    for flags, line in ((["--model_dir", "a"], "SciDocs directory not found"),  # past the flags: the library's check
                        (["--model_dir", "a", "--model_dirs", "b"], "--model_dir is the old name of --model_dirs"),
                        (["test", "b", "--model_dir", "a"], "--model_dir is the old name of --model_dirs")):
        monkeypatch.setattr(sys, "argv", ["cli_pipeline.py", "evaluate", str(tmp_path / "sd"), str(tmp_path / "out"),
                                          *flags])
        with pytest.raises(SystemExit):
            run_cli(commands_of(importlib.import_module("cli_pipeline")))
        assert line in capsys.readouterr().err


def test_importing_a_front_end_loads_no_torch():
    """The tables point at library functions; importing them must stay cheap (`--help`, flag errors: no torch)."""
    probe = ("import sys, cli_pipeline, cli_triples, cli_graph, cli_s2orc; "
             "print(sorted(m for m in ('torch', 'transformers', 'faiss') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr
