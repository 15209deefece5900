"""Warm retrieval latency in one process, and the local LLM's time to first token.

    .venv/bin/python bench/query.py --index-dir bench/out/needle-index
    .venv/bin/python bench/query.py --index-dir bench/out/needle-index --ttft 3
    .venv/bin/python bench/query.py --dense-chunks 28942     # the dense search alone

Hybrid search (k=5) over ~100 distinct questions, after one warm-up search: p50 and p95
(targets 15 ms and 30 ms), then the same questions step by step (version check, question
embedding, BM25, exact dense search over the snapshot's vectors, and the fusion: features
and model, or the fixed weight with ``RAG_RETRIEVAL__FUSION=score``) to show where the time
goes, and the same searches again with the reranker and without it, alternating.
``--chroma-url`` measures a Chroma server instead of the folder. ``--ttft N``
compares the local LLM's time to first token through rag (``rag.answer.llm.local_llm`` +
``stream_chat``) with llama.cpp's own ``create_chat_completion(stream=True)`` on the same
messages (target: within 1.1x).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _util import load_average, peak_rss_mb, percentile, questions, summary_ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path)
    parser.add_argument("--chroma-url")
    parser.add_argument("--n", type=int, default=100, help="questions (default 100)")
    parser.add_argument("--ttft", type=int, default=0, help="LLM prompts to time (default 0)")
    parser.add_argument(
        "--dense-chunks",
        type=int,
        default=0,
        help="also time the exact dense search over N "
        "random memory-mapped vectors (28942: the 23k needle index's size)",
    )
    args = parser.parse_args(argv)
    if args.dense_chunks:
        _dense_only(args.dense_chunks)

    if not args.index_dir and not args.chroma_url:
        return 0
    from rag import Assistant

    assistant = Assistant.open(index_dir=args.index_dir, chroma_url=args.chroma_url)
    qs = questions(args.n)
    started = time.perf_counter()
    assistant.search("a question outside the timed set", 5)
    stats = assistant.stats()
    print(
        f"{stats.location}: {stats.papers} papers, {stats.chunks} chunks; first search "
        f"(loads the snapshot) {time.perf_counter() - started:.2f}s; {load_average()}"
    )
    settings = assistant.settings.retrieval
    reranking, settings.rerank = settings.rerank, False
    latencies = [_timed(lambda q=q: assistant.search(q, 5)) for q in qs]
    embedder = assistant.embedder
    print(f"hybrid search, k=5: {summary_ms(latencies)}  (targets: p50 15 ms, p95 30 ms)")
    _reranked(assistant, qs)
    settings.rerank = reranking
    print(f"embedder: {embedder.runtime} {embedder.precision}; peak memory {peak_rss_mb():.0f} MiB")
    _steps(assistant, qs)
    if args.ttft:
        _ttft(assistant, qs, args.ttft)
    return 0


def _reranked(assistant: Any, qs: list[str]) -> None:
    """The same searches with the reranker on, alternating with it off, question by
    question (each question is reranked once: the reranker keeps the pairs it has read)."""
    from rag.evaluation import rerank

    settings = assistant.settings.retrieval
    if not (rerank.model().folder / "manifest.json").is_file():
        return
    settings.rerank = True
    assistant.search("a warm-up question for the reranker", 5)
    times: dict[bool, list[float]] = {False: [], True: []}
    for i, q in enumerate(qs):
        for reranked in (i % 2 == 0, i % 2 == 1):  # which goes first (embeds q) alternates
            settings.rerank = reranked
            times[reranked].append(_timed(lambda q=q: assistant.search(q + " ", 5)))
    off, on = times[False], times[True]
    print(f"  the same, alternating: without the reranker {summary_ms(off)}; "
          f"reranking the top {settings.rerank_depth}: {summary_ms(on)} "
          "(targets with it: p50 150 ms, p95 300 ms)")  # fmt: skip


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _steps(assistant: Any, qs: list[str]) -> None:
    """Each step of a search on its own, over the same questions."""
    from rag.evaluation import by_score, dense_top, parse_filters

    retriever, store = assistant.retriever, assistant.store
    corpus = retriever.corpus
    steps: dict[str, list[float]] = {"version check": [], "embed question": []}
    steps.update({"BM25": [], "dense (exact)": [], "filters (parse + mask)": []})
    steps["fusion (features + model)"] = []
    for q in qs:
        steps["version check"].append(_timed(store.version))
        # embed, not embed_query: the timed searches above left these questions in its cache
        steps["embed question"].append(_timed(lambda q=q: assistant.embedder.embed([q])))
        started = time.perf_counter()
        filters, query = parse_filters(q, corpus.venues)
        mask = retriever.mask(corpus, filters)
        steps["filters (parse + mask)"].append(time.perf_counter() - started)
        steps["BM25"].append(_timed(lambda q=query, m=mask: corpus.lexical(q, 50, m)))
        vector = assistant.embedder.embed_query(query)
        dense = lambda v=vector, m=mask: dense_top(corpus.vectors, v, 50, m)  # noqa: E731
        steps["dense (exact)"].append(_timed(dense))
        stage = retriever.first_stage(query, filters, "hybrid", corpus, _done(vector))
        fuse = lambda s=stage, q=query: by_score(s, 5, q, retriever.settings)  # noqa: E731
        steps["fusion (features + model)"].append(_timed(fuse))
    for name, values in steps.items():
        print(f"  {name:24s} {summary_ms(values)}")


def _done(value: Any) -> Any:
    """A finished future holding ``value``."""
    from concurrent.futures import Future

    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _dense_only(n: int, dim: int = 384) -> None:
    """The exact dense search over n unit vectors in a memory-mapped file, as a snapshot
    holds them: an index of that size without building one."""
    import tempfile

    import numpy as np
    from threadpoolctl import threadpool_limits

    from rag.evaluation import dense_top

    threadpool_limits(1, user_api="blas")  # as a search runs it (rag.assistant.limit_blas)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as folder:
        np.save(Path(folder) / "vectors.npy", vectors)
        mapped = np.asarray(np.load(Path(folder) / "vectors.npy", mmap_mode="r"))
        queries = rng.normal(size=(200, dim)).astype(np.float32)
        times = [_timed(lambda q=q: dense_top(mapped, q, 50, None)) for q in queries]
    print(f"exact dense search, {n} chunks (random vectors): {summary_ms(times)}; {load_average()}")


def _ttft(assistant: Any, qs: list[str], n: int) -> None:
    """Time to first token, rag's path against llama.cpp's own, alternating, fresh prompts."""
    from llama_cpp import Llama

    from rag.evaluation import answering as answer
    from rag.evaluation import local_llm, stream_chat

    settings = assistant.settings.llm
    ours = local_llm(settings)
    theirs = Llama(
        model_path=ours.model_path,
        n_ctx=ours.n_ctx,
        n_threads=ours.n_threads,
        verbose=False,
    )
    ours.llama  # noqa: B018 - both models loaded before timing
    rag_s, cpp_s = [], []
    for q in qs[1 : n + 1]:  # a new prompt each time: no reuse of the previous one's cache
        hits = assistant.search(q, 5)
        scored = answer.score_hits(q, hits, assistant.sentence_vectors)
        sources = answer.build_sources(scored, assistant.sentence_vectors)
        messages = answer.build_messages(q, sources)
        cpp_s.append(_first(_llama_stream(theirs, messages, ours.max_tokens)))
        rag_s.append(_first(stream_chat(ours, messages)))
        print(f"  {q[:50]!r}: rag {rag_s[-1]:.2f}s, llama.cpp {cpp_s[-1]:.2f}s", flush=True)
    ratio = percentile(rag_s, 50) / percentile(cpp_s, 50)
    print(
        f"time to first token, median of {n}: rag {percentile(rag_s, 50):.2f}s, llama.cpp "
        f"{percentile(cpp_s, 50):.2f}s, ratio {ratio:.3f}  (target <= 1.1)"
    )


def _llama_stream(llama: Any, messages: list[dict[str, str]], max_tokens: int) -> Iterator[str]:
    for piece in llama.create_chat_completion(
        messages=messages, max_tokens=max_tokens, temperature=0.0, stream=True
    ):
        delta = piece["choices"][0]["delta"].get("content")
        if delta:
            yield delta


def _first(pieces: Iterator[str]) -> float:
    """Seconds until the first text piece; the generation is then stopped."""
    started = time.perf_counter()
    next(pieces, None)
    elapsed = time.perf_counter() - started
    getattr(pieces, "close", lambda: None)()  # a generator: stops llama.cpp
    return elapsed


if __name__ == "__main__":
    sys.exit(main())
