"""The `rag` command over the public API (`rag.Assistant`); errors become one line and exit 1."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .jsonform import answer_json, hit_json, topic_json
from .text.markup import readable
from .text.sanitize import web_link

BUNDLED = Path(__file__).parent / "data" / "icml2026_abstracts.txt"


def main(argv: Sequence[str] | None = None) -> int:
    from . import _offline

    _offline.apply()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:  # eval/run.py parses its own options
        from eval.run import main as eval_main

        return int(eval_main(argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from .errors import RagError

    try:
        return int(args.func(args) or 0)
    except RagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rag stats | head -3`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        # the process ends here: exempt what it built from the collector's final passes
        # over the index snapshot (~0.5 s of a one-question run's 3.5 s)
        gc.freeze()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag",
        description="Ask questions about a conference's papers, with every statement checked "
        "against the abstract it cites.",
        epilog="Start with `rag ingest PATH` (or `rag ingest --bundled`), then `rag ask "
        '"QUESTION"` or `rag serve`. `rag COMMAND --help` describes each command; a failure '
        "prints one line saying what to do and exits with status 1.",
    )
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--index-dir", type=Path, help="index folder (default: index_store)")
    store.add_argument("--chroma-url", help="use a Chroma server, e.g. http://127.0.0.1:8000")
    store.add_argument("--chroma-token", help="auth token for the Chroma server")
    sub = parser.add_subparsers(metavar="COMMAND")
    _ingest_parser(sub, store)
    _command(sub, "stats", store, cmd_stats, "what the index holds")
    search = _command(sub, "search", store, cmd_search, "find papers for a question")
    _query_options(search)
    search.add_argument(
        "--all", action="store_true", help="also show papers below the relevance cut-off"
    )
    ask = _command(sub, "ask", store, cmd_ask, "answer a question, citing papers")
    _query_options(ask)
    _llm_option(ask)
    ask.add_argument("--page", type=int, default=1, help="page of a list answer (default 1)")
    ask.add_argument("--per-page", type=int, default=20, help="papers per page of a list answer")
    related = _command(sub, "related", store, cmd_related, "papers nearest a paper")
    _query_options(related, "PAPER", "a paper id or title")
    chat = _command(sub, "chat", store, cmd_chat, "multi-turn chat in the terminal")
    _llm_option(chat)
    chat.add_argument("--k", type=int, help="papers retrieved per question")
    serve = _command(sub, "serve", store, cmd_serve, "start the web chat")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--auth", help="user:pass required to open the chat")
    serve.add_argument(
        "--no-auth", action="store_true", help="serve beyond loopback without a sign-in"
    )
    _llm_option(serve)
    # listed for --help only: main() hands `rag eval ...` to eval/run.py before parsing
    sub.add_parser("eval", help="run an evaluation (same as eval/run.py; `rag eval --help`)")
    _command(sub, "settings", store, cmd_settings, "print the effective settings")
    _topics_parser(sub, store)
    _corpus_parsers(sub, store)
    return parser


def _command(sub: Any, name: str, parent: Any, func: Callable[..., int], help: str) -> Any:
    p = sub.add_parser(name, parents=[parent], help=help, description=help)
    p.set_defaults(func=func)
    return p


def _ingest_parser(sub: Any, store: Any) -> None:
    p = _command(sub, "ingest", store, cmd_ingest, "add paper lists to the index")
    p.add_argument("paths", nargs="*", type=Path, help="paper lists (.txt, .json, .jsonl, .csv)")
    p.add_argument("--bundled", action="store_true", help="ingest the bundled ICML 2026 abstracts")
    p.add_argument("--rebuild", action="store_true", help="drop the index and build it anew")
    p.add_argument("--prune", action="store_true", help="remove papers not in these sources")
    p.add_argument(
        "--replace",
        action="store_true",
        help="let these files update papers with the same id that came from other files",
    )
    p.add_argument("--skip-invalid", action="store_true", help="skip bad records, counting them")
    p.add_argument("--format", choices=["text", "json", "jsonl", "csv"])
    p.add_argument("--venue", help="venue for records that lack one")
    p.add_argument("--year", type=int, help="year for records that lack one")


def _query_options(p: Any, name: str = "question", what: str | None = None) -> None:
    p.add_argument(name.lower(), metavar=name, help=what or "in plain language, quoted")
    p.add_argument("--k", type=int, help="papers to retrieve, 1 to 50 (default 5)")
    p.add_argument("--venue", help="only papers of this venue, e.g. ICML")
    p.add_argument("--year", type=int, help="only papers of this year")
    p.add_argument("--year-min", type=int, metavar="YEAR", help="only papers of this year on")
    p.add_argument("--year-max", type=int, metavar="YEAR", help="only papers up to this year")
    p.add_argument("--author", help="only papers with an author whose name holds this")
    p.add_argument("--keyword", help="only papers with a keyword that holds this")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--export", type=Path, metavar="FILE", help="write the papers to FILE (.bib, .csv or .md)"
    )


def _llm_option(p: Any) -> None:
    from .types import BACKENDS

    p.add_argument("--llm", choices=BACKENDS, help="answering backend")


def _assistant(args: argparse.Namespace) -> Any:
    from .assistant import Assistant

    return Assistant.open(
        index_dir=args.index_dir,
        chroma_url=args.chroma_url,
        llm=getattr(args, "llm", None),
        **{"store.chroma_token": args.chroma_token},
    )


def _filters(args: argparse.Namespace) -> dict[str, Any]:
    from .retrieve.search import FILTER_ARGS

    return {n: getattr(args, n) for n in FILTER_ARGS if getattr(args, n, None) is not None}


# -- commands ------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    from .errors import InputError

    paths = list(args.paths) + ([BUNDLED] if args.bundled else [])
    if not paths:
        raise InputError("no paper lists given. Pass files, or --bundled for the ICML 2026 set.")
    assistant = _assistant(args)
    with _progress("ingest", "papers") as progress:
        report = assistant.ingest(
            paths,
            rebuild=args.rebuild,
            prune=args.prune,
            replace=args.replace,
            skip_invalid=args.skip_invalid,
            format=args.format,
            venue=args.venue,
            year=args.year,
            progress=progress,
        )
    print(f"{', '.join(report.sources)}: {report.summary()}")
    for where, reason in report.skipped[:20]:
        print(f"  skipped {where}: {reason}")
    if len(report.skipped) > 20:
        print(f"  ... and {len(report.skipped) - 20} more skipped")
    for where, what in report.dropped[:20]:
        print(f"  dropped {where}: {what}")
    if len(report.dropped) > 20:
        print(f"  ... and {len(report.dropped) - 20} more dropped")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    stats = _assistant(args).stats()
    print(f"index:    {stats.location}")
    print(f"papers:   {stats.papers}")
    print(f"chunks:   {stats.chunks}")
    print(f"embedder: {stats.embedder} (chunks of at most {stats.chunk_tokens} tokens)")
    print("venues:   " + ", ".join(f"{v} ({n})" for v, n in stats.venues.items()))
    print("years:    " + ", ".join(f"{y} ({n})" for y, n in stats.years.items()))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    assistant = _assistant(args)
    hits = assistant.search(args.question, args.k, **_filters(args))
    shown = hits
    if not args.all:  # what the assistant would not answer from is not shown either
        bar = assistant.settings.retrieval.min_similarity
        shown = assistant.search(args.question, args.k, **_filters(args), min_relevance=bar)
    _export(args, [h.paper for h in shown])
    if args.json:
        print(json.dumps([hit_json(h) for h in shown], ensure_ascii=False, indent=2))
        return 0
    _print_hits(shown, "No papers match." if not hits else "No paper is close enough.")
    if len(shown) < len(hits):
        n = len(hits) - len(shown)
        print(f"({n} more below the relevance cut-off; --all shows them)")
    return 0


def cmd_related(args: argparse.Namespace) -> int:
    hits = _assistant(args).related(args.paper, args.k or 5, **_filters(args))
    _export(args, [h.paper for h in hits])
    if args.json:
        print(json.dumps([hit_json(h) for h in hits], ensure_ascii=False, indent=2))
        return 0
    _print_hits(hits, "No other paper matches the filters.")
    return 0


def _print_hits(hits: list[Any], empty: str) -> None:
    if not hits:
        print(empty)
    for i, hit in enumerate(hits, 1):
        p = hit.paper
        print(f"{i}. {readable(p.label)}  [{p.venue_year}]  score {hit.score:.4f}")
        print(f"   {_clip(readable(hit.evidence[0] if hit.evidence else p.abstract), 200)}")


def _export(args: argparse.Namespace, papers: list[Any]) -> None:
    if args.export is None:
        return
    from .export import write

    write(papers, args.export)
    print(f"wrote {len(papers)} papers to {args.export}", file=sys.stderr)


def cmd_ask(args: argparse.Namespace) -> int:
    from .export import answer_papers

    assistant = _assistant(args)
    if args.json:
        answer = assistant.ask(args.question, k=args.k, **_filters(args))
        _export(args, answer_papers(answer))
        print(json.dumps(answer_json(answer), ensure_ascii=False, indent=2))
        return 0
    if assistant.kind(args.question, **_filters(args)) == "list":
        found = assistant.find_all(args.question, judge=assistant.judge(), **_filters(args))
        if found.papers:
            _export(args, [p.paper for p in found.papers])
            print_list_page(found, args.page, args.per_page)
            return 0
    final = _print_streamed(assistant.stream(args.question, k=args.k, **_filters(args)))
    if final is not None:
        _export(args, answer_papers(final))
    return 0


def print_list_page(found: Any, page: int, per_page: int) -> None:
    """A page of a list answer: the count, a cited line per paper, where the next page is,
    and the page's references."""
    per_page = max(per_page, 1)
    pages = max(1, -(-found.count // per_page))
    page = min(max(page, 1), pages)
    start = (page - 1) * per_page
    stop = min(start + per_page, found.count)
    print(readable(found.lead))
    for line in found.lines(start, stop):
        print(readable(line))
    if pages > 1:
        more = f"; --page {page + 1} shows the next" if page < pages else ""
        print(f"(papers {start + 1}–{stop} of {found.count}, page {page} of {pages}{more})")
    print("\nReferences:")
    for n, listed in enumerate(found.papers[start:stop], start=start + 1):
        p = listed.paper
        where = ", ".join(x for x in (p.venue_year, web_link(p.url)) if x)
        print(f"[{n}] {readable(p.label)}" + (f". {where}" if where else ""))


def cmd_chat(args: argparse.Namespace) -> int:
    assistant = _assistant(args)
    history: list[Any] = []
    print("Ask about the indexed papers. An empty line or Ctrl-D quits; /new starts over.")
    while True:
        try:
            question = input("\n> ").strip()
        except EOFError:
            return 0
        if not question:
            return 0
        if question == "/new":
            history.clear()
            continue
        answer = _print_streamed(assistant.stream(question, history, k=args.k))
        history.append(answer)


def cmd_serve(args: argparse.Namespace) -> int:
    from ui.app import serve

    serve(_assistant(args), host=args.host, port=args.port, auth=args.auth, no_auth=args.no_auth)
    return 0


def cmd_settings(args: argparse.Namespace) -> int:
    from .settings import get_settings

    settings = get_settings(
        **{"store.index_dir": args.index_dir, "store.chroma_url": args.chroma_url}
    )
    print(json.dumps(settings.model_dump(mode="json"), indent=2))
    return 0


def _topics_parser(sub: Any, store: Any) -> None:
    p = _command(sub, "topics", store, cmd_topics, "the themes of a venue and year")
    p.add_argument("--venue")
    p.add_argument("--year", type=int)
    p.add_argument("--papers", type=int, default=3, help="papers listed per theme (default 3)")
    p.add_argument("--json", action="store_true", help="print JSON (every paper, with its place)")
    _llm_option(p)


def cmd_topics(args: argparse.Namespace) -> int:
    topics = _assistant(args).topics(args.venue, args.year, llm=args.llm)
    if args.json:
        print(json.dumps([topic_json(t) for t in topics], ensure_ascii=False, indent=2))
        return 0
    if not topics:
        print("No indexed papers match.")
    for t in topics:
        print(f"{t.topic_id + 1}. {readable(t.label)} ({t.size} paper{'s' if t.size != 1 else ''})")
        print(f"   terms: {', '.join(readable(x) for x in t.terms)}")
        for p in t.papers[: args.papers]:
            print(f"   - {_clip(readable(p.label), 110)}")
        if t.size > args.papers:
            print(f"   ... and {t.size - args.papers} more")
    return 0


def _corpus_parsers(sub: Any, store: Any) -> None:
    trend = _command(sub, "trend", store, cmd_trend, "papers on a topic per year")
    authors = _command(sub, "authors", store, cmd_authors, "who has the most papers on a topic")
    for p in (trend, authors):
        p.add_argument("topic", metavar="TOPIC", help='what to count, e.g. "Bayesian optimization"')
        p.add_argument("--venue")
        p.add_argument("--from", dest="year_min", type=int, metavar="YEAR", help="first year")
        p.add_argument("--to", dest="year_max", type=int, metavar="YEAR", help="last year")
        p.add_argument("--json", action="store_true", help="print JSON")
    authors.add_argument("--n", type=int, default=10, help="authors listed (default 10)")


def cmd_trend(args: argparse.Namespace) -> int:
    from .jsonform import listed_json, series_json

    assistant = _assistant(args)
    result = assistant.trend(args.topic, parse=False, **_filters(args))
    if args.json:
        data = {
            "topic": result.topic,
            "filters": result.found.filters.describe(),
            "too_broad": result.found.vague,
            "years": [series_json(y) for y in result.years],
            "undated": result.undated,
            "papers": [listed_json(p) for p in result.found.papers],
        }
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    _print_answer(assistant.trend_answer(result))
    return 0


def cmd_authors(args: argparse.Namespace) -> int:
    from .jsonform import listed_json

    assistant = _assistant(args)
    found, ranked = assistant.authors(args.topic, args.n, parse=False, **_filters(args))
    if args.json:
        data = {
            "topic": found.topic,
            "filters": found.filters.describe(),
            "too_broad": found.vague,
            "authors": [
                {"name": a.name, "papers": [listed_json(p) for p in a.papers]} for a in ranked
            ],
        }
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    _print_answer(assistant.authors_answer(args.topic, found, ranked))
    return 0


def _print_answer(final: Any) -> None:
    """A made answer (counts and checked lines): its text, then its references."""
    print(readable(final.text))
    if final.citations:
        print("\n" + render_references(final))


# -- output --------------------------------------------------------------------------------
def _print_streamed(events: Any) -> Any:
    """Print an answer as it comes (its statements are checked before they are sent), then
    what the check took out, the search it ran and the references."""
    from .types import Answer, Step

    final, streamed = None, ""
    for event in events:
        if isinstance(event, Answer):
            final = event
        elif not isinstance(event, Step):
            streamed += event
            print(readable(event), end="", flush=True)
    print()
    if final is None:
        return None
    if _squeezed(final.text) != _squeezed(streamed):  # only if the stream was not final
        print(f"\nAs checked:\n{readable(final.text)}")
    changes = render_changes(final)
    if changes:
        print("\n" + changes)
    print(f"(searched for: {final.query})")
    if final.grounded:
        print("\n" + render_references(final))
    else:
        closest = ", ".join(readable(h.paper.label) for h in final.hits[:3])
        if closest:
            print(f"Closest papers: {closest}")
    return final


def render_changes(answer: Any) -> str:
    """What the check took out of an answer: a line per removed statement, with why."""
    lines = [f"Removed: {_clip(readable(r.statement), 160)} ({r.reason})" for r in answer.removed]
    if answer.removed_citations:
        n = answer.removed_citations
        lines.append(f"Removed: {n} citation marker{'s' if n != 1 else ''} to no retrieved paper")
    return "\n".join(lines)


def render_references(answer: Any) -> str:
    """The references of an answer, each with the abstract sentence that supports it."""
    lines = ["References:"]
    for c in answer.citations:
        p = c.paper
        where = ", ".join(x for x in (p.venue_year, web_link(p.url)) if x)
        lines.append(f"[{c.number}] {readable(p.label)}" + (f". {where}" if where else ""))
        if c.quote:
            lines.append(f'    "{_clip(readable(c.quote), 240)}"')
    return "\n".join(lines)


def _squeezed(text: str) -> str:
    return " ".join(readable(text).split())


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


class _progress:
    """A tqdm bar with papers/s and the time left on a terminal; a log line every few
    seconds otherwise."""

    def __init__(self, label: str, unit: str) -> None:
        self.label, self.unit = label, unit
        self.bar: Any = None
        self.last = 0.0
        self.started = time.perf_counter()

    def __enter__(self) -> Callable[[int, int], None]:
        return self.update

    def update(self, done: int, total: int) -> None:
        if sys.stderr.isatty():
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=self.label, unit=f" {self.unit}", file=sys.stderr)
                self.bar.start_t = self.started  # the rate counts the time before the first
            self.bar.update(done - self.bar.n)
            return
        now = time.perf_counter()
        if now - self.last >= 5 or done == total:
            rate = done / max(now - self.started, 1e-9)
            left = f", {_duration((total - done) / rate)} left" if done < total and rate else ""
            print(
                f"{self.label}: {done}/{total} {self.unit} ({rate:.1f}/s{left})",
                file=sys.stderr,
                flush=True,
            )
            self.last = now

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()


if __name__ == "__main__":
    sys.exit(main())
