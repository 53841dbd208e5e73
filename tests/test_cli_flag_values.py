"""Every documented flag value passes the CLI's checks, and each flag's rule fits the type its command takes.

A flag's accepted values come from one place: the command's type hint, and for a number its rule
(:data:`scincl.settings.values.RANGES`, words such as ``specter`` included). Walked here: the command lines of
README.md and docs/*.md (every label, with literal values; ``${VAR}`` values are skipped), the ``Example``
lines of every command's docstring, and the quoted values a ``:param`` line documents
(``get_specter_corpus --sample_n_nodes specter`` failed the type check before this test). No command runs.
"""
from __future__ import annotations

import importlib
import inspect
import re
import shlex

import pytest
from fire import parser as fire_parser

from scincl.cli import commands_of, read_argv
from scincl.settings.values import RANGES, check_value
from scincl.docs_blocks import doc_files, shell_blocks
from scincl.errors import InputError
from tests.conftest import REPO_ROOT

FRONT_ENDS = ("cli_s2orc", "cli_graph", "cli_triples", "cli_pipeline")
SHELL_WORDS = re.compile(r"[$<>|;`*]")  # a value the shell computes or a placeholder: not checked
PARAM_WORD = re.compile(r"'([A-Za-z_]\w*)'")  # a named value quoted in a :param line


@pytest.fixture(scope="module")
def commands():
    return {name: commands_of(importlib.import_module(name)) for name in FRONT_ENDS}


def documented_lines():
    """``(where, text)`` of every documented command line: the docs' shell blocks and the commands' docstrings."""
    for path in doc_files(REPO_ROOT):
        for block in shell_blocks(path):
            yield from ((block.where, line) for line in block.code.replace("\\\n", " ").splitlines())
    for front_end in FRONT_ENDS:
        for name, function in commands_of(importlib.import_module(front_end)).items():
            doc = re.sub(r"\\\n\s*", " ", inspect.getdoc(function) or "")
            yield from ((f"{front_end}.py {name} docstring", line) for line in doc.splitlines() if "cli_" in line)


def flag_values(tokens):
    """``[(name, text)]`` of the ``--name value`` / ``--name=value`` flags in a command's tokens."""
    pairs = []
    for i, token in enumerate(tokens):
        if not token.startswith("--") or token == "--":
            continue
        name, eq, value = token[2:].partition("=")
        if not eq and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            value = tokens[i + 1]
        if eq or value:
            pairs.append((name.replace("-", "_"), value))
    return pairs


def test_documented_command_lines_flag_values_pass_the_cli_checks(commands):
    checked, failures = 0, []
    for where, line in documented_lines():
        try:
            tokens = shlex.split(line, comments=True)
        except ValueError:  # an unterminated quote of a prose line
            continue
        for i, token in enumerate(tokens[:-1]):
            table = commands.get(token.rsplit("/", 1)[-1][:-3]) if token.endswith(".py") else None
            if not table or tokens[i + 1] not in table:
                continue
            command = table[tokens[i + 1]]
            argv = read_argv(command, tokens[i + 2:])[0]
            for name, text in flag_values(argv):
                if SHELL_WORDS.search(text) or name.startswith("no"):
                    continue
                try:
                    check_value(name, fire_parser.DefaultParseValue(text), command.flag_type(name))
                    checked += 1
                except InputError as exc:
                    failures.append(f"{where}: {tokens[i + 1]} --{name} {text}: {exc}")
    assert not failures, "\n".join(failures)
    assert checked > 150  # the walk reaches the docs (180 literal values at this commit)


def test_each_rule_fits_its_flags_type_and_takes_the_documented_words(commands):
    for table in commands.values():
        for command, row in table.items():
            doc = inspect.getdoc(row) or ""
            for name, param in inspect.signature(row.function).parameters.items():
                rule = RANGES.get(name)
                if rule is None or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
                    continue
                kind = row.flag_type(name)
                assert kind not in (str, bool), f"{command} --{name}: a {kind.__name__} flag with a numeric rule"
                hint = inspect.unwrap(row.function).__annotations__.get(name)
                takes_words = kind is None and "str" in str(hint)
                # a number-or-name flag (Union[int, str]) whose rule names no word would reject every name
                assert rule.words or not takes_words, f"{command} --{name}: {hint} but its rule takes no word"
                documented = re.search(rf":param {name}:(.*)|^\s+{name}:(.*)", doc, re.M)
                words = PARAM_WORD.findall("".join(filter(None, documented.groups()))) if documented else []
                for word in words:  # each documented name passes the CLI's check
                    assert check_value(name, word, kind) == word, f"{command} --{name} {word}"
                if takes_words:  # and the rule names no word the command does not document
                    assert set(rule.words) <= set(words), f"{command} --{name}: {rule.words} not in its help"


def test_a_miner_flag_is_range_checked_once_when_its_spec_is_built(commands, tmp_path):
    """issue 39: `get_knn_triples --hard_negatives_k_max -1` and `run_specter --hard_negatives_k_max -1`: the command
    line converts the value's type; its range is checked by MinerSpec's validator when the spec is built (not also
    by the CLI's or the settings' rule check first)."""
    from scincl.pipeline.scincl_plan import settings_from_flags

    def checked_where(call):
        with pytest.raises(InputError, match=r"^--hard_negatives_k_max -1: must be >= 0$") as err:
            call()
        return {entry.name for entry in err.traceback}

    knn = commands["cli_triples"]["get_knn_triples"]
    cli = checked_where(lambda: knn(str(tmp_path / "t.csv"), "ids.json", "e.h5", hard_negatives_k_max=-1))
    run = checked_where(lambda: settings_from_flags(str(tmp_path / "run"), {"hard_negatives_k_max": -1}))
    for frames in (cli, run):
        assert "_validate" in frames and "check_settings" not in frames
    assert {"__call__", "make_config"} <= cli and "resolve" in run  # the spec is built where the settings are resolved
    assert not (tmp_path / "t.csv").exists()
