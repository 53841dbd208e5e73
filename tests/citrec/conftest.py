"""Fixtures of the citation-recommendation tests (``scincl/citrec/``), built once per session and shared read-only:
the demo corpus with full text and its contexts, ONE pre-training run (through the CLI), one fine-tuned model per
objective (``triplet`` through the CLI, ``mpt-src-tgt`` in-process) and one SciNCL baseline trained without the
test papers (``run_specter``). The tests assert on these outputs instead of training their own (smallest sizes:
8 sentences of 20 tokens, a few updates)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import run_front_end

# pre-training flags of demo_pretrained (the CLI test reruns them to check the reuse)
PRETRAIN_FLAGS = ["--max_steps", "8", "--warmup_steps", "2", "--learning_rate", "3e-3", "--max_sentences", "8",
                  "--max_sentence_tokens", "20", "--batch_size", "4"]
SMALL_SAMPLES = {"manuscript_supplemental_sentences": 4, "cited_fundamental_sentences": 2,
                 "cited_supplemental_sentences": 4}  # fit the 8 sentences of demo_pretrained
FINETUNE_FLAGS = ["--max_steps", "3", "--warmup_steps", "1", "--learning_rate", "1e-3", "--batch_size", "2",
                  *[f for name, value in SMALL_SAMPLES.items() for f in (f"--{name}", str(value))]]


@pytest.fixture(scope="session")
def demo_full_text(tmp_path_factory):
    """A 300-paper demo corpus with ``s2orc/full_text/`` (seed 0: the words of ``demo_tiny_bert``'s vocabulary)."""
    from scincl.demo import make_demo

    return make_demo(tmp_path_factory.mktemp("demo_full_text"), papers=300, seed=0, full_text=True)


@pytest.fixture(scope="session")
def demo_contexts(demo_full_text, tmp_path_factory):
    """``get_citation_contexts`` of :func:`demo_full_text`: the folder with contexts/sentences/stats."""
    from scincl.citrec.stage import get_citation_contexts

    out = tmp_path_factory.mktemp("demo_contexts")
    get_citation_contexts(str(demo_full_text.full_text_dir), str(out), workers=1)
    return out


@pytest.fixture(scope="session")
def demo_pretrained(demo_contexts, demo_tiny_bert, tmp_path_factory):
    """``cli_pipeline.py pretrain_hierarchical`` on :func:`demo_contexts`: 8 updates of batch 4 (8 sentences, 20
    tokens); a :class:`CliRun`."""
    out = tmp_path_factory.mktemp("hibert") / "model"
    done = run_front_end("cli_pipeline.py", "pretrain_hierarchical", demo_contexts, out, "--tokenizer_name_or_path",
                         demo_tiny_bert, *PRETRAIN_FLAGS, check=True)
    return CliRun(out, done)


@pytest.fixture(scope="session")
def demo_mb4r_triplet(demo_contexts, demo_pretrained, tmp_path_factory):
    """``cli_pipeline.py finetune_citation_recommender --loss triplet``: 3 updates of batch 2 with samples that fit
    :func:`demo_pretrained`; a :class:`CliRun`."""
    out = tmp_path_factory.mktemp("mb4r_triplet") / "model"
    done = run_front_end("cli_pipeline.py", "finetune_citation_recommender", demo_contexts, demo_pretrained.path,
                         out, *FINETUNE_FLAGS, "--loss", "triplet", check=True)
    return CliRun(out, done)


@pytest.fixture(scope="session")
def demo_mb4r(demo_contexts, demo_pretrained, tmp_path_factory):
    """:func:`demo_pretrained` fine-tuned in-process for 3 updates (mpt-src-tgt, the default), same split."""
    from scincl.citrec.finetune import finetune_citation_recommender

    out = tmp_path_factory.mktemp("mb4r") / "model"
    finetune_citation_recommender(str(demo_contexts), str(demo_pretrained.path), str(out), max_steps=3, warmup_steps=1,
                                  learning_rate=1e-3, batch_size=2, **SMALL_SAMPLES)
    return out


@pytest.fixture(scope="session")
def demo_scincl(demo_full_text, demo_mb4r, demo_tiny_bert, tmp_path_factory):
    """The SciNCL baseline without the test papers: ``run_specter`` on the demo's metadata with
    ``--excluded_paper_ids`` the fine-tuning's ``test_papers.json`` (FastRP graph, 2 updates of the tiny BERT,
    no SciDocs evaluation); its trained model folder."""
    from scincl.pipeline.scincl_plan import run_specter

    result = run_specter(str(tmp_path_factory.mktemp("scincl")), s2orc_metadata_dir=str(demo_full_text.s2orc_metadata_dir),
                         excluded_paper_ids=str(demo_mb4r / "test_papers.json"), preset="demo",
                         base_model_name_or_path=str(demo_tiny_bert), graph_method="fastrp", max_steps=2,
                         workers=1, skip_eval_base=True, skip_eval=True, skip_compare=True)
    return result["runs"][0]["paths"].model


@dataclass(frozen=True)
class CliRun:
    """A CLI run's output folder and its completed process (stdout, stderr)."""

    path: Path
    done: subprocess.CompletedProcess
