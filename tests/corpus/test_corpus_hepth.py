"""Real-data check: the hep-th corpus in the S2AG, OpenAlex and plain layouts equals its S2ORC layout.

Uses ../shared/data/hepth (or $SCINCL_SHARED_DATA/hepth); skipped when it is absent. After mapping
ids with id_maps.json, every layout must give the S2ORC layout's 332,593 citation edges and its
texts, apart from the differences the data README counts: 579 papers without an S2AG abstracts
record, 1,447 works with a null abstract_inverted_index, 2,895 S2AG citation records with a null
citedcorpusid.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import cli_s2orc
from scincl.corpus.records import strip_openalex_prefix
from scincl.graph.citations import read_citations_tsv
from scincl.io import read_json, read_jsonl
from tests.conftest import REPO_ROOT

HEPTH = Path(os.environ.get("SCINCL_SHARED_DATA", REPO_ROOT / ".." / "shared" / "data")) \
    / "hepth"
pytestmark = pytest.mark.skipif(not (HEPTH / "id_maps.json").exists(), reason="../shared/data/hepth not present")

EXPECTED = {  # format: (id map key, papers whose abstract is empty only in this layout, counted events)
    "s2ag": ("corpusid", 579, {"skipped_by_reason": {"null_citedcorpusid": 2895}}),
    "openalex": ("openalex", 1447, {}),
    "plain": (None, 0, {}),
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("hepth_s2orc")
    cli_s2orc.get_citations(str(HEPTH / "s2orc"), str(out), workers=2)
    cli_s2orc.get_papers(str(HEPTH / "s2orc"), str(out / "papers.jsonl.gz"), workers=2)
    edges = set(read_citations_tsv(out / "citations.tsv"))
    texts = {r["paper_id"]: (r["title"], r["abstract"] or "") for r in read_jsonl(out / "papers.jsonl.gz")}
    return edges, texts


@pytest.mark.parametrize("fmt", list(EXPECTED))
def test_hepth_layouts_equal_the_s2orc_layout(fmt, reference, tmp_path):
    ref_edges, ref_texts = reference
    key, empty_abstracts, counted = EXPECTED[fmt]
    back = {str(strip_openalex_prefix(str(v))): k for k, v in read_json(HEPTH / "id_maps.json")[key].items()} \
        if key else {k: k for k in ref_texts}
    cli_s2orc.get_citations(str(HEPTH / fmt), str(tmp_path), workers=2)  # format detected
    stats = read_json(tmp_path / "citations.stats.json")
    assert stats["corpus_format"] == fmt
    edges = {(back[a], back[b]) for a, b in read_citations_tsv(tmp_path / "citations.tsv")}
    assert len(ref_edges) == 332593 and edges == ref_edges
    for field, value in counted.items():
        assert stats[field] == value
    cli_s2orc.get_papers(str(HEPTH / fmt), str(tmp_path / "papers.jsonl.gz"), workers=2)
    texts = {back[r["paper_id"]]: (r["title"], r["abstract"] or "") for r in read_jsonl(tmp_path / "papers.jsonl.gz")}
    assert texts.keys() == ref_texts.keys() and len(texts) == 28955
    differ = [pid for pid in texts if texts[pid] != ref_texts[pid]]
    assert all(texts[pid] == (ref_texts[pid][0], "") for pid in differ)  # only abstracts gone missing
    assert len(differ) == empty_abstracts


@pytest.mark.parametrize("fmt,key", [("s2ag", "corpusid"), ("openalex", "openalex")])
def test_hepth_scidocs_ids_map_through_external_ids(fmt, key):
    """arXiv ids in S2AG externalids / OpenAlex landing pages give id_maps.json's mapping of the SciDocs papers."""
    from scincl.corpus.id_mapping import mapping_from_file, scidocs_id_mapping

    mapping, counts = scidocs_id_mapping(HEPTH / "scidocs", HEPTH / fmt, workers=2)
    expected = mapping_from_file(HEPTH / "id_maps.json", key)
    assert counts["ambiguous"] == 0 and counts["mapped"] == counts["scidocs_papers"] > 1000
    assert mapping == {k: expected[k] for k in mapping}
