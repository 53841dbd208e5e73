"""Lexical baselines as encoders: TF-IDF and BM25 term vectors of ``title abstract``, l2-normalised.

The floor any learned encoder of these tables has to clear (issue 26): no training, no citations.
A paper's vector has one weight per term of the vocabulary of a *fit* collection (the papers being
embedded, or a given corpus); vectors are l2-normalised, so the SciDocs protocol's Euclidean
distance ranks candidates exactly as cosine similarity does (||q - c||² = 2 - 2 q·c).

* ``tfidf``: scikit-learn's ``TfidfVectorizer(sublinear_tf=True, stop_words="english")``:
  w(t, d) = (1 + ln tf(t, d)) · (ln((1 + N) / (1 + df(t))) + 1), then l2 (scikit-learn's smooth idf).
* ``bm25``: the BM25 term weight of Robertson & Zaragoza 2009 ("The Probabilistic Relevance
  Framework: BM25 and Beyond", eq. 3.15 with Lucene's non-negative idf) on scikit-learn counts
  (``CountVectorizer``, same tokens and stop words):
  w(t, d) = idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 - b + b · |d| / avgdl)),
  idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5)), k1 = 1.2, b = 0.75, then l2. The query side
  gets the same weights (a symmetric document-document similarity, as an embedding needs), not
  BM25's raw query term counts.

Vectors are ``scipy.sparse`` rows (a vocabulary of tens of thousands of terms); the evaluation
densifies a few queries at a time (:mod:`scincl.eval.qrel_tasks`).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from scincl.errors import InputError
from scincl.io import PathLike

logger = logging.getLogger(__name__)

LEXICAL_ENCODERS = ("tfidf", "bm25")
STOP_WORDS = "english"  # scikit-learn's list, as in the protocol
BM25_K1 = 1.2  # Robertson & Zaragoza 2009 §3.4 / Lucene's default
BM25_B = 0.75


def is_lexical(name: Optional[str]) -> bool:
    """True when an encoder name (``--model_dir``) is one of :data:`LEXICAL_ENCODERS`."""
    return str(name).strip().lower() in LEXICAL_ENCODERS if name else False


def is_sparse(vector: Any) -> bool:
    """True for a lexical encoder's sparse embedding row (``scipy.sparse``)."""
    import scipy.sparse as sp

    return sp.issparse(vector)


def lexical_text(title: Optional[str], abstract: Optional[str]) -> str:
    """``title abstract`` (a missing part empty): the words a lexical encoder sees."""
    return f"{title or ''} {abstract or ''}".strip()


def bm25_weights(counts: Any, document_frequency: np.ndarray, n_documents: int, average_length: float,
                 k1: float = BM25_K1, b: float = BM25_B) -> Any:
    """BM25 term weights (module docstring) of a ``documents x terms`` sparse count matrix, not normalised."""
    import scipy.sparse as sp

    counts = sp.csr_matrix(counts, dtype=np.float64)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    idf = np.log(1.0 + (n_documents - document_frequency + 0.5) / (document_frequency + 0.5))
    norm = k1 * (1.0 - b + b * lengths / max(average_length, 1e-12))
    tf = counts.data
    row_norm = np.repeat(norm, np.diff(counts.indptr))
    weights = counts.copy()
    weights.data = idf[counts.indices] * tf * (k1 + 1.0) / (tf + row_norm)
    return weights


class LexicalEncoder:
    """A TF-IDF or BM25 vectoriser fitted on a collection of texts; :meth:`encode` gives l2-normalised sparse rows."""

    def __init__(self, method: str) -> None:
        method = method.strip().lower()
        if method not in LEXICAL_ENCODERS:
            raise ValueError(f"unknown lexical encoder {method!r}; choose one of {', '.join(LEXICAL_ENCODERS)}")
        self.method = method
        self._vectorizer: Any = None
        self._df: Optional[np.ndarray] = None
        self._n = 0
        self._avgdl = 0.0

    def fit(self, texts: Sequence[str]) -> "LexicalEncoder":
        """Learn the vocabulary (and idf, BM25's average length) from ``texts``; texts without one indexable word
        (empty, or stop words only) are an InputError, not scikit-learn's traceback (issue 41)."""
        from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

        try:
            if self.method == "tfidf":
                self._vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words=STOP_WORDS).fit(texts)
            else:
                self._vectorizer = CountVectorizer(stop_words=STOP_WORDS)
                counts = self._vectorizer.fit_transform(texts)
                self._df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
                self._n = counts.shape[0]
                self._avgdl = float(counts.sum()) / max(1, self._n)
        except ValueError as exc:
            if "empty vocabulary" not in str(exc):
                raise
            raise InputError(f"{self.method}: none of the {len(texts)} papers has a word to index (empty titles and "
                             "abstracts, or stop words only)") from None
        logger.info("%s fitted on %d texts: %d terms", self.method, len(texts), len(self.vocabulary))
        return self

    @property
    def vocabulary(self) -> Dict[str, int]:
        """Term -> column."""
        return self._vectorizer.vocabulary_

    def encode(self, texts: Sequence[str]) -> Any:
        """``len(texts) x terms`` CSR matrix of l2-normalised weights (a text without known terms: a zero row)."""
        from sklearn.preprocessing import normalize

        if self._vectorizer is None:
            raise RuntimeError("fit the lexical encoder first")
        if self.method == "tfidf":
            return self._vectorizer.transform(texts).tocsr()
        weights = bm25_weights(self._vectorizer.transform(texts), self._df, self._n, self._avgdl)
        return normalize(weights, norm="l2").tocsr()


def lexical_embeddings(method: str, paper_ids: Sequence[str], texts: Sequence[str],
                       fit_texts: Optional[Sequence[str]] = None) -> Tuple[Dict[str, Any], int]:
    """``({paper_id: 1 x terms sparse row}, terms)``, fitted on ``fit_texts`` (default: ``texts`` themselves)."""
    encoder = LexicalEncoder(method).fit(list(fit_texts) if fit_texts is not None else list(texts))
    matrix = encoder.encode(list(texts))
    return {pid: matrix[i] for i, pid in enumerate(paper_ids)}, matrix.shape[1]


def sparse_rows_to_records(paper_ids: Sequence[str], matrix: Any) -> List[dict]:
    """Embedding-file records of sparse rows: ``{"paper_id", "embedding": {"dim", "indices", "values"}}``."""
    matrix = matrix.tocsr()
    records = []
    for i, pid in enumerate(paper_ids):
        start, end = matrix.indptr[i], matrix.indptr[i + 1]
        records.append({"paper_id": pid, "embedding": {"dim": int(matrix.shape[1]),
                                                       "indices": matrix.indices[start:end].tolist(),
                                                       "values": matrix.data[start:end].tolist()}})
    return records


def read_texts(metadata_path: PathLike) -> Tuple[List[str], List[str]]:
    """``(paper_ids, lexical texts)`` of a metadata jsonl(.gz) or SciDocs json (a repeated id keeps the first)."""
    from scincl.model.data import iter_metadata

    ids: List[str] = []
    texts: List[str] = []
    seen = set()
    for paper_id, title, abstract in iter_metadata(Path(metadata_path)):
        if paper_id not in seen:
            seen.add(paper_id)
            ids.append(paper_id)
            texts.append(lexical_text(title, abstract))
    if not ids:
        raise InputError("no papers in metadata", path=metadata_path)
    return ids, texts


def embed_lexical(method: str, metadata_path: PathLike, output_path: PathLike, fit_corpus: Optional[PathLike] = None,
                  override: bool = False) -> Path:
    """``embed tfidf|bm25``: sparse embeddings jsonl of every paper of ``metadata_path``; returns ``output_path``.

    Fitted on ``fit_corpus`` (a metadata jsonl(.gz) or SciDocs json, e.g. a corpus' papers.jsonl.gz)
    or, without it, on the papers being embedded. Reuse rule as for the neural ``embed``
    (``<output>.made_by.json``).
    """
    from scincl.io import write_jsonl
    from scincl.provenance import OutputRecord

    method = method.strip().lower()
    if method not in LEXICAL_ENCODERS:
        raise InputError(f"unknown lexical encoder {method!r}; choose one of {', '.join(LEXICAL_ENCODERS)}")
    out = Path(output_path)
    settings = {"model": method, "stop_words": STOP_WORDS,
                **({"k1": BM25_K1, "b": BM25_B} if method == "bm25" else {"sublinear_tf": True}),
                "fit": "corpus" if fit_corpus else "embedded papers"}
    record = OutputRecord(out, command="embed", settings=settings, inputs=[metadata_path, fit_corpus])
    if record.reusable(override):
        return out
    ids, texts = read_texts(metadata_path)
    fit_texts = read_texts(fit_corpus)[1] if fit_corpus else texts
    encoder = LexicalEncoder(method).fit(fit_texts)
    matrix = encoder.encode(texts)
    count = write_jsonl(out, sparse_rows_to_records(ids, matrix))
    record.write()
    logger.info("wrote %d %s embeddings (%d terms, fitted on %d texts) to %s", count, method, matrix.shape[1],
                len(fit_texts), out)
    return out
