"""The SciNCL settings read by flag name, and the helpers every settings dataclass shares.

The settings are declared once, nested by what they set, in :mod:`scincl.settings.spec` (:class:`SciNCLSpec`:
sampler = miner + search, recipe = encoder + loss + training, graph, seed; attrs fields with type, default, source,
range and help, validated when built). :data:`SCINCL` reads the paper's spec by flag name (``SCINCL.<flag>``:
k-hard is the paper's 4000); every module that needs a SciNCL default reads it here, under the flag's own name, and
:data:`FIELDS` gives each leaf's declaration:

- :func:`check_settings` is the range check of flags flag by flag (these fields' rules, the miner's other flags'
  (:data:`MINER_OPTIONS`) and :data:`scincl.settings.rules.FLAG_RULES`), run once before any work: by the CLI for a
  command's flags (:mod:`scincl.cli`), by ``run_specter``'s settings for its resolved values other than a kNN
  run's miner flags, which its :class:`~scincl.settings.spec.MinerSpec` checks when built
  (:mod:`scincl.settings.run`); ``--help`` rows (:mod:`scincl.cli`) take the range and help text of these
  fields from :func:`rule_of` / :func:`help_of`;
- :func:`with_leaves` gives a settings dataclass (``RunSettings``, ``Recipe``) the spec's leaves as its fields;
- a band's start is derived from its end and count (:func:`derive_bands`: ``k_max - count``) wherever
  it is not given: in the spec (the miner's settings) and in ``RunSettings``;
- ``--k_scale corpus`` (:mod:`scincl.triples.k_scale`), the trainer's paper set-up (:mod:`scincl.model.train`) and
  the encoders' input length (``max_sequence_length``) take their defaults from :data:`SCINCL`.

Sources: ``paper`` = Ostendorff et al. 2022 (../shared/papers/000_a9b5f58ad3ba2ccb.txt), ``README`` = the
original SciNCL README (003_cf855bcd212543f5.txt).
"""
from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import Any, Callable, Collection, Dict, Mapping, Optional, Sequence, Tuple

import attrs

from scincl.settings.rules import FLAG_RULES, Rule, check_band, check_choice, check_rule, check_steps
from scincl.settings.spec import BANDS, derive_bands  # noqa: F401 - their home for the settings' users
from scincl.settings.spec import LEAVES, FlatView, MinerSpec, SciNCLSpec, insert_fields, spec_from_flags


def setting(default: Any, source: str, help: str, rule: Optional[Rule] = None,  # noqa: A002 - PBG's name
            choices: Tuple[str, ...] = (), default_factory: Optional[Callable[[], Any]] = None) -> Any:
    """One field of a settings dataclass (:class:`scincl.settings.run.RunSettings`, ``Recipe``, ``Experiment``): its
    default, the source of that default, help text and validator (a range
    :class:`~scincl.settings.rules.Rule` for numbers, ``choices`` for names); ``default_factory`` for a mutable
    default (``dict``, ``list``). The values a run preset gives a field are data (``experiments/presets/``)."""
    metadata = {"source": source, "help": help, "rule": rule, "choices": choices}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


FIELDS: Dict[str, Any] = {name: attribute for name, (_, attribute) in LEAVES.items()}  # leaf name -> its attrs field
# the miner's other flags (medium and hard positives, medium negatives, unused bands, strategy options): declared with
# the miner's settings (scincl/settings/spec.py:MinerSpec), ranged like the leaves wherever a command takes them
MINER_OPTIONS: Dict[str, Any] = {a.name: a for a in attrs.fields(MinerSpec) if a.metadata["option"]}
SCINCL = FlatView(SciNCLSpec())  # the paper's settings, read by flag name


def scincl_spec(**flags: Any) -> FlatView:
    """The paper's spec with ``flags`` changed, validated (:func:`scincl.settings.spec.spec_from_flags`), read by
    flag name."""
    return FlatView(spec_from_flags(flags))


def scincl_setting(name: str, default: Any = dataclasses.MISSING, choices: Tuple[str, ...] = (),
                   source: Optional[str] = None) -> Any:
    """A field of another settings dataclass that is SciNCL setting ``name``: the schema field's source, help,
    rule and choices (declared once, above; ``choices`` where the values are registered elsewhere, e.g. the graph
    methods), its default unless ``default`` is given (``None``: filled from the run's preset by
    :func:`scincl.settings.run.resolve`; another value: ``source`` says where it comes from, e.g. the real-corpus
    recipe's)."""
    meta = FIELDS[name].metadata
    return setting(getattr(SCINCL, name) if default is dataclasses.MISSING else default, source or meta["source"],
                   meta["help"], meta["rule"], choices or meta["choices"])


def with_leaves(after: Mapping[str, Sequence[str]], unset: Collection[str] = (),
                defaults: Optional[Mapping[str, Tuple[Any, str]]] = None) -> Callable[[type], type]:
    """A class decorator (under ``@dataclass``) that gives a settings dataclass the spec's leaves as fields, without
    declaring them again: ``after[name]`` are placed right after its own field ``name`` (``--help`` lists them
    there). Each is :func:`scincl_setting` (the leaf's type, help, rule, choices and source); its default the
    spec's, ``None`` for a leaf in ``unset`` (filled from the run's preset) or, for a leaf in ``defaults``, that
    ``(value, source)`` (its type the value's: the real-corpus recipe's own values)."""
    defaults = dict(defaults or {})

    def leaf(name: str) -> Tuple[str, str, Any]:
        if name in defaults:
            value, source = defaults[name]
            return name, type(value).__name__, scincl_setting(name, value, source=source)
        kind = FIELDS[name].type
        if name in unset:
            return name, kind if "Optional" in kind else f"Optional[{kind}]", scincl_setting(name, None)
        return name, kind, scincl_setting(name)

    return insert_fields({own: [leaf(name) for name in names] for own, names in after.items()})


def rule_of(name: str) -> Optional[Rule]:
    """The range of setting ``name`` (``None``: not a schema field or no range)."""
    return FIELDS[name].metadata["rule"] if name in FIELDS else None


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
    """The one range check of settings and flags, before any work: each value by its rule (a field's of
    ``fields`` or of the schema; else :data:`scincl.settings.rules.FLAG_RULES`), a field's choices, and every band
    ``<band>_k_min < <band>_k_max`` (ends from ``bands`` when given, e.g. a command's defaults and flags, else ``values``),
    and that some training step runs (:func:`~scincl.settings.rules.check_steps`). One :class:`InputError` line
    naming the flag; unknown names and ``None`` values are left alone."""
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

