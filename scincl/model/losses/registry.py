"""``--loss`` names -> loss classes, one registry (PyTorch-BigGraph's ``register_as`` shape).

Each loss class registers itself under the name ``cli_pipeline.py train --loss`` uses and declares
its own options (``flags``: train flag -> constructor argument, whose type and default are the constructor's),
as sentence-transformers' losses declare theirs (``get_config_dict``): :func:`loss_options` collects them, so
``train``, ``run_specter`` and ``--help`` take them from the losses instead of restating them.
:func:`build_loss` builds the class from those flags; a flag left at ``None`` keeps the loss's own documented
default.
"""
from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Tuple, Type

from torch import nn

from scincl.errors import InputError
from scincl.settings.values import check_value

LOSSES: Dict[str, Type[nn.Module]] = {}


def register_loss(name: str) -> Callable[[Type[nn.Module]], Type[nn.Module]]:
    """Class decorator: make the loss available as ``--loss name``."""

    def register(cls: Type[nn.Module]) -> Type[nn.Module]:
        if name in LOSSES:
            raise ValueError(f"loss {name!r} is registered twice ({LOSSES[name].__name__}, {cls.__name__})")
        LOSSES[name] = cls
        cls.loss_name = name
        return cls

    return register


def loss_names() -> List[str]:
    """Registered ``--loss`` names, in registration order."""
    return list(LOSSES)


def check_loss_name(name: str, flag: str = "--loss") -> str:
    """``name`` when it is a registered loss, else one :class:`InputError` line naming them (``flag``: the flag that
    gave it): the check of ``train``, ``run_specter`` and the experiments' ``--loss`` / ``--losses``."""
    if name not in LOSSES:
        raise InputError(f"unknown {flag} {name!r}; choose one of {', '.join(LOSSES)}")
    return name


@dataclass(frozen=True)
class LossOption:
    """One option the losses declare: its ``train`` flag, its type and each declaring loss's default."""

    flag: str
    type: Any
    defaults: Dict[str, Any]  # loss name -> the default of its constructor argument

    @property
    def losses(self) -> Tuple[str, ...]:
        return tuple(self.defaults)


def loss_options() -> Dict[str, LossOption]:
    """Every ``train`` flag a registered loss declares (``flags``), with the type and default of the constructor
    argument it sets, in registration order."""
    options: Dict[str, LossOption] = {}
    for name, cls in LOSSES.items():
        parameters = inspect.signature(cls.__init__).parameters
        hints = typing.get_type_hints(cls.__init__)
        for flag, argument in getattr(cls, "flags", {}).items():
            known = options.get(flag)
            defaults = {**(known.defaults if known else {}), name: parameters[argument].default}
            options[flag] = LossOption(flag, hints.get(argument, Any), defaults)
    return options


def take_loss_options(flags: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``flags`` split into the losses' options (:func:`loss_options`) and the rest."""
    options = loss_options()
    return ({k: v for k, v in flags.items() if k in options}, {k: v for k, v in flags.items() if k not in options})


def build_loss(name: str, **flags: Any) -> nn.Module:
    """The loss registered as ``name``, built from the ``train`` flags it declares.

    Flags the loss does not read are ignored; ``None`` means "the loss's default". Each value is checked as the
    command line checks it (its range: :data:`scincl.settings.rules.FLAG_RULES`), also when a loss is built in
    Python (``triplet_margin=-1`` is one :class:`InputError` line).

    >>> build_loss("triplet", triplet_margin=0.5).margin
    0.5
    """
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(LOSSES)}")
    cls = LOSSES[name]
    kwargs = {argument: check_value(flag, flags[flag], None) for flag, argument in getattr(cls, "flags", {}).items()
              if flags.get(flag) is not None}
    return cls(**kwargs)


def loss_revision(name: str) -> int:
    """Revision of the loss registered as ``name``: 1, bumped when its definition changes.

    A class sets ``revision`` when a fix changes what the same name and flags compute (issue 12:
    ``infonce``'s and ``angle``'s defaults; issue 25: ``mpt-*`` as printed, ``angle``'s averaged
    in-batch term), so runs of an older definition are never reused as runs of the new one (it
    enters ``loss_settings`` and the experiments' run keys).
    """
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose one of {', '.join(LOSSES)}")
    return int(getattr(LOSSES[name], "revision", 1))


def loss_settings(loss: nn.Module) -> Dict[str, Any]:
    """The resolved settings of a built loss (its declared flags, and its revision when > 1), e.g. for ``train_args.json``."""
    settings = {flag: getattr(loss, argument) for flag, argument in getattr(type(loss), "flags", {}).items()}
    revision = int(getattr(type(loss), "revision", 1))
    return {**settings, "revision": revision} if revision > 1 else settings
