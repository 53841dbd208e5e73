"""The hierarchical encoder (issue 43, deliverable 3; MP-BERT4CR §4, §4.1.2, Table 2): presets, save/load,
MEAN pooling and sentence padding, HIBERT masked-sentence pre-training, and the fine-tuning architecture's
encoder sharing, checked on the real model AND on deliberately wrong ones the check must reject (negatives
through their own encoder; a manuscript encoder tied to the citation encoder)."""
from __future__ import annotations

import copy

import pytest
import torch
from transformers import AutoConfig, AutoModel, AutoTokenizer

from scincl.citrec.batches import tokenize_documents
from scincl.citrec.hierarchical import (PRESETS, CitationRecommender, HierarchicalConfig, HierarchicalEncoder,
                                        HierarchicalForMaskedSentences)
from scincl.errors import InputError
from scincl.io import read_jsonl

MAX_SENTENCES, MAX_TOKENS = 8, 24


@pytest.fixture(scope="module")
def tokenizer(demo_tiny_bert):
    return AutoTokenizer.from_pretrained(demo_tiny_bert)


@pytest.fixture(scope="module")
def documents(demo_contexts):
    return [r["body"][:MAX_SENTENCES] for r in read_jsonl(demo_contexts / "sentences.jsonl.gz")[:8]]


def tiny_config(tokenizer) -> HierarchicalConfig:
    return HierarchicalConfig.preset("cpu", vocab_size=tokenizer.vocab_size, hidden_size=32, num_attention_heads=2,
                                     intermediate_size=64, max_sentence_tokens=MAX_TOKENS, max_sentences=MAX_SENTENCES,
                                     pad_token_id=tokenizer.pad_token_id, mask_token_id=tokenizer.mask_token_id,
                                     bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id)


def batch(tokenizer, documents):
    return tokenize_documents(tokenizer, documents, MAX_SENTENCES, MAX_TOKENS)


def test_presets_are_table_2_and_a_small_cpu_one():
    paper = PRESETS["paper"]
    assert (paper["sentence_layers"], paper["document_layers"], paper["decoder_layers"]) == (6, 6, 6)
    assert (paper["hidden_size"], paper["num_attention_heads"]) == (768, 12)
    default = HierarchicalConfig()
    assert all(getattr(default, k) == v for k, v in paper.items()) and default.dropout == 0.1  # Table 2: dropout 0.1
    cpu = HierarchicalConfig.preset("cpu", vocab_size=500)
    assert cpu.hidden_size < paper["hidden_size"] and cpu.vocab_size == 500
    with pytest.raises(InputError, match="unknown hierarchical preset 'gpu'; one of: paper, cpu"):
        HierarchicalConfig.preset("gpu")


def test_tokens_end_each_sentence_with_eos_and_pad_whole_sentences(tokenizer, documents):
    b = batch(tokenizer, [documents[0][:3], documents[1][:5]])
    assert b["input_ids"].shape[:2] == (2, 5)
    lengths = b["attention_mask"].sum(-1)
    assert lengths[0, 3:].tolist() == [0, 0] and (lengths[1] > 0).all()  # padding sentences are empty rows
    last = b["input_ids"].gather(-1, (lengths.clamp(min=1) - 1)[..., None])[..., 0]
    assert (last[lengths > 0] == tokenizer.sep_token_id).all()  # every sentence ends with the EOS token


def test_save_load_mean_pooling_and_sentence_padding(tokenizer, documents, tmp_path):
    torch.manual_seed(0)
    encoder = HierarchicalEncoder(tiny_config(tokenizer)).eval()
    b = batch(tokenizer, [d[:MAX_SENTENCES - 1] for d in documents[:2]])  # room for one padding sentence
    with torch.no_grad():
        states = encoder(b["input_ids"], b["attention_mask"])
        # MEAN pooling: the sentence vector is the average of the token states over the real tokens
        tokens = encoder.sentence_encoder(input_ids=b["input_ids"][0, :1], attention_mask=b["attention_mask"][0, :1])
        n = int(b["attention_mask"][0, 0].sum())
        assert torch.allclose(encoder.sentence_vectors(b["input_ids"], b["attention_mask"])[0, 0],
                              tokens.last_hidden_state[0, :n].mean(0), atol=1e-5)
        # a padding sentence changes nothing for the real ones
        padded = {k: torch.cat([v, torch.zeros_like(v[:, :1])], dim=1) for k, v in b.items()}
        assert torch.allclose(encoder(padded["input_ids"], padded["attention_mask"])[:, :-1], states, atol=1e-5)
    encoder.save_pretrained(tmp_path / "enc")
    assert AutoConfig.from_pretrained(tmp_path / "enc").model_type == "scincl-hierarchical"
    loaded = AutoModel.from_pretrained(tmp_path / "enc").eval()
    assert isinstance(loaded, HierarchicalEncoder)
    with torch.no_grad():
        assert torch.equal(loaded(b["input_ids"], b["attention_mask"]), states)


def test_masked_sentence_pretraining_hides_the_sentence_and_learns(tokenizer, documents, tmp_path):
    torch.manual_seed(0)
    model = HierarchicalForMaskedSentences(tiny_config(tokenizer))
    b = batch(tokenizer, documents[:4])
    masked = torch.zeros(b["attention_mask"].shape[:2], dtype=torch.bool)
    masked[:, 2] = True
    hidden = model.mask_sentences(b["input_ids"], b["attention_mask"], masked)
    real = b["attention_mask"][:, 2].bool()
    assert (hidden[:, 2][real] == tokenizer.mask_token_id).all() and torch.equal(hidden[:, 3], b["input_ids"][:, 3])
    model.eval()
    with torch.no_grad():  # what the decoder sees of a masked sentence does not depend on its words
        other = b["input_ids"].clone()
        other[:, 2] = torch.where(b["attention_mask"][:, 2].bool(), other[:, 4, :other.shape[2]], other[:, 2])
        a = model.hierarchical(model.mask_sentences(b["input_ids"], b["attention_mask"], masked), b["attention_mask"])
        c = model.hierarchical(model.mask_sentences(other, b["attention_mask"], masked), b["attention_mask"])
        assert torch.equal(a, c)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(20):
        loss = model(b["input_ids"], b["attention_mask"], masked)["loss"]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0], losses
    model.save_pretrained(tmp_path / "hibert")
    reloaded = HierarchicalForMaskedSentences.from_pretrained(tmp_path / "hibert")
    assert torch.equal(reloaded.hierarchical.sentence_positions.weight, model.hierarchical.sentence_positions.weight)


class NegativesThroughTheirOwnEncoder(CitationRecommender):
    """Wrong: a separate negative-citation encoder (initialised equal, then trained apart)."""

    def __init__(self, config):
        super().__init__(config)
        self.negative_encoder = copy.deepcopy(self.citation_encoder)

    def encode_negatives(self, input_ids, attention_mask):
        return self.citation_head(self.negative_encoder(input_ids, attention_mask), attention_mask)


class ManuscriptTiedToCitations(CitationRecommender):
    """Wrong: the manuscript goes through the citation encoder (not updated on its own)."""

    def encode_manuscripts(self, input_ids, attention_mask):
        return self.manuscript_head(self.citation_encoder(input_ids, attention_mask), attention_mask)


def check_encoder_sharing(model: CitationRecommender, tokenizer, documents) -> None:
    """After one training step: a paper's vector as a negative equals its vector as a positive (one shared
    citation encoder), and the manuscript encoder was updated and differs from the citation encoder (its own)."""
    manuscripts = batch(tokenizer, documents[:2])
    positives = batch(tokenizer, documents[2:5])  # rows 0..2
    negatives = batch(tokenizer, [documents[4], documents[5], documents[6]])  # row 0 = positive row 2
    positive_index, negative_index = torch.tensor([[0, 2], [1, -1]]), torch.tensor([[1, 2], [0, 2]])
    inputs = (manuscripts["input_ids"], manuscripts["attention_mask"], positives["input_ids"],
              positives["attention_mask"], negatives["input_ids"], negatives["attention_mask"])
    before = [p.detach().clone() for p in model.manuscript_encoder.parameters()]
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model(*inputs, positive_index, negative_index)["loss"].backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        out = model(*inputs, positive_index, negative_index)
    assert torch.allclose(out["positives"][2], out["negatives"][0], atol=1e-6), \
        "negatives are not encoded by the citation encoder"
    updated = [not torch.equal(a, b) for a, b in zip(model.manuscript_encoder.parameters(), before)]
    apart = [not torch.equal(a, b) for a, b in zip(model.manuscript_encoder.parameters(),
                                                    model.citation_encoder.parameters())]
    assert sum(updated) > len(updated) // 2 and sum(apart) > len(apart) // 2, \
        "the manuscript encoder is not updated on its own"


def test_fine_tuning_shares_the_citation_encoder_and_keeps_the_manuscript_encoder_apart(tokenizer, documents):
    torch.manual_seed(0)
    pretrained = HierarchicalEncoder(tiny_config(tokenizer))
    model = CitationRecommender.from_pretrained_encoder(pretrained)
    for encoder in (model.manuscript_encoder, model.citation_encoder):  # both initialised from the pre-trained one
        assert all(torch.equal(a, b) for a, b in zip(encoder.state_dict().values(), pretrained.state_dict().values()))
    assert model.manuscript_encoder.sentence_positions.weight is not model.citation_encoder.sentence_positions.weight
    check_encoder_sharing(model, tokenizer, documents)


@pytest.mark.parametrize("wrong,why", [(NegativesThroughTheirOwnEncoder, "not encoded by the citation encoder"),
                                       (ManuscriptTiedToCitations, "not updated on its own")])
def test_the_sharing_check_rejects_a_wrong_architecture(tokenizer, documents, wrong, why):
    torch.manual_seed(0)
    with pytest.raises(AssertionError, match=why):
        check_encoder_sharing(wrong.from_pretrained_encoder(HierarchicalEncoder(tiny_config(tokenizer))),
                              tokenizer, documents)


def test_triplet_objective_uses_every_negative_of_a_group(tokenizer, documents):
    from scincl.model.losses import build_loss

    torch.manual_seed(0)
    model = CitationRecommender.from_pretrained_encoder(HierarchicalEncoder(tiny_config(tokenizer))).eval()
    manuscripts, positives, negatives = (batch(tokenizer, documents[a:b]) for a, b in ((0, 2), (2, 4), (4, 8)))
    # group 0: target 0, negatives 0..3 (the paper's 4); group 1: target 1, negatives 2, 3 (padding -1)
    positive_index, negative_index = torch.tensor([[0], [1]]), torch.tensor([[0, 1, 2, 3], [2, 3, -1, -1]])
    inputs = (manuscripts["input_ids"], manuscripts["attention_mask"], positives["input_ids"],
              positives["attention_mask"], negatives["input_ids"], negatives["attention_mask"])
    with torch.no_grad():
        out = model(*inputs, positive_index, negative_index, loss_fn=build_loss("triplet"))
    d = torch.cdist(out["manuscripts"], torch.cat([out["positives"], out["negatives"]]))  # eq. 3's euclidean distance
    pairs = [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (1, 1, 2), (1, 1, 3)]  # (group, target, negative)
    by_hand = sum(max(float(d[g, t] - d[g, 2 + n]) + 1.0, 0.0) for g, t, n in pairs) / len(pairs)
    assert out["loss"].item() == pytest.approx(by_hand, rel=1e-4)
    first_only = sum(max(float(d[g, t] - d[g, 2 + n]) + 1.0, 0.0) for g, t, n in pairs[:1] + pairs[4:5]) / 2
    assert by_hand != pytest.approx(first_only, rel=1e-4)  # not only each group's first negative


def test_inverse_sqrt_schedule_by_hand():
    from scincl.citrec.training import inverse_sqrt_factor

    lr, init = 1e-3, 1e-7
    assert inverse_sqrt_factor(0, 4, lr, init) == pytest.approx(init / lr)  # the first update: 1e-7 (Table 2)
    assert inverse_sqrt_factor(2, 4, lr, init) == pytest.approx((init + (lr - init) / 2) / lr)
    assert inverse_sqrt_factor(4, 4, lr, init) == pytest.approx(1.0)
    assert inverse_sqrt_factor(16, 4, lr, init) == pytest.approx(0.5)  # sqrt(4 / 16)


def test_hibert_corruption_masks_keeps_or_swaps_the_selected_sentences(tokenizer, documents):
    torch.manual_seed(0)
    model = HierarchicalForMaskedSentences(tiny_config(tokenizer))
    b = batch(tokenizer, documents[:8])
    real = b["attention_mask"].any(-1)
    selected = real.clone()  # every real sentence selected: ~80 / 10 / 10 of them
    generator = torch.Generator().manual_seed(0)
    ids, mask, counts = model.corrupt_sentences(b["input_ids"], b["attention_mask"], selected, 0.1, 0.1, generator)
    assert counts["masked"] + counts["kept"] + counts["replaced"] == int(real.sum()) > 50
    masked = [(i, j) for i, j in real.nonzero().tolist() if (ids[i, j][b["attention_mask"][i, j].bool()]
                                                            == tokenizer.mask_token_id).all()]
    kept = [(i, j) for i, j in real.nonzero().tolist() if torch.equal(ids[i, j], b["input_ids"][i, j])]
    assert len(masked) == counts["masked"] and len(kept) == counts["kept"] > 0
    swapped = [(i, j) for i, j in real.nonzero().tolist() if (i, j) not in masked + kept]
    assert len(swapped) == counts["replaced"] > 0
    for i, j in swapped:  # another real sentence of the batch, with that sentence's attention mask
        assert any(torch.equal(ids[i, j], b["input_ids"][k, m]) and torch.equal(mask[i, j], b["attention_mask"][k, m])
                   for k, m in real.nonzero().tolist() if (k, m) != (i, j))
    assert 0.7 < counts["masked"] / int(real.sum()) < 0.9
    assert torch.equal(ids[~selected], b["input_ids"][~selected])  # unselected sentences untouched
    # shares 0 / 0: every selected sentence is [MASK]ed, as mask_sentences does
    only, _, c = model.corrupt_sentences(b["input_ids"], b["attention_mask"], selected, 0.0, 0.0, generator)
    assert c == {"masked": int(real.sum()), "kept": 0, "replaced": 0}
    assert torch.equal(only, model.mask_sentences(b["input_ids"], b["attention_mask"], selected))
    # the decoder's targets are the original sentences whatever the encoder saw
    model.eval()
    with torch.no_grad():
        one = model(b["input_ids"], b["attention_mask"], selected, corrupted=(ids, mask))["loss"]
        other = model(b["input_ids"].clone(), b["attention_mask"], selected, corrupted=(only, b["attention_mask"]))
    assert torch.isfinite(one) and not torch.equal(one, other["loss"])


def test_pretrain_hierarchical_cli_learns_saves_an_encoder_and_is_reused(demo_contexts, demo_tiny_bert,
                                                                          demo_pretrained, tmp_path):
    from tests.citrec.conftest import PRETRAIN_FLAGS
    from tests.conftest import run_front_end

    out = demo_pretrained.path  # the session's one pre-training run, made by the CLI
    assert demo_pretrained.done.stdout.strip().endswith(str(out))
    log = read_jsonl(out / "pretrain_log.jsonl")
    assert [r["step"] for r in log] == list(range(1, 9)) and all(r["masked_sentences"] >= 4 for r in log)
    assert all(r["kept_sentences"] + r["replaced_sentences"] <= r["masked_sentences"] for r in log)
    assert sum(r["kept_sentences"] + r["replaced_sentences"] for r in log) > 0  # HIBERT's 10 % / 10 % happen
    assert log[0]["learning_rate"] == pytest.approx(1e-7) and log[2]["learning_rate"] == pytest.approx(3e-3)
    assert log[-1]["loss"] < log[0]["loss"]
    encoder = AutoModel.from_pretrained(out)  # the encoder the fine-tuning starts from, from the HIBERT checkpoint
    full = HierarchicalForMaskedSentences.from_pretrained(out)
    assert isinstance(encoder, HierarchicalEncoder) and encoder.config.max_sentences == 8
    assert all(torch.equal(a, b) for a, b in zip(encoder.state_dict().values(), full.hierarchical.state_dict().values()))
    again = run_front_end("cli_pipeline.py", "pretrain_hierarchical", demo_contexts, out, "--tokenizer_name_or_path",
                          demo_tiny_bert, *PRETRAIN_FLAGS, check=True)
    assert "reusing it" in again.stderr
    from scincl.citrec.pretrain import pretrain_hierarchical

    for flags, message in (({"masked_sentence_share": 1.5}, "--masked_sentence_share 1.5: must be between 0 and 1"),
                           ({"kept_sentence_share": 0.6, "random_sentence_share": 0.5},
                            "--kept_sentence_share 0.6 and --random_sentence_share 0.5: each at least 0, together "
                            "at most 1")):
        with pytest.raises(InputError, match=message):
            pretrain_hierarchical(str(demo_contexts), str(tmp_path / "x"), str(demo_tiny_bert), **flags)
