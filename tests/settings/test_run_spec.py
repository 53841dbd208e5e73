"""issue 39 step 2: run_specter's settings as one nested, frozen spec (scincl/settings/run.py: RunSpec), SciNCL's
sections reused, built once by resolve (and so checked), read by flag name."""
from __future__ import annotations

import attrs
import pytest

from scincl.errors import InputError
from scincl.pipeline.scincl_plan import check_run, settings_from_flags
from scincl.pipeline.scincl_plan import SciNCLPlan
from scincl.settings.run import FIELDS, RUN_LEAVES, RunSpec, ScaledMinerSpec, resolve
from scincl.settings.spec import (LEAVES, EncoderSpec, GraphSpec, MinerSpec, RecipeSpec, SamplerSpec, build_spec,
                                  section_leaves)


def test_the_run_spec_is_nested_by_what_it_sets_and_reuses_scincls_sections():
    assert [a.name for a in attrs.fields(RunSpec)] == ["seed", "corpus", "graph", "queries", "sampler", "recipe",
                                                       "evaluation", "run"]
    sections = attrs.fields_dict(RunSpec)
    assert issubclass(sections["sampler"].default.factory, SamplerSpec)
    assert issubclass(sections["recipe"].default.factory, RecipeSpec)
    assert issubclass(sections["graph"].default.factory, GraphSpec)
    for name in ("hard_negatives_k_max", "ann_metric", "pooling_strategy"):  # SciNCL's leaves, not restated
        assert RUN_LEAVES[name][1] is LEAVES[name][1], name
    assert RUN_LEAVES["hard_negatives_k_max"][0] == ("sampler", "miner")
    assert RUN_LEAVES["corpus_dir"][0] == ("corpus",) and RUN_LEAVES["dry_run"][0] == ("run",)
    assert attrs.fields_dict(sections["recipe"].default.factory)["encoder"].default.factory is EncoderSpec


def test_every_leaf_is_a_run_specter_flag_once_but_the_trainers_and_the_real_corpus_graphs():
    """run_specter's settings are the spec's leaves in its order (--help's); the trainer's leaves are among the
    trainer's flags; the run's settings are read from the spec, not copied."""
    from scincl.pipeline.scincl_plan import run_specter_flag_groups

    assert set(RUN_LEAVES) - set(FIELDS) == {*section_leaves("recipe", "training"), "shared_graph_test_ratio",
                                             "shared_graph_seed"}
    assert list(FIELDS) == [name for name in RUN_LEAVES if name in FIELDS]
    groups = run_specter_flag_groups()
    assert [name for name in groups if groups[name] == "settings"] == [
        name for name in FIELDS if name not in ("miner_options", "training_options", "skip", "override", "output_dir",
                                                "demo")]
    s = resolve({"output_dir": "out", "corpus_dir": "corpus"})
    assert s.corpus_dir == s.spec.corpus.corpus_dir == "corpus" and not hasattr(s, "__dict__")
    with pytest.raises(AttributeError):
        s.corpus_dir = "other"


def test_resolve_builds_the_spec_once_frozen_and_read_by_flag_name(tmp_path):
    s = resolve({"output_dir": str(tmp_path), "hard_negatives_k_max": 500, "stages": "graph,train"})
    assert isinstance(s.spec, RunSpec) and s.miner is s.spec.sampler.miner and isinstance(s.miner, MinerSpec)
    assert (s.hard_negatives_k_min, s.hard_negatives_k_max) == (498, 500)
    assert (s.spec.sampler.miner.hard_negatives_k_min, s.spec.run.stages) == (498, ["graph", "train"])
    assert s.spec.recipe.training.learning_rate == s.training_options["learning_rate"] == 5e-5  # the demo preset's
    with pytest.raises(AttributeError):
        s.hard_negatives_k_max = 1
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        s.spec.sampler.miner.hard_negatives_k_max = 1


@pytest.mark.parametrize("values, message", [
    ({"demo_papers": 0}, "--demo_papers 0: must be >= 1"),
    ({"sample_queries_ratio": 0}, "--sample_queries_ratio 0: must be > 0 and <= 1"),
    ({"val_or_test_or_both": "train"}, "--val_or_test_or_both 'train': choose one of val, test, both"),
    ({"hard_negatives_k_max": 1}, "--hard_negatives_k_min -1: must be >= 0"),
    ({"learning_rate": 0}, "--learning_rate 0: must be > 0"),
])
def test_a_value_is_checked_when_its_section_is_built(values, message):
    with pytest.raises(InputError, match=f"^{message}"):
        build_spec(RunSpec, values)


def test_a_run_of_another_source_takes_no_knn_miner():
    s = settings_from_flags("out", {"triples_source": "specter_like", "easy_positives_count": 4})
    assert s.miner is None and s.spec.sampler.miner is None
    assert s.spec.sampler.counts == {"triples_per_query": 5, "easy_positives_count": 4, "easy_negatives_count": 3,
                                     "hard_negatives_count": 2}  # what the SPECTER-like sampler samples by
    assert (s.easy_positives_count, s.hard_negatives_k_min) == (4, None)  # no miner: no band
    with pytest.raises(InputError, match="--easy_positives_count -1: must be >= 0"):
        settings_from_flags("out", {"triples_source": "specter_like", "easy_positives_count": -1})


def test_k_scale_corpus_leaves_the_band_starts_to_the_index_size():
    """--k_scale corpus sizes the bands with the index (scincl/triples/k_scale.py): the spec's miner keeps the starts
    unset, checked as the preset's bands would be, and sized like any miner."""
    s = settings_from_flags("out", {"k_scale": "corpus"})
    assert isinstance(s.miner, ScaledMinerSpec) and (s.easy_positives_k_min, s.hard_negatives_k_min) == (None, None)
    assert (s.easy_positives_k_max, s.hard_negatives_k_max) == (25, 200)  # the demo preset's, replaced when sized
    sized = attrs.evolve(s.miner, easy_positives_k_min=5, easy_positives_k_max=10, hard_negatives_k_min=162,
                         hard_negatives_k_max=164)
    assert [(slot.k_min, slot.k_max) for slot in sized.active() if slot.strategy == "knn"] == [(5, 10), (162, 164)]
    with pytest.raises(InputError, match="positives counts must add up to --triples_per_query=5"):
        settings_from_flags("out", {"k_scale": "corpus", "easy_positives_count": 4})
    with pytest.raises(InputError, match="--easy_positives: the interval"):
        attrs.evolve(s.miner, easy_positives_k_min=9, easy_positives_k_max=10, hard_negatives_k_min=162,
                     hard_negatives_k_max=164)


def test_what_was_set_after_resolve_is_a_changed_copy(tmp_path):
    """check_run's detected corpus format and the demo plan's SciDocs ids were written into the resolved settings;
    now each is a changed copy (the miner, unchanged, is the same object)."""
    s = resolve({"output_dir": str(tmp_path / "out"), "corpus_dir": str(tmp_path), "corpus_format": "auto"})
    checked = check_run(s)
    assert (s.corpus_format, checked.corpus_format, checked.spec.corpus.corpus_format) == ("auto", None, None)
    assert checked.miner is s.miner
    demo = settings_from_flags(str(tmp_path / "demo"), {})
    plan = SciNCLPlan(demo, shared_dir=tmp_path / "shared")
    assert demo.scidocs_paper_ids is None
    assert plan.s.scidocs_paper_ids == str(tmp_path / "shared" / "demo_corpus" / "scidocs_paper_ids.json")
    assert plan.s.spec.evaluation.scidocs_paper_ids == plan.s.scidocs_paper_ids and plan.s.miner is demo.miner
