"""benchmarks/setting_route.py: the files a run_specter flag's value enters, followed by identity (a dry run)."""
from __future__ import annotations

import sys

from benchmarks.setting_route import Followed, holds, report, trace_run


def test_the_value_is_followed_by_identity_not_by_equality():
    followed = Followed(487)
    parsed, equal = int("487"), int("4870") // 10  # two distinct int objects of the same value
    assert parsed is not equal and not holds({"k": parsed}, followed, 5, set())  # nothing taken outside the front end
    followed.in_front_end = True
    assert holds([parsed], followed, 5, set())  # taken: the first equal int the front end holds
    followed.in_front_end = False
    assert holds({"a": {"b": (parsed,)}}, followed, 5, set()) and not holds({"a": equal}, followed, 5, set())
    assert not holds({"a": {"b": {"c": {"d": {"e": {"f": parsed}}}}}}, followed, 5, set())  # deeper than 5 levels


def test_a_dry_run_reaches_the_spec_and_the_plan_but_no_miner(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    reached = trace_run(str(tmp_path / "run"), "hard_negatives_k_max", 487, ["--dry_run", "True"])
    text, route = report(reached, "hard_negatives_k_max", 487)
    assert "_validate" in reached["scincl/settings/spec.py"] and "check_slots" in reached["scincl/settings/spec.py"]
    assert "SciNCLPlan.plan_triples" in reached["scincl/pipeline/scincl_plan.py"]
    assert not any(path.startswith("scincl/triples/") for path in reached)  # a dry run mines nothing
    assert "check_rule" in reached["scincl/settings/rules.py"]  # the range check, listed among the carriers
    route_files = text.split("route after the front end")[1].split("carriers")[0]
    assert route == 3 and all(f"scincl/{path}.py:" in route_files for path in ("pipeline/scincl_plan", "settings/run",
                                                                             "settings/spec"))
