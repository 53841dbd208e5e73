"""PyTorch-BigGraph config modules: find them, load them, override keys, validate, relocate.

A config is a module with ``get_torchbiggraph_config()`` (``biggraph_configs/*.py``); overrides use
PBG's own ``key=value`` syntax (nested keys with dots, lists with commas), as ``-p`` does for
``torchbiggraph_train``. Errors become one-line :class:`~scincl.errors.InputError`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from scincl.errors import InputError
from scincl.graph.pbg_compat import import_torchbiggraph
from scincl.io import PathLike
from scincl.settings.run import BIGGRAPH_CONFIGS

CONFIG_DIR = BIGGRAPH_CONFIGS  # the bundled configs (scincl/settings/run.py)

Overrides = Union[None, str, Sequence[str], Mapping[str, Any]]


def resolve_config_path(config: PathLike) -> Path:
    """A config file path, or the name of a bundled config (``demo`` -> ``biggraph_configs/demo.py``)."""
    path = Path(config)
    if path.is_file():
        return path
    candidate = CONFIG_DIR / (path.name if path.suffix == ".py" else f"{path.name}.py")
    if candidate.is_file():
        return candidate
    bundled = sorted(p.stem for p in CONFIG_DIR.glob("*.py"))
    raise InputError(f"no BigGraph config file or bundled config named {str(config)!r} (bundled: {', '.join(bundled)})")


def normalize_overrides(overrides: Overrides) -> List[str]:
    """``key=value`` strings from a dict, a list, or one string of space-separated ``key=value`` pairs."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        items = [f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}" for k, v in overrides.items()]
    elif isinstance(overrides, str):
        items = overrides.split()
    else:
        items = [part for item in overrides for part in str(item).split()]
    for item in items:
        if "=" not in item:
            raise InputError(f"config override {item!r} is not of the form key=value")
    return items


def load_config_dict(config: PathLike, overrides: Overrides = None) -> Dict[str, Any]:
    """The raw PBG config dict of a config module, with ``key=value`` overrides applied (PBG syntax)."""
    import_torchbiggraph()
    from torchbiggraph.config import ConfigFileLoader, override_config_dict

    path = resolve_config_path(config)
    try:
        config_dict = ConfigFileLoader().load_raw_config(str(path))
    except Exception as exc:  # a broken user config module: report it in one line
        raise InputError(f"cannot load BigGraph config ({type(exc).__name__}: {exc})", path=path) from None
    try:
        return override_config_dict(config_dict, normalize_overrides(overrides))
    except RuntimeError as exc:
        raise InputError(f"{exc} (unknown key or wrong value type)", path=path) from None


def parse_config(config_dict: Mapping[str, Any]):
    """Validate a config dict with PBG's schema -> ``ConfigSchema`` (schema errors -> InputError)."""
    import_torchbiggraph()
    from torchbiggraph.config import ConfigSchema

    try:
        return ConfigSchema.from_dict(dict(config_dict))
    except Exception as exc:
        raise InputError(f"invalid BigGraph config: {exc}") from None


def with_output_dir(config_dict: Dict[str, Any], output_dir: PathLike) -> Dict[str, Any]:
    """Point entity_path, edge_paths and checkpoint_path of a config into ``output_dir``."""
    out = dict(config_dict)
    graph_dir = Path(output_dir) / "graph"
    names = ["train_partitioned", "test_partitioned"][: max(1, len(config_dict.get("edge_paths", [])))]
    out["entity_path"] = str(graph_dir)
    out["edge_paths"] = [str(graph_dir / name) for name in names]
    out["checkpoint_path"] = str(Path(output_dir) / "checkpoints")
    return out


def load_config_dict_overrides(config_dict: Dict[str, Any], overrides: Overrides, config_path: Optional[Path] = None) -> Dict[str, Any]:
    """Apply ``key=value`` overrides to an already loaded config dict."""
    import_torchbiggraph()
    from torchbiggraph.config import override_config_dict

    try:
        return override_config_dict(dict(config_dict), normalize_overrides(overrides))
    except RuntimeError as exc:
        raise InputError(f"{exc} (unknown key or wrong value type)", path=config_path) from None
