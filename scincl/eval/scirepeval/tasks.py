"""The SciRepEval tasks (Singh et al. 2023) as the official evaluator configures them.

Read from ``scirepeval_tasks.jsonl`` of the ``allenai/scirepeval`` repository (commit e04594e), one line per
task: its ``type`` (``classification``, ``regression``, ``proximity``, ``adhoc_search``; ``"multi_label": true``
makes a classification multi-label), its ``metrics``, the Hugging Face configs of its document metadata
(``data.meta``: ``allenai/scirepeval``) and of its labelled examples (``data.test``: ``allenai/scirepeval_test``),
the few-shot settings of three classification tasks and the ``fields`` of the search task. The groups are the
README's "Train" column (Y: in-train, the tasks SciRepEval's multi-task models train on; N: out-of-train) with the
six SciDocs tasks as their own group, as the benchmark's table (BENCHMARKING.md: In-Train, Out-of-Train, SciDocs,
Average) reports them. Two tasks of the README are not in the evaluator's task file and are not here:
Citation Prediction (training data only, no test set) and S2AND (its own data and evaluation, BENCHMARKING.md).

=================================  ==============  ========================  ===============================  =========
task                               type            metrics                   few-shot (sample size, iterations) group
=================================  ==============  ========================  ===============================  =========
Biomimicry                         classification  f1 (binary)               (64, 50), (16, 100)              out
DRSM                               classification  f1_macro                  (64, 50), (24, 100)              out
RELISH                             proximity       ndcg                                                       out
NFCorpus                           adhoc_search    ndcg                                                       out
TREC-CoVID                         adhoc_search    ndcg                                                       out
Paper-Reviewer Matching            proximity       P_5, P_10 (hard and soft)                                  out
Peer Review Score                  regression      kendalltau                                                 out
Max hIndex                         regression      kendalltau                                                 out
Tweet Mentions                     regression      kendalltau                                                 out
SciDocs MAG                        classification  f1_macro                                                   scidocs
SciDocs MeSH                       classification  f1_macro                                                   scidocs
SciDocs Cite                       proximity       map, ndcg                                                  scidocs
SciDocs CoView                     proximity       map, ndcg                                                  scidocs
SciDocs CoCite                     proximity       map, ndcg                                                  scidocs
SciDocs CoRead                     proximity       map, ndcg                                                  scidocs
Same Author Detection              proximity       map                                                        in
Highly Influential Citations       proximity       map                                                        in
Search                             adhoc_search    ndcg                                                       in
Citation Count                     regression      kendalltau                                                 in
Publication Year                   regression      kendalltau                                                 in
Fields of study                    classification  f1_macro, multi-label     (10, 50), (5, 100)               in
MeSH                               classification  f1_macro                                                   in
=================================  ==============  ========================  ===============================  =========
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

CLASSIFICATION, REGRESSION, PROXIMITY, ADHOC_SEARCH = "classification", "regression", "proximity", "adhoc_search"
IN_TRAIN, OUT_OF_TRAIN, SCIDOCS = "in-train", "out-of-train", "scidocs"
GROUPS = (IN_TRAIN, OUT_OF_TRAIN, SCIDOCS)  # BENCHMARKING.md's columns, in its order
META_REPO, TEST_REPO = "allenai/scirepeval", "allenai/scirepeval_test"  # the two Hugging Face datasets
REVIEWER_MATCHING = "Paper-Reviewer Matching"
REVIEWERS_CONFIG = "reviewers"  # allenai/scirepeval_test config of the reviewers' papers (data.reviewers)


@dataclass(frozen=True)
class Task:
    """One line of ``scirepeval_tasks.jsonl``: what is embedded, what is scored and how."""

    name: str
    type: str
    meta_config: str  # data.meta.config: the documents to embed (allenai/scirepeval, split "evaluation")
    test_config: str  # data.test.config: the labelled examples (allenai/scirepeval_test)
    metrics: Tuple[str, ...]
    group: str
    multi_label: bool = False
    few_shot: Tuple[Tuple[int, int], ...] = ()  # (sample_size, iterations)
    fields: Tuple[str, ...] = ("title", "abstract")  # joined by " [SEP] " (eval_datasets.SimpleDataset)
    simple_format: bool = False  # data.simple_format: proximity documents are plain records, not query/candidates

    @property
    def supervised(self) -> bool:
        """Classification and regression: a linear model on the embeddings (``SupervisedEvaluator``)."""
        return self.type in (CLASSIFICATION, REGRESSION)

    @property
    def ir_format(self) -> bool:
        """Documents as ``{"doc_id", "query", "candidates"}`` rows (``eval_datasets.IRDataset``)."""
        return self.type in (PROXIMITY, ADHOC_SEARCH) and not self.simple_format and self.name != REVIEWER_MATCHING


TASKS: Tuple[Task, ...] = (
    Task("Biomimicry", CLASSIFICATION, "biomimicry", "biomimicry", ("f1",), OUT_OF_TRAIN,
         few_shot=((64, 50), (16, 100))),
    Task("DRSM", CLASSIFICATION, "drsm", "drsm", ("f1_macro",), OUT_OF_TRAIN, few_shot=((64, 50), (24, 100))),
    Task("RELISH", PROXIMITY, "relish", "relish", ("ndcg",), OUT_OF_TRAIN),
    Task("NFCorpus", ADHOC_SEARCH, "nfcorpus", "nfcorpus", ("ndcg",), OUT_OF_TRAIN),
    Task("TREC-CoVID", ADHOC_SEARCH, "trec_covid", "trec_covid", ("ndcg",), OUT_OF_TRAIN),
    Task(REVIEWER_MATCHING, PROXIMITY, "paper_reviewer_matching", "paper_reviewer_matching", ("P_5", "P_10"),
         OUT_OF_TRAIN),
    Task("Peer Review Score", REGRESSION, "peer_review_score_hIndex", "peer_review_score", ("kendalltau",),
         OUT_OF_TRAIN),
    Task("Max hIndex", REGRESSION, "peer_review_score_hIndex", "hIndex", ("kendalltau",), OUT_OF_TRAIN),
    Task("Tweet Mentions", REGRESSION, "tweet_mentions", "tweet_mentions", ("kendalltau",), OUT_OF_TRAIN),
    Task("SciDocs MAG", CLASSIFICATION, "scidocs_mag_mesh", "scidocs_mag", ("f1_macro",), SCIDOCS),
    Task("SciDocs MeSH", CLASSIFICATION, "scidocs_mag_mesh", "scidocs_mesh", ("f1_macro",), SCIDOCS),
    Task("SciDocs Cite", PROXIMITY, "scidocs_view_cite_read", "scidocs_cite", ("map", "ndcg"), SCIDOCS,
         simple_format=True),
    Task("SciDocs CoView", PROXIMITY, "scidocs_view_cite_read", "scidocs_view", ("map", "ndcg"), SCIDOCS,
         simple_format=True),
    Task("SciDocs CoCite", PROXIMITY, "scidocs_view_cite_read", "scidocs_cocite", ("map", "ndcg"), SCIDOCS,
         simple_format=True),
    Task("SciDocs CoRead", PROXIMITY, "scidocs_view_cite_read", "scidocs_read", ("map", "ndcg"), SCIDOCS,
         simple_format=True),
    Task("Same Author Detection", PROXIMITY, "same_author", "same_author", ("map",), IN_TRAIN),
    Task("Highly Influential Citations", PROXIMITY, "high_influence_cite", "high_influence_cite", ("map",), IN_TRAIN),
    Task("Search", ADHOC_SEARCH, "search", "search", ("ndcg",), IN_TRAIN, fields=("title", "abstract", "venue", "year")),
    Task("Citation Count", REGRESSION, "cite_count", "cite_count", ("kendalltau",), IN_TRAIN),
    Task("Publication Year", REGRESSION, "pub_year", "pub_year", ("kendalltau",), IN_TRAIN),
    Task("Fields of study", CLASSIFICATION, "fos", "fos", ("f1_macro",), IN_TRAIN, multi_label=True,
         few_shot=((10, 50), (5, 100))),
    Task("MeSH", CLASSIFICATION, "mesh_descriptors", "mesh_descriptors", ("f1_macro",), IN_TRAIN),
)
TASKS_BY_NAME: Dict[str, Task] = {task.name: task for task in TASKS}


def select_tasks(tasks: object) -> Tuple[Task, ...]:
    """``--tasks``: ``all``, or task names (comma-separated or a list; case-insensitive), in the table's order.

    Raises ValueError naming the unknown ones and the valid names.
    """
    if tasks is None or (isinstance(tasks, str) and tasks.strip().lower() == "all"):
        return TASKS
    names = [str(t) for t in tasks] if isinstance(tasks, (list, tuple)) else str(tasks).split(",")
    wanted = {name.strip().lower() for name in names if name.strip()}
    known = {task.name.lower() for task in TASKS}
    unknown = sorted(wanted - known)
    if unknown or not wanted:
        raise ValueError(f"unknown task {', '.join(map(repr, unknown)) or '(none given)'}; choose 'all' or from: "
                         f"{', '.join(task.name for task in TASKS)}")
    return tuple(task for task in TASKS if task.name.lower() in wanted)


def task_named(name: str) -> Optional[Task]:
    """The task of that exact name, or None."""
    return TASKS_BY_NAME.get(name)
