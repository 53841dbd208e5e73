"""The SciNCL settings read by flag name (:data:`SCINCL`: the paper's spec, :mod:`scincl.settings.spec`), the
helpers every settings dataclass shares (:func:`setting`, :func:`with_leaves`) and the one range check of flags and
settings (:func:`check_settings`), run before any work.
"""
from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.settings.rules import FLAG_RULES, Rule, check_band, check_choice, check_rule, check_steps
from scincl.settings.spec import LEAVES, FlatView, MinerSpec, SciNCLSpec, insert_fields


def setting(default: Any, source: str, help: str, rule: Optional[Rule] = None,  # noqa: A002 - PBG's name
            choices: Tuple[str, ...] = (), default_factory: Optional[Callable[[], Any]] = None) -> Any:
    """One field of a settings dataclass: its default (``default_factory`` for a mutable one), the source of that
    default, help text, range :class:`~scincl.settings.rules.Rule` and ``choices``."""
    metadata = {"source": source, "help": help, "rule": rule, "choices": choices}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


FIELDS: Dict[str, Any] = {name: attribute for name, (_, attribute) in LEAVES.items()}  # leaf name -> its attrs field
# the miner's other flags (medium and hard positives, medium negatives, unused bands, strategy options): declared with
# the miner's settings (scincl/settings/spec.py:MinerSpec), ranged like the leaves wherever a command takes them
MINER_OPTIONS: Dict[str, Any] = {a.name: a for a in attrs.fields(MinerSpec) if a.metadata["option"]}
SCINCL = FlatView(SciNCLSpec())  # the paper's settings, read by flag name


def scincl_setting(name: str, default: Any = dataclasses.MISSING, choices: Tuple[str, ...] = (),
                   source: Optional[str] = None) -> Any:
    """A field of another settings dataclass that is SciNCL setting ``name``: the spec field's source, help, rule and
    choices (or ``choices``), its default unless ``default`` (with its ``source``) is given."""
    meta = FIELDS[name].metadata
    return setting(getattr(SCINCL, name) if default is dataclasses.MISSING else default, source or meta["source"],
                   meta["help"], meta["rule"], choices or meta["choices"])


def with_leaves(after: Mapping[str, Sequence[str]],
                defaults: Optional[Mapping[str, Tuple[Any, str]]] = None) -> Callable[[type], type]:
    """A class decorator (under ``@dataclass``) that adds the spec's leaves ``after[name]`` right after the class's
    field ``name``, each a :func:`scincl_setting`: default the spec's, or the ``(value, source)`` of ``defaults``."""
    defaults = dict(defaults or {})

    def leaf(name: str) -> Tuple[str, str, Any]:
        if name in defaults:
            value, source = defaults[name]
            return name, type(value).__name__, scincl_setting(name, value, source=source)
        return name, FIELDS[name].type, scincl_setting(name)

    return insert_fields({own: [leaf(name) for name in names] for own, names in after.items()})


def help_of(name: str) -> str:
    """``help (default D: source)`` of setting ``name`` for ``--help`` (empty when not a schema field)."""
    if name not in FIELDS:
        return ""
    meta = FIELDS[name].metadata
    return f"{meta['help']} (SciNCL default {getattr(SCINCL, name)!r}: {meta['source']})"


def ranges() -> Dict[str, Rule]:
    """``{name: Rule}`` of every flag with a range: the schema fields' rules, then the other flags'
    (:data:`scincl.settings.rules.FLAG_RULES`)."""
    declared = {**MINER_OPTIONS, **FIELDS}
    return {**FLAG_RULES, **{name: f.metadata["rule"] for name, f in declared.items() if f.metadata["rule"] is not None}}


def check_settings(values: Mapping[str, Any], bands: Optional[Mapping[str, Any]] = None,
                   fields: Optional[Mapping[str, dataclasses.Field]] = None) -> None:
    """The one range check of settings and flags: each value by its rule (of ``fields``, the spec, else
    :data:`~scincl.settings.rules.FLAG_RULES`) and choices, every band ``k_min < k_max`` (of ``bands`` when given,
    else ``values``) and that some training step runs; unknown names and ``None`` values pass."""
    fields = {**MINER_OPTIONS, **FIELDS, **(fields or {})}
    # a band's start after everything else: it may be derived from its end (derive_bands), whose error comes first
    for name, value in sorted(values.items(), key=lambda item: item[0].endswith("_k_min")):
        if value is None:
            continue
        meta = fields[name].metadata if name in fields else {}
        check_rule(name, value, meta["rule"] if meta.get("rule") is not None else FLAG_RULES.get(name))
        check_choice(name, value, meta.get("choices", ()))
    bands = values if bands is None else bands
    # every (k_min, k_max] band, found by its flags' names: the miner's slots are named once, in triples/miner.py
    for end in sorted(name for name in bands if name.endswith("_k_max")):
        band = end[:-len("_k_max")]
        check_band(band, bands.get(f"{band}_k_min"), bands[end])
    check_steps(values.get("num_train_epochs"), values.get("max_steps"))

