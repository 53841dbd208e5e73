"""The command-line layer of the ``cli_*.py`` fire front ends, above the library (which never imports it).

A front end is a table of :class:`Command` rows (``scincl/commands/<name>.py``): library functions with full
signatures, so fire lists and routes every flag. :func:`run_cli` refuses an unknown flag or a stray positional before
anything runs, checks values once and ends a user error, an OS error or SIGTERM in one line on stderr.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import signal
import sys
import typing
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import attrs

from scincl.errors import InputError, os_error_line, unknown_flag_error
from scincl.provenance import discard_pending
from scincl.settings.schema import check_settings
from scincl.settings.values import check_value, simple_type

HELP_ALL = "--help_all"
PBG_OVERRIDE_FLAGS = ("-p", "--p", "--param", "--overrides")
WAIT = "wait"  # every command: wait for the run holding an output's lock (scincl/output_lock.py)


@attrs.define(eq=False, slots=False)
class Command:
    """One subcommand: a library function and what the command line adds to it (a row of a commands table).

    ``flags``: the rows of the flags its ``**kwargs`` take; ``main``: those ``--help`` shows (empty: the function's
    own); ``passes``: a phrase for ``--help`` naming the others; ``aliases``: ``{old name: flag}``; ``repeatable``:
    flags given several times gathered into one list; ``library_checks``: flags whose range the library checks
    (``True``: every ``**kwargs`` flag, which it also converts); ``show``: what the command line prints of the
    result; ``doc_fills``: ``{name}`` places of the docstring filled for ``--help``.
    """

    function: Callable
    flags: Optional[Callable[[], list]] = None  # of scincl.cli.help.FlagInfo
    main: Tuple[str, ...] = ()
    passes: str = ""
    aliases: Mapping[str, str] = attrs.field(factory=dict)
    repeatable: Tuple[str, ...] = ()
    library_checks: Union[bool, Collection[str]] = ()
    show: Optional[Callable[[Any], Any]] = None
    doc_fills: Mapping[str, Callable[[], str]] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        self.__doc__ = self.function.__doc__  # inspect.getdoc(command) reads the function's docstring
        self.own = {n: p for n, p in inspect.signature(self.function).parameters.items() if p.kind is not p.VAR_KEYWORD}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The library function itself (old flag names accepted)."""
        return self.function(*args, **self.renamed(kwargs))

    @functools.cached_property
    def __signature__(self) -> inspect.Signature:
        """The function's parameters with its ``**kwargs`` replaced by its flags, then its old names and ``--wait``,
        so fire and ``inspect.signature`` see every flag (built when first asked: some rows import transformers)."""
        params = inspect.signature(self.function).parameters.values()
        keyword = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False if n == WAIT else None)
                   for n in dict.fromkeys([*(row.name for row in (self.flags() if self.flags else ())),
                                           *self.aliases, WAIT]) if n not in self.own]
        return inspect.Signature(sorted([p for p in params if p.name in self.own or not self.flags] + keyword,
                                        key=lambda p: p.kind))

    def takes(self, name: str) -> bool:
        """``--name`` is a flag of the command (its own, an old name and ``--wait`` without the full signature)."""
        if name in self.own or name in self.aliases or name == WAIT:
            return True
        params = self.__signature__.parameters
        return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def flag_type(self, name: str) -> Optional[type]:
        """The type ``--name`` is converted to (its parameter's type hint); ``None``: its rule's kind."""
        try:
            hints = typing.get_type_hints(self.function)
        except Exception:  # an annotation that does not resolve: by its rule
            hints = {}
        return bool if name == WAIT else simple_type(hints.get(self.aliases.get(name, name)))

    def renamed(self, kwargs: Dict[str, Any]) -> Dict[str, Any]:
        """``kwargs`` with old flag names under their flag's name; both given is an :class:`InputError`."""
        out = dict(kwargs)
        for old, new in self.aliases.items():
            if old in out:
                if new in out:
                    raise InputError(f"--{old} is the old name of --{new}: give one")
                out[new] = out.pop(old)
        return out

    def doc(self) -> str:
        """The docstring with its ``{name}`` places filled (``reproduce``'s experiment kinds)."""
        doc = inspect.cleandoc(self.function.__doc__ or "")
        for name, fill in self.doc_fills.items():
            doc = doc.replace("{" + name + "}", fill())
        return doc

    def run(self, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
        """One call from the command line (fire passes every positional parameter by position): old names renamed,
        values converted and range-checked once where the library does not, ``--wait`` applied to the library's
        locks; the result as :attr:`show` says."""
        from scincl.output_lock import waiting

        kwargs = self.renamed(kwargs)
        wait = check_value(WAIT, kwargs.pop(WAIT, False), bool)
        named = [n for n, p in self.own.items() if p.kind is p.POSITIONAL_OR_KEYWORD][:len(args)]
        given = {**{n: kwargs.pop(n, value) for n, value in zip(named, args)}, **kwargs}  # an old name: its place
        for name, value in given.items():
            if name in self.own or self.library_checks is not True:
                given[name] = check_value(name, value, self.flag_type(name), check_range=False)
        if self.library_checks is not True:
            checked = {n: v for n, v in given.items() if n not in self.library_checks}
            defaults = {n: p.default for n, p in self.own.items()
                        if p.default is not p.empty and n not in self.library_checks}
            check_settings(checked, bands={**defaults, **checked})
        positional = [given.pop(n) for n in named] + list(args[len(named):])  # then *args as given
        with waiting(bool(wait)):
            result = self.function(*positional, **given)
        return self.show(result) if self.show else result


def commands_of(source: Any) -> Dict[str, Command]:
    """The subcommands of a commands module or a ``cli_*.py`` namespace: its ``COMMANDS`` table (a bare function in it
    is a row of its own)."""
    namespace = vars(source) if inspect.ismodule(source) else source
    return {name: row if isinstance(row, Command) else Command(row) for name, row in namespace["COMMANDS"].items()}


def library_functions(commands: Mapping[str, Command]) -> Dict[str, Callable]:
    """``{name: library function}``: what ``import cli_x; cli_x.<command>(...)`` calls from Python."""
    return {name: row.function for name, row in commands.items()}


# ---------------------------------------------------------------- the command line, read before fire runs it
def _is_flag(token: str) -> bool:
    """A flag token as fire reads one (``--name``, ``-x``); ``-1`` is a value."""
    return token.startswith("--") or (len(token) == 2 and token[0] == "-" and token[1].isalpha())


def read_argv(command: Command, tokens: Sequence[str]) -> Tuple[List[str], List[str], List[str]]:
    """``(tokens for fire, positional values, names of the --flags)``, reading ``tokens`` once as fire does (a
    ``--name`` without ``=`` takes the next token unless that is a flag; tokens after ``--`` are fire's): PBG's
    ``-p key=value [key=value ...]`` gathered into one ``--overrides`` (for a command that takes overrides) and a
    repeatable flag's values into one list (fire keeps the last)."""
    end = list(tokens).index("--") if "--" in tokens else len(tokens)
    out, positional, names, overrides = [], [], [], []  # type: List[str], List[str], List[str], List[str]
    repeated: Dict[str, List[str]] = {}
    i = 0
    while i < end:
        flag, eq, value = tokens[i].partition("=")
        name = flag.lstrip("-").replace("-", "_")
        if flag in PBG_OVERRIDE_FLAGS and "overrides" in command.own:
            overrides += [value] if eq else []
            while not eq and i + 1 < end and "=" in tokens[i + 1] and not tokens[i + 1].startswith("-"):
                i += 1
                overrides.append(tokens[i])
        elif flag.startswith("--") and name in command.repeatable and (eq or i + 1 < end):
            repeated.setdefault(name, []).append(value if eq else tokens[i + 1])
            i += not eq
        elif _is_flag(tokens[i]):
            names += [name] if flag.startswith("--") else []
            out.append(tokens[i])
            if not eq and i + 1 < end and not _is_flag(tokens[i + 1]):
                i += 1
                out.append(tokens[i])
        else:
            positional.append(tokens[i])
            out.append(tokens[i])
        i += 1
    names += [*repeated, *(["overrides"] if overrides else [])]
    out += [f"--{n}={given[0]}" if len(given) == 1 else f"--{n}={given!r}" for n, given in repeated.items()]
    return out + (["--overrides", " ".join(overrides)] if overrides else []) + list(tokens[end:]), positional, names


def check_argv(name: str, command: Command, positional: Sequence[str], names: Sequence[str]) -> None:
    """Refuse, before the command runs, more positional values than it has places for (fire would run it with the
    first ones and fail on the rest after the work), a flag it does not take (naming the closest one) and a flag
    given under its old and its new name."""
    places = [n for n, p in command.own.items() if p.kind is p.POSITIONAL_OR_KEYWORD and n not in names]
    if not any(p.kind is p.VAR_POSITIONAL for p in command.own.values()) and len(positional) > len(places):
        raise InputError(f"{name}: unexpected argument {positional[len(places)]!r}: it takes "
                         + (f"at most {len(places)} positional argument(s) ({', '.join(p.upper() for p in places)})"
                            if places else "no positional argument")
                         + f"; flags are --name value (`{name} --help` lists them)")
    unknown = [n for n in names if not command.takes(n) and not (n[:2] == "no" and command.takes(n[2:]))]
    if unknown:
        raise unknown_flag_error(unknown[0], name, command.__signature__.parameters)
    command.renamed(dict.fromkeys([*names, *places[:len(positional)]]))


# ---------------------------------------------------------------- SIGTERM and the one error line
class Terminated(BaseException):
    """SIGTERM (Slurm's time limit, ``kill``): raised in the main thread so ``finally`` blocks remove temporary
    files and locks are released before the process exits (rc 143)."""


_MAIN_PID = [0]  # the process that installed the handler (forked workers inherit it and just die)


def _raise_terminated(signum, frame):  # noqa: ARG001 - signal handler signature
    if os.getpid() != _MAIN_PID[0]:  # a forked worker: die as by default, its parent cleans up
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    raise Terminated()


def run_cli(commands: Mapping[str, Command], name: Optional[str] = None) -> None:
    """Run a front end's command line (``sys.argv``): ``--help``, or the chosen command checked (:func:`read_argv`,
    :func:`check_argv`) and called through fire; a user error or an OS error ends in one line on stderr (exit 2)."""
    import fire

    logging.basicConfig(level=os.environ.get("SCINCL_LOG_LEVEL", "INFO"), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # its INFO lines name instruction sets it tried
    prog = name or os.path.basename(sys.argv[0])
    _MAIN_PID[0] = os.getpid()
    try:
        previous_sigterm = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        previous_sigterm = None
    try:
        argv = sys.argv[1:]
        asked = next((t for t in argv[:argv.index("--") if "--" in argv else len(argv)]
                      if t in ("--help", "-h", HELP_ALL)), None)
        if asked or not argv:
            from scincl.cli.help import print_help

            return print_help(commands, argv, prog, every=asked == HELP_ALL)
        if argv[0] not in commands:  # fire's own error line and command list
            return fire.Fire(library_functions(commands), command=argv, name=prog)
        command = commands[argv[0]]
        tokens, positional, names = read_argv(command, argv[1:])
        check_argv(argv[0], command, positional, names)

        def call(*args: Any, **kwargs: Any) -> Any:
            return command.run(args, kwargs)

        functools.update_wrapper(call, command.function, ("__module__", "__name__", "__qualname__", "__doc__"), ())
        call.__signature__ = command.__signature__  # type: ignore[attr-defined]
        fire.Fire({argv[0]: call}, command=[argv[0], *tokens], name=prog)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except (KeyboardInterrupt, Terminated) as exc:
        stop = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
        print(f"{prog}: {stop}; temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(130 if isinstance(exc, KeyboardInterrupt) else 143)
    except Exception as exc:  # an OS error, or a write that failed inside a library (torch.save, h5py)
        if isinstance(exc, BrokenPipeError):
            sys.exit(1)
        line = os_error_line(exc)
        if line is None:
            raise
        print(f"{prog}: error: {line}", file=sys.stderr)
        sys.exit(2)
    finally:
        discard_pending()  # a failed command's begun records (kept where it wrote outputs: a rerun resumes)
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
