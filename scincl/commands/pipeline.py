"""Commands of `cli_pipeline.py`: train, embed, evaluate, compare, and the pipelines and experiments (`--help` shows each docstring).

`train` is the library's :func:`scincl.model.train.train` itself (same name, flags, defaults and docstring;
its ``**training_args`` are the ``transformers.TrainingArguments`` fields); :data:`COMMANDS` is the table.
"""
from __future__ import annotations

from scincl.cli import accepts_flags, repeatable_flags
from scincl.model.train import train
from scincl.flag_checks import default_outputs, settings_checked_by_library
from scincl.pipeline.flags import run_specter_flag_info, run_specter_flag_names
from scincl.pipeline.settings import DEFAULT_DEMO_OUTPUT_DIR
from scincl.settings.schema import SCINCL


@repeatable_flags("corpus_dir", "corpus_format")
@accepts_flags(lambda: _training_flag_names(), lambda: _pretrain_flag_info())
def pretrain(corpus_dir=None, output_dir: str = None, corpus_format=None, excluded_paper_ids: str = None,
             vocab_size: int = None, size: str = None, max_sequence_length: int = None,
             mlm_probability: float = None, whole_word_masking: bool = False, val_ratio: float = None,
             workers: int = None, override: bool = False, **training_args) -> str:
    """Pre-train a BERT from random initialisation by masked-language modelling on corpora's titles + abstracts; prints OUTPUT_DIR.

    SciBERT's recipe at a size this machine affords: the text is `title [SEP] abstract` of every
    paper (as in fine-tuning) cut into windows of --max_sequence_length tokens; an uncased WordPiece
    vocabulary of --vocab_size is learned from it (tokenizers); BertForMaskedLM from a --size preset
    (tiny 2x128, mini 4x256, small 4x512: the BERT miniatures; base 12x768 = SciBERT, for a GPU);
    DataCollatorForLanguageModeling masks --mlm_probability of the tokens (whole words with
    --whole_word_masking); the transformers Trainer trains it (bf16 where native, tqdm, checkpoints
    every --save_steps, --report_to wandb when asked). A --val_ratio share of the papers is held out
    for an MLM loss every --eval_steps. Every transformers.TrainingArguments flag passes through
    (defaults: scincl.model.pretrain.PRETRAIN_TRAINING_DEFAULTS: lr 5e-4, batch 32, 1 epoch, weight
    decay 0.01, 5 % warm-up, linear decay; --max_steps N stops earlier).

    OUTPUT_DIR loads with AutoModel/AutoTokenizer and is a --base_model_name_or_path of `train`
    and `run_specter` and a --base_model of `reproduce` (BASE_MODEL= of experiments/*.sh). It holds
    run_fingerprint.json (corpora and excluded ids fingerprinted, every setting): rerun with the same
    ones, a finished run is reused and an interrupted one resumes from its newest complete
    checkpoint; anything else is refused unless --override. pretrain_log.jsonl and mlm_loss.png:
    loss, held-out loss, tokens, wall seconds and tokens/s; pretrain_args.json (written last): cost
    and counts.

    Example: python cli_pipeline.py pretrain --corpus_dir ../shared/data/hepth/s2orc/metadata
        --corpus_dir ../shared/data/citeseer/s2orc/metadata --corpus_format s2orc
        --excluded_paper_ids ../shared/data/hepth/scidocs_paper_ids.json --output_dir runs/pretrain
        --size mini --vocab_size 16000 --max_steps 3000

    Args:
        corpus_dir: a corpus folder (repeat the flag, or comma-separate, for several corpora).
        output_dir: the model dir (checkpoints in OUTPUT_DIR/checkpoint-N).
        corpus_format: s2orc | s2ag | openalex | plain (default: detected); one for all corpora or one each.
        excluded_paper_ids: JSON list of paper ids whose text is kept out (e.g. SciDocs query papers).
        vocab_size: WordPiece vocabulary size (31090: SciBERT's SciVocab).
        size: tiny | mini | small | base (mini).
        max_sequence_length: tokens per window (128: BERT's and SciBERT's first phase).
        mlm_probability: share of tokens masked (0.15, BERT).
        whole_word_masking: mask all pieces of a word together.
        val_ratio: share of papers held out for the MLM loss (0.01; 0: none).
        Unset flags take the defaults of scincl.model.pretrain.
        workers: processes reading the corpora (default: all CPUs).
        override: start over even if OUTPUT_DIR holds this run (or another).
    """
    from scincl.eval.evaluate import as_list
    from scincl.model.pretrain import pretrain as pretrain_encoder
    from scincl.corpus.outputs import worker_count

    if not output_dir:
        from scincl.errors import InputError

        raise InputError("give --output_dir")
    given = {name: value for name, value in (("vocab_size", vocab_size), ("size", size),
                                              ("max_sequence_length", max_sequence_length),
                                              ("mlm_probability", mlm_probability), ("val_ratio", val_ratio))
             if value is not None}
    return str(pretrain_encoder(
        as_list(corpus_dir), output_dir, corpus_formats=[f or None for f in as_list(corpus_format)],
        excluded_paper_ids=excluded_paper_ids, whole_word_masking=whole_word_masking,
        workers=worker_count(workers), override=override, **given, **training_args))


def embed(model_dir_or_name: str, metadata_path: str, output_path: str, batch_size: int = 32,
          max_sequence_length: int = SCINCL.max_sequence_length, pooling_strategy: str = None, device: str = None,
          override: bool = False, bf16: str = "false", fit_corpus: str = None) -> str:
    """Embed papers with an encoder: metadata -> SciDocs embeddings jsonl {"paper_id","embedding"}; prints OUTPUT_PATH.

    Batched longest-first under torch.inference_mode; fp32 unless --bf16 auto|true (auto: bf16 autocast
    only where the device has native bf16). MODEL_DIR_OR_NAME tfidf or bm25: the lexical baselines
    (scincl/eval/lexical.py: scikit-learn TF-IDF with sublinear tf / BM25 k1 1.2 b 0.75, English stop
    words, l2-normalised), fitted on the papers being embedded or on --fit_corpus; their embeddings are
    sparse records {"paper_id", "embedding": {"dim", "indices", "values"}}, which `evaluate` reads.

    Args:
        model_dir_or_name: a `train` output dir, an HF checkpoint (e.g. malteos/scincl when cached), tfidf or bm25.
        metadata_path: metadata jsonl(.gz) {"paper_id","title","abstract"} or a SciDocs paper_metadata_*.json.
        output_path: embeddings jsonl(.gz), one line per paper in input order.
        batch_size: papers per forward pass.
        max_sequence_length: tokens per paper (title [SEP] abstract).
        pooling_strategy: cls | mean (default: read from the model dir's 1_Pooling/config.json, else cls).
        device: cuda | cpu (default: cuda when available).
        override: recompute an existing OUTPUT_PATH.
        bf16: false (fp32, default: scincl.model.embed.EMBED_BF16) | auto | true.
        fit_corpus: tfidf/bm25 only: metadata jsonl(.gz) or SciDocs json whose papers the vocabulary and
            idf are learned from (default: the papers being embedded).
    """
    from scincl.eval.lexical import embed_lexical, is_lexical
    from scincl.model.embed import embed as embed_papers

    if is_lexical(model_dir_or_name):
        return str(embed_lexical(model_dir_or_name, metadata_path, output_path, fit_corpus=fit_corpus,
                                 override=override))
    if fit_corpus:
        from scincl.errors import InputError

        raise InputError("--fit_corpus goes with the lexical encoders (tfidf, bm25) only")

    return str(embed_papers(model_dir_or_name, metadata_path, output_path, batch_size=batch_size,
                            max_sequence_length=max_sequence_length, pooling_strategy=pooling_strategy,
                            device=device, override=override, bf16=bf16))


def evaluate(scidocs_dir: str, output_dir: str, val_or_test: str = "test", model_dir=None, embeddings=None,
             cls_embeddings: str = None, recomm_embeddings: str = None, batch_size: int = 32,
             max_sequence_length: int = SCINCL.max_sequence_length, link_prediction_metrics: str = None, retrieval_pairs: str = None, retrieval_embeddings: str = None,
             classifier: str = "auto", n_jobs: int = -1, device: str = None, override: bool = False,
             pooling_strategy: str = None, fit_corpus: str = None) -> None:
    """Evaluate embeddings on a SciDocs-format dir: writes OUTPUT_DIR/results.json and results.md.

    Give either --model_dir M (the SciDocs paper_metadata_*.json files are embedded with the embed
    stage) or --embeddings E.jsonl ({"paper_id", "embedding"} per line; used for all tasks, unless
    --cls_embeddings / --recomm_embeddings give separate files for MAG/MeSH and recomm as in the
    official suite). Several models/embedding files (comma-separated, e.g. one per seed) are
    reported as mean ± std. Tasks without data in SCIDOCS_DIR are reported absent, never as 0.

    Args:
        scidocs_dir: official SciDocs layout (mag/, mesh/, coview/, coread/, cite/, cocite/, recomm/).
        output_dir: where results.json, results.md (paper Table 1 layout) and embeddings go.
        val_or_test: val | test | both.
        model_dir: trained model folder(s) or HF name(s), comma-separated; tfidf / bm25: the lexical
            baselines (see `embed --help`), fitted on the SciDocs papers embedded or on --fit_corpus.
        embeddings: SciDocs embeddings jsonl file(s), comma-separated.
        cls_embeddings: separate embeddings for MAG/MeSH (paper_metadata_mag_mesh papers).
        recomm_embeddings: separate embeddings for recomm (paper_metadata_recomm papers).
        batch_size: embedding batch size with --model_dir.
        max_sequence_length: tokens per paper with --model_dir (512 as SPECTER/SciNCL).
        link_prediction_metrics: the graph stage's link-prediction metrics JSON, reported as is.
        retrieval_pairs: held-out pairs TSV (query<TAB>relevant) for full-pool retrieval (OpenMSD) and
            citation recommendation buckets; the pool is every paper of --retrieval_embeddings.
        retrieval_embeddings: embeddings jsonl of the retrieval pool (default: the main embeddings).
        classifier: auto | lightning | sklearn (LinearSVC backend for MAG/MeSH; auto = lightning if installed).
        n_jobs: threads for the classification grid search (-1: all cores; results do not depend on it).
        device: cuda | cpu for embedding and the recomm ranker (default: cuda when available); full-pool
            retrieval scores on the GPU only with --device cuda.
        override: recompute an existing results.json / embeddings.
        pooling_strategy: cls | mean for --model_dir (default: the pooling saved in each model dir, cls
            without one; give the training's pooling to score a base checkpoint as it will be trained).
        fit_corpus: the corpus a tfidf / bm25 --model_dir is fitted on (metadata jsonl(.gz) or SciDocs json).
    """
    from scincl.eval.evaluate import as_list, run_evaluation

    run_evaluation(scidocs_dir, output_dir, val_or_test=val_or_test, model_dirs=as_list(model_dir),
                   embeddings=as_list(embeddings), cls_embeddings=cls_embeddings, recomm_embeddings=recomm_embeddings,
                   batch_size=batch_size, max_sequence_length=max_sequence_length,
                   link_prediction_metrics=link_prediction_metrics,
                   retrieval_pairs=retrieval_pairs, retrieval_embeddings=retrieval_embeddings,
                   classifier_backend=classifier, n_jobs=n_jobs, device=device, override=override,
                   pooling_strategy=pooling_strategy, fit_corpus=fit_corpus)


def compare_results(*results: str, output_dir: str = "comparison", names=None, split: str = "test",
                    sweep_dir: str = None, metric: str = "avg") -> None:
    """Put evaluation runs side by side (OUTPUT_DIR/comparison.md, .json) and plot sweeps (PNG).

    Each RESULTS argument is a results.json of `evaluate`, a directory holding one, or a directory
    of per-seed sub-directories holding one (shown as mean ± std), e.g.
    `compare_results runs/base runs/specter runs/scincl --names base,SPECTER-like,SciNCL`.

    Args:
        results: results.json files or directories (one table row each).
        output_dir: where comparison.md, comparison.json and the plots go.
        names: row names, comma-separated (default: directory names).
        split: val | test.
        sweep_dir: sweep layout SWEEP/k_pos/<k+>/, SWEEP/k_hard/<k-hard>/ (results.json in each, or one
            sub-directory per seed) and SWEEP/margin/<margin>/collisions.json ({"collisions": N}):
            plots metric vs k+ and vs k-hard (paper Figs. 2-3) and collisions vs margin (Fig. 5).
        metric: what the sweep plots show: avg (the table's Avg.) or task/metric, e.g. cite/map.
    """
    from scincl.eval.compare import compare
    from scincl.eval.evaluate import as_list

    compare(list(results), output_dir, names=as_list(names) or None, split=split, sweep_dir=sweep_dir,
            metric=metric)


# --- issue 7: the whole pipeline (logic in scincl/pipeline/) ------------------------------------

@settings_checked_by_library
@default_outputs(output_dir=DEFAULT_DEMO_OUTPUT_DIR)
@accepts_flags(run_specter_flag_names, run_specter_flag_info)
def run_specter(output_dir: str = None, seeds=None, **flags) -> None:
    """The whole SciNCL pipeline; with no data arguments, the embedded demo on the bundled corpus.

    Stages, in order (each reuses its output when it exists, logged; --override_<stage> rebuilds,
    --skip_<stage> skips): demo, scidocs_ids, citations, graph (citations -> BigGraph, only when
    --graph_embeddings_path is not given), queries, ann, triples, metadata, train, eval_base, eval,
    compare. Every output dir gets a manifest.json (arguments, input hashes, versions, git commit,
    seconds per stage). Prints the SciDocs table: base encoder vs SciNCL-tuned.

    Demo (make demo):  python cli_pipeline.py run_specter
    Paper (original README command, runs as written):
        python cli_pipeline.py run_specter ${OUTPUT_DIR} --auto_output_dir --scidocs_dir ${SCIDOCS_DIR} \\
            --s2orc_metadata_dir ${S2ORC_METADATA_DIR} --specter_triples_path ${SPECTER_DIR}/train_triples.csv \\
            --graph_paper_ids_path ${S2ORC_PAPER_IDS} --graph_embeddings_path ${S2ORC_EMBEDDINGS} \\
            --s2id_to_s2orc_input_path ${SPECTER_DIR}/s2id_to_s2orc_paper_id.json --graph_limit specter \\
            --ann_metric inner_product --ann_workers 1 --ann_backend faiss --ann_index_path ${ANN_INDEX_PATH} \\
            --val_or_test_or_both both --eval_steps 1 --save_steps 2 --triples_per_query 5 \\
            --workers ${WORKERS} --gzip --base_model_name_or_path ${BASE_MODEL} \\
            --easy_positives_count 5 --easy_positives_strategy knn --easy_positives_k_min 20 --easy_positives_k_max 25 \\
            --easy_negatives_count 3 --easy_negatives_strategy random_without_knn \\
            --hard_negatives_count 2 --hard_negatives_strategy knn --hard_negatives_k_min 3998 --hard_negatives_k_max 4000

    Args:
        output_dir: where everything goes (default for the demo: ./demo_output).
        base_model_name_or_path: encoder to fine-tune (default: SciBERT when cached, else the packaged
            all-MiniLM-L6-v2; the demo always uses MiniLM).
        scidocs_dir: SciDocs-format evaluation dir; its papers are kept out of the graph and the corpus.
        s2orc_metadata_dir: S2ORC metadata shards (citations and titles/abstracts); the old name of
            --corpus_dir, kept as an alias.
        corpus_dir / corpus_format: the corpus folder and its format, s2orc | s2ag | openalex | plain
            (default: detected; see README "Your own corpus"). Ids are the format's own, so give
            --s2id_to_s2orc_input_path as {SciDocs id: corpus id} (cli_s2orc.py get_scidocs_id_mapping).
        specter_triples_path: SPECTER training triples (CSV): their papers/queries define the corpus
            for --graph_limit specter|s2orc|none.
        graph_paper_ids_path / graph_embeddings_path: BigGraph export (entity_names_paper_id_0.json,
            embeddings h5/npy); when not given, the graph is built from the citations.
        s2id_to_s2orc_input_path: JSON {S2 id: S2ORC id} (comma-separated files are merged) for the
            SPECTER and SciDocs ids.
        train_s2orc_paper_ids / train_query_s2orc_paper_ids: corpus / query id lists. An existing file
            is read, never rewritten (only the corpus given: queries sampled from it); a path that
            does not exist yet is where the selection is written.
        citations_path: an existing citations TSV for --triples_source specter_like.
        scidocs_paper_ids: JSON list of the graph ids to keep out of graph and corpus, with or without
            --scidocs_dir (default: every paper of --scidocs_dir's paper_metadata_*.json, mapped; demo: its
            held-out papers); --excluded_paper_ids is the same flag (get_citations' name). The train stage's
            leakage guard reports them (MODEL_DIR/leakage_report.json, manifest "leakage") and refuses to
            train when one is in the graph or the triplets.
        graph_limit: specter (SPECTER's papers, topped up), s2orc (SPECTER-sized random sample),
            graph (every graph paper), none (SPECTER's papers only). Default: specter with
            --specter_triples_path, else graph.
        graph_leakage: keep SciDocs papers in the graph and corpus (the paper's "w/ leakage" setting; the
            guard then reports them without refusing).
        biggraph_config: PBG config for the graph stage (default s2orc_768d_dot; demo: demo).
        biggraph_overrides: PBG key=value overrides, space-separated (e.g. "num_epochs=5 num_partitions=8").
        graph_method: pbg (PyTorch-BigGraph, the paper's; default), prone or fastrp (cli_graph.py
            embed_graph: same files, minutes instead of epochs; dimension = the config's unless
            --biggraph_overrides "dimension=N"); graph_method_settings: their "key=value ..." settings.
        ann_metric / ann_backend / ann_index_path / faiss_string_factory: the kNN index (an existing
            --ann_index_path is used, never rebuilt: one made for another corpus or settings is refused).
        triples_source: knn (SciNCL) or specter_like (citations; same corpus and queries).
        triples_per_query, easy_positives_*, easy_negatives_*, hard_negatives_*: sampling
            (paper defaults k+ 20-25, k-hard 3998-4000; demo 20-25 / 198-200; a band's *_k_min not given
            is its *_k_max minus its count: --hard_negatives_k_max 500 samples 498-500); --k_scale corpus sizes
            k+ and k-hard for the corpus from the paper's k/N ratios instead (scincl/triples/k_scale.py). Other miner flags
            (medium_*, *_range, k_means_clusters ...) pass through.
        seed: sampling and training seed. corpus_seed: corpus/query selection (default: seed).
        sample_queries_ratio: keep this share of the query papers (1% / 10% ablations).
        workers: processes/threads (default: all CPUs). gzip: triples and metadata as .gz.
        device: cuda | cpu: where training, the faiss index and embedding run (default: CUDA when
            available); cuda stops at once when CUDA is unusable, cpu also sets --use_cpu and --ann_device -1.
        auto_output_dir: OUTPUT_DIR/<graph_limit>/corpus_seed_<s>/[queries_<r>/]<sampling>/ as in the original.
        bitfit / pooling_strategy (cls|mean) / loss / max_sequence_length: training (see `train --help`).
            Any TrainingArguments flag passes through (--learning_rate, --num_train_epochs, --fp16, ...).
        val_or_test_or_both: SciDocs splits to evaluate. --eval_max_sequence_length N embeds the SciDocs
            papers with N tokens (default: the evaluator's 512; demo: 128). --demo_papers N: demo corpus size.
            --evaluate_base_model false: no base-encoder row.
        seeds: e.g. 0..9 or 0,1,2: one run per seed on the same corpus (OUTPUT_DIR/seeds/seed_N), mean ± std.
    """
    from scincl.pipeline.seeds_and_sweeps import format_stage_times, run_specter as run

    result = run(output_dir, seeds=seeds, **flags)
    print(f"\nOutputs: {result['output_dir']}")
    for one in result["runs"][:1]:
        print("Stage times (first run):\n" + format_stage_times(one))
    if result["table"]:
        print("\n" + result["table"])


@settings_checked_by_library
@default_outputs(output_dir=DEFAULT_DEMO_OUTPUT_DIR)
@accepts_flags(run_specter_flag_names, run_specter_flag_info)
def run_specter_like(output_dir: str = None, **kwargs) -> None:
    """run_specter with SPECTER-like triplets (citations) on the same corpus and queries as SciNCL.

    Same flags as run_specter (this sets --triples_source specter_like): positives are cited papers,
    hard negatives citations of citations, easy negatives random (SPECTER's sampling).
    """
    run_specter(output_dir, triples_source="specter_like", **kwargs)


@settings_checked_by_library
@default_outputs(output_dir=DEFAULT_DEMO_OUTPUT_DIR)
@accepts_flags(lambda: run_specter_flag_names() | {"positives_band", "hard_negatives_band"},
               lambda: run_specter_flag_info() + _sweep_band_flags())
def sweep(output_dir: str = None, k_pos=(), k_hard=(), **kwargs) -> None:
    """k+ / k-hard sweeps (paper Figs. 2-3): one run per value, plots metric vs k.

    Example: python cli_pipeline.py sweep runs/demo --k_pos 10,25,50 --k_hard 200,400,800
    Outputs OUTPUT_DIR/sweep/k_pos/<k+>/, OUTPUT_DIR/sweep/k_hard/<k->/ and the plots in
    OUTPUT_DIR/comparison/. Other flags as in run_specter.
    """
    from scincl.pipeline.seeds_and_sweeps import sweep as run

    result = run(output_dir, k_pos=k_pos, k_hard=k_hard, **kwargs)
    print("\n".join(str(p) for p in result["plots"]))


@accepts_flags(lambda: _experiment_kinds().reproduce_flag_names(), lambda: _experiment_kinds().reproduce_flag_info())
def reproduce(experiment: str, output_dir: str = "results", data_dir: str = "../shared/data", workers: int = None,
              **settings) -> None:
    """Real-corpus experiments of docs/results.md (hep-th, CiteSeer from ../shared/data), MiniLM encoder
    unless --base_model names another.

    EXPERIMENT: main (base vs SPECTER-like vs SciNCL vs continuous co-citation, mean ± std over
    --seeds, test queries), tuning (--variants pooling=cls,learning_rate=2e-5,... on val), k_pos /
    k_hard (SciNCL sweeps over --values, val), losses (triplet, infonce, cosent, angle on SciNCL
    triplets, val), collisions (vs margin, --values = k-hard grid), graph (link prediction 64/128-d
    dot vs cos + graph embeddings alone as a retriever).
    Shared stage outputs (citations w/o the SciDocs queries, co-citations, BigGraph, FAISS, query
    samples, base-encoder evaluation) live in OUTPUT_DIR/<corpus>/shared and are reused; each arm x
    seed has its own triplets, model and results. Tables: OUTPUT_DIR/<corpus>/<experiment...>/results.md.
    Every step runs through the stage runner of run_specter (manifest.json in each output dir).
    The same experiments as data: experiments/*.py, run with `run_experiment`.

    Example: python cli_pipeline.py reproduce main --corpus hepth --output_dir results --seeds 0,1,2
    Args:
        experiment: main | tuning | k_pos | k_hard | losses | collisions | graph.
        settings: the fields of scincl.pipeline.experiment_kinds.Experiment and of the recipe
            (scincl.pipeline.real_corpus.Recipe), each with its default defined there:
            --corpus hepth|citeseer; --seeds 0,1,2 (or 0..2); --split (default: test for main and
            graph, val for the studies); --values (k_pos/k_hard sweep values, collisions' k-hard
            grid); --variants field=value,... (tuning); --arms specter_like,scincl,cocite;
            --losses triplet,infonce,cosent,angle; --cocitation_min_count 2;
            --eval_max_sequence_length 128; --graph_dims 64,128 (graph study); recipe: --triplets 1000
            (5 per query) --easy_positives_k_max 25 --hard_negatives_k_max 500 (k+, k-hard: positives
            n_{k+-4}..n_{k+}, hard negatives n_{k--1}..n_{k-}) --pooling_strategy mean --learning_rate 5e-5
            --loss triplet --max_sequence_length 64 --per_device_train_batch_size 16 --num_train_epochs 1
            --graph_dim 64 --base_model_name_or_path "" (the packaged all-MiniLM-L6-v2; else a hub name or a
            model dir, e.g. allenai/scibert_scivocab_uncased with --pooling_strategy cls). The recipe's former
            names --k_pos, --k_hard, --pooling, --batch_size, --epochs, --base_model are accepted too.
    """
    from scincl.pipeline.experiment_kinds import experiment_from_flags, run_experiment as run

    run(experiment_from_flags(experiment, **settings), output_dir=output_dir, data_dir=data_dir, workers=workers)


@accepts_flags(lambda: _experiment_kinds().reproduce_flag_names(), lambda: _experiment_kinds().reproduce_flag_info())
def run_experiment(definition: str, output_dir: str = "results", data_dir: str = "../shared/data",
                   workers: int = None, **changes) -> None:
    """Run an experiment defined as data: experiments/<name>.py (or a path to such a module).

    The module's get_experiment() returns the experiment's kind, corpus, arms, seeds, split,
    recipe changes and sweep values (one dict, or a list run in order); see experiments/ and
    scincl.pipeline.experiment_kinds.Experiment for the fields and their defaults. Further flags
    change every experiment of the module: the same settings as `reproduce` (e.g. --seeds 0
    --k_hard 2000).

    Example: python cli_pipeline.py run_experiment hepth_main --output_dir results
    """
    from scincl.pipeline.experiment_kinds import load_experiments, run_experiment as run

    from scincl.pipeline.real_corpus import corpus_spec

    experiments = load_experiments(definition, changes)
    for experiment in experiments:  # every experiment's corpus checked before the first one runs
        corpus_spec(experiment.corpus, data_dir)
    for experiment in experiments:
        run(experiment, output_dir=output_dir, data_dir=data_dir, workers=workers)


def _training_flag_names() -> set:
    """``train``'s **training_args: the ``transformers.TrainingArguments`` fields (its output_dir is OUTPUT_DIR)."""
    import dataclasses

    from transformers import TrainingArguments

    return {f.name for f in dataclasses.fields(TrainingArguments) if f.init} - {"output_dir"}


def _training_flag_info() -> list:
    """``train --help``: the TrainingArguments fields with the defaults train applies (SPECTER's set-up)."""
    from scincl.cli_help import training_flags

    return training_flags(exclude={"output_dir"})


def _pretrain_flag_info() -> list:
    """``pretrain --help``: the TrainingArguments fields with pretrain's defaults (scincl/model/pretrain.py)."""
    from scincl.cli_help import training_flags
    from scincl.model.pretrain import PRETRAIN_TRAINING_DEFAULTS

    return training_flags(exclude={"output_dir"}, defaults=PRETRAIN_TRAINING_DEFAULTS,
                          defaults_source="scincl/model/pretrain.py:PRETRAIN_TRAINING_DEFAULTS")


def _sweep_band_flags() -> list:
    """``sweep``'s own band flags (scincl/pipeline/seeds_and_sweeps.py)."""
    from scincl.cli_help import signature_flags
    from scincl.pipeline.seeds_and_sweeps import sweep as sweep_runs

    return [r for r in signature_flags(sweep_runs) if r.name in ("positives_band", "hard_negatives_band")]


def _experiment_kinds():
    """The experiment kinds module (imported when a command needs it: it loads the real-corpus stages)."""
    from scincl.pipeline import experiment_kinds

    return experiment_kinds


accepts_flags(_training_flag_names, _training_flag_info)(train)

COMMANDS = {command.__name__: command for command in (
    train, pretrain, embed, evaluate, compare_results, run_specter, run_specter_like, sweep, reproduce, run_experiment)}
