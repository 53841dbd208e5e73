"""The command-line layer of the ``cli_*.py`` fire front ends, one module (``--help`` text: :mod:`scincl.cli.help`).

A front end is a table of :class:`Command` rows (``scincl/commands/<name>.py``), each one library function. A
row's :meth:`Command.signature` is the function's own with its ``**kwargs`` replaced by the flags it takes (the
settings' and the trainer's, from where they are declared), its documented old flag names and ``--wait``: fire
lists and routes the flags by it, and :func:`run_cli` checks the command line against it before anything runs
(an unknown flag names the closest one; a stray positional is refused; values by their type and range, once).
The library function that writes an output takes its lock (:func:`scincl.output_lock.writes`); ``--wait`` makes
it wait for another holder. User errors end in one line on stderr, exit code 2. The library never imports this.
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
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.errors import InputError, unknown_flag_error
from scincl.provenance import discard_pending
from scincl.settings.schema import check_settings
from scincl.settings.values import check_value, simple_type

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
HELP_TOKENS = ("--help", "-h")
HELP_ALL = "--help_all"
PBG_OVERRIDE_FLAGS = ("-p", "--p", "--param", "--overrides")
WAIT = "wait"  # every command: wait for the run holding an output's lock (scincl/output_lock.py)


@attrs.define(eq=False, slots=False)
class Command:
    """One subcommand: a library function and what the command line adds to it (a row of a commands table).

    - ``flags``: for a ``**kwargs`` function, the rows (:class:`scincl.cli.help.FlagInfo`) of the flags it takes;
      ``flag_names``: their names alone when cheaper (``run_specter``'s: the planner's list), else from ``flags``;
    - ``main``: the flags ``--help`` shows (every one: ``--help_all``); empty: the function's own; ``passes``: one
      phrase for ``--help`` naming what else it takes (``every transformers.TrainingArguments field``);
    - ``aliases``: ``{old name: flag}`` of documented command lines; ``repeatable``: flags given several times
      gathered into one list (fire keeps the last); ``checks_settings``: the library converts and checks its
      ``**kwargs`` itself (once); ``show``: what the command line prints of the result; ``doc_fills``: ``{name}``
      places of the docstring filled for ``--help``.
    """

    function: Callable
    flags: Optional[Callable[[], list]] = None
    flag_names: Optional[Callable[[], Iterable[str]]] = None
    main: Tuple[str, ...] = ()
    passes: str = ""
    aliases: Mapping[str, str] = attrs.field(factory=dict)
    repeatable: Tuple[str, ...] = ()
    checks_settings: bool = False
    show: Optional[Callable[[Any], Any]] = None
    doc_fills: Mapping[str, Callable[[], str]] = attrs.field(factory=dict)
    _signature: Optional[inspect.Signature] = attrs.field(default=None, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self.__doc__ = self.function.__doc__  # inspect.getdoc / fire read the function's docstring
        self.__wrapped__ = self.function

    @property
    def __name__(self) -> str:  # noqa: A003 - what fire and error lines call it
        return self.function.__name__

    @property
    def __signature__(self) -> inspect.Signature:
        """:meth:`signature`, so ``inspect.signature(command)`` (and fire) see every flag."""
        return self.signature()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The library function itself (old flag names accepted; no ``--wait``): the result, not what is shown."""
        return self.function(*args, **self.renamed(kwargs))

    def own_parameters(self) -> List[inspect.Parameter]:
        """The function's parameters without its ``**kwargs``."""
        return [p for p in inspect.signature(self.function).parameters.values() if p.kind is not p.VAR_KEYWORD]

    def extra_names(self) -> List[str]:
        """The flags the function takes through ``**kwargs`` (none without them)."""
        if not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(self.function).parameters.values()):
            return []
        own = {p.name for p in self.own_parameters()}
        names = self.flag_names() if self.flag_names else [row.name for row in (self.flags() if self.flags else [])]
        return [name for name in dict.fromkeys(names) if name not in own]

    def signature(self) -> inspect.Signature:
        """The full signature: the function's own parameters, then each ``**kwargs`` flag, old name and ``--wait``
        as a keyword (built once, when first asked: ``run_specter``'s flags name every trainer argument)."""
        if self._signature is None:
            own = self.own_parameters()
            taken = {p.name for p in own}
            extra = [n for n in [*self.extra_names(), *self.aliases, WAIT] if n not in taken]
            keyword = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None if n != WAIT else False)
                       for n in dict.fromkeys(extra)]
            open_kwargs = [p for p in inspect.signature(self.function).parameters.values() if p.kind is p.VAR_KEYWORD
                           and self.flags is None and self.flag_names is None]  # undeclared: left open
            self._signature = inspect.Signature(own + keyword + open_kwargs)
        return self._signature

    def takes(self, name: str) -> bool:
        """``--name`` is a flag of the command (its own parameters, old names and ``--wait`` answer without building
        the full signature)."""
        if name in {p.name for p in self.own_parameters()} or name in self.aliases or name == WAIT:
            return True
        params = self.signature().parameters
        return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())

    def flag_type(self, name: str) -> Optional[type]:
        """The type flag ``--name`` is checked as: its (or, for an old name, its flag's) type hint's; ``None``: by
        its range rule (a ``**kwargs`` flag, a hint of several kinds)."""
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
        """One call from the command line: values converted to their types and range-checked once (unless the
        library checks its settings itself), old names renamed, the outputs locked by the library (``--wait``: wait
        for their holder); the result as :attr:`show` says."""
        from scincl.output_lock import waiting

        values = dict(self.signature().bind(*args, **kwargs).arguments)
        for name, param in self.signature().parameters.items():
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
        if not self.checks_settings:
            defaults = {n: p.default for n, p in own.items() if p.default is not p.empty}
            check_settings(seen, bands={**defaults, **seen})
        check_training_length(seen)
        call_args: List[Any] = []
        if star is not None and values.get(star):  # every parameter before *args by position
            before = list(own)[:list(own).index(star)]
            call_args = [values.pop(n) for n in before] + list(values.pop(star))
        values.pop(star, None)
        with waiting(bool(wait)):
            result = self.function(*call_args, **values)
        return self.show(result) if self.show else result


def check_training_length(values: Mapping[str, Any]) -> None:
    """``--num_train_epochs 0`` without ``--max_steps``: no step would run and the base model would be saved."""
    epochs, max_steps = values.get("num_train_epochs"), values.get("max_steps")
    if epochs == 0 and not (isinstance(max_steps, int) and max_steps > 0):
        raise InputError("--num_train_epochs 0: no training step would run (give epochs > 0 or --max_steps N)")


def commands_of(source: Any) -> Dict[str, Command]:
    """The subcommands (name -> :class:`Command`) of a commands module or a ``cli_*.py`` namespace: its ``COMMANDS``
    table (a bare function in it is a row of its own)."""
    namespace = vars(source) if inspect.ismodule(source) else source
    return {name: row if isinstance(row, Command) else Command(row) for name, row in namespace["COMMANDS"].items()}


def library_functions(commands: Mapping[str, Command]) -> Dict[str, Callable]:
    """``{name: library function}``: what ``import cli_x; cli_x.<command>(...)`` calls from Python."""
    return {name: row.function for name, row in commands.items()}


def _is_flag(token: str) -> bool:
    """A flag token as fire reads one (``--name``, ``-x``); ``-1`` is a value."""
    return token.startswith("--") or (len(token) == 2 and token[0] == "-" and token[1].isalpha())


def split_arguments(tokens: Sequence[str]) -> Tuple[List[str], List[str]]:
    """``(positional values, flag names)`` of a command's arguments, read as fire reads them: a ``--name`` without
    ``=`` takes the next token as its value unless that is a flag too. Tokens after a bare ``--`` are fire's."""
    positional: List[str] = []
    names: List[str] = []
    i = 0
    while i < len(tokens) and tokens[i] != "--":
        token = tokens[i]
        if _is_flag(token):
            names.append(token.lstrip("-").split("=", 1)[0].replace("-", "_"))
            if "=" not in token and i + 1 < len(tokens) and not _is_flag(tokens[i + 1]):
                i += 1
        else:
            positional.append(token)
        i += 1
    return positional, names


def check_arguments(name: str, command: Command, tokens: Sequence[str]) -> None:
    """Refuse, before the command runs, more positional values than it has places for (fire would run the command
    with the first ones and fail on the rest after the work: ``run_specter OUT extra`` ran a whole pipeline first)
    and a flag its signature does not have, naming the closest one (the full signature is built only for a flag
    that is not the function's own)."""
    own = {p.name: p for p in command.own_parameters()}
    positional, names = split_arguments(tokens)
    if not any(p.kind is p.VAR_POSITIONAL for p in own.values()):
        places = [n for n, p in own.items() if p.kind is p.POSITIONAL_OR_KEYWORD and n not in names]
        if len(positional) > len(places):
            raise InputError(f"{name}: unexpected argument {positional[len(places)]!r}: it takes "
                             + (f"at most {len(places)} positional argument(s) ({', '.join(p.upper() for p in places)})"
                                if places else "no positional argument")
                             + f"; flags are --name value (`{name} --help` lists them)")
    for token in tokens:
        if token == "--":
            break
        flag = token[2:].split("=", 1)[0].replace("-", "_") if token.startswith("--") and len(token) > 2 else None
        if flag and flag != "help" and not command.takes(flag) and not (flag[:2] == "no" and command.takes(flag[2:])):
            raise unknown_flag_error(flag, name, command.signature().parameters)


def gather_repeated_flags(command: Command, argv: List[str]) -> List[str]:
    """The command's repeatable flags gathered into one list value each (fire keeps only the last):
    ``--corpus_dir A --corpus_dir=B`` becomes ``--corpus_dir=['A', 'B']``; a flag given once stays as it is."""
    if not command.repeatable:
        return argv
    values: Dict[str, List[str]] = {}
    rest: List[str] = []
    i = 0
    while i < len(argv):
        flag, eq, inline = argv[i].partition("=")
        name = flag[2:].replace("-", "_") if flag.startswith("--") else None
        if name in command.repeatable and (eq or i + 1 < len(argv)):
            values.setdefault(name, []).append(inline if eq else argv[i + 1])
            i += 0 if eq else 1
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


def command_line(commands: Mapping[str, Command], argv: List[str]) -> Tuple[Command, List[str]]:
    """The chosen command and its arguments as fire will read them, checked (:func:`check_arguments`)."""
    command = commands[argv[0]]
    tokens = argv[1:]
    if any(p.name == "overrides" for p in command.own_parameters()):
        tokens = gather_pbg_overrides(tokens)
    tokens = gather_repeated_flags(command, tokens)
    check_arguments(argv[0], command, tokens)
    return command, tokens


def fire_function(command: Command) -> Callable:
    """A plain function fire can call: ``command``'s full signature and docstring, :meth:`Command.run` inside."""
    def run(*args: Any, **kwargs: Any) -> Any:
        return command.run(args, kwargs)

    functools.update_wrapper(run, command.function, assigned=("__module__", "__name__", "__qualname__", "__doc__"),
                             updated=())
    run.__signature__ = command.signature()  # type: ignore[attr-defined]
    return run


def setup_logging(level: str | int | None = None) -> None:
    """Configure root logging once (level from ``SCINCL_LOG_LEVEL``, default INFO)."""
    logging.basicConfig(level=level or os.environ.get("SCINCL_LOG_LEVEL", "INFO"), format=LOG_FORMAT,
                        stream=sys.stderr)
    # faiss's loader logs each instruction set it tries at INFO ("Could not load library with AVX512 support"): no failure
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)


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
    text = " ".join(str(c) for c in chain)
    for phrase, code in WRITE_FAILURES:
        if phrase in text:
            failed = OSError(code, os.strerror(code) if code != errno.EIO else "a write failed (disk full?)")
            failed.filename = ""
            return failed
    return None


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


def _catch_sigterm() -> Any:
    """Install :func:`_raise_terminated` for SIGTERM (main thread only); returns the previous handler."""
    _MAIN_PID[0] = os.getpid()
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        return None


def help_requested(argv: Sequence[str]) -> Optional[str]:
    """``--help`` (also ``-h``) or ``--help_all`` among the arguments (before a bare ``--``: after it, fire's)."""
    for token in argv:
        if token == "--":
            return None
        if token in HELP_TOKENS or token == HELP_ALL:
            return token
    return None


def print_help(commands: Mapping[str, Command], argv: Sequence[str], prog: str) -> None:
    """``prog --help`` (the commands) or ``prog COMMAND --help`` / ``--help_all`` (its flags) on stdout."""
    from scincl.cli.help import format_command_help, format_command_list

    if argv and argv[0] in commands:
        sys.stdout.write(format_command_help(prog, argv[0], commands[argv[0]], every=help_requested(argv) == HELP_ALL))
    elif argv and not argv[0].startswith("-"):
        raise InputError(f"unknown command {argv[0]!r} (commands: {', '.join(commands)})")
    else:
        sys.stdout.write(format_command_list(prog, commands))


def run_cli(commands: Mapping[str, Command], name: str | None = None) -> None:
    """Run a front end's command line (``sys.argv``): ``--help``, or the chosen command checked
    (:func:`command_line`) and called through fire; user errors become one line on stderr and exit code 2."""
    import fire

    setup_logging()
    prog = name or os.path.basename(sys.argv[0])
    previous_sigterm = _catch_sigterm()
    commands = {n: row if isinstance(row, Command) else Command(row) for n, row in commands.items()}
    try:
        argv = sys.argv[1:]
        if help_requested(argv) or not argv:
            print_help(commands, argv, prog)
            return
        if argv[0] in commands:
            command, tokens = command_line(commands, argv)
            fire.Fire({argv[0]: fire_function(command)}, command=[argv[0], *tokens], name=prog)
        else:
            fire.Fire({n: fire_function(row) for n, row in commands.items()}, command=argv, name=prog)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            sys.exit(1)
        print(f"{prog}: error: {os_error_message(exc)}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted (Ctrl-C); temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(130)
    except Terminated:
        print(f"{prog}: terminated (SIGTERM); temporary files removed, rerun the command to resume", file=sys.stderr)
        sys.exit(143)
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
