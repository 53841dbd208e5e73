"""Training data path: rows, metadata, tokenisation cache, missing papers, the dedup collator
(same loss and gradients as encoding every row) and the query-block sampler."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from scincl.errors import InputError
from scincl.io import write_json, write_jsonl, write_triples_csv
from scincl.model import data as model_data
from scincl.model.collator import DedupCollator, QueryBlockSampler
from scincl.model.encoder import DocumentEncoder, load_backbone
from scincl.model.losses import SourceTargetMultiPositiveLoss, TripletMarginLoss
from scincl.model.tiny import toy_topic_corpus, toy_triplets
from tests.conftest import metadata_rows


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def toy(tmp_path_factory, toy_bert):
    root = tmp_path_factory.mktemp("toy")
    papers = toy_topic_corpus(papers_per_topic=4)
    write_jsonl(root / "metadata.jsonl.gz", metadata_rows(papers))
    write_triples_csv(root / "triples.csv", toy_triplets(papers, per_query=3))
    backbone, tokenizer = load_backbone(str(toy_bert))
    return {"root": root, "papers": papers, "backbone": backbone, "tokenizer": tokenizer}


def test_read_triples_and_groups_and_convert_between_them(tmp_path):
    write_triples_csv(tmp_path / "t.csv", [("q", "p1", "n1"), ("q", "p2", "n2"), ("r", "p1", "n3")])
    rows = model_data.read_training_rows(tmp_path / "t.csv")
    assert rows.kind == model_data.TRIPLETS and len(rows.rows) == 3
    groups = model_data.triplets_to_groups(rows)
    assert groups.rows == [("q", ["p1", "p2"], ["n1", "n2"]), ("r", ["p1"], ["n3"])]
    # groups: the current key query_paper_id and the older key query are both read
    write_jsonl(tmp_path / "g.jsonl", [{"query_paper_id": "q", "positives": ["a", "b", "c"], "negatives": ["x", 5]},
                                       {"query": "r", "positives": ["d"], "negatives": ["y"]}])
    read_groups = model_data.read_training_rows(tmp_path / "g.jsonl")
    assert read_groups.rows == [("q", ["a", "b", "c"], ["x", "5"]), ("r", ["d"], ["y"])]
    read_groups.rows.pop()
    triplets = model_data.groups_to_triplets(read_groups)
    assert [r for r in triplets.rows] == [("q", ["a"], ["x"]), ("q", ["b"], ["5"]), ("q", ["c"], ["x"])]


def test_bad_training_rows_are_one_line_errors(tmp_path):
    write_jsonl(tmp_path / "g.jsonl", [{"query": "q", "positives": ["a"], "negatives": ["b"]},
                                       {"query": "r", "positives": [], "negatives": ["b"]}])
    with pytest.raises(InputError, match=r"g.jsonl:2, field 'positives': 'positives' must be a non-empty list"):
        model_data.read_training_rows(tmp_path / "g.jsonl")
    (tmp_path / "bad.csv").write_text("a,b,c\nq,p,n\n")
    with pytest.raises(InputError, match="expected header query_paper_id,positive_id,negative_id"):
        model_data.read_training_rows(tmp_path / "bad.csv")
    with pytest.raises(InputError, match=r"triples \.csv\(\.gz\) or a groups \.jsonl"):
        model_data.read_training_rows(tmp_path / "rows.tsv")


def test_metadata_from_jsonl_and_scidocs_json_is_tokenised_once_and_cached(toy, tmp_path):
    tokenizer = toy["tokenizer"]
    scidocs = {p["paper_id"]: {"paper_id": p["paper_id"], "title": p["title"], "abstract": None}
               for p in toy["papers"][:5]}
    write_json(tmp_path / "paper_metadata_cite.json", scidocs)
    papers = model_data.load_tokenized_papers(tmp_path / "paper_metadata_cite.json", tokenizer, 16,
                                              cache_dir=str(tmp_path / "cache"))
    assert len(papers.dataset) == 5
    first = papers.dataset[papers.row_of["graphs-0"]]
    # no abstract: "title[SEP]" (the separator stays, as in the original SciNCL input)
    assert first["input_ids"] == tokenizer(toy["papers"][0]["title"] + tokenizer.sep_token)["input_ids"]
    assert first["length"] == len(first["input_ids"])

    cache = str(tmp_path / "cache2")
    wanted = ["graphs-1", "proteins-2", "not-there"]
    a = model_data.load_tokenized_papers(toy["root"] / "metadata.jsonl.gz", tokenizer, 16, wanted, cache_dir=cache)
    arrow_files = sorted(str(p) for p in (tmp_path / "cache2").rglob("*.arrow"))
    b = model_data.load_tokenized_papers(toy["root"] / "metadata.jsonl.gz", tokenizer, 16, wanted, cache_dir=cache)
    assert sorted(a.row_of) == ["graphs-1", "proteins-2"] and a.missing == ["not-there"]
    assert a.dataset.cache_files == b.dataset.cache_files  # the second call read the cached arrow tables
    assert a.dataset.cache_files and all(f["filename"].startswith(cache) for f in a.dataset.cache_files)
    assert sorted(str(p) for p in (tmp_path / "cache2").rglob("*.arrow")) == arrow_files  # nothing re-written
    text = tokenizer.decode(a.dataset[a.row_of["graphs-1"]]["input_ids"])
    assert "[SEP]" in text.split(" ", 1)[1]  # title [SEP] abstract
    c = model_data.load_tokenized_papers(toy["root"] / "metadata.jsonl.gz", tokenizer, 8, wanted, cache_dir=cache)
    assert max(c.dataset["length"]) == 8 and c.dataset.cache_files != a.dataset.cache_files


def test_metadata_without_paper_id_names_file_and_line(toy, tmp_path):
    write_jsonl(tmp_path / "m.jsonl", [{"paper_id": "a", "title": "x"}, {"title": "no id"}])
    with pytest.raises(InputError, match=r"m.jsonl:2, field 'paper_id': record without 'paper_id'"):
        model_data.load_tokenized_papers(tmp_path / "m.jsonl", toy["tokenizer"], 16, cache_dir=str(tmp_path / "c"))


def test_rows_with_papers_missing_from_metadata_are_counted_and_dropped(toy, tmp_path):
    rows = model_data.read_training_rows(toy["root"] / "triples.csv")
    rows.rows.append(("graphs-0", ["ghost-1"], ["galaxies-0"]))
    rows.rows.append(("ghost-2", ["graphs-1"], ["galaxies-0"]))
    papers = model_data.load_tokenized_papers(toy["root"] / "metadata.jsonl.gz", toy["tokenizer"], 16,
                                              rows.paper_ids(), cache_dir=str(tmp_path / "c"))
    dataset, report = model_data.build_example_dataset(rows, papers)
    assert (report.rows_in, report.rows_kept, report.missing_papers) == (len(rows.rows), len(rows.rows) - 2, 2)
    assert report.examples == ["ghost-1", "ghost-2"]
    assert dataset.column_names == ["query", "positive", "negative", "length"]
    groups = model_data.triplets_to_groups(rows)
    group_dataset, group_report = model_data.build_example_dataset(groups, papers)
    assert group_report.rows_kept == len(groups.rows) - 1  # ghost-2's group has no query; graphs-0 keeps its others
    # a group whose target (first positive) is missing is dropped: column 0 must stay the target
    targetless = model_data.TrainingRows(model_data.GROUPS, [("graphs-0", ["ghost-1", "graphs-1"], ["galaxies-0"]),
                                                             ("graphs-0", ["graphs-1", "ghost-1"], ["galaxies-0"])])
    kept, kept_report = model_data.build_example_dataset(targetless, papers)
    assert kept_report.rows_kept == 1 and kept["positives"] == [[papers.row_of["graphs-1"]]]
    none_left = model_data.TrainingRows(model_data.TRIPLETS, [("ghost-1", ["graphs-1"], ["graphs-2"])], "x.csv")
    with pytest.raises(InputError, match=r"no training rows left: all 1 triplets reference papers missing from the "
                       r"metadata \(1 of 3 papers missing, e.g. ghost-1\)"):
        model_data.build_example_dataset(none_left, papers)


def _loss_and_grads(encoder, loss_fn, batch):
    encoder.zero_grad()
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in batch}
    embeddings = encoder(**inputs)
    loss = loss_fn(embeddings, batch["query_index"], batch["positive_index"], batch["negative_index"])
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in encoder.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("kind", ["triplets", "groups"])
def test_dedup_collator_gives_the_same_loss_and_gradients_as_encoding_every_row(toy, tmp_path, kind):
    rows = model_data.as_kind(model_data.read_training_rows(toy["root"] / "triples.csv"), kind)
    papers = model_data.load_tokenized_papers(toy["root"] / "metadata.jsonl.gz", toy["tokenizer"], 24,
                                              rows.paper_ids(), cache_dir=str(tmp_path / "c"))
    dataset, _ = model_data.build_example_dataset(rows, papers)
    features = [dataset[i] for i in range(6)]  # 2 queries x 3 triplets (or 6 groups)
    pad = toy["tokenizer"].pad_token_id
    dedup = DedupCollator(papers.dataset, pad, input_kind=kind, deduplicate=True)(features)
    every_row = DedupCollator(papers.dataset, pad, input_kind=kind, deduplicate=False)(features)
    rows_per_example = [3 if kind == "triplets" else 1 + len(f["positives"]) + len(f["negatives"]) for f in features]
    assert every_row["input_ids"].shape[0] == sum(rows_per_example)
    assert dedup["input_ids"].shape[0] < every_row["input_ids"].shape[0]
    encoder = DocumentEncoder(toy["backbone"], "cls").eval()  # eval: no dropout, so both runs are comparable
    loss_fn = TripletMarginLoss() if kind == "triplets" else SourceTargetMultiPositiveLoss()
    loss_a, grads_a = _loss_and_grads(encoder, loss_fn, dedup)
    loss_b, grads_b = _loss_and_grads(encoder, loss_fn, every_row)
    assert loss_a > 0 and loss_a == pytest.approx(loss_b, rel=1e-5)
    assert grads_a.keys() == grads_b.keys() and grads_a
    for name in grads_a:
        torch.testing.assert_close(grads_a[name], grads_b[name], rtol=1e-3, atol=1e-5)  # float summation order


def test_collator_pads_and_masks_tokens_for_mlm(toy, tmp_path):
    rows = model_data.read_training_rows(toy["root"] / "triples.csv")
    papers = model_data.load_tokenized_papers(toy["root"] / "metadata.jsonl.gz", toy["tokenizer"], 24,
                                              rows.paper_ids(), cache_dir=str(tmp_path / "c"))
    dataset, _ = model_data.build_example_dataset(rows, papers)
    tok = toy["tokenizer"]
    torch.manual_seed(0)
    collator = DedupCollator(papers.dataset, tok.pad_token_id, mlm_probability=0.5, mask_token_id=tok.mask_token_id,
                             special_token_ids=tok.all_special_ids, vocab_size=len(tok), pad_to_multiple_of=8)
    batch = collator([dataset[i] for i in range(4)])
    assert batch["input_ids"].shape[1] % 8 == 0
    chosen = batch["mlm_labels"] != -100
    assert chosen.any() and torch.equal(batch["mlm_labels"][chosen], batch["input_ids"][chosen])
    assert not chosen[batch["attention_mask"] == 0].any()  # padding is never a target
    assert not chosen[:, 0].any()  # [CLS] is never masked
    assert (batch["mlm_input_ids"][chosen] == tok.mask_token_id).float().mean() > 0.5


def test_query_block_sampler_keeps_queries_together_and_reshuffles_per_epoch():
    queries = [7, 7, 7, 3, 3, 9, 9, 9, 9, 1]
    sampler = QueryBlockSampler(queries, seed=0)
    first = list(sampler)
    assert sorted(first) == list(range(10)) and len(sampler) == 10
    runs = [queries[i] for i in first]
    assert [q for i, q in enumerate(runs) if i == 0 or runs[i - 1] != q] == list(dict.fromkeys(runs))
    orders = set()
    for epoch in range(6):
        sampler.set_epoch(epoch)
        orders.add(tuple(sampler))
    assert len(orders) > 1
    again = QueryBlockSampler(queries, seed=0)
    again.set_epoch(3)
    sampler.set_epoch(3)
    assert list(again) == list(sampler)
    assert np.array_equal(np.sort(np.asarray(list(again))), np.arange(10))
