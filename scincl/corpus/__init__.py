"""Corpus adapters: S2ORC shards, S2AG releases, OpenAlex snapshots and plain files as the same records.

``open_corpus(path, corpus_format)`` returns a :class:`Corpus` whose files and readers feed the
citation, co-citation and text stages; see :mod:`scincl.corpus.base` for the record shapes.
"""
from scincl.corpus.base import CORPUS_FORMATS, Corpus
from scincl.corpus.detect import check_format, detect_format, open_corpus
from scincl.corpus.papers import collect_texts, write_papers

__all__ = ["CORPUS_FORMATS", "Corpus", "check_format", "collect_texts", "detect_format", "open_corpus",
           "write_papers"]
