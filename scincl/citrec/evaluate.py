"""``evaluate_citation_recommendation``: Recall@10 and MAP@10 of local citation recommendation (MP-BERT4CR
§5.3, Table 3).

For every test context (a context of a held-out citing paper, ``split.json`` of the fine-tuning) the
candidate pool is every paper with sentences except the citing paper itself; the positives are the
context's cited ids in the pool (a context with none is counted and left out). Methods, one row each:

- ``MB4R_<loss>`` (each ``--model_dirs`` entry): query vector = the manuscript encoder on the context's
  sample, citation vector = the citation encoder on the candidate's sample (epoch 0 of the sampling
  the model was fine-tuned with), cosine similarity (§5.3);
- ``BM25``: the fundamental context against each candidate's "augmented abstract" (its abstract plus
  the fundamental contexts of the *training* contexts citing it: §5.2's augmented abstracts, without
  the test answers);
- ``SciNCL`` (``--scincl_model_dir``): a document encoder of the project (``train``'s output);
  query = the fundamental context, citation vector = the sum of the vectors of the augmented
  abstract's pieces (the abstract and each training context), as §5.3 does for SciBERT / SPECTER.
  No leakage (issue 43): the model must have been trained with the test papers as evaluation papers
  (``run_specter`` / ``train --excluded_paper_ids`` the fine-tuning's ``test_papers.json``), so neither its
  citation graph nor its triplets hold a test paper, as citing or as cited paper, and so no test context's
  citation; :func:`check_scincl_leakage` reads the model's ``leakage_report.json`` and refuses it otherwise.

Recall@10 = |top 10 ∩ positives| / |positives|; MAP@10 = average precision over the top 10 with the
denominator min(|positives|, 10) (:mod:`scincl.eval.metrics`), each averaged over the contexts with
exactly one, at least one and at least two positives (Table 3's column groups), ×100.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Set, Union

import numpy as np

from scincl.citrec.finetune import SPLIT_NAME, TEST_PAPERS_NAME
from scincl.citrec.sampling import ContextSampler, ContextSamplingSettings, PaperText, load_paper_texts
from scincl.citrec.stage import CONTEXTS_NAME, SENTENCES_NAME
from scincl.corpus.outputs import paths_of
from scincl.provenance import OutputRecord
from scincl.errors import InputError
from scincl.eval.metrics import average_precision, recall_at_k
from scincl.io import atomic_open, iter_jsonl, read_json, read_jsonl, write_json
from scincl.leakage import read_evaluation_ids, recorded_report
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

TOP_K = 10  # §5.3: "Recall and MAP at top 10 recommendations"
BUCKETS = (("positive = 1", lambda n: n == 1), ("positive ≥ 1", lambda n: n >= 1),
           ("positive ≥ 2", lambda n: n >= 2))
RESULTS_NAME, TABLE_NAME = "results.json", "results.md"


def scores_metrics(scores: np.ndarray, positives: Sequence[Sequence[int]], k: int = TOP_K) -> Dict[str, Any]:
    """Table 3's cells from a ``[queries, candidates]`` score matrix (higher = better; ``-inf`` = not a candidate)."""
    recalls, aps = [], []
    for row, relevant in zip(scores, positives):
        top = np.argsort(-row, kind="stable")[:k]
        hits = np.isin(top, list(relevant)).astype(float)
        recalls.append(recall_at_k(hits, len(relevant), k))
        aps.append(average_precision(hits, len(relevant), k))
    out = {}
    for name, rule in BUCKETS:
        chosen = [i for i, relevant in enumerate(positives) if rule(len(relevant))]
        out[name] = {"contexts": len(chosen),
                     "recall": 100 * float(np.mean([recalls[i] for i in chosen])) if chosen else None,
                     "map": 100 * float(np.mean([aps[i] for i in chosen])) if chosen else None}
    return out


def cosine_scores(queries: np.ndarray, candidates: np.ndarray, excluded: Sequence[int]) -> np.ndarray:
    """Cosine similarities ``[Q, C]``; each query's ``excluded`` candidate (its own paper, ``-1``: none) is ``-inf``."""
    q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    c = candidates / np.maximum(np.linalg.norm(candidates, axis=1, keepdims=True), 1e-12)
    scores = q @ c.T
    for i, j in enumerate(excluded):
        if j >= 0:
            scores[i, j] = -np.inf
    return scores


def fundamental_text(context: Mapping) -> str:
    return " ".join(context["sentences"])


def augmented_pieces(candidates: Sequence[str], texts: Mapping[str, PaperText],
                     training_contexts: Sequence[Mapping]) -> List[List[str]]:
    """Per candidate: its abstract, then the fundamental context of every training context citing it
    (a candidate with neither: its first 10 body sentences)."""
    citing: Dict[str, List[str]] = {}
    for context in training_contexts:
        for paper_id in dict.fromkeys(context["cited_ids"]):
            citing.setdefault(paper_id, []).append(fundamental_text(context))
    out = []
    for paper_id in candidates:
        abstract = " ".join(texts[paper_id].abstract)
        pieces = ([abstract] if abstract else []) + citing.get(paper_id, [])
        out.append(pieces or [" ".join(texts[paper_id].body[:10])])
    return out


def bm25_scores(queries: Sequence[str], pieces: Sequence[Sequence[str]], excluded: Sequence[int]) -> np.ndarray:
    from scincl.eval.lexical import LexicalEncoder

    documents = [" ".join(p) for p in pieces]
    encoder = LexicalEncoder("bm25").fit(documents)
    scores = (encoder.encode(list(queries)) @ encoder.encode(documents).T).toarray()
    for i, j in enumerate(excluded):
        if j >= 0:
            scores[i, j] = -np.inf
    return scores


def check_scincl_leakage(model_dir: str, test_papers: Set[str]) -> Dict[str, Any]:
    """The SciNCL row's leakage guard: ``model_dir``'s ``leakage_report.json`` (written by ``train``'s guard) must have
    checked the graph and the triplets against evaluation ids that hold every test paper and found none of them;
    returns the report, else one error line saying what is missing."""
    how = f"train it with --excluded_paper_ids the fine-tuning's {TEST_PAPERS_NAME} (README 'Citation recommendation')"
    report = recorded_report(model_dir)
    if not report or not report.get("checked"):
        raise InputError(f"the SciNCL model has no leakage report, so nothing shows it never saw the test contexts' "
                         f"citations; {how}", path=model_dir)
    if report.get("in_graph") is None or report.get("in_triplets") is None:
        raise InputError(f"the SciNCL model's leakage report did not check both its graph and its triplets "
                         f"(in_graph {report.get('in_graph')}, in_triplets {report.get('in_triplets')}); {how}",
                         path=model_dir)
    if report.get("leaked"):
        raise InputError(f"the SciNCL model was trained with {report['leaked']} evaluation papers in its graph or "
                         f"triplets (e.g. {', '.join(report.get('examples') or [])}); {how}", path=model_dir)
    excluded_file = Path(str(report.get("evaluation_paper_ids")))
    if not excluded_file.exists():
        raise InputError(f"the SciNCL model's evaluation ids {excluded_file} are not found (relative paths are read "
                         f"from the working directory), so the test papers cannot be checked against them",
                         path=model_dir)
    missing = sorted(test_papers - read_evaluation_ids(excluded_file))
    if missing:
        raise InputError(f"{len(missing)} of the {len(test_papers)} test papers (e.g. {', '.join(missing[:3])}) were "
                         f"not among the evaluation papers the SciNCL model was trained without ({excluded_file}); "
                         f"{how}", path=model_dir)
    return report


def scincl_scores(model_dir: str, queries: Sequence[str], pieces: Sequence[Sequence[str]],
                  excluded: Sequence[int]) -> np.ndarray:
    from scincl.model.embed import encode_texts
    from scincl.model.encoder import DocumentEncoder, load_backbone, saved_pooling_strategy

    from scincl.settings.schema import SCINCL

    backbone, tokenizer = load_backbone(model_dir)
    encoder = DocumentEncoder(backbone, saved_pooling_strategy(model_dir))
    length = min(SCINCL.max_sequence_length,
                 getattr(backbone.config, "max_position_embeddings", SCINCL.max_sequence_length))
    query_vectors = encode_texts(encoder, tokenizer, list(queries), max_sequence_length=length, show_progress=False)
    flat = [text for p in pieces for text in p]
    piece_vectors = encode_texts(encoder, tokenizer, flat, max_sequence_length=length, show_progress=False)
    bounds = np.cumsum([0] + [len(p) for p in pieces])
    candidate_vectors = np.stack([piece_vectors[bounds[i]:bounds[i + 1]].sum(0) for i in range(len(pieces))])
    return cosine_scores(query_vectors, candidate_vectors, excluded)


def mb4r_scores(model_dir: str, contexts: Sequence[Mapping], candidates: Sequence[str],
                texts: Mapping[str, PaperText], excluded: Sequence[int], seed: int) -> np.ndarray:
    import torch
    from transformers import AutoTokenizer

    from scincl.citrec.batches import tokenize_documents
    from scincl.citrec.hierarchical import CitationRecommender

    model = CitationRecommender.from_pretrained(model_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    settings = read_json(Path(model_dir) / "finetune_summary.json")["settings"]
    sampling = ContextSamplingSettings(**{f: settings[f] for f in vars(ContextSamplingSettings())})
    sampler = ContextSampler(texts, sampling, seed=seed)
    config = model.config

    def encode(documents: List[List[str]], side) -> np.ndarray:
        vectors = []
        with torch.inference_mode():
            for start in range(0, len(documents), 16):
                batch = tokenize_documents(tokenizer, documents[start:start + 16], config.max_sentences,
                                           config.max_sentence_tokens)
                vectors.append(side(batch["input_ids"], batch["attention_mask"]).numpy())
        return np.concatenate(vectors)

    queries = encode([sampler.manuscript(c, 0).sentences for c in contexts], model.encode_manuscripts)
    cited = encode([sampler.cited(p, 0).sentences for p in candidates], model.encode_citations)
    return cosine_scores(queries, cited, excluded)


def format_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 3's layout: a row per method, Recall and MAP (×100) for positive = 1, ≥ 1, ≥ 2."""
    names = [name for name, _ in BUCKETS]
    head = "| method | " + " | ".join(f"{n} Recall | {n} MAP" for n in names) + " |"
    lines = [head, "|" + "---|" * (1 + 2 * len(names))]
    cell = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    for method, row in results.items():
        lines.append(f"| {method} | " + " | ".join(f"{cell(row[n]['recall'])} | {cell(row[n]['map'])}"
                                                   for n in names) + " |")
    first = next(iter(results.values()))
    lines.append("| test contexts | " + " | ".join(f"{first[n]['contexts']} | " for n in names) + " |")
    return "\n".join(lines) + "\n"


@writes("output_dir")
def evaluate_citation_recommendation(contexts_dir: str, output_dir: str,
                                     model_dirs: Union[None, str, Sequence[str]] = None,
                                     split_path: str = "", scincl_model_dir: str = "", seed: int = 0,
                                     override: bool = False) -> None:
    """Recall@10 and MAP@10 of citation recommendation on the test contexts (MP-BERT4CR §5.3, Table 3), printed.

    Rows: MB4R_<loss> for each fine-tuned model of --model_dirs (finetune_citation_recommender outputs),
    BM25 and, with --scincl_model_dir, a SciNCL-trained encoder, both on augmented abstracts (abstract +
    fundamental contexts of training contexts). Columns: contexts with exactly one, at least one and at
    least two positives. The test contexts are those of the test papers of --split_path (default: the
    first model's split.json); candidates are all papers with sentences but the citing one. Writes
    OUTPUT_DIR/results.json and OUTPUT_DIR/results.md.

    Example:
        python cli_pipeline.py evaluate_citation_recommendation data/citrec/demo data/citrec/demo/eval \\
            --model_dirs data/citrec/demo/mb4r

    :param contexts_dir: output folder of get_citation_contexts
    :param output_dir: where results.json and results.md go
    :param model_dirs: fine-tuned MP-BERT4CR models (comma-separated, or the flag repeated)
    :param split_path: split.json of a fine-tuning (train / test citing papers); default: the first model's
    :param scincl_model_dir: a document encoder of `train` / run_specter (the SciNCL baseline row), trained with
        --excluded_paper_ids the fine-tuning's test_papers.json (its leakage_report.json is checked); none: no such row
    :param seed: seed of the context samples the MB4R rows encode
    :param override: recompute although OUTPUT_DIR holds results made from the same inputs and settings
    """
    models = paths_of(model_dirs)
    split_file = split_path or (str(Path(models[0]) / SPLIT_NAME) if models else "")
    if not split_file:
        raise InputError("give --split_path or at least one --model_dirs (its split.json says the test papers)")
    folder, out = Path(contexts_dir), Path(output_dir)
    record = OutputRecord(out / RESULTS_NAME, out / TABLE_NAME,
                          command="evaluate_citation_recommendation",
                          settings={"command": "evaluate_citation_recommendation", "seed": int(seed), "top_k": TOP_K},
                          inputs=[folder / CONTEXTS_NAME, folder / SENTENCES_NAME, split_file, *models,
                                  scincl_model_dir or None])
    if record.reusable(override):
        print((out / TABLE_NAME).read_text(), end="")
        return
    split = read_json(split_file)
    test_papers, train_papers = set(split["test"]), set(split["train"])
    leakage = check_scincl_leakage(scincl_model_dir, test_papers) if scincl_model_dir else None
    texts = load_paper_texts(r for _, r in iter_jsonl(folder / SENTENCES_NAME))
    candidates = sorted(texts)
    column = {paper_id: i for i, paper_id in enumerate(candidates)}
    contexts = read_jsonl(folder / CONTEXTS_NAME)
    training = [c for c in contexts if c["citing_paper_id"] in train_papers]
    test, positives, no_positive = [], [], 0
    for context in contexts:
        if context["citing_paper_id"] not in test_papers:
            continue
        relevant = [column[i] for i in dict.fromkeys(context["cited_ids"])
                    if i in column and i != context["citing_paper_id"]]
        if relevant:
            test.append(context)
            positives.append(relevant)
        else:
            no_positive += 1
    if not test:
        raise InputError(f"no test context has a cited paper among the {len(candidates)} candidates", path=split_file)
    excluded = [column.get(c["citing_paper_id"], -1) for c in test]
    queries = [fundamental_text(c) for c in test]
    pieces = augmented_pieces(candidates, texts, training)
    results: Dict[str, Any] = {}
    for model_dir in models:
        loss = read_json(Path(model_dir) / "finetune_summary.json")["settings"]["loss"]
        results[f"MB4R_{loss}"] = scores_metrics(mb4r_scores(model_dir, test, candidates, texts, excluded, int(seed)),
                                                 positives)
    results["BM25"] = scores_metrics(bm25_scores(queries, pieces, excluded), positives)
    if scincl_model_dir:
        results["SciNCL"] = scores_metrics(scincl_scores(scincl_model_dir, queries, pieces, excluded), positives)
    table = format_table(results)
    write_json(out / RESULTS_NAME, {"results": results, "test_contexts": len(test), "candidates": len(candidates),
                                    "test_contexts_without_candidate_positive": no_positive,
                                    "training_contexts": len(training), "top_k": TOP_K,
                                    **({"scincl_leakage_report": leakage} if leakage else {})})
    with atomic_open(out / TABLE_NAME) as fh:
        fh.write(table)
    record.write()
    print(table, end="")
