"""PBG's link-prediction protocol for embeddings that PBG did not train (ProNE, FastRP, ...).

The embeddings are written as a one-version PBG checkpoint over a PBG import of the same train/test
edges (entities in the import's order), so :func:`scincl.graph.link_prediction.evaluate` ranks
each test edge against exactly the negatives it uses for a PBG run of that config: the numbers are
comparable with ``train_biggraph``'s ``link_prediction.json`` row for row.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Dict, Mapping, Sequence, Union

import numpy as np

from scincl.errors import InputError
from scincl.graph.link_prediction import evaluate, evaluate_random_baseline
from scincl.graph.pbg_compat import import_torchbiggraph
from scincl.graph.id_table import IdTable, read_id_series
from scincl.io import PBG_ENTITY_TYPE, PathLike, entity_names_path


def write_checkpoint(config_dict: Mapping[str, Any], ids: Union[Sequence[str], Any], vectors: np.ndarray,
                     checkpoint_path: PathLike) -> None:
    """``vectors`` (row i = paper ``ids[i]``; a list or a polars String Series) as version 1 of a PBG checkpoint
    in the import's entity order."""
    import json

    import_torchbiggraph()
    import torch
    from torchbiggraph.checkpoint_storage import FileCheckpointStorage

    table = IdTable(ids)  # no Python object per paper (issue 45)
    storage = FileCheckpointStorage(str(checkpoint_path))
    storage.prepare()
    parts = int(config_dict["entities"][PBG_ENTITY_TYPE].get("num_partitions", 1))
    for part in range(parts):
        names = read_id_series(entity_names_path(config_dict["entity_path"], PBG_ENTITY_TYPE, part))
        found = table.find(names)
        missing = np.flatnonzero(found < 0)
        if len(missing):
            raise InputError(f"{len(missing)} imported papers have no embedding (e.g. {names[int(missing[0])]})")
        rows = np.asarray(vectors[found], dtype=np.float32)
        storage.save_entity_partition(1, PBG_ENTITY_TYPE, part, torch.from_numpy(rows), None, {})
    storage.save_model(1, {}, None, {})
    storage.save_config(json.dumps(dict(config_dict)))
    storage.save_version(1)


def evaluate_embeddings(config_dict: Mapping[str, Any], ids: Sequence[str], vectors: np.ndarray, test_edge_path: str,
                        seed: int = 0, random_baseline: bool = True) -> Dict[str, Dict[str, float]]:
    """``{"trained": metrics[, "random": metrics]}`` of ``vectors`` under PBG's protocol (config's comparator)."""
    config = dict(config_dict, dimension=int(vectors.shape[1]))
    parent = Path(config["entity_path"]).parent
    with tempfile.TemporaryDirectory(prefix=".embedder_checkpoint_", dir=parent) as tmp:
        write_checkpoint(config, ids, vectors, tmp)
        config["checkpoint_path"] = tmp
        rows = {"trained": evaluate(config, test_edge_path, seed=seed, checkpoint_path=tmp)}
        if random_baseline:
            rows["random"] = evaluate_random_baseline(config, test_edge_path, seed=seed)
    return rows
