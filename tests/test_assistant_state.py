"""What lives as long as an assistant is the assistant's: its sentence vectors, its threads,
the BLAS limit it sets; no module of rag holds a thread pool, a cache or a lock."""

from __future__ import annotations

import importlib
import pkgutil
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Executor
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import rag
from rag.assistant import Assistant
from rag.index.embedder import Embedder
from rag.index.store import PaperStore
from rag.settings import Settings
from rag.text.chunking import split_sentences

from .conftest import make_assistant

HELD = (
    Executor,
    weakref.WeakKeyDictionary,
    OrderedDict,
    type(threading.Lock()),
    type(threading.RLock()),
)


def _assistant(index_dir: Path, embedder: Embedder, **dotted: object) -> Assistant:
    settings = Settings().with_overrides(
        **{"store.index_dir": index_dir, "llm.backend": "extractive", **dotted}
    )
    return Assistant(settings, PaperStore(settings.store), embedder)


def test_no_module_of_rag_holds_a_thread_pool_a_cache_or_a_lock() -> None:
    held = []
    names = [info.name for info in pkgutil.walk_packages(rag.__path__, "rag.")]
    assert "rag.answer.handlers" in names  # every layer's modules, not only the top ones
    for module_name in names:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if isinstance(value, HELD):
                held.append(f"{module_name}.{name}")
    assert held == []


def test_two_assistants_keep_their_own_sentence_vectors(
    bundled_index: Path, embedder: Embedder
) -> None:
    first = make_assistant(bundled_index, embedder)
    second = make_assistant(bundled_index, embedder)  # the same embedder, even
    assert first.sentence_vectors is not second.sentence_vectors
    answer = first.ask("What does the CSR paper report?")
    assert answer.hits
    sentences = split_sentences(answer.hits[0].paper.abstract)
    assert all(s in first.sentence_vectors for s in sentences), "the sentences it scored"
    assert not any(s in second.sentence_vectors for s in sentences)


def test_the_sentence_cache_setting_bounds_what_is_kept(
    bundled_index: Path, embedder: Embedder
) -> None:
    assert _assistant(bundled_index, embedder).sentence_vectors.size == 50_000
    assistant = _assistant(bundled_index, embedder, **{"retrieval.sentence_cache": 2})
    assert assistant.sentence_vectors.size == 2
    sentences = ["Models are merged.", "Graphs are sparse.", "Proteins fold."]
    vectors = assistant.sentence_vectors(sentences)
    assert np.allclose(vectors, embedder.embed(sentences), atol=1e-5)
    kept = [s in assistant.sentence_vectors for s in sentences]
    assert kept == [False, True, True], "the least recently used goes first"
    again = assistant.sentence_vectors(sentences[1:])
    assert np.array_equal(again, vectors[1:]), "kept vectors come back as they were"


def test_closing_an_assistant_stops_its_threads_and_it_still_answers(bundled_index: Path) -> None:
    before = set(threading.enumerate())
    texts = [f"Paper {i} studies {'model merging ' * (i % 7 + 1)}." for i in range(40)]
    with Assistant.open(index_dir=bundled_index, llm="extractive") as assistant:
        hits = assistant.search("model merging")
        assistant.embedder.embed(texts)  # several batches: run on its threads
        started = [
            t
            for t in threading.enumerate()
            if t not in before and t.name.startswith(("rag-query", "rag-embed"))
        ]
        names = {t.name.split("_")[0] for t in started}
        assert names == {"rag-query", "rag-embed"}
    assert not any(t.is_alive() for t in started)
    assert assistant.search("model merging") == hits  # a later call starts them again
    assistant.close()


def test_making_an_assistant_sets_the_blas_threads(bundled_index: Path, embedder: Embedder) -> None:
    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    threadpool_limits(2, user_api="blas")
    _assistant(bundled_index, embedder, **{"retrieval.blas_threads": 0})
    untouched = blas_threads()
    _assistant(bundled_index, embedder)  # the default: one
    assert blas_threads() == {1}
    assert untouched == {2}
