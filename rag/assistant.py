"""The composition root: one place builds the parts from settings; the rest receives them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Unpack

from .answer import answering, lists, trends
from .answer.generators import Generator, make_generator
from .answer.handlers import HANDLERS, Asked, Handler
from .answer.judge import Judge, ModelJudge
from .answer.question import parse_filters, rewrite_followup
from .answer.topics import Topic, TopicCache, selection_key, topics_of
from .answer.verifier import Verifier
from .errors import ConfigError, InputError
from .index.embedder import Embedder
from .index.snapshot import Corpus
from .index.store import PaperStore, describe
from .ingest.pipeline import IngestReport, Progress, ingest
from .retrieve.search import FILTER_ARGS, FilterArgs, Filters, Retriever, checked_k, search_mode
from .settings import Settings, backend_name, get_settings
from .text.sanitize import visible
from .types import Answer, Hit, Paper, SearchMode, Step


@dataclass(frozen=True)
class IndexStats:
    """What an index holds."""

    location: str
    papers: int
    chunks: int
    venues: dict[str, int]
    years: dict[int, int]
    embedder: str
    chunk_tokens: int


SUGGESTION_TOPICS_MAX = 3000  # a larger index suggests a theme only once its themes are cached


def _topic(topic: object) -> str:
    topic = _asked(topic)
    if not topic.strip():
        raise InputError('the topic is empty. Name what to count, such as "graph neural networks".')
    return topic


def _asked(question: object) -> str:
    """A question as text, without the characters that show nothing."""
    if not isinstance(question, str):
        raise InputError(f"the question must be text; got {type(question).__name__}.")
    return visible(question)


class Assistant:
    """Search the indexed papers and answer questions about them, citing them.

    >>> with Assistant.open(index_dir="index_store", llm="extractive") as a:
    ...     a.ask("Which papers tackle model merging?").citations

    It holds what lives as long as it does: the snapshot of the index (``retriever``), the
    vectors of abstract sentences already seen (``sentence_vectors``), the generators built
    (``generators``: backend name -> ``rag.answer.generators.Generator``, to pass one's own), and
    the threads that embed (``close`` stops them). Making one sets how many threads numpy's
    BLAS uses in the process (``retrieval.blas_threads``).
    """

    def __init__(
        self,
        settings: Settings,
        store: PaperStore,
        embedder: Embedder,
        generators: dict[str, Generator] | None = None,
        handlers: Sequence[Handler] | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.retriever = Retriever(store, embedder, settings.retrieval)
        self.sentence_vectors = answering.SentenceVectors(
            embedder, settings.retrieval.sentence_cache
        )
        limit_blas(settings.retrieval.blas_threads)
        # loaded on first use: commands that do not answer never read it
        reader = (
            Verifier() if settings.checks.verifier or settings.retrieval.read_sentences else None
        )
        self.verifier = reader if settings.checks.verifier else None
        self.reader = reader if settings.retrieval.read_sentences else None
        self._generators: dict[str, Generator] = dict(generators or {})
        self.handlers = tuple(HANDLERS if handlers is None else handlers)
        self._generators_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        index_dir: str | Path | None = None,
        chroma_url: str | None = None,
        llm: str | None = None,
        **overrides: Any,
    ) -> Assistant:
        """Build an assistant from settings (file and environment), with overrides.

        ``overrides`` take dotted names, e.g. ``**{"retrieval.k": 8}``.
        """
        settings = (settings or get_settings()).with_overrides(
            **{
                "store.index_dir": index_dir,
                "store.chroma_url": chroma_url,
                "llm.backend": llm,
                **overrides,
            }
        )
        return cls(settings, PaperStore(settings.store), Embedder(settings.embedder))

    def close(self) -> None:
        """Stop the threads that embed questions and batches, once those running finish.
        Nothing else is let go: a later call starts them again."""
        self.retriever.close()
        self.embedder.close()

    def __enter__(self) -> Assistant:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the index -------------------------------------------------------------------------
    def ingest(
        self, paths: Iterable[str | Path], *, progress: Progress | None = None, **options: Any
    ) -> IngestReport:
        """Add paper lists to the index (see ``rag.ingest.pipeline.ingest`` for the options)."""
        return ingest(
            [Path(p) for p in paths], self.store, self.embedder, progress=progress, **options
        )

    def stats(self) -> IndexStats:
        corpus = self.retriever.corpus
        venues: dict[str, int] = {}
        years: dict[int, int] = {}
        for p in corpus.papers.values():
            venues[p.venue or "?"] = venues.get(p.venue or "?", 0) + 1
            if p.year is not None:
                years[p.year] = years.get(p.year, 0) + 1
        meta = self.store.metadata()
        return IndexStats(
            location=describe(self.settings.store),
            papers=len(corpus.papers),
            chunks=len(corpus.chunk_ids),
            venues=dict(sorted(venues.items())),
            years=dict(sorted(years.items())),
            embedder=str(meta.get("embedder", "")),
            chunk_tokens=int(meta.get("chunk_tokens", 0)),
        )

    def papers(self) -> list[Paper]:
        """Every indexed paper, by venue, year and title."""
        papers = self.retriever.corpus.papers.values()
        return sorted(papers, key=lambda p: (p.venue, p.year or 0, p.title.lower()))

    # -- searching ---------------------------------------------------------------------------
    def search(
        self,
        question: str,
        k: int | None = None,
        *,
        mode: SearchMode = "hybrid",
        parse: bool = True,
        min_relevance: float | None = None,
        **filters: Unpack[FilterArgs],
    ) -> list[Hit]:
        """Papers for a question, one hit per paper, best first.

        ``mode``: "hybrid" (both sides, fused), "bm25" or "dense". Filters given here win
        over filters named in the question (``parse=False`` to ignore the latter).
        ``min_relevance``: leave out papers none of whose abstract sentences reaches this
        cosine similarity to the question (unless it names them).
        """
        question = _asked(question)
        if not question.strip():
            raise InputError("the question is empty. Type a question about the papers.")
        k = checked_k(k, self.settings.retrieval.k)
        mode = search_mode(mode)
        # embedding the question (the slowest step) starts at once, on another core; it is
        # used unless parsing takes filter words out of the question
        early = None if mode == "bm25" else self.retriever.embed_later(question)
        corpus = self.retriever.corpus  # one version check per search
        chosen, query = self._filters(question, parse, corpus, **filters)
        embedding = early if query == question else None
        hits = self.retriever.search(query, k, chosen, mode, corpus, embedding)
        if min_relevance is None:
            return hits
        return lists.above(query, hits, self.sentence_vectors, min_relevance)

    def as_retriever(self, k: int | None = None, **filters: Unpack[FilterArgs]) -> Any:
        """This index as a llama-index ``BaseRetriever`` (``rag.llama_retriever``): each
        ``search`` hit as a ``NodeWithScore`` holding the abstract and the paper's fields.
        ``filters`` as for ``search``."""
        from .llama_retriever import PaperRetriever

        return PaperRetriever(self, checked_k(k, self.settings.retrieval.k), **filters)

    def find_all(
        self,
        question: str,
        *,
        parse: bool = True,
        judge: Judge | None = None,
        **filters: Unpack[FilterArgs],
    ) -> lists.PaperList:
        """Every paper relevant to a list question ("Which papers ...", "How many papers
        ..."), within the filters (as for ``search``), best first, each with the sentence of
        its abstract that says why; not the top k. ``judge`` (``judge(backend)``): the
        model that decides which of the closest candidates are asked for; None: the
        cosine-and-words bars."""
        question = _asked(question)
        if not question.strip():
            raise InputError("the question is empty. Ask which papers do something.")
        corpus = self.retriever.corpus
        found, query = self._filters(question, parse, corpus, **filters)
        vectors = self.retriever.vectors(corpus)
        return lists.find_all(corpus, self.sentence_vectors, vectors, query, found, judge=judge)

    # -- the corpus as data ------------------------------------------------------------------
    def trend(
        self, topic: str, *, parse: bool = True, **filters: Unpack[FilterArgs]
    ) -> trends.Trend:
        """How many indexed papers are on ``topic`` each year, beside all papers indexed that
        year (``topic``: a bare topic, or a question such as "How has work on GANs changed
        from 2014 to 2018?", whose years and venue become filters); ``filters`` as for
        ``search``. Membership is the complete-list judgement (``find_all``)."""
        corpus = self.retriever.corpus
        chosen, query = self._filters(_topic(topic), parse, corpus, **filters)
        found = self.members(trends.trend_topic(query) if parse else query, chosen, corpus)
        return trends.trend(topic, found, corpus)

    def authors(
        self, topic: str, n: int = 10, *, parse: bool = True, **filters: Unpack[FilterArgs]
    ) -> tuple[trends.Members, list[trends.AuthorCount]]:
        """The ``n`` authors with the most papers on ``topic`` ("Who works on X?" or a bare
        topic), names matched exactly as stored; and every paper on the topic."""
        corpus = self.retriever.corpus
        chosen, query = self._filters(_topic(topic), parse, corpus, **filters)
        found = self.members(trends.authors_topic(query) if parse else query, chosen, corpus)
        return found, trends.by_author(found, checked_k(n, 10))

    def venues(
        self, topic: str, venues: Sequence[str], **filters: Unpack[FilterArgs]
    ) -> tuple[trends.Members, list[trends.VenueCount], list[int]]:
        """Papers on ``topic`` at each of ``venues``, beside all their indexed papers, over
        the years all of them have papers indexed (returned last)."""
        corpus = self.retriever.corpus
        if isinstance(venues, str) or not all(isinstance(v, str) for v in venues):
            raise InputError(f"venues must be a list of venue names; got {venues!r}.")
        known = {v.lower(): v for v in corpus.venues}
        unknown = [v for v in venues if v.lower() not in known]
        if unknown or len(venues) < 2:
            raise InputError(
                f"give two or more indexed venues to compare ({', '.join(corpus.venues)}); "
                f"got {', '.join(venues) or 'none'}."
            )
        chosen, query = self._filters(_topic(topic), False, corpus, **filters)
        found = self.members(query, chosen, corpus)
        return found, *trends.by_venue(found, corpus, [known[v.lower()] for v in venues])

    def trend_answer(self, result: trends.Trend) -> Answer:
        """A trend (``trend``) as a checked answer: the counts per year, then cited example
        papers per period."""
        return _final(trends.trend_answer(result, self.sentence_vectors, {}))

    def authors_answer(
        self, topic: str, found: trends.Members, ranked: list[trends.AuthorCount]
    ) -> Answer:
        """Authors (``authors``) as a checked answer: each with their cited papers."""
        return _final(trends.authors_answer(topic, found, ranked, self.sentence_vectors, {}))

    def members(self, topic: str, chosen: Filters, corpus: Corpus | None = None) -> trends.Members:
        """Every paper on ``topic`` within ``chosen`` (the complete-list judgement)."""
        corpus = corpus or self.retriever.corpus
        vectors = self.retriever.vectors(corpus)
        return trends.members(corpus, self.sentence_vectors, vectors, topic, chosen)

    def related(self, paper: Paper | str, k: int = 5, **filters: Unpack[FilterArgs]) -> list[Hit]:
        """The ``k`` papers nearest ``paper`` (a Paper, an id or a title) by their stored
        vectors, within the filters (as for ``search``)."""
        k = checked_k(k, 5)
        corpus = self.retriever.corpus
        found = lists.resolve(corpus, paper)
        if found is None or isinstance(found, list):
            raise InputError(lists.unresolved(paper, found))
        chosen, _ = self._filters("", False, corpus, **filters)
        return lists.related(corpus, self.retriever.vectors(corpus), found, k, chosen)

    def topics(
        self, venue: str | None = None, year: int | None = None, *, llm: str | None = None
    ) -> list[Topic]:
        """The themes of a venue and year (or of the whole index), largest first: its papers
        grouped by their stored vectors, each group named by its distinctive terms, or by
        the ``llm`` backend's short name for it where that name's words are the group's own.
        Cached under the index's version stamp."""
        return self.themes(Filters(venue=venue, year_min=year, year_max=year), llm)

    def suggestions(self, n: int = 3) -> list[str]:
        """Questions to start with, made from what the index holds: its main themes, a list
        question on its largest theme, and what one named paper reports."""
        corpus = self.retriever.corpus
        if not corpus.papers:
            return []
        stats = self.stats()
        where = "the indexed papers"
        if len(stats.venues) == 1 and len(stats.years) == 1:
            where = f"{next(iter(stats.venues))} {next(iter(stats.years))}"
        asked = [f"What are the main themes of {where}?"]
        if len(corpus.papers) <= SUGGESTION_TOPICS_MAX or TopicCache(self.store).read(
            corpus, selection_key(None, None, None)
        ):
            themes = [t for t in self.topics() if t.terms]
            if themes:
                asked.append(f"Which papers are about {themes[0].terms[0]}?")
        names = sorted(
            (name, p.paper_id)
            for p in corpus.papers.values()
            if (name := answering.paper_name(p)) and len(name) <= 20
        )
        if names:
            asked.append(f"What does the {names[len(names) // 2][0]} paper report?")
        return asked[:n]

    def themes(self, chosen: Filters, llm: str | None = None) -> list[Topic]:
        """The themes of the papers within ``chosen`` (as ``topics``)."""
        backend = backend_name(llm or self.settings.llm.backend)
        corpus, cache = self.retriever.corpus, TopicCache(self.store)
        found = (chosen.venue, chosen.year_min, chosen.year_max)
        return topics_of(corpus, cache, *found, namer=self.generator(backend), backend=backend)

    def filters(self, question: str, **given: Any) -> tuple[Filters, str]:
        """The filters a question names ("... at ICML 2019"), with those ``given`` (search's
        keywords: venue, year, ...) over them, and the question without the words parsed."""
        return self._filters(question, True, **given)

    def _filters(
        self,
        question: str,
        parse: bool,
        corpus: Corpus | None = None,
        **given: Unpack[FilterArgs],
    ) -> tuple[Filters, str]:
        """The filters given (``search``'s keywords) over those the question names, and the
        question without the latter."""
        if unknown := sorted(set(given) - set(FILTER_ARGS)):
            raise InputError(
                f"unknown filter {', '.join(unknown)}; the filters are {', '.join(FILTER_ARGS)}."
            )
        venue, year = given.get("venue"), given.get("year")
        year_min, year_max = given.get("year_min"), given.get("year_max")
        author, keyword = given.get("author"), given.get("keyword")
        texts: dict[str, object] = {"venue": venue, "author": author, "keyword": keyword}
        for name, value in texts.items():
            if value is not None and not isinstance(value, str):
                raise InputError(f"{name} must be text; got {value!r}.")
        years: dict[str, object] = {"year": year, "year_min": year_min, "year_max": year_max}
        for name, value in years.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise InputError(f"{name} must be a whole year such as 2026; got {value!r}.")
        corpus = corpus or self.retriever.corpus
        parsed, query = (
            parse_filters(question, corpus.venues, corpus.titles_naming_filters)
            if parse
            else (Filters(), question)
        )
        explicit: dict[str, Any] = {
            "venue": venue,
            "year_min": year if year is not None else year_min,
            "year_max": year if year is not None else year_max,
            "author": author,
            "keyword": keyword,
        }
        chosen = replace(parsed, **{k: v for k, v in explicit.items() if v is not None})
        if chosen.year_min is not None and chosen.year_max is not None:
            if chosen.year_min > chosen.year_max:
                raise InputError(
                    f"the year range {chosen.year_min}-{chosen.year_max} is empty: its first "
                    f"year is after its last. Give {chosen.year_max}-{chosen.year_min}."
                )
        return chosen, query

    # -- answering ---------------------------------------------------------------------------
    def ask(self, question: str, history: Sequence[Any] | None = None, **options: Any) -> Answer:
        """Answer a question from the indexed papers, citing them; see ``stream``."""
        final: Answer | None = None
        for event in self.stream(question, history, **options):
            if isinstance(event, Answer):
                final = event
        assert final is not None
        return final

    def stream(
        self,
        question: str,
        history: Sequence[Any] | None = None,
        *,
        k: int | None = None,
        llm: str | None = None,
        **filters: Unpack[FilterArgs],
    ) -> Iterator[str | Step | Answer]:
        """``Step``s and text pieces as the answer is made, then the checked final ``Answer``.

        ``history`` holds earlier ``Answer``s (or (question, Answer) pairs); a follow-up
        is rewritten into a standalone question, exposed as ``Answer.query``.
        """
        backend = backend_name(llm or self.settings.llm.backend)
        k = checked_k(k, self.settings.retrieval.k)
        question = _asked(question)
        started = time.perf_counter()
        yield Step("searching")
        asked = Asked(rewrite_followup(question, history), self, backend, k, filters, started)
        for event in self.handler(asked).answer(asked):
            yield replace(event, backend=backend) if isinstance(event, Answer) else event

    def handler(self, asked: Asked) -> Handler:
        """The first handler, in ``handlers`` order, whose kind the question is."""
        handler = next((h for h in self.handlers if h.matches(asked)), None)
        if handler is None:
            raise ConfigError(
                "no handler takes this question: end the order with one that takes any."
            )
        return handler

    def kind(
        self, question: str, history: Sequence[Any] | None = None, **filters: Unpack[FilterArgs]
    ) -> str:
        """Which kind of question this is ("list", "trend", "papers", ...: the ``kind`` of
        the handler that answers it), without answering it."""
        query = rewrite_followup(_asked(question), history)
        backend = backend_name(self.settings.llm.backend)
        k = self.settings.retrieval.k
        return self.handler(Asked(query, self, backend, k, filters)).kind

    def judge(
        self,
        backend: str | None = None,
        use: Literal["lists", "premises", "statements"] = "lists",
    ) -> Judge | None:
        """The model that judges, with this backend, a list's candidates (``lists``,
        ``checks.judge_lists``), whether a question's paper is indexed and its abstract states
        the answer (``premises``, ``checks.judge_premises``), or whether an abstract supports a
        statement the word check removed for its wording (``statements``,
        ``checks.judge_statements``): the local model's; None for a backend whose model cannot
        be read that way, or with that setting off."""
        if not getattr(self.settings.checks, f"judge_{use}"):
            return None
        llm = getattr(self.generator(backend), "llm", None)
        return ModelJudge(llm) if hasattr(llm, "yes_or_no") else None

    def generator(self, backend: str | None = None) -> Generator:
        """The generator of a backend (``rag.answer.generators``), built once."""
        backend = backend_name(backend or self.settings.llm.backend)
        with self._generators_lock:
            if backend not in self._generators:
                llm_settings = self.settings.llm.model_copy(update={"backend": backend})
                self._generators[backend] = make_generator(backend, llm_settings, self.verifier)
            return self._generators[backend]


def _final(events: Iterable[str | Step | Answer]) -> Answer:
    return next(e for e in events if isinstance(e, Answer))


def limit_blas(threads: int) -> None:
    """Let numpy's BLAS use ``threads`` threads in this process (0: leave its own choice).
    One is best here: the products are small or bound by memory (the exact dense search over
    29k chunks took 1.5 ms on one thread, 8.5 ms on both cores of a busy machine), and
    OpenBLAS's spinning threads slow the rest; concurrent requests use the other cores."""
    if not threads:
        return
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it, BLAS's default
        return
    threadpool_limits(threads, user_api="blas")
