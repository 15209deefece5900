"""Shared fixtures: the real embedder, and real Chroma indexes in temporary folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _isolate_cache() -> None:
    """Tests keep their lexical-index snapshots apart, but share the model files (the
    assembled LLM, the embedder's ONNX export)."""
    from rag.settings import models_dir

    os.environ.setdefault("RAG_MODELS_DIR", str(models_dir()))
    os.environ["RAG_CACHE_DIR"] = str(Path(__file__).parent.parent / ".cache" / "test-rag")


_isolate_cache()

import rag  # noqa: E402,F401  (applies the offline switches before anything else imports)
from rag.answer.generators import Generator  # noqa: E402
from rag.assistant import Assistant  # noqa: E402
from rag.index.embedder import Embedder  # noqa: E402
from rag.settings import Settings  # noqa: E402

BUNDLED = Path(__file__).parent.parent / "rag" / "data" / "icml2026_abstracts.txt"


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="session")
def local_llm_file() -> Path:
    """The local LLM's GGUF file, joined from its packages on first use (a gigabyte), for
    the tests that run it; commands these tests start find it through the environment."""
    from rag.models import local_llm_path

    path = local_llm_path()
    os.environ.setdefault("RAG_LLM__LOCAL__MODEL_PATH", str(path))
    return path


def make_assistant(
    index_dir: Path,
    embedder: Embedder,
    backend: str = "extractive",
    generators: dict[str, Generator] | None = None,
    **overrides: object,
) -> Assistant:
    settings = Settings().with_overrides(
        **{"store.index_dir": index_dir, "llm.backend": backend, **overrides}
    )
    from rag.index.store import PaperStore

    return Assistant(settings, PaperStore(settings.store), embedder, generators=generators)


@pytest.fixture(scope="session")
def bundled_index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """A real index of the bundled ICML 2026 abstracts, built once per test session."""
    index_dir = tmp_path_factory.mktemp("bundled-index")
    make_assistant(index_dir, embedder).ingest([BUNDLED])
    return index_dir


@pytest.fixture()
def bundled(bundled_index: Path, embedder: Embedder) -> Assistant:
    return make_assistant(bundled_index, embedder)
