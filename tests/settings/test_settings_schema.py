"""The SciNCL settings schema (scincl/settings/schema.py): each field once, read by every place that
needs its default or range; one check, one error line, before any work."""
from __future__ import annotations

import inspect

import pytest

from scincl.errors import InputError
from scincl.settings.schema import FIELDS, SCINCL, check_settings, help_of
from scincl.settings.spec import FlatView, spec_from_flags


def test_every_field_has_a_source_help_and_a_validator():
    for name, f in FIELDS.items():
        meta = f.metadata
        assert meta["source"] and meta["help"], name
        assert meta["rule"] is not None or meta["choices"] or isinstance(f.default, (str, bool)), name  # a bool: its type
        assert name in help_of(name) or meta["help"] in help_of(name)


def test_the_paper_values_and_bands_that_follow_from_them():
    """Paper §3.2 / §5: c+ = 5 positives ending at k+ = 25, c- = 2 hard negatives ending at k- = 4000."""
    assert (SCINCL.easy_positives_count, SCINCL.easy_positives_k_max, SCINCL.hard_negatives_count,
            SCINCL.hard_negatives_k_max, SCINCL.easy_negatives_count, SCINCL.triples_per_query) == (5, 25, 2, 4000, 3, 5)
    for band in ("easy_positives", "hard_negatives"):
        assert getattr(SCINCL, f"{band}_k_min") == getattr(SCINCL, f"{band}_k_max") - getattr(SCINCL, f"{band}_count")
    assert SCINCL.easy_positives_count == SCINCL.triples_per_query  # positives fill every triplet
    assert SCINCL.easy_negatives_count + SCINCL.hard_negatives_count == SCINCL.triples_per_query


def test_the_places_that_restated_a_default_now_read_it_from_the_schema():
    from scincl.eval.evaluate import run_evaluation
    from scincl.settings.values import RANGES
    from scincl.model.embed import embed
    from scincl.model.train import PAPER_TRAINING_DEFAULTS, train
    from scincl.settings.presets import preset_values
    from scincl.settings.run import RunSettings, RunSpec
    from scincl.triples import k_scale
    from scincl.triples.miner import make_config

    assert (k_scale.PAPER_POSITIVES_K, k_scale.PAPER_HARD_NEGATIVES_K) == (25, 4000)
    PAPER_DEFAULTS = preset_values("paper")
    config = make_config()
    assert config.hard_negatives_k_max == PAPER_DEFAULTS["hard_negatives_k_max"] == 4000
    assert [(s.name, s.k_min, s.k_max) for s in config.active() if s.strategy == "knn"] == [
        ("easy_positives", 20, 25), ("hard_negatives", 3998, 4000)]
    from scincl.model.encoder import embedding_length

    # embed / evaluate default to the model's saved length (issue 42), else the schema's
    assert {inspect.signature(run_evaluation).parameters["max_sequence_length"].default,
            inspect.signature(embed).parameters["max_sequence_length"].default} == {None}
    lengths = {embedding_length("a model dir without sentence_bert_config.json"), PAPER_DEFAULTS["max_sequence_length"],
               inspect.signature(train).parameters["max_sequence_length"].default}
    assert lengths == {512}
    assert {k: PAPER_TRAINING_DEFAULTS[k] for k in ("learning_rate", "per_device_train_batch_size",
                                                   "gradient_accumulation_steps", "num_train_epochs")} == {
        "learning_rate": 2e-5, "per_device_train_batch_size": 8, "gradient_accumulation_steps": 4, "num_train_epochs": 2}
    from scincl.model.encoder import DEFAULT_POOLING, POOLING_STRATEGIES

    assert DEFAULT_POOLING == PAPER_DEFAULTS["pooling_strategy"] == inspect.signature(train).parameters[
        "pooling_strategy"].default == "cls" and POOLING_STRATEGIES == ("cls", "mean")
    assert inspect.signature(train).parameters["loss"].default == "triplet"
    defaults = RunSettings(RunSpec())
    assert (defaults.triples_per_query, defaults.hard_negatives_count, defaults.seed) == (5, 2, 0)
    for name in FIELDS:  # the CLI's range of every schema field is the schema's
        assert RANGES.get(name) is FIELDS[name].metadata["rule"]


@pytest.mark.parametrize("values, message", [
    ({"hard_negatives_k_min": 400, "hard_negatives_k_max": 300}, "--hard_negatives_k_min 400 / --hard_negatives_k_max 300: need k_min < k_max"),
    ({"hard_negatives_k_max": -1}, "--hard_negatives_k_max -1: must be >= 0"),
    ({"triples_per_query": 0}, "--triples_per_query 0: must be >= 1"),
    ({"learning_rate": 0}, "--learning_rate 0: must be > 0"),
    ({"pooling_strategy": "max"}, "--pooling_strategy 'max': choose one of cls, mean"),
])
def test_one_check_one_line_wherever_the_value_comes_from(values, message):
    """The schema's check gives the same line to the CLI flag check, the run settings and the miner's settings
    (:class:`~scincl.settings.spec.MinerSpec`, whose validators are the check)."""
    from scincl.cli import Command
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.triples.miner import make_config

    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_settings(values)
    with pytest.raises(InputError, match=message.split(":")[0]):
        spec_from_flags(values)
    with pytest.raises(InputError) as err:
        settings_from_flags("out", {"scidocs_dir": "sd", **values})
    assert message in str(err.value)
    if "pooling_strategy" not in values:
        def command(**flags):
            return flags
        with pytest.raises(InputError) as err:
            Command(command)(**values)
        assert message in str(err.value)
    if values.keys() <= {"hard_negatives_k_min", "hard_negatives_k_max", "triples_per_query"}:
        with pytest.raises(InputError) as err:  # the miner's settings: the same line (one check, when built)
            make_config(**values)
        assert message in str(err.value)



@pytest.mark.parametrize("values, message", [
    ({"hard_negatives_k_max": 10.5}, "--hard_negatives_k_max: expected an integer, got 10.5"),
    ({"easy_positives_count": True}, "--easy_positives_count: expected an integer, got True"),
    ({"easy_negatives_range": False}, "--easy_negatives_range: expected a number, got False"),
    ({"hard_negatives_k_max": None}, "--hard_negatives_k_max: none given; 2 hard negatives are drawn by knn"),
])
def test_a_miner_built_in_python_refuses_what_the_cli_refuses(values, message):
    """Issue 41's rule (10.5 refused, not truncated to 10) also when an experiment or a library caller builds the
    miner's settings: the field's converter names the flag; an active band without its end is one line too."""
    from scincl.settings.spec import MinerSpec

    with pytest.raises(InputError) as err:
        MinerSpec(**values)
    assert message in str(err.value)
    import numpy as np

    assert MinerSpec(hard_negatives_k_max=np.int64(300)).hard_negatives_k_max == 300  # a sweep's numpy int
    assert MinerSpec(hard_negatives_k_max=4000.0, easy_positives_k_max="25").slot("easy_positives").k_max == 25


@pytest.mark.parametrize("values, message", [
    ({"triplets": 10.5}, "--triplets: expected an integer, got 10.5"), ({"triplets": 0}, "--triplets 0: must be >= 1"),
    ({"graph_dim": True}, "--graph_dim: expected an integer, got True"),
    ({"hard_negatives_k_max": 10.5}, "--hard_negatives_k_max: expected an integer, got 10.5"),
])
def test_a_recipe_is_checked_by_its_own_fields_rules_too(values, message):
    """An experiment definition's recipe: its own fields (triplets, graph_dim) by their type and rule, not only the
    spec's leaves (a recipe of 10.5 or 0 triplets was accepted)."""
    from scincl.settings.recipe import Recipe

    with pytest.raises(InputError) as err:
        Recipe(**values)
    assert message in str(err.value)
    assert Recipe(triplets=200, bf16=True).bf16 == "true"  # fire's boolean for --bf16 true: kept as the word


def test_every_slot_band_is_checked_by_its_flags_names():
    """The miner's six slots are named once (triples/miner.py); the schema's check finds each band by its flags."""
    from scincl.triples.miner import make_config

    for slot in make_config().slots:
        with pytest.raises(InputError, match=f"--{slot.name}_k_min 9 / --{slot.name}_k_max 9: need k_min < k_max"):
            check_settings({f"{slot.name}_k_min": 9, f"{slot.name}_k_max": 9})

def test_a_band_start_not_given_is_its_end_minus_its_count():
    """paper §3.2: c samples from (k - c; k]. `--hard_negatives_k_max 500` alone is the band 498-500 in the
    schema, the run settings (paper and demo presets) and the miner (it was 3998-500, an error, before)."""
    from scincl.settings.run import resolve
    from scincl.settings.spec import derive_bands
    from scincl.triples.miner import make_config

    assert (SCINCL.easy_positives_k_min, SCINCL.hard_negatives_k_min) == (20, 3998)
    assert FlatView(spec_from_flags({"hard_negatives_k_max": 500})).hard_negatives_k_min == 498
    assert derive_bands({"easy_positives_k_max": 10, "easy_positives_count": 3, "hard_negatives_k_min": 7}) == {
        "easy_positives_k_min": 7}
    paper = resolve({"output_dir": "out", "scidocs_dir": "sd", "hard_negatives_k_max": 500})
    demo = resolve({})
    assert (paper.hard_negatives_k_min, paper.easy_positives_k_min) == (498, 20)
    assert (demo.hard_negatives_k_min, demo.hard_negatives_k_max) == (198, 200)
    config = make_config(hard_negatives_k_max=500, hard_negatives_count=1, easy_negatives_count=4)
    assert (config.slots[-1].k_min, config.slots[-1].k_max, config.slots[0].k_min) == (499, 500, 20)


def test_run_specter_help_names_the_demo_band_it_uses():
    """The help said the demo samples hard negatives at 398-400 while the demo preset used 198-200: the help's
    defaults are now read from the field that resolve() fills the run from."""
    from scincl.cli import run_specter_flag_info
    from scincl.settings.run import resolve

    demo = resolve({})
    assert (demo.hard_negatives_k_min, demo.hard_negatives_k_max) == (198, 200)
    rows = {row.name: row for row in run_specter_flag_info()}
    assert rows["hard_negatives_k_max"].default == "paper 4000 / demo 200"


def test_every_run_setting_is_declared_once_with_source_help_and_its_checks():
    """issue 27: each RunSettings field carries its source and help (a SciNCL setting the schema field's own), the
    presets and the choices are read from the fields, and --help shows them."""
    from scincl.cli import flag_rows
    from scincl.settings.presets import preset_values
    from scincl.settings.run import FIELDS, RunSettings
    from scincl.settings.schema import FIELDS as SCHEMA_FIELDS

    for name, f in FIELDS.items():
        assert f.metadata["source"] and f.metadata["help"], name
        if name in SCHEMA_FIELDS:
            assert {k: f.metadata[k] for k in ("source", "help", "rule")} == {
                k: SCHEMA_FIELDS[name].metadata[k] for k in ("source", "help", "rule")}, name
    assert (preset_values("paper")["hard_negatives_k_max"], preset_values("demo")["hard_negatives_k_max"]) == (4000, 200)
    assert FIELDS["device"].metadata["choices"] == ("cuda", "cpu")
    assert FIELDS["graph_method"].metadata["choices"][0] == "pbg"
    rows = {row.name: row for spec in RunSettings.sections for row in flag_rows(spec)}
    assert "README: --ann_metric inner_product" in rows["ann_metric"].help


def test_run_specter_checks_how_the_miner_slots_fit_before_any_stage():
    """issue 27: values checked once, before any work. Counts that do not add up were refused only by the triples
    stage, after the citations, graph and index stages had run; the SPECTER-like arm takes no kNN slots."""
    from scincl.pipeline.scincl_plan import settings_from_flags

    with pytest.raises(InputError, match="positives counts must add up to --triples_per_query=5"):
        settings_from_flags("out", {"easy_positives_count": 4})
    with pytest.raises(InputError, match="--medium_negatives_strategy range needs --medium_negatives_range"):
        settings_from_flags("out", {"medium_negatives_strategy": "range", "medium_negatives_count": 1,
                                    "easy_negatives_count": 2})
    assert settings_from_flags("out", {"triples_source": "specter_like", "easy_positives_count": 4}).demo


def test_a_run_builds_its_miner_settings_once_and_hands_that_object_to_the_triplets_stage(tmp_path, monkeypatch):
    """issue 39: the miner's config was built (and its slots checked) by check_run and again by the plan, and handed
    on as a kwargs dict; now the run's MinerSpec is built once, where the settings are resolved and checked, and
    the plan passes that typed object."""
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.pipeline.scincl_plan import SciNCLPlan
    from scincl.settings import spec

    built = []
    check_slots = spec.check_slots
    monkeypatch.setattr(spec, "check_slots", lambda miner: (built.append(miner), check_slots(miner)))
    settings = settings_from_flags(str(tmp_path / "out"), {"hard_negatives_k_max": 150})
    triples = {stage.name: stage for stage in SciNCLPlan(settings).stages()}["triples"]
    sampling = triples.run.keywords  # the sampler's arguments (the stage runs a functools.partial)
    assert sampling["config"] is settings.miner and isinstance(settings.miner, spec.MinerSpec)
    assert (settings.miner.slot("hard_negatives").k_min, settings.miner.slot("hard_negatives").k_max) == (148, 150)
    assert [miner for miner in built if miner.slot("hard_negatives").k_max == 150] == [settings.miner]


def test_help_shows_a_fields_choices_from_its_metadata():
    """--help reads the values a setting takes from the spec's field that checks them when built."""
    from scincl.cli import format_flag, run_specter_flag_info

    rows = {row.name: row for row in run_specter_flag_info()}
    assert "; choices cuda | cpu" in format_flag(rows["device"])
    assert "; choices knn | specter_like" in format_flag(rows["triples_source"])
    assert "; choices faiss | exact" in format_flag(rows["ann_backend"])


def test_importing_the_settings_reads_no_data_file():
    """issue 39: the settings package executed experiments/arms.py when imported; the arms and the kinds' defaults are
    the package's data now (no file read when used either), the experiments and presets are read when first used. An
    audit hook in a fresh interpreter sees every file opened by the imports."""
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    code = ("import sys\nopened = []\n"
            "sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == 'open' else None)\n"
            "import scincl.settings, scincl.settings.arms, scincl.settings.experiment, scincl.settings.presets, "
            "scincl.settings.recipe, scincl.settings.run\n"
            "print('\\n'.join(p for p in opened if 'experiments' in p or 'biggraph_configs' in p))\n"
            "import scincl.settings.arms as arms, scincl.settings.experiment as experiment\n"
            "arms.ARMS, arms.CORPORA, experiment.Experiment(kind='losses').losses\n"
            "print('after use:', any('experiments' in p for p in opened))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "after use: False"  # nothing opened by the imports, nor by using the arms


def test_a_preset_is_data_and_a_flag_overrides_it(tmp_path):
    """issue 39: the paper and demo presets are data modules (experiments/presets/); --preset picks one for any
    corpus, a flag given wins over it, an unknown preset is one line naming the presets."""
    from scincl.pipeline.scincl_plan import settings_from_flags
    from scincl.settings.presets import preset_names, preset_values

    assert preset_names()[:2] == ["paper", "demo"]
    corpus = {"corpus_dir": str(tmp_path), "corpus_format": "plain"}
    paper = settings_from_flags(str(tmp_path / "out"), corpus)
    assert (paper.preset, paper.hard_negatives_k_max, paper.max_sequence_length, paper.graph_test_ratio) == (
        "paper", 4000, 512, 0.01)
    demo = settings_from_flags(str(tmp_path / "out"), {**corpus, "preset": "demo"})
    assert (demo.preset, demo.hard_negatives_k_max, demo.hard_negatives_k_min, demo.pooling_strategy) == (
        "demo", 200, 198, "mean")
    assert demo.training_options["num_train_epochs"] == preset_values("demo")["training_options"]["num_train_epochs"]
    given = settings_from_flags(str(tmp_path / "out"), {**corpus, "preset": "demo", "hard_negatives_k_max": 150,
                                                        "num_train_epochs": 3})
    assert (given.hard_negatives_k_max, given.hard_negatives_k_min, given.training_options["num_train_epochs"]) == (
        150, 148, 3)
    with pytest.raises(InputError, match="--preset 'nope': unknown preset .*paper, demo"):
        settings_from_flags(str(tmp_path / "out"), {**corpus, "preset": "nope"})


def test_the_scincl_settings_are_one_nested_spec_validated_when_built():
    """issue 39 step 2: the SciNCL settings are declared once, nested by what they set, as attrs fields that carry
    type, default, source, range and help; building (or changing) the spec validates it; flags map onto it by
    their names without paths."""
    import attrs

    from scincl.settings.spec import LEAVES, SciNCLSpec, spec_from_flags

    paper = SciNCLSpec()
    assert paper.sampler.miner.hard_negatives_k_max == SCINCL.hard_negatives_k_max == 4000
    assert (paper.recipe.encoder.pooling_strategy, paper.recipe.training.learning_rate, paper.recipe.loss) == (
        "cls", 2e-5, "triplet")
    assert LEAVES["hard_negatives_k_max"][0] == ("sampler", "miner") and LEAVES["ann_metric"][0] == ("sampler", "search")
    assert LEAVES["learning_rate"][0] == ("recipe", "training") and LEAVES["seed"][0] == ()
    for name, (_, attribute) in LEAVES.items():  # every leaf: a type, a source and help
        assert attribute.type and attribute.metadata["source"] and attribute.metadata["help"], name
    changed = spec_from_flags({"hard_negatives_k_max": 500, "learning_rate": 1e-4})
    assert (changed.sampler.miner.hard_negatives_k_min, changed.recipe.training.learning_rate) == (498, 1e-4)
    assert changed.sampler.search == paper.sampler.search  # untouched sections are the same objects' values
    with pytest.raises(InputError, match="--hard_negatives_k_min -1: must be >= 0"):
        spec_from_flags({"hard_negatives_k_max": 1})
    with pytest.raises(InputError, match="--pooling_strategy 'max': choose one of cls, mean"):
        attrs.evolve(paper.recipe.encoder, pooling_strategy="max")
    with pytest.raises(InputError, match="--hard_negatives_k_maximum: not a SciNCL setting"):
        spec_from_flags({"hard_negatives_k_maximum": 500})


def test_the_paper_values_are_written_once_in_the_library():
    """issue 39: 4000 (k-hard) is a literal only where the spec declares it (docstrings aside; the demo corpus
    generator's own size bounds are another quantity)."""
    import ast

    from tests.conftest import REPO_ROOT

    found = []
    for path in sorted((REPO_ROOT / "scincl").rglob("*.py")):
        if path.name.startswith("demo"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value == 4000:
                found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert found == ["scincl/settings/spec.py:" + str(next(
        i for i, line in enumerate((REPO_ROOT / "scincl/settings/spec.py").read_text().splitlines(), 1)
        if line.strip().startswith("4000,")))]


def test_every_plain_typed_field_of_the_run_spec_refuses_a_wrong_type_when_built():
    """The spec's one validator checks each field's type (bool, int, float) when a section is built, so a spec made
    in Python is refused what the command line refuses; ``None`` and numpy integers pass."""
    import typing

    import numpy as np

    from scincl.settings.run import RunSpec, sections_of

    checked = 0
    for cls in sections_of(RunSpec):
        for name, hint in typing.get_type_hints(cls).items():
            kind = next((k for k in (bool, int, float) if hint in (k, typing.Optional[k])), None)
            if kind is None:
                continue
            wrong = {bool: 1, int: 10.5, float: True}[kind]
            with pytest.raises(InputError, match=f"^--{name}: expected "):
                cls(**{name: wrong})
            checked += 1
    assert checked >= 40
    assert RunSpec(seed=np.int64(3)).seed == 3


def test_an_experiment_refuses_a_cocitation_threshold_below_one():
    """The co-citation graph's threshold is a count of at least one, as get_cocitations' --min_count (0 was built)."""
    from scincl.settings.experiment import Experiment

    with pytest.raises(InputError, match="--cocitation_min_count 0: must be >= 1"):
        Experiment(kind="main", cocitation_min_count=0)
    assert Experiment(kind="main", cocitation_min_count=3).cocitation_min_count == 3
