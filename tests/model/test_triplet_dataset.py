"""Issue 44: ``cli_triples.py export_dataset``: triplets with their texts as a Hugging Face dataset that
sentence-transformers trains on (``SentenceTransformerTrainer`` + ``losses.TripletLoss``, one step)."""
from __future__ import annotations

import json

import pytest

from scincl.errors import InputError
from scincl.io import iter_jsonl, iter_triples_csv, write_jsonl, write_triples_csv
from scincl.model.triplet_dataset import ID_COLUMNS, PARQUET_FILE, REPORT_FILE, TEXT_COLUMNS, export_dataset
from tests.conftest import run_front_end


@pytest.fixture(scope="module")
def exported(toy_train_files, tmp_path_factory):
    """The toy triplets exported through the CLI, as a user runs it."""
    out = tmp_path_factory.mktemp("export") / "triplets_dataset"
    root = toy_train_files["root"]
    run_front_end("cli_triples.py", "export_dataset", str(root / "train.csv"), str(root / "metadata.jsonl"), str(out),
                  check=True)
    return out


def test_export_has_the_texts_train_forms_and_the_paper_ids(exported, toy_train_files):
    import datasets

    root = toy_train_files["root"]
    papers = {r["paper_id"]: r for _, r in iter_jsonl(root / "metadata.jsonl")}
    triplets = list(iter_triples_csv(root / "train.csv"))
    dataset = datasets.load_from_disk(str(exported))
    assert dataset.column_names == [*TEXT_COLUMNS, *ID_COLUMNS]
    assert len(dataset) == len(triplets) > 0
    for row, (query, positive, negative) in zip(dataset, triplets):
        assert (row["anchor_id"], row["positive_id"], row["negative_id"]) == (query, positive, negative)
        for column, pid in zip(TEXT_COLUMNS, (query, positive, negative)):
            assert row[column] == papers[pid]["title"] + "[SEP]" + papers[pid]["abstract"]
    parquet = datasets.load_dataset("parquet", data_files=str(exported / PARQUET_FILE), split="train")
    assert parquet.to_list() == dataset.to_list()
    report = json.loads((exported / REPORT_FILE).read_text())
    assert (report["triplets"], report["triplets_dropped"], report["papers_missing_from_metadata"]) == (
        len(triplets), 0, 0)


def test_a_triplet_with_a_paper_missing_from_the_metadata_is_dropped_and_counted(toy_train_files, tmp_path):
    import datasets

    root = toy_train_files["root"]
    triplets = list(iter_triples_csv(root / "train.csv"))
    write_triples_csv(tmp_path / "train.csv", [*triplets, (triplets[0][0], "not-a-paper", triplets[0][2])])
    out = export_dataset(str(tmp_path / "train.csv"), str(root / "metadata.jsonl"), str(tmp_path / "out"),
                         sep_token="</s>")
    report = json.loads((out / REPORT_FILE).read_text())
    assert (report["triplets_in_file"], report["triplets"], report["papers_missing_from_metadata"]) == (
        len(triplets) + 1, len(triplets), 1)
    assert "</s>" in datasets.load_from_disk(str(out))[0]["anchor"]


def test_rerun_reuses_and_another_setting_is_refused_without_override(exported, toy_train_files):
    root = toy_train_files["root"]
    before = (exported / PARQUET_FILE).stat().st_mtime_ns
    export_dataset(str(root / "train.csv"), str(root / "metadata.jsonl"), str(exported))
    assert (exported / PARQUET_FILE).stat().st_mtime_ns == before
    with pytest.raises(InputError, match="setting sep_token differs"):
        export_dataset(str(root / "train.csv"), str(root / "metadata.jsonl"), str(exported), sep_token="</s>")


def test_no_triplet_left_is_one_clear_line(tmp_path):
    write_triples_csv(tmp_path / "t.csv", [("a", "b", "c")])
    write_jsonl(tmp_path / "m.jsonl", [{"paper_id": "x", "title": "X", "abstract": ""}])
    done = run_front_end("cli_triples.py", "export_dataset", str(tmp_path / "t.csv"), str(tmp_path / "m.jsonl"),
                         str(tmp_path / "out"), check=False)
    assert done.returncode != 0
    assert "no triplet left" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_sentence_transformers_trains_one_step_of_its_triplet_loss_on_the_export(exported, toy_bert, tmp_path):
    import datasets
    import torch
    from sentence_transformers import (SentenceTransformer, SentenceTransformerTrainer,
                                       SentenceTransformerTrainingArguments, losses)

    train_dataset = datasets.load_from_disk(str(exported)).select_columns(list(TEXT_COLUMNS))
    model = SentenceTransformer(str(toy_bert), device="cpu")
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path / "st"), max_steps=1,
                                                per_device_train_batch_size=4, learning_rate=1e-2, use_cpu=True,
                                                report_to=[], save_strategy="no", seed=0)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset,
                                         loss=losses.TripletLoss(model))
    result = trainer.train()
    assert result.global_step == 1 and torch.isfinite(torch.tensor(result.training_loss))
    changed = [name for name, p in model.named_parameters() if not torch.equal(p.detach(), before[name])]
    assert changed  # the step moved the encoder's weights
