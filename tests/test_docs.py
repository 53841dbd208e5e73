"""The docs' commands, run as written: every ``demo`` shell block of README.md and docs/*.md.

The blocks run in document order (README.md, then docs/*.md by name) in one temporary directory
that mirrors the repository root (``scincl.docs_blocks.make_workspace``), so relative paths such
as ``data/demo`` land there; each block sees the variables the earlier blocks exported.
``BASE_MODEL`` is the session's tiny BERT (the docs default to the packaged MiniLM when it is
unset), which keeps the training and evaluation blocks to seconds. Generated tables
(``<!-- generated: NAME -->``) must equal ``docs/generated/NAME.md``, the outputs of the run that
produced them (``make docs-tables``): their numbers depend on the CPU, so this run's outputs are
checked for the same rows and columns, not the same digits.
"""
from __future__ import annotations

import pytest

from scincl.docs_blocks import LABELS, doc_files, make_workspace, run_demo_blocks, shell_blocks
from scincl.docs_tables import GENERATED_DIR, SOURCES, collisions_table, markdown_table, pasted_tables, render, \
    stale_tables


def _blocks(repo_root, label=None):
    return [b for f in doc_files(repo_root) for b in shell_blocks(f) if label is None or b.label == label]


def test_every_shell_block_is_labelled(repo_root):
    blocks = _blocks(repo_root)
    assert len(blocks) >= 20
    unlabelled = [f"{b.where}: {b.label or '(none)'}" for b in blocks if b.label not in LABELS]
    assert not unlabelled, f"shell blocks without one of the labels {sorted(LABELS)}: {unlabelled}"
    assert len(_blocks(repo_root, "demo")) >= 8


@pytest.fixture(scope="module")
def docs_run(repo_root, toy_train_files, tmp_path_factory):
    """Every ``demo`` block, run in order (stops at the first failure): the workspace and the runs."""
    work = make_workspace(tmp_path_factory.mktemp("docs_run") / "repo", repo_root)
    return {"work": work, "runs": run_demo_blocks(repo_root, work, {"BASE_MODEL": str(toy_train_files["bert"])})}


def test_demo_blocks_exit_zero(docs_run, repo_root):
    runs = docs_run["runs"]
    timing = ", ".join(f"{r.block.where} {r.seconds:.1f}s" for r in runs)
    failed = [r for r in runs if r.returncode]
    assert not failed, f"{failed[0].block.where} exited {failed[0].returncode}:\n{failed[0].output_tail}\n({timing})"
    assert [r.block.where for r in runs] == [b.where for b in _blocks(repo_root, "demo")]
    print(f"\ndocs blocks: {timing}")


def test_pasted_tables_equal_their_generated_files(repo_root):
    pasted = {name for f in doc_files(repo_root) for name in pasted_tables(f)}
    assert pasted == set(SOURCES), "every generated table is pasted once, every pasted one has a source"
    assert stale_tables(repo_root) == [], "run `make docs-tables` (or paste docs/generated/NAME.md)"


def test_this_runs_outputs_have_the_generated_tables_shape(docs_run, repo_root):
    for name, (run, rel) in SOURCES.items():
        if run != "docs":
            continue
        fresh = render(name, docs_run["work"] / rel).splitlines()
        cached = (repo_root / GENERATED_DIR / f"{name}.md").read_text().splitlines()
        assert fresh[:2] == cached[:2] and len(fresh) == len(cached), name
        # the first column(s) name the rows: same rows in the same order
        assert [row.split("|")[1:3] for row in fresh] == [row.split("|")[1:3] for row in cached], name


def test_table_helpers_read_and_render_real_values():
    assert markdown_table("# t\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter | x\n") == "| a | b |\n|---|---|\n| 1 | 2 |\n"
    with pytest.raises(ValueError, match="no Markdown table"):
        markdown_table("no table here\n")
    row = {"k_positives": 25, "k_hard_negatives": 30, "margin": 5, "queries": 1095, "triples": 5475,
           "symmetric_collisions": 338, "symmetric_collision_triples": 660}
    assert collisions_table([row]).splitlines()[2] == "| 25 | 30 | 5 | 1,095 | 5,475 | 338 | 660 | 12.05 |"


def test_reproduce_automodel_snippet_pools_as_the_model_was_trained(demo_tiny_bert, tmp_path, repo_root):
    """docs/REPRODUCE.md §7's AutoModel snippet, run on a mean-pooled model dir, gives SentenceTransformer's
    vectors at the saved length (the [CLS] vector of such a model is another one)."""
    import re

    import numpy as np
    from sentence_transformers import SentenceTransformer

    from scincl.model.encoder import DocumentEncoder, load_backbone, save_encoder

    backbone, tokenizer = load_backbone(str(demo_tiny_bert))  # saved as train saves: mean pooling, 48 tokens
    model_dir = save_encoder(DocumentEncoder(backbone, "mean"), tokenizer, tmp_path / "model_mean", max_seq_length=48)
    text = (repo_root / "docs" / "REPRODUCE.md").read_text()
    section = text[text.index("## 7. Using a trained model"):]
    snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    snippet = re.sub(r'^model_dir = .*$', f'model_dir = "{model_dir}"', snippet, count=1, flags=re.M)
    namespace: dict = {}
    exec(compile(snippet, "REPRODUCE.md §7", "exec"), namespace)
    assert namespace["max_length"] == 48  # the length saved with the model (the tiny BERT's own: 64), as
    # SentenceTransformer reads it
    texts = [p["title"] + namespace["tokenizer"].sep_token + p["abstract"] for p in namespace["papers"]]
    expected = SentenceTransformer(str(model_dir), device="cpu").encode(texts)
    np.testing.assert_allclose(namespace["embeddings"].numpy(), expected, rtol=1e-4, atol=1e-5)
    assert not np.allclose(namespace["hidden"][:, 0, :].numpy(), expected, atol=1e-3)  # [CLS] would differ
