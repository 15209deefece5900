"""Environment switches that keep every library off the network (set before they import)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def apply() -> None:
    defaults = {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "ANONYMIZED_TELEMETRY": "False",
        "TOKENIZERS_PARALLELISM": "false",
    }
    for key, value in defaults.items():
        os.environ.setdefault(key, value)
    for key in ("NO_PROXY", "no_proxy"):
        hosts = [h for h in os.environ.get(key, "").split(",") if h]
        os.environ[key] = ",".join(dict.fromkeys([*hosts, "127.0.0.1", "localhost"]))
    spec = importlib.util.find_spec("llama_index")
    if spec and spec.submodule_search_locations and "TIKTOKEN_CACHE_DIR" not in os.environ:
        root = Path(next(iter(spec.submodule_search_locations)))
        os.environ["TIKTOKEN_CACHE_DIR"] = str(root / "core" / "_static" / "tiktoken_cache")
