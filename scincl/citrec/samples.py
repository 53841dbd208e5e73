"""``sample_citation_contexts``: one epoch's dynamically sampled contexts as a file, to read or reuse.

Training draws its samples on the fly (:class:`scincl.citrec.sampling.ContextSampler`); this command
writes the same draws for one ``epoch`` and ``seed``: per citation context, the manuscript sample and
the sample of every cited paper that has sentences (a cited id outside the corpus has none: counted).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Dict, Iterator

from scincl.citrec.sampling import ContextSampler, ContextSamplingSettings, SampledContext, load_paper_texts
from scincl.citrec.stage import CONTEXTS_NAME, SENTENCES_NAME
from scincl.corpus.outputs import stats_path_of
from scincl.provenance import OutputRecord
from scincl.errors import InputError
from scincl.io import iter_jsonl, write_json, write_jsonl
from scincl.output_lock import writes

logger = logging.getLogger(__name__)

PAPER_SAMPLING = ContextSamplingSettings()  # the paper's sizes: every flag's default below


def _sample_record(sample: SampledContext) -> Dict[str, Any]:
    return {"sentences": sample.sentences, "positions": sample.positions, "fundamental": sample.fundamental}


@writes("output_path")
def sample_citation_contexts(
        contexts_dir: str, output_path: str, epoch: int = 0, seed: int = 0,
        manuscript_fundamental_sentences: int = PAPER_SAMPLING.manuscript_fundamental_sentences,
        manuscript_supplemental_sentences: int = PAPER_SAMPLING.manuscript_supplemental_sentences,
        cited_fundamental_sentences: int = PAPER_SAMPLING.cited_fundamental_sentences,
        cited_supplemental_sentences: int = PAPER_SAMPLING.cited_supplemental_sentences,
        override: bool = False) -> None:
    """Write one epoch of MP-BERT4CR's dynamic context sampling (§4.1.1) for every citation context.

    Reads CONTEXTS_DIR/contexts.jsonl.gz and CONTEXTS_DIR/sentences.jsonl.gz (get_citation_contexts) and
    writes OUTPUT_PATH (jsonl, gzip when .gz): per context {"context_id", "epoch", "manuscript", "cited":
    {cited id: sample}}, each sample {"sentences", "positions", "fundamental"} in document order
    (positions index the paper's abstract sentences followed by its body sentences), plus
    <name>.stats.json (contexts, cited samples, cited ids without sentences). The same seed and epoch
    give the same bytes; another epoch draws other supplemental sentences.

    Example:
        python cli_triples.py sample_citation_contexts data/citrec/demo data/citrec/demo/samples_epoch0.jsonl.gz \\
            --epoch 0 --seed 0

    :param contexts_dir: output folder of get_citation_contexts
    :param output_path: samples file (.jsonl or .jsonl.gz)
    :param epoch: the pass whose draw to write (each epoch draws anew)
    :param seed: random seed of the draws
    :param manuscript_fundamental_sentences: body sentences centred on the citing one (odd; paper: 3)
    :param manuscript_supplemental_sentences: drawn from the manuscript's content before them (paper: 27)
    :param cited_fundamental_sentences: a cited paper's first abstract sentences (paper: 10)
    :param cited_supplemental_sentences: drawn from the cited paper's body (paper: 30)
    :param override: rebuild an existing output
    """
    settings = ContextSamplingSettings(int(manuscript_fundamental_sentences), int(manuscript_supplemental_sentences),
                                       int(cited_fundamental_sentences), int(cited_supplemental_sentences))
    if int(epoch) < 0:
        raise InputError(f"--epoch {epoch}: must be >= 0")
    folder, out = Path(contexts_dir), Path(output_path)
    stats_path = stats_path_of(out, "samples.stats.json")
    record = OutputRecord(out, stats_path, command="sample_citation_contexts",
                          settings={"command": "sample_citation_contexts", "epoch": int(epoch),
                                                     "seed": int(seed), **vars(settings)},
                          inputs=[folder / CONTEXTS_NAME, folder / SENTENCES_NAME])
    if record.reusable(override):
        return
    texts = load_paper_texts(r for _, r in iter_jsonl(folder / SENTENCES_NAME))
    sampler = ContextSampler(texts, settings, seed=int(seed))
    counts = {"contexts": 0, "cited_samples": 0, "cited_without_sentences": 0}

    def samples() -> Iterator[Dict[str, Any]]:
        for _, context in iter_jsonl(folder / CONTEXTS_NAME):
            cited = {}
            for paper_id in context["cited_ids"]:
                if paper_id in texts:
                    cited[paper_id] = _sample_record(sampler.cited(paper_id, int(epoch)))
                else:
                    counts["cited_without_sentences"] += 1
            counts["contexts"] += 1
            counts["cited_samples"] += len(cited)
            yield {"context_id": context["context_id"], "epoch": int(epoch),
                   "manuscript": _sample_record(sampler.manuscript(context, int(epoch))), "cited": cited}

    write_jsonl(out, samples())
    write_json(stats_path, {**counts, "epoch": int(epoch), "seed": int(seed), "settings": vars(settings)})
    record.write()
    logger.info("%d context samples of epoch %d (%d cited samples; %d cited ids without sentences) -> %s",
                counts["contexts"], int(epoch), counts["cited_samples"], counts["cited_without_sentences"], out)
