"""Issue 29, classes 4 and 6: a wrong or empty input is an error naming what was tried and seen (not
"no data" later); values are checked before the first stage or experiment runs."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from scincl.corpus.id_mapping import mapping_from_file, scidocs_id_mapping
from scincl.corpus.records import iter_tsv_lines
from scincl.graph.stage import get_citations
from scincl.errors import InputError
from scincl.pipeline.experiment_kinds import load_experiments
from scincl.settings.run import parse_seeds
from scincl.corpus.shards import ReadStats
from scincl.corpus.s2orc_mappings import read_mapping


def _plain(root: Path, papers: str, citations: str) -> Path:
    root.mkdir(parents=True)
    (root / "papers.jsonl").write_bytes(papers.encode() if isinstance(papers, str) else papers)
    (root / "citations.tsv").write_bytes(citations.encode() if isinstance(citations, str) else citations)
    return root


def test_s2orc_format_on_a_plain_folder_names_the_files_seen(tmp_path):
    corpus = _plain(tmp_path / "c", '{"paper_id": "a"}\n', "a\tb\n")
    with pytest.raises(InputError, match=r"no S2ORC shards .*files seen: citations.tsv, papers.jsonl\)"):
        get_citations(str(corpus), str(tmp_path / "out"), workers=1, corpus_format="s2orc")
    assert not (tmp_path / "out").exists()


def test_a_corpus_without_citations_is_an_error_and_leaves_no_output(tmp_path):
    (tmp_path / "shards").mkdir()
    with gzip.open(tmp_path / "shards" / "metadata_0.jsonl.gz", "wt") as fh:
        fh.write('{"paper_id": "a"}\n{"paper_id": "b", "outbound_citations": []}\n')
    with pytest.raises(InputError, match=r"read no citations in 2 papers as --corpus_format s2orc from 1 file\(s\) "
                                         r"\(files seen: metadata_0.jsonl.gz\)"):
        get_citations(str(tmp_path / "shards"), str(tmp_path / "out"), workers=1)
    assert not (tmp_path / "out").exists()
    corpus = _plain(tmp_path / "empty", "", "")
    with pytest.raises(InputError, match="read no papers as --corpus_format plain"):
        get_citations(str(corpus), str(tmp_path / "out2"), workers=1, corpus_format="plain")


def test_get_papers_of_zero_papers_is_an_error(tmp_path):
    from scincl.commands.s2orc import get_papers

    corpus = _plain(tmp_path / "c", "\n\n", "")
    with pytest.raises(InputError, match="read no papers"):
        get_papers(str(corpus), str(tmp_path / "p.jsonl"), corpus_format="plain", workers=1)
    assert not (tmp_path / "p.jsonl").exists()


def test_invalid_utf8_in_a_plain_corpus_is_a_counted_skip(tmp_path):
    from scincl.commands.s2orc import get_papers

    corpus = _plain(tmp_path / "c", b'{"paper_id": "a", "title": "A\xff"}\n{"paper_id": "b", "title": "B"}\n',
                    b"a\tb\n\xff\tb\n")
    get_papers(str(corpus), str(tmp_path / "p.jsonl"), corpus_format="plain", workers=1)
    stats = json.loads((tmp_path / "p.jsonl.stats.json").read_text())
    assert stats["papers"] == 1 and stats["skipped_by_reason"] == {"malformed_json": 1}
    get_citations(str(corpus), str(tmp_path / "o"), workers=1, corpus_format="plain")
    stats = json.loads((tmp_path / "o" / "citations.stats.json").read_text())
    assert stats["edges"] == 1 and stats["skipped_by_reason"] == {"invalid_utf8": 1}


def test_plain_tsv_is_parsed_strictly(tmp_path):
    path = tmp_path / "citations.tsv"
    path.write_bytes(b"citing\tcited\n a \t b\r\nc\td\te\nf g\th\n\ti\n# comment\nj\tk\n")
    stats = ReadStats()
    assert list(iter_tsv_lines(path, stats=stats)) == [(2, "a", "b"), (7, "j", "k")]
    assert stats.counted["header_line"] == 1 and stats.skipped["invalid_record"] == 3
    assert any("got 3 column(s)" in e for e in stats.skip_examples)
    with pytest.raises(InputError, match=r"citations.tsv:3: expected 2 tab-separated paper ids, got 3"):
        list(iter_tsv_lines(path, strict=True))
    path.write_text("a\tb\ncitting\tcited\n")  # only a first line is a header
    assert [row[1:] for row in iter_tsv_lines(path)] == [("a", "b"), ("citting", "cited")]


@pytest.mark.parametrize("value", [["W1", "W2"], {"id": "W1"}, "", "  ", True, 1.5])
def test_mapping_values_that_are_not_ids_are_refused(tmp_path, value):
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"s1": "W1", "s2": value}))
    with pytest.raises(InputError, match="'s2' maps to"):
        mapping_from_file(path)
    with pytest.raises(InputError, match="'s2' maps to"):
        read_mapping(str(path))


def test_two_scidocs_ids_mapped_to_one_paper_are_refused(tmp_path):
    (tmp_path / "map.json").write_text(json.dumps({"s1": "W1", "s2": "https://openalex.org/W1", "s3": 7, "s4": None}))
    (tmp_path / "ids.json").write_text(json.dumps(["s1", "s3", "s4"]))
    mapping, counts = scidocs_id_mapping(tmp_path, mapping_path=tmp_path / "map.json", paper_ids=tmp_path / "ids.json")
    assert mapping == {"s1": "W1", "s3": "7"} and counts["unmapped"] == 1
    (tmp_path / "ids.json").write_text(json.dumps(["s1", "s2"]))
    with pytest.raises(InputError, match="SciDocs ids 's1' and 's2' both map to the corpus paper 'W1'"):
        scidocs_id_mapping(tmp_path, mapping_path=tmp_path / "map.json", paper_ids=tmp_path / "ids.json")


@pytest.mark.parametrize("seeds, message", [(-1, "seeds must be >= 0"), ("-2..1", "seeds must be >= 0"),
                                            ("0,0", "distinct"), (2 ** 32, "< 2\\*\\*32")])
def test_bad_seeds_are_refused(seeds, message):
    with pytest.raises(InputError, match=message):
        parse_seeds(seeds)


def test_run_specter_refuses_a_bad_loss_or_seed_before_any_stage(tmp_path):
    from scincl.commands.pipeline import run_specter

    with pytest.raises(InputError, match="unknown --loss 'hinge'"):
        run_specter(str(tmp_path / "run"), loss="hinge")
    with pytest.raises(InputError, match="seeds must be >= 0"):
        run_specter(str(tmp_path / "run"), seeds=-1)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("source, message", [
    ("def get_experiment(:\n", r"broken.py:1: cannot load the experiment definition \(SyntaxError"),
    ("def get_experiment():\n    return 1 / 0\n", r"cannot load .*ZeroDivisionError"),
    ("def get_experiment():\n    return 3\n", "must return a dict of Experiment fields or a list of them, got int"),
    ("def get_experiment():\n    return []\n", "got list"),
    ("def get_experiment():\n    return {'kind': 'main', 'seeds': [-1]}\n", "seeds must be >= 0"),
    ("def get_experiment():\n    return {'kind': 'k_pos', 'values': [10, 10], 'seeds': [0]}\n",
     "--values 10,10: expected distinct values > 0"),
    ("def get_experiment():\n    return {'kind': 'budget', 'values': [0, 100]}\n", "expected distinct values > 0"),
    ("def get_experiment():\n    return [{'kind': 'main'}, {'kind': 'losses', 'losses': 'triplet,hinge'}]\n",
     "unknown --losses 'hinge'; choose one of triplet"),
    ("def get_experiment():\n    return {'kind': 'main', 'recipe': {'learning_rate': -1}}\n",
     "--learning_rate -1: must be > 0"),
    ("def get_experiment():\n    return {'kind': 'main', 'split': 'train'}\n", "--split 'train': choose val or test"),
])
def test_broken_experiment_definitions_are_one_line_errors(tmp_path, source, message):
    path = tmp_path / "broken.py"
    path.write_text(source)
    with pytest.raises(InputError, match=message):
        load_experiments(path)
