"""The command-line layer of the ``cli_*.py`` fire front ends: one module, above the library (which never imports it).

A front end is a table of :class:`Command` rows (``scincl/commands/<name>.py``), each one library function. A
row's :meth:`Command.signature` is the function's own with its ``**kwargs`` replaced by the flags it takes (rows
read from where they are declared), its documented old flag names and ``--wait``: fire lists and routes the flags
by it, and :func:`run_cli` refuses an unknown flag (naming the closest) or a stray positional before anything
runs, then checks values by type and range once. The library function takes its outputs' locks
(:func:`scincl.output_lock.writes`); ``--wait`` waits for their holder. ``--help`` shows the flags a user sets,
``--help_all`` every flag with type, default, range and the source of the default. User errors, OS errors and
SIGTERM end in one line on stderr.
"""
from __future__ import annotations

import errno
import functools
import inspect
import logging
import os
import signal
import sys
import typing
from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.errors import InputError, unknown_flag_error
from scincl.provenance import discard_pending
from scincl.settings.schema import check_settings
from scincl.settings.values import check_value, simple_type

HELP_ALL = "--help_all"
PBG_OVERRIDE_FLAGS = ("-p", "--p", "--param", "--overrides")
WAIT = "wait"  # every command: wait for the run holding an output's lock (scincl/output_lock.py)


@attrs.define(eq=False, slots=False)
class Command:
    """One subcommand: a library function and what the command line adds to it (a row of a commands table).

    ``flags``: for a ``**kwargs`` function, the rows of the flags it takes (called with ``every=False`` for
    ``--help`` when it accepts that); ``main``: the flags ``--help`` shows (empty: the function's own);
    ``passes``: one phrase for ``--help`` naming what else it takes; ``aliases``: ``{old name: flag}``;
    ``repeatable``: flags given several times gathered into one list (fire keeps the last);
    ``checks_settings``: the library converts and checks its ``**kwargs`` itself; ``spec_flags``: flags whose values
    the library checks when it builds its spec first thing (the miner's: ``MinerSpec``), so the command line only
    converts their types; ``show``: what the command
    line prints of the result; ``doc_fills``: ``{name}`` places of the docstring filled for ``--help``.
    """

    function: Callable
    flags: Optional[Callable[..., list]] = None  # of scincl.cli.help.FlagInfo
    main: Tuple[str, ...] = ()
    passes: str = ""
    aliases: Mapping[str, str] = attrs.field(factory=dict)
    repeatable: Tuple[str, ...] = ()
    checks_settings: bool = False
    spec_flags: Collection[str] = frozenset()
    show: Optional[Callable[[Any], Any]] = None
    doc_fills: Mapping[str, Callable[[], str]] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        self.__doc__ = self.function.__doc__  # inspect.getdoc(command) reads the function's docstring

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The library function itself (old flag names accepted)."""
        return self.function(*args, **self.renamed(kwargs))

    def own_parameters(self) -> List[inspect.Parameter]:
        """The function's parameters without its ``**kwargs``."""
        return [p for p in inspect.signature(self.function).parameters.values() if p.kind is not p.VAR_KEYWORD]

    @functools.cached_property
    def __signature__(self) -> inspect.Signature:
        """The function's own parameters, then each ``**kwargs`` flag, old name and ``--wait`` as a keyword, so
        ``inspect.signature(command)`` and fire see every flag (built when first asked: ``run_specter``'s flags name
        every trainer argument)."""
        params = inspect.signature(self.function).parameters.values()
        own = self.own_parameters()
        extra = [r.name for r in self.flags()] if self.flags and any(p.kind is p.VAR_KEYWORD for p in params) else []
        keyword = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=False if n == WAIT else None)
                   for n in dict.fromkeys([*extra, *self.aliases, WAIT]) if n not in {p.name for p in own}]
        undeclared = [p for p in params if p.kind is p.VAR_KEYWORD and self.flags is None]  # left open
        return inspect.Signature(own + keyword + undeclared)

    def takes(self, name: str) -> bool:
        """``--name`` is a flag of the command (own parameters, old names and ``--wait`` without the full signature)."""
        if name in {p.name for p in self.own_parameters()} or name in self.aliases or name == WAIT:
            return True
        params = self.__signature__.parameters
        return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def flag_type(self, name: str) -> Optional[type]:
        """The type ``--name`` is checked as (its flag's type hint); ``None``: by its range rule."""
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

    def run(self, args: tuple, kwargs: dict) -> Any:
        """One call from the command line: values converted and range-checked once (unless the library checks its
        settings itself), old names renamed, ``--wait`` applied to the library's locks; the result as :attr:`show`
        says."""
        from scincl.output_lock import waiting

        values = dict(self.__signature__.bind(*args, **kwargs).arguments)
        for name, param in self.__signature__.parameters.items():
            if param.kind is param.VAR_KEYWORD:
                values.update(values.pop(name, {}))
        values = self.renamed(values)
        wait = check_value(WAIT, values.pop(WAIT, False), bool)
        own = {p.name: p for p in self.own_parameters()}
        star = next((n for n, p in own.items() if p.kind is p.VAR_POSITIONAL), None)
        for name, value in values.items():
            if name != star and (name in own or not self.checks_settings):
                values[name] = check_value(name, value, self.flag_type(name), check_range=False)
        seen = {name: value for name, value in values.items() if name != star}
        if not self.checks_settings:  # the flags no spec checks, each by its rule (the spec's: when it is built)
            given = {n: v for n, v in seen.items() if n not in self.spec_flags}
            defaults = {n: p.default for n, p in own.items() if p.default is not p.empty and n not in self.spec_flags}
            check_settings(given, bands={**defaults, **given})
        if seen.get("num_train_epochs") == 0 and not (isinstance(seen.get("max_steps"), int) and seen["max_steps"] > 0):
            raise InputError("--num_train_epochs 0: no training step would run (give epochs > 0 or --max_steps N)")
        call_args: List[Any] = []
        if star is not None and values.get(star):  # every parameter before *args by position
            call_args = [values.pop(n) for n in list(own)[:list(own).index(star)]] + list(values.pop(star))
        values.pop(star, None)
        with waiting(bool(wait)):
            result = self.function(*call_args, **values)
        return self.show(result) if self.show else result


def commands_of(source: Any) -> Dict[str, Command]:
    """The subcommands (name -> :class:`Command`) of a commands module or a ``cli_*.py`` namespace: its ``COMMANDS``
    table (a bare function in it is a row of its own)."""
    namespace = vars(source) if inspect.ismodule(source) else source
    return {name: row if isinstance(row, Command) else Command(row) for name, row in namespace["COMMANDS"].items()}


def library_functions(commands: Mapping[str, Command]) -> Dict[str, Callable]:
    """``{name: library function}``: what ``import cli_x; cli_x.<command>(...)`` calls from Python."""
    return {name: row.function for name, row in commands.items()}


# ---------------------------------------------------------------- the command line, checked before fire runs it
def _is_flag(token: str) -> bool:
    """A flag token as fire reads one (``--name``, ``-x``); ``-1`` is a value."""
    return token.startswith("--") or (len(token) == 2 and token[0] == "-" and token[1].isalpha())


def check_arguments(name: str, command: Command, tokens: Sequence[str]) -> None:
    """Refuse, before the command runs, a flag it does not take (naming the closest one) and more positional values
    than it has places for (fire would run it with the first ones and fail on the rest after the work), reading the
    tokens as fire does: a ``--name`` without ``=`` takes the next token as its value unless that is a flag too;
    tokens after a bare ``--`` are fire's."""
    positional: List[str] = []
    names: List[str] = []
    unknown: List[str] = []
    tokens = list(tokens[:list(tokens).index("--")] if "--" in tokens else tokens)
    i = 0
    while i < len(tokens):
        if not _is_flag(tokens[i]):
            positional.append(tokens[i])
        else:
            names.append(tokens[i].lstrip("-").split("=", 1)[0].replace("-", "_"))
            if tokens[i].startswith("--") and names[-1] != "help" and not command.takes(names[-1]) and not (
                    names[-1][:2] == "no" and command.takes(names[-1][2:])):
                unknown.append(names[-1])
            i += "=" not in tokens[i] and i + 1 < len(tokens) and not _is_flag(tokens[i + 1])
        i += 1
    own = {p.name: p for p in command.own_parameters()}
    places = [n for n, p in own.items() if p.kind is p.POSITIONAL_OR_KEYWORD and n not in names]
    if not any(p.kind is p.VAR_POSITIONAL for p in own.values()) and len(positional) > len(places):
        raise InputError(f"{name}: unexpected argument {positional[len(places)]!r}: it takes "
                         + (f"at most {len(places)} positional argument(s) ({', '.join(p.upper() for p in places)})"
                            if places else "no positional argument")
                         + f"; flags are --name value (`{name} --help` lists them)")
    if unknown:
        raise unknown_flag_error(unknown[0], name, command.__signature__.parameters)


def gather_repeated_flags(command: Command, argv: List[str]) -> List[str]:
    """The command's repeatable flags gathered into one list value each (fire keeps only the last):
    ``--corpus_dir A --corpus_dir=B`` becomes ``--corpus_dir=['A', 'B']``; a flag given once stays as it is."""
    values: Dict[str, List[str]] = {}
    rest: List[str] = []
    i = 0
    while i < len(argv):
        flag, eq, inline = argv[i].partition("=")
        name = flag[2:].replace("-", "_") if flag.startswith("--") else None
        if name in command.repeatable and (eq or i + 1 < len(argv)):
            values.setdefault(name, []).append(inline if eq else argv[i + 1])
            i += not eq
        else:
            rest.append(argv[i])
        i += 1
    return rest + [f"--{n}={given[0]}" if len(given) == 1 else f"--{n}={given!r}" for n, given in values.items()]


def gather_pbg_overrides(argv: List[str]) -> List[str]:
    """Every ``-p key=value [key=value ...]`` (PBG's repeatable flag, ``torchbiggraph_train``'s syntax) gathered
    into one ``--overrides``."""
    out: List[str] = []
    collected: List[str] = []
    i = 0
    while i < len(argv):
        flag, eq, inline = argv[i].partition("=")
        if flag in PBG_OVERRIDE_FLAGS and eq:
            collected.append(inline)
        elif argv[i] in PBG_OVERRIDE_FLAGS:
            while i + 1 < len(argv) and "=" in argv[i + 1] and not argv[i + 1].startswith("-"):
                i += 1
                collected.append(argv[i])
        else:
            out.append(argv[i])
        i += 1
    return out + (["--overrides", " ".join(collected)] if collected else [])


# ---------------------------------------------------------------- errors a user can act on, in one line
def os_error_message(exc: OSError) -> str:
    """A one-line explanation of an OS error that a user can act on (disk full, permissions)."""
    target = exc.filename or ""
    words = {errno.ENOSPC: f"no space left on device while writing {target}".strip(),
             errno.EACCES: f"permission denied: {target}", errno.EPERM: f"permission denied: {target}",
             errno.ENOENT: f"no such file or directory: {target}", errno.EROFS: f"read-only file system: {target}",
             errno.EDQUOT: f"disk quota exceeded while writing {target}".strip()}
    return words.get(exc.errno, f"{exc.strerror or exc}" + (f": {target}" if target else ""))


# a library error that says in words that a write failed (torch.save's zip writer, h5py) counts as an OSError
WRITE_FAILURES = (("No space left on device", errno.ENOSPC), ("Disk quota exceeded", errno.EDQUOT),
                  ("File too large", errno.EFBIG), ("file write failed", errno.EIO), ("Can't write data", errno.EIO),
                  ("iostream error", errno.EIO), ("inline_container.cc", errno.EIO))


def os_error_behind(exc: BaseException) -> Optional[OSError]:
    """The OS error that caused ``exc`` (itself, or one in its ``__cause__``/``__context__`` chain, or one a library
    names in words: :data:`WRITE_FAILURES`); ``None`` otherwise."""
    chain: List[BaseException] = []
    current: Optional[BaseException] = exc
    while current is not None and all(current is not c for c in chain):
        chain.append(current)
        if isinstance(current, OSError) and current.errno is not None:
            return current
        current = current.__cause__ or current.__context__
    code = next((code for phrase, code in WRITE_FAILURES if phrase in " ".join(str(c) for c in chain)), None)
    if code is None:
        return None
    return OSError(code, os.strerror(code) if code != errno.EIO else "a write failed (disk full?)", "")


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


def run_cli(commands: Mapping[str, Command], name: str | None = None) -> None:
    """Run a front end's command line (``sys.argv``): ``--help``, or the chosen command checked
    (:func:`check_arguments`) and called through fire; user errors become one line on stderr and exit code 2."""
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
    commands = {n: row if isinstance(row, Command) else Command(row) for n, row in commands.items()}
    try:
        argv = sys.argv[1:]
        asked = next((t for t in argv[:argv.index("--") if "--" in argv else len(argv)]
                      if t in ("--help", "-h", HELP_ALL)), None)
        if asked or not argv:
            from scincl.cli.help import print_help

            return print_help(commands, argv, prog, every=asked == HELP_ALL)
        if argv[0] not in commands:  # fire's own error line and command list
            return fire.Fire({n: row.function for n, row in commands.items()}, command=argv, name=prog)
        command, tokens = commands[argv[0]], argv[1:]
        if any(p.name == "overrides" for p in command.own_parameters()):
            tokens = gather_pbg_overrides(tokens)
        tokens = gather_repeated_flags(command, tokens)
        check_arguments(argv[0], command, tokens)

        def call(*args: Any, **kwargs: Any) -> Any:
            return command.run(args, kwargs)

        functools.update_wrapper(call, command.function, ("__module__", "__name__", "__qualname__", "__doc__"), ())
        call.__signature__ = command.__signature__  # type: ignore[attr-defined]
        fire.Fire({argv[0]: call}, command=[argv[0], *tokens], name=prog)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            sys.exit(1)
        print(f"{prog}: error: {os_error_message(exc)}", file=sys.stderr)
        sys.exit(2)
    except (KeyboardInterrupt, Terminated) as exc:
        stop = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else "terminated (SIGTERM)"
        print(f"{prog}: {stop}; temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(130 if isinstance(exc, KeyboardInterrupt) else 143)
    except Exception as exc:  # a write that failed inside a library (torch.save, h5py) on a full disk
        failed = os_error_behind(exc)
        if failed is None:
            raise
        print(f"{prog}: error: {os_error_message(failed)} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
              file=sys.stderr)
        sys.exit(2)
    finally:
        discard_pending()  # a failed command's begun records (kept where it wrote outputs: a rerun resumes)
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
