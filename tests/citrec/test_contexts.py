"""Citation contexts from full text (issue 43, deliverable 1): sentence splitting with markers intact, the
S2ORC and unarXive formats, locations and their multiple positives, counted skips, the demo's full text
and ``cli_s2orc.py get_citation_contexts`` (one-line errors, reuse, the same bytes for any --workers)."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from scincl.citrec.contexts import paper_contexts
from scincl.citrec.formats import FULL_TEXT_FORMATS
from scincl.citrec.sentences import split_sentences
from scincl.demo import make_demo
from scincl.io import read_jsonl
from tests.conftest import run_front_end

UNARXIVE = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "unarxive"


def _spans(text: str, pattern: str):
    return [m.span() for m in re.finditer(pattern, text)]


def test_sentences_keep_markers_formulas_and_abbreviations_whole():
    text = ("Smith et al. [3, 4] showed it. Fig. 3 of Ref. [12] holds {{formula:ab-12}} . "
            "Then we cite [5].[6] It ends. ")
    protected = _spans(text, r"\[[0-9, ]+\]|Fig\. 3")  # the cite spans and the figure reference
    assert [text[a:b] for a, b in split_sentences(text, protected)] == [
        "Smith et al. [3, 4] showed it.", "Fig. 3 of Ref. [12] holds {{formula:ab-12}} .",
        "Then we cite [5].[6] It ends."]
    assert split_sentences("  \n ") == []
    assert split_sentences("One.\n\nTwo words here.") == [(0, 4), (6, 21)]  # trimmed, blank pieces dropped


def _unarxive_record():
    p0 = ("We build on {{cite:a}}{{cite:b}}. A second claim by {{cite:c}} and a later one {{cite:d}}. "
          "Formula {{formula:f-1}} holds.")
    p1 = "Next paragraph {{cite:missing}} and {{cite:e}}, {{cite:a}}. Last sentence."
    ids = lambda **kw: {"ids": {"open_alex_id": "", "arxiv_id": "", "doi": "", "pubmed_id": "", "pmc_id": "", **kw}}  # noqa: E731
    return {"paper_id": "2212.00001", "abstract": {"section": "Abstract", "text": "Abstract one. Abstract two."},
            "body_text": [{"section": "Intro", "text": p0}, {"section": "Method", "text": p1}],
            "bib_entries": {"a": ids(open_alex_id="https://openalex.org/W11"), "b": ids(arxiv_id="2101.1"),
                            "c": ids(), "d": ids(doi="10.1/x"), "e": ids(open_alex_id="https://openalex.org/W55")}}


def test_unarxive_markers_ids_locations_and_counted_skips():
    paper, contexts, counts = paper_contexts(_unarxive_record(), FULL_TEXT_FORMATS["unarxive"])
    assert paper.abstract == ["Abstract one.", "Abstract two."]
    assert paper.body[:3] == ["We build on {{cite:a}}{{cite:b}}.",
                              "A second claim by {{cite:c}} and a later one {{cite:d}}.", "Formula {{formula:f-1}} holds."]
    assert paper.paragraph == [0, 0, 0, 1, 1]
    rows = [(c.context_id, c.paragraph, c.sentence, c.sentence_in_paragraph, c.section, c.cited_ids, c.markers)
            for c in contexts]
    assert rows == [
        ("2212.00001:0:0", 0, 0, 0, "Intro", ["W11", "arxiv:2101.1"], 2),  # adjacent markers: one location
        ("2212.00001:1:0", 0, 1, 1, "Intro", ["doi:10.1/x"], 1),  # {{cite:c}} has no id: its location is dropped
        ("2212.00001:3:0", 1, 3, 0, "Method", ["W55", "W11"], 2),  # "missing" is no bib entry
    ]
    # the fundamental context: sentence before, the citing one, sentence after (across paragraphs)
    assert contexts[2].sentences == ["Formula {{formula:f-1}} holds.",
                                     "Next paragraph {{cite:missing}} and {{cite:e}}, {{cite:a}}.", "Last sentence."]
    assert contexts[0].sentences == paper.body[:2]
    assert (counts["markers"], counts["markers_in_contexts"]) == (7, 5)
    assert (counts["markers_skipped_no_id"], counts["markers_skipped_no_reference"]) == (1, 1)
    assert counts["locations_without_id"] == 2  # {{cite:c}}; {{cite:missing}} ("and" separates locations)

    _, by_sentence, _ = paper_contexts(_unarxive_record(), FULL_TEXT_FORMATS["unarxive"], context_unit="sentence")
    assert [(c.sentence, c.cited_ids) for c in by_sentence] == [
        (0, ["W11", "arxiv:2101.1"]), (1, ["doi:10.1/x"]), (3, ["W55", "W11"])]
    # 'markers' vs 'sentence' differ where two locations share a sentence ("and" between them)
    record = _unarxive_record()
    record["body_text"][0]["text"] = "X by {{cite:a}} and Y by {{cite:d}}."
    assert [c.cited_ids for c in paper_contexts(record, FULL_TEXT_FORMATS["unarxive"])[1]][:2] == [["W11"],
                                                                                                  ["doi:10.1/x"]]
    assert paper_contexts(record, FULL_TEXT_FORMATS["unarxive"], "sentence")[1][0].cited_ids == ["W11", "doi:10.1/x"]


def test_reference_candidates_give_referenced_works_outside_the_corpus_their_reference_text(tmp_path):
    from scincl.citrec.stage import get_citation_contexts

    first = _unarxive_record()
    first["bib_entries"]["a"]["bib_entry_raw"] = "A. Author. Graph things. 2001."  # W11
    first["bib_entries"]["b"]["bib_entry_raw"] = "B. Author. A paper of the corpus. 2002."  # arxiv:2101.1
    first["bib_entries"]["e"]["bib_entry_raw"] = " "  # W55: no text, no candidate; d (doi): no text either
    second = {"paper_id": "arxiv:2101.1", "body_text": [{"text": "It cites {{cite:x}}."}],
              "bib_entries": {"x": {"ids": {"open_alex_id": "W11"}, "bib_entry_raw": "Another text of W11."}}}
    (tmp_path / "in").mkdir()
    with gzip.open(tmp_path / "in" / "part.jsonl.gz", "wt") as fh:
        fh.write(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    get_citation_contexts(str(tmp_path / "in"), str(tmp_path / "with"), full_text_format="unarxive",
                          reference_candidates=True, workers=1)
    records = read_jsonl(tmp_path / "with" / "sentences.jsonl.gz")
    assert [r["paper_id"] for r in records] == ["2212.00001", "arxiv:2101.1", "W11"]  # the papers, then references
    assert records[-1] == {"paper_id": "W11", "abstract": ["A. Author. Graph things. 2001."], "body": [],
                           "paragraph": []}  # the first text met of an id
    assert _stats(tmp_path / "with")["reference_candidates"] == 1
    get_citation_contexts(str(tmp_path / "in"), str(tmp_path / "without"), full_text_format="unarxive", workers=1)
    assert read_jsonl(tmp_path / "without" / "sentences.jsonl.gz") == records[:2]
    assert "reference_candidates" not in _stats(tmp_path / "without")


def test_s2orc_cite_spans_links_and_skip_reasons():
    text = "Prior work [1] and [2] [3]. Ref. [4] is unlinked. Broken span here."
    spans = [(m.start(), m.end(), f"BIBREF{int(m.group(1)) - 1}") for m in re.finditer(r"\[(\d)\]", text)]
    cite_spans = [{"start": a, "end": b, "text": text[a:b], "ref_id": r} for a, b, r in spans]
    cite_spans[1]["ref_id"] = None  # S2ORC: a marker it could not match to a bib entry
    cite_spans.append({"start": 60, "end": 90, "text": "?", "ref_id": "BIBREF0"})  # beyond the text
    record = {"paper_id": 7, "abstract": [{"text": "An abstract."}],
              "body_text": [{"section": "Intro", "text": text, "cite_spans": cite_spans, "ref_spans": []}],
              "bib_entries": {"BIBREF0": {"link": "100"}, "BIBREF1": {"link": "200"}, "BIBREF2": {"link": "300"},
                              "BIBREF3": {"link": None}}}
    paper, contexts, counts = paper_contexts(record, FULL_TEXT_FORMATS["s2orc"])
    assert paper.body == ["Prior work [1] and [2] [3].", "Ref. [4] is unlinked.", "Broken span here."]
    assert [(c.context_id, c.cited_ids, c.markers) for c in contexts] == [("7:0:0", ["100"], 1), ("7:0:1", ["300"], 1)]
    assert counts["markers"] == 5 and counts["markers_in_contexts"] == 2
    assert {k: v for k, v in counts.items() if k.startswith("markers_skipped_") and v} == {
        "markers_skipped_no_reference": 1, "markers_skipped_no_id": 1, "markers_skipped_bad_span": 1}


def _stats(folder: Path) -> dict:
    return json.loads((folder / "contexts.stats.json").read_text())


def test_demo_full_text_follows_the_graph_and_every_marker_is_counted(demo_full_text, demo_contexts):
    metadata = {r["paper_id"]: r for shard in sorted(demo_full_text.s2orc_metadata_dir.glob("*.jsonl.gz"))
                for r in read_jsonl(shard)}
    stats = _stats(demo_contexts)
    assert stats["papers"] == len(metadata) == 300
    assert stats["markers"] == stats["markers_in_contexts"] + sum(stats["markers_skipped"].values())
    assert set(stats["markers_skipped"]) == {"no_id"} and stats["markers_skipped"]["no_id"] > 0  # unlinked refs
    contexts = read_jsonl(demo_contexts / "contexts.jsonl.gz")
    assert len(contexts) == stats["contexts"] and sum(c["markers"] for c in contexts) == stats["markers_in_contexts"]
    cited = {}
    for c in contexts:
        cited.setdefault(c["citing_paper_id"], set()).update(c["cited_ids"])
        assert set(c["cited_ids"]) <= set(metadata[c["citing_paper_id"]]["outbound_citations"])
        assert 2 <= len(c["sentences"]) <= 3
    # every outbound citation is cited somewhere in the citing paper's text
    assert cited == {pid: set(r["outbound_citations"]) for pid, r in metadata.items() if r["outbound_citations"]}
    sizes = stats["contexts_by_cited_ids"]
    assert set(sizes) == {"1", "2", "3"} and sizes["1"] > sizes["2"] > sizes["3"] > 0  # co-citations: 2-3 positives
    # the splitter finds exactly the generated sentences (each ends in '.', followed by a space or the end)
    sentences = {s["paper_id"]: s for s in read_jsonl(demo_contexts / "sentences.jsonl.gz")}
    for record in read_jsonl(demo_full_text.full_text_dir / "full_text_0.jsonl.gz"):
        expected = [s for p in record["body_text"] for s in re.split(r"(?<=\.) ", p["text"])]
        assert sentences[record["paper_id"]]["body"] == expected
        # the metadata abstracts end some sentences in "a." (read as an initial): nothing is lost all the same
        assert " ".join(sentences[record["paper_id"]]["abstract"]) == (
            record["abstract"][0]["text"] if record["abstract"] else "")


def test_demo_full_text_leaves_every_other_demo_file_byte_identical(demo_full_text, tmp_path):
    plain = make_demo(tmp_path / "plain", papers=300, seed=0)
    digest = lambda root: {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
                           for p in root.rglob("*") if p.is_file()}
    with_text, without = digest(demo_full_text.root), digest(plain.root)
    assert {k: v for k, v in with_text.items() if not k.startswith("s2orc/full_text/")} == without
    assert sorted(k for k in with_text if k not in without) == [f"s2orc/full_text/full_text_{i}.jsonl.gz"
                                                               for i in range(4)]
    assert plain.full_text_dir is None


def test_cli_same_bytes_for_any_workers_reuse_and_one_line_errors(demo_full_text, demo_contexts, tmp_path):
    out = tmp_path / "ctx"
    run_front_end("cli_s2orc.py", "get_citation_contexts", demo_full_text.full_text_dir, out, "--workers", "2",
                  check=True)
    for name in ("contexts.jsonl.gz", "sentences.jsonl.gz", "contexts.stats.json"):
        assert (out / name).read_bytes() == (demo_contexts / name).read_bytes(), name
    again = run_front_end("cli_s2orc.py", "get_citation_contexts", demo_full_text.full_text_dir, out, check=True)
    assert "reusing it" in again.stderr
    other = run_front_end("cli_s2orc.py", "get_citation_contexts", demo_full_text.full_text_dir, out,
                          "--context_unit", "sentence")
    assert other.returncode == 2 and "made differently" in other.stderr and "Traceback" not in other.stderr
    wrong = run_front_end("cli_s2orc.py", "get_citation_contexts", demo_full_text.full_text_dir, tmp_path / "w",
                          "--full_text_format", "unarxive")
    assert wrong.returncode == 2 and wrong.stderr.strip().count("\n") == 0, wrong.stderr
    assert "found no citation markers in 300 papers as --full_text_format unarxive; is it --full_text_format s2orc?" \
        in wrong.stderr
    assert not (tmp_path / "w" / "contexts.jsonl.gz").exists()
    unknown = run_front_end("cli_s2orc.py", "get_citation_contexts", demo_full_text.full_text_dir, tmp_path / "u",
                            "--full_text_format", "grobid")
    assert unknown.returncode == 2 and "unknown --full_text_format 'grobid'; one of: s2orc, unarxive" in unknown.stderr


@pytest.mark.skipif(not (UNARXIVE / "arXiv_src_2212_086.jsonl.gz").exists(), reason="needs ../shared/data/unarxive")
def test_unarxive_sample_every_marker_in_a_context_or_counted(tmp_path):
    from scincl.citrec.stage import get_citation_contexts

    get_citation_contexts(str(UNARXIVE), str(tmp_path), full_text_format="unarxive", reference_candidates=True,
                          workers=1)
    stats = _stats(tmp_path)
    assert (stats["papers"], stats["paragraphs"], stats["markers"]) == (49, 5967, 3042)  # the README's counts
    assert stats["markers_in_contexts"] + sum(stats["markers_skipped"].values()) == 3042
    assert stats["markers_skipped"] == {"no_id": 1825} and stats["markers_in_contexts"] == 1217
    contexts = read_jsonl(tmp_path / "contexts.jsonl.gz")
    assert len(contexts) == stats["contexts"] == 993
    assert all(re.fullmatch(r"W\d+", i) for c in contexts for i in c["cited_ids"])  # all have OpenAlex ids here
    # the candidates of a recommendation run: the 49 papers and 627 referenced works with a reference text,
    # among them every cited work
    candidates = {r["paper_id"] for r in read_jsonl(tmp_path / "sentences.jsonl.gz")}
    assert stats["reference_candidates"] == 627 and len(candidates) == 49 + 627
    assert {i for c in contexts for i in c["cited_ids"]} <= candidates
    with gzip.open(tmp_path / "sentences.jsonl.gz", "rt") as fh:
        body = " ".join(s for line in fh for s in json.loads(line)["body"])
    with gzip.open(UNARXIVE / "arXiv_src_2212_086.jsonl.gz", "rt") as fh:
        paragraphs = " ".join(p["text"] for line in fh for p in json.loads(line)["body_text"])
    # no marker or formula is cut by a sentence boundary: the sentences hold every one of them whole
    for kind in ("cite", "formula"):
        whole = re.compile(r"\{\{" + kind + r":[^{}]*\}\}")
        assert len(whole.findall(body)) == len(whole.findall(paragraphs)) > 1000, kind
