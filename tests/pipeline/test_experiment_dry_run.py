"""``run_experiment NAME --dry_run`` / ``reproduce KIND --dry_run``: the plan of every arm x seed, nothing run or
written (scincl/pipeline/grid.py:plan_text over CorpusPlan.cell)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from scincl.errors import InputError
from tests.pipeline.test_golden_plans import GOLDEN_DIR, _data_dir


def _files(root: Path) -> list:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_dry_run_lists_every_stage_of_the_golden_plan_and_writes_nothing(tmp_path: Path) -> None:
    from scincl.pipeline.experiment_kinds import run_experiment_definition

    data = _data_dir(tmp_path / "data")
    before = _files(tmp_path)
    text = run_experiment_definition("hepth_main", output_dir=str(tmp_path / "out"), data_dir=str(data),
                                     workers=2, dry_run=True)
    assert _files(tmp_path) == before  # no folder, marker or manifest made
    golden = json.loads((GOLDEN_DIR / "experiment_hepth_main.json").read_text())["stages"]
    head, *lines = text.splitlines()
    # the same stages as the run would plan (the snapshot records them by running the grid), none of them done
    assert head.startswith("Plan of main_test/") and f", {len(golden)} stages, 0 done, {len(golden)} to run" in head
    cells = [line for line in lines if line.startswith("  ") and "stages done" in line]
    assert len(cells) == 1 + 3 * 3  # the base row once, three trained arms x seeds 0-2
    assert cells[0].startswith("  shared/base/") and all("; next: " in line for line in cells)
    assert "scincl/seed_2 [1]: 0 of 4 stages done; next: train_triples.csv (output train_triples.csv missing)" in text
    assert text.endswith("(--dry_run: nothing was run)")


def test_dry_run_of_a_kind_that_plans_from_finished_stages_is_refused(tmp_path: Path) -> None:
    from scincl.pipeline.experiment_kinds import run_experiment_definition

    with pytest.raises(InputError, match="--dry_run: the collisions experiment needs finished stages"):
        run_experiment_definition("hepth_collisions", output_dir=str(tmp_path / "out"),
                                  data_dir=str(_data_dir(tmp_path / "data")), dry_run=True)
    assert not (tmp_path / "out").exists()
