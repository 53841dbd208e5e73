"""Issue 29: generated fault cases (hypothesis) for the corpus readers and the flag values.

Whatever bytes a corpus file holds, a reader yields clean records and counts the rest (it never
raises under the default non-strict mode); whatever value a flag gets, the check either accepts a
value inside its rule or raises one :class:`InputError` line naming the flag.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scincl.corpus.plain import read_texts
from scincl.corpus.records import iter_tsv_lines
from scincl.errors import InputError
from scincl.settings.values import RANGES, check_value
from scincl.settings.run import parse_seeds
from scincl.corpus.shards import ReadStats

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,  # deterministic, nothing written
                suppress_health_check=list(HealthCheck))  # a loaded machine must not fail a health check
ID_CHARS = st.sampled_from(list("ab1 \t\u00e9\u4e2d#-\r"))
LINE = st.one_of(st.lists(st.text(ID_CHARS, max_size=6), min_size=0, max_size=4).map("\t".join).map(str.encode),
                 st.binary(max_size=12))


@FAST
@given(lines=st.lists(LINE, max_size=12))
def test_tsv_reader_yields_clean_ids_and_counts_every_other_line(tmp_path, lines):
    path = tmp_path / "citations.tsv"
    path.write_bytes(b"\n".join(line.replace(b"\n", b"") for line in lines) + b"\n")
    stats = ReadStats()
    rows = list(iter_tsv_lines(path, stats=stats))
    for _, citing, cited in rows:
        for paper_id in (citing, cited):
            assert paper_id and paper_id == paper_id.strip() and not any(c.isspace() for c in paper_id)
    # a file that starts with the gzip magic is read as gzip (S2AG files carry no suffix): a counted unreadable shard
    line_skips = sum(n for reason, n in stats.skipped.items() if reason != "unreadable_shard")
    assert stats.lines == len(rows) + line_skips + stats.counted["header_line"]
    if stats.skipped:
        with pytest.raises(InputError, match="citations.tsv:"):
            list(iter_tsv_lines(path, strict=True))


RECORD = st.fixed_dictionaries({"paper_id": st.one_of(st.text(max_size=4), st.integers(), st.none(), st.lists(st.integers())),
                                "title": st.one_of(st.text(max_size=5), st.none(), st.integers())})


@FAST
@given(lines=st.lists(st.one_of(RECORD.map(lambda r: __import__("json").dumps(r).encode()), st.binary(max_size=10)),
                      max_size=10))
def test_plain_papers_reader_counts_what_it_cannot_read(tmp_path, lines):
    path = tmp_path / "papers.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b"") for line in lines) + b"\n")
    stats = ReadStats()
    papers = list(read_texts(path, stats=stats))
    for _, paper_id, title, _ in papers:
        assert isinstance(paper_id, str) and (title is None or isinstance(title, str))
    line_skips = sum(n for reason, n in stats.skipped.items() if reason != "unreadable_shard")  # gzip magic
    assert stats.papers == len(papers) and stats.lines == len(papers) + line_skips


NUMBERS = st.one_of(st.integers(-10 ** 6, 10 ** 6), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["0", "-1", "1e-5", "nan", "inf", "abc", "", "1,2", "true"]))


@FAST
@given(name=st.sampled_from(sorted(RANGES)), value=NUMBERS)
def test_a_flag_value_is_accepted_inside_its_rule_or_named_in_one_line(name, value):
    rule = RANGES[name]
    try:
        checked = check_value(name, value, None)
    except InputError as exc:
        assert f"--{name}" in str(exc) and "\n" not in str(exc)
        return
    assert isinstance(checked, (int, float)) and math.isfinite(checked) and rule.holds(float(checked))


@FAST
@given(seeds=st.one_of(st.integers(-5, 2 ** 33), st.lists(st.integers(-3, 20), max_size=5),
                       st.text(st.sampled_from(list("0123456789.,- ")), max_size=8)))
def test_seeds_are_distinct_non_negative_integers_or_an_error(seeds):
    try:
        values = parse_seeds(seeds)
    except InputError as exc:
        assert str(exc).startswith("--seeds")
        return
    assert values and len(set(values)) == len(values) and all(0 <= v < 2 ** 32 for v in values)
