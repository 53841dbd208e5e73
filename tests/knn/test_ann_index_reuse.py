"""run_specter never mines against another corpus's FAISS index (issue 19).

``sbin/common.sh`` used to pass one ``ANN_INDEX_PATH`` to every run, so ``run_specter --seed 3``
reused the index of the seed-0 corpus (the ann stage found the file) and mined from it without a
word. The triples stage now checks that an existing index covers the run's corpus ids.
"""
from __future__ import annotations

import pytest

from scincl.errors import InputError
from scincl.io import read_id_list, write_id_list


def test_an_index_of_another_corpus_is_refused(demo_biggraph, tmp_path):
    from scincl.pipeline.scincl_plan import run_specter

    graph_ids = read_id_list(demo_biggraph["dir"] / "entity_names_paper_id_0.json")
    shared_index = tmp_path / "shared.Flat.faiss"  # what a fixed ANN_INDEX_PATH did for every seed
    flags = dict(graph_paper_ids_path=str(demo_biggraph["dir"] / "entity_names_paper_id_0.json"),
                 graph_embeddings_path=str(demo_biggraph["dir"] / "embeddings.h5"), ann_index_path=str(shared_index),
                 hard_negatives_k_min=98, hard_negatives_k_max=100, workers=1, skip_metadata=True, skip_train=True)
    for name, corpus in (("seed_0", graph_ids[::2]), ("seed_3", graph_ids[1::2])):  # two corpora, as two seeds
        write_id_list(tmp_path / f"{name}.corpus.json", corpus)
        write_id_list(tmp_path / f"{name}.queries.json", corpus[:20])
    run_specter(str(tmp_path / "seed_0"), train_s2orc_paper_ids=str(tmp_path / "seed_0.corpus.json"),
                train_query_s2orc_paper_ids=str(tmp_path / "seed_0.queries.json"), **flags)
    assert read_id_list(f"{shared_index}.paper_ids.json") == graph_ids[::2]
    assert (tmp_path / "seed_0" / "train_triples.csv").exists()
    with pytest.raises(InputError, match="the existing index was made differently: it holds .* papers, not the .* of this corpus"):
        run_specter(str(tmp_path / "seed_3"), train_s2orc_paper_ids=str(tmp_path / "seed_3.corpus.json"),
                    train_query_s2orc_paper_ids=str(tmp_path / "seed_3.queries.json"), **flags)
    assert not (tmp_path / "seed_3" / "train_triples.csv").exists()
