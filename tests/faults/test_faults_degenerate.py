"""Issue 41, classes 5, 6 and 8: no silent change of a value, one line for empty and degenerate inputs, every flag
checked before the first output.

- class 5: an experiment's ``"values": [10.5, 25]`` (and seeds, graph dimensions) is refused, not truncated to 10;
  ``embed_graph --method prone --dimension 32`` on a 5-paper graph is refused, not 5 dimensions without a word;
- class 6: ``evaluate --model_dirs tfidf|bm25`` on papers without text, ``embed_graph --method fastrp|prone`` on
  an empty (or comment-only) edge file, and training rows that give the encoder nothing to learn end in one line;
- class 8: ``get_knn_triples`` refuses a band beyond the corpus, a query count beyond it and more random draws
  than a slot's pool holds before it builds the FAISS index (nothing written).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from scincl.errors import InputError
from scincl.io import write_embeddings_h5, write_id_list, write_jsonl


# ------------------------------------------------------------------------------------------- class 5

@pytest.mark.parametrize("definition, message", [
    ({"kind": "k_pos", "values": [10.5, 25], "seeds": [0]}, r"--values: expected integers like 10,25,100, got \[10.5"),
    ({"kind": "graph", "graph_dims": [64, 127.5]}, "--graph_dims: expected integers"),
    ({"kind": "main", "seeds": [0, 1.5]}, "--seeds: expected integers"),
    ({"kind": "main", "seeds": 2.5}, "--seeds: expected integers"),
    ({"kind": "k_pos", "values": [True, 25]}, "--values: expected integers"),
])
def test_an_experiment_value_that_is_not_an_integer_is_refused_not_truncated(tmp_path, definition, message):
    from scincl.pipeline.experiment_kinds import load_experiments

    path = tmp_path / "exp.py"
    path.write_text(f"def get_experiment():\n    return {definition!r}\n")
    with pytest.raises(InputError, match=message):
        load_experiments(path)


def test_integral_values_are_kept(tmp_path):
    from scincl.pipeline.experiment_kinds import load_experiments
    from scincl.settings.run import parse_seeds

    path = tmp_path / "exp.py"
    path.write_text("def get_experiment():\n    return {'kind': 'k_pos', 'values': [10.0, 25], 'seeds': [0, 2.0]}\n")
    (experiment,) = load_experiments(path)
    assert experiment.values == (10, 25) and experiment.seeds == (0, 2)
    assert parse_seeds("0..2") == [0, 1, 2]


def _edges(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_prone_refuses_more_dimensions_than_papers(tmp_path):
    from scincl.graph.embed import embed_graph

    five = _edges(tmp_path / "five.tsv", "a\tb\nb\tc\nc\td\nd\te\n")
    with pytest.raises(InputError, match="--dimension 32 is more than the graph's 5 papers: prone's SVD gives at "
                                         "most 5 dimensions"):
        embed_graph(five, tmp_path / "prone", method="prone", dimension=32)
    assert not (tmp_path / "prone").exists()
    embed_graph(five, tmp_path / "fastrp", method="fastrp", dimension=32)  # a random projection has any width
    assert json.loads((tmp_path / "fastrp" / "embed_graph_run.json").read_text())["dimension"] == 32


# ------------------------------------------------------------------------------------------- class 6

@pytest.mark.parametrize("method", ["fastrp", "prone"])
@pytest.mark.parametrize("text", ["", "# only a comment\n\n"])
def test_embed_graph_on_an_edge_file_without_edges_is_one_line(tmp_path, method, text):
    from scincl.graph.embed import embed_graph

    empty = _edges(tmp_path / "empty.tsv", text)
    with pytest.raises(InputError, match=f"empty.tsv: no edges: {method} has nothing to embed"):
        embed_graph(empty, tmp_path / "out", method=method, dimension=8)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("method", ["tfidf", "bm25"])
def test_lexical_evaluation_of_papers_without_text_is_one_line(demo_corpus, tmp_path, method):
    from scincl.eval.evaluate import run_evaluation

    scidocs = tmp_path / "scidocs"
    shutil.copytree(demo_corpus.scidocs_dir, scidocs)
    for path in scidocs.glob("paper_metadata_*.json"):
        papers = json.loads(path.read_text())
        path.write_text(json.dumps({pid: {**paper, "title": "", "abstract": "the of and"}
                                    for pid, paper in papers.items()}))
    with pytest.raises(InputError, match=f"{method}: none of the .* papers has a word to index"):
        run_evaluation(str(scidocs), str(tmp_path / "eval"), model_dirs=method)


def test_training_rows_with_nothing_to_learn_are_refused_before_any_output(toy_bert, tmp_path):
    import cli_pipeline

    write_jsonl(tmp_path / "empty.jsonl", [{"paper_id": str(i), "title": "", "abstract": None} for i in range(4)])
    (tmp_path / "t.csv").write_text("query_paper_id,positive_id,negative_id\n0,1,2\n1,2,3\n")
    with pytest.raises(InputError, match="nothing to learn: none of the 4 training papers has a title or an abstract"):
        cli_pipeline.train(str(tmp_path / "t.csv"), str(tmp_path / "empty.jsonl"), str(tmp_path / "m1"),
                           base_model_name_or_path=str(toy_bert), use_cpu=True, report_to="none")
    write_jsonl(tmp_path / "texts.jsonl", [{"paper_id": str(i), "title": f"paper {i}"} for i in range(4)])
    (tmp_path / "same.csv").write_text("query_paper_id,positive_id,negative_id\n0,1,1\n2,3,3\n")
    with pytest.raises(InputError, match="nothing to learn: in every one of the 2 training rows the positives are"):
        cli_pipeline.train(str(tmp_path / "same.csv"), str(tmp_path / "texts.jsonl"), str(tmp_path / "m2"),
                           base_model_name_or_path=str(toy_bert), use_cpu=True, report_to="none")
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()


# ------------------------------------------------------------------------------------------- class 8

@pytest.fixture()
def small_graph(tmp_path):
    """40 papers with random 8-d graph vectors (the files embed_graph and train_biggraph export)."""
    ids = [f"p{i}" for i in range(40)]
    write_id_list(tmp_path / "ids.json", ids)
    write_embeddings_h5(tmp_path / "emb.h5", np.random.default_rng(0).normal(size=(40, 8)).astype(np.float32))
    return tmp_path / "ids.json", tmp_path / "emb.h5"


@pytest.mark.parametrize("flags, message", [
    ({"hard_negatives_k_max": 100}, "--hard_negatives_k_max=100 is beyond the index: it holds 40 papers"),
    ({"query_papers": 41}, "--query_papers 41: choose between 1 and the corpus size 40"),
    ({"query_papers": ["p1", "x"]}, "1 of 2 query papers are not in the index"),
    ({"easy_negatives_strategy": "random_sorted", "random_sorted_sample_n": 40},
     "--easy_negatives_strategy random_sorted: only 39 papers to draw 40 distinct random ones from"),
    ({"easy_negatives_strategy": "random_without_knn_sorted", "random_sorted_sample_n": 20},
     "random_without_knn_sorted: only 9 papers to draw 20"),
    ({"easy_negatives_strategy": "random_without_knn", "easy_negatives_count": 10, "triples_per_query": 12,
      "easy_positives_count": 12, "hard_negatives_count": 2, "easy_positives_k_max": 12},
     "random_without_knn: only 9 papers to draw 10"),
    ({"ann_backend": "exact", "ann_device": 7}, "--ann_device 7: --ann_backend exact needs that CUDA device"),
])
def test_get_knn_triples_checks_every_flag_before_building_the_index(small_graph, tmp_path, flags, message):
    from scincl.triples.knn_miner import get_knn_triples

    ids, embeddings = small_graph
    flags = {"easy_positives_k_max": 10, "hard_negatives_k_max": 30, **flags}
    with pytest.raises(InputError, match=message):
        get_knn_triples(tmp_path / "out" / "t.csv", ids, embeddings, show_progress=False, **flags)
    # no index, no triples (the lock the call held while it ran, .t.csv.lock, went with it: scincl/output_lock.py)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    get_knn_triples(tmp_path / "ok" / "t.csv", ids, embeddings, easy_positives_k_max=10, hard_negatives_k_max=30,
                    show_progress=False)
    assert (tmp_path / "ok" / "t.csv.faiss").exists() and (tmp_path / "ok" / "t.csv").exists()
