"""Reuse by fingerprint (issue 16): standalone outputs are reused only when made from the same inputs and settings."""
from __future__ import annotations

import numpy as np
import pytest

from scincl.knn.ann import index_config_path
from scincl.errors import InputError
from scincl.knn.papers import build_faiss
from scincl.io import read_json, write_embeddings_h5, write_id_list
from scincl.provenance import difference, fingerprint, made_by


@pytest.fixture()
def graph(tmp_path):
    rng = np.random.default_rng(0)
    write_embeddings_h5(tmp_path / "embeddings.h5", rng.normal(size=(30, 8)).astype(np.float32))
    write_id_list(tmp_path / "entity_names_paper_id_0.json", [f"p{i}" for i in range(30)])
    return tmp_path


def test_unnormalised_index_is_not_reused_for_a_normalised_request(graph, caplog):
    """Issue 16: build_faiss without --do_normalize, then with it, logged "reusing" and kept the old index."""
    index = graph / "Flat.faiss"
    build_faiss(str(graph / "embeddings.h5"), str(index))
    assert read_json(index_config_path(index))["do_normalize"] is False
    with pytest.raises(InputError, match=r"Flat.faiss: exists but was made differently: setting do_normalize differs "
                                         r"\(made with false, now true\); pass --override to rebuild it"):
        build_faiss(str(graph / "embeddings.h5"), str(index), do_normalize=True)
    assert read_json(index_config_path(index))["do_normalize"] is False  # refused: untouched
    build_faiss(str(graph / "embeddings.h5"), str(index), do_normalize=True, override=True)
    assert read_json(index_config_path(index))["do_normalize"] is True
    result = build_faiss(str(graph / "embeddings.h5"), str(index), do_normalize=True)  # same: reused
    assert "rows" not in result


def test_index_of_other_embeddings_or_ids_is_refused(graph):
    index = graph / "Flat.faiss"
    build_faiss(str(graph / "embeddings.h5"), str(index))
    write_id_list(graph / "subset.json", ["p1", "p2", "p3"])
    with pytest.raises(InputError, match=r"inputs differ \(made from embeddings.h5, entity_names_paper_id_0.json; "
                                         r"now embeddings.h5, entity_names_paper_id_0.json, subset.json\)"):
        build_faiss(str(graph / "embeddings.h5"), str(index), include_paper_ids=str(graph / "subset.json"))
    write_embeddings_h5(graph / "embeddings.h5", np.ones((30, 8), dtype=np.float32))
    with pytest.raises(InputError, match="input embeddings.h5 differs from the one it was made from"):
        build_faiss(str(graph / "embeddings.h5"), str(index))


def test_fingerprint_is_content_not_path(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("same\n")
    (tmp_path / "b.txt").write_text("same\n")
    one, other = made_by({"k": 1}, [tmp_path / "a" / "x.txt"]), made_by({"k": 1}, [tmp_path / "b.txt"])
    assert difference(one, other) is None  # moved, identical: the same input
    (tmp_path / "b.txt").write_text("diff\n")
    assert difference(one, made_by({"k": 1}, [tmp_path / "b.txt"])) == "input b.txt differs from the one it was made from"
    assert difference(one, made_by({"k": 2}, [tmp_path / "a" / "x.txt"])) == "setting k differs (made with 1, now 2)"
    assert difference(None, one) == "no record of the inputs and settings that made it"
    assert fingerprint(tmp_path / "a") == {"name": "a", "files": [
        {"path": "x.txt", "size": 5, "sha256": "a6328afc76e9db71da297ebff4b0d3e7a7eb3b01d917c05a6573fef121b6ecb6"}]}


def test_standalone_train_resumes_its_own_checkpoints_and_refuses_another_runs(toy_train_files, monkeypatch, caplog):
    """Issue 16: ``cli_pipeline.py train`` restarted from step 0 after a kill although checkpoint-3 existed."""
    import logging

    from scincl.model.objective import ContrastiveModel
    from scincl.model.train import train

    root = toy_train_files["root"]
    out = root / "resume_default"
    args = dict(base_model_name_or_path=str(toy_train_files["bert"]), cache_dir=str(root / "cache"), max_steps=6,
                save_steps=3, learning_rate=1e-3, per_device_train_batch_size=8, max_sequence_length=24,
                warmup_ratio=0.0, disable_tqdm=True, report_to="none", gradient_accumulation_steps=1)
    train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out), **args)
    assert read_json(out / "run_fingerprint.json")["settings"]["training"]["learning_rate"] == 1e-3
    (out / "train_args.json").unlink()  # as if killed during step 6's save: not finished,
    (out / "checkpoint-6" / "trainer_state.json").unlink()  # checkpoint-6 incomplete, checkpoint-3 complete
    calls = []
    original_forward = ContrastiveModel.forward
    monkeypatch.setattr(ContrastiveModel, "forward",
                        lambda self, *a, **k: calls.append(1) or original_forward(self, *a, **k))
    with caplog.at_level(logging.INFO, logger="scincl.model.train"):
        train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out), **args)  # no resume flag
    assert "resuming from the last checkpoint" in caplog.text
    assert len(calls) == 3  # steps 4-6 only
    assert read_json(out / "trainer_state.json")["global_step"] == 6
    with pytest.raises(InputError, match=r"resume_default: holds a run made differently \(setting training differs "
                                         r".*\); pass --override to start over"):
        train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out), **{**args, "learning_rate": 1e-4})
    calls.clear()
    train(str(root / "train.csv"), str(root / "metadata.jsonl"), str(out), **args)  # finished, same run: reused
    assert calls == []
