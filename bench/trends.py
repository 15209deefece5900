"""Trend, author and venue answers against gold counts over the 23k ML abstracts.

    .venv/bin/python bench/trends.py [--split dev|test|all] [--index-dir bench/out/needle-index]

The questions and their gold (``eval/trends/questions.jsonl``) come from membership
definitions written down first (``eval/trends/definitions.md``: patterns over title and
abstract, their precision checked by hand on samples). Each question is asked through the
public API as a user would ask it (its years and venue read from its words), twice: the
second time is the warm figure. Prints, per question, the per-year counts against gold and
the mean absolute percentage error over the years whose gold count is at least
``--min-gold`` (smaller counts make a percentage meaningless), the listed authors' precision
(an author listed is right when the gold membership gives them a paper on the topic) and
the venues' counts and which is more common by share.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from _util import ROOT

from rag import Assistant

QUESTIONS = ROOT / "eval" / "trends" / "questions.jsonl"
GOLD = ROOT / "eval" / "trends" / "gold.json"
PAPERS = ROOT.parent / "shared" / "data" / "ml_abstracts.jsonl"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    p.add_argument("--index-dir", type=Path, default=ROOT / "bench" / "out" / "needle-index")
    p.add_argument("--min-gold", type=int, default=5, help="years counted in the error")
    p.add_argument("--kinds", default="trend,authors,venues", help="which questions to ask")
    p.add_argument("--margin", action="store_true", help="ablation: a list's relative floor")
    p.add_argument("--quoted", action="store_true", help="ablation: count only quotable papers")
    args = p.parse_args(argv)
    from rag.evaluation import trends

    trends.COUNT_MARGIN, trends.COUNT_QUOTED = args.margin, args.quoted
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if args.split == "all" or r["split"] == args.split]
    rows = [r for r in rows if r["kind"] in args.kinds.split(",")]
    gold = json.loads(GOLD.read_text(encoding="utf-8"))["topics"]
    authors_of, where = _papers()
    errors: list[float] = []
    matched = [0, 0, 0]  # ours and gold, ours, gold: membership over the trend questions
    precisions: list[float] = []
    warm: list[float] = []
    with Assistant.open(index_dir=args.index_dir, llm="extractive") as a:
        for r in rows:
            print(f"\n[{r['split']}] {r['kind']}: {r['question']}")
            seconds = []
            for _ in range(2):
                started = time.perf_counter()
                result = _ask(a, r)
                seconds.append(time.perf_counter() - started)
            warm.append(seconds[1])
            print(f"  cold {seconds[0]:.1f} s, warm {seconds[1]:.1f} s")
            if r["kind"] == "trend":
                errors += _trend(result, r, args.min_gold)
                if not r.get("vague"):
                    _membership(result.found, r, gold[r["topic"]]["ids"], where, matched)
            elif r["kind"] == "authors":
                on_topic = set(gold.get(r["topic"], {}).get("ids", []))
                precisions.append(_authors(result, r, on_topic, authors_of))
            else:
                _venues(result, r)
    print()
    if errors:
        print(
            f"per-year count error (gold >= {args.min_gold}): mean {sum(errors) / len(errors):.1%} "
            f"over {len(errors)} years (target <= 15%)"
        )
    if matched[1] and matched[2]:
        print(
            f"membership against gold (trend questions): precision {matched[0] / matched[1]:.3f}, "
            f"recall {matched[0] / matched[2]:.3f}"
        )
    if precisions:
        print(
            f"author precision: mean {sum(precisions) / len(precisions):.3f} over "
            f"{len(precisions)} questions (target >= 0.9)"
        )
    warm.sort()
    print(f"warm answer time: median {warm[len(warm) // 2]:.1f} s, max {warm[-1]:.1f} s")
    return 0


def _ask(a: Assistant, r: dict[str, Any]) -> Any:
    filters = {"venue": r.get("venue")} if r.get("venue") else {}
    if r["kind"] == "trend":
        return a.trend(r["question"], **filters)
    if r["kind"] == "authors":
        return a.authors(r["question"], **filters)
    from rag.evaluation import venues_topic

    return a.venues(venues_topic(r["question"], r["venues"]), r["venues"])


def _trend(t: Any, r: dict[str, Any], min_gold: int) -> list[float]:
    if r.get("vague"):
        print(f"  too broad to count: {t.found.vague} (gold: vague)")
        return []
    print(f"  topic read: {t.topic!r}; filters: {t.found.filters.describe()}")
    errors = []
    ours = {y.year: y for y in t.years}
    for year, g in sorted(r["gold_per_year"].items(), key=lambda kv: int(kv[0])):
        y = ours.get(int(year))
        count = y.count if y else None
        line = (
            f"  {year}: {count} (gold {g['count']}) of {y.total if y else '-'} (gold {g['total']})"
        )
        if g["count"] >= min_gold and count is not None:
            errors.append(abs(count - g["count"]) / g["count"])
            line += f"  error {errors[-1]:.0%}"
        print(line)
    return errors


def _authors(
    result: Any, r: dict[str, Any], on_topic: set[str], authors_of: dict[str, list[str]]
) -> float:
    found, ranked = result
    print(f"  topic read: {found.topic!r}; {len(found.papers)} papers")
    truly = {name for pid in on_topic for name in authors_of.get(pid, [])}
    right = [a.name in truly for a in ranked]
    gold_top = {name for name, _ in r["gold_authors"]}
    for a, ok in zip(ranked, right, strict=True):
        mark = "gold top" if a.name in gold_top else ("on topic" if ok else "NOT on topic")
        print(f"  {a.name}: {len(a.papers)} ({mark})")
    print(f"  gold top: {r['gold_authors']}")
    return sum(right) / len(right) if right else 0.0


def _venues(result: Any, r: dict[str, Any]) -> None:
    found, counts, years = result
    print(f"  topic read: {found.topic!r}; years compared {years} (gold {r['years_compared']})")
    for c in counts:
        g = r["gold_venues"][c.venue]
        print(f"  {c.venue}: {c.count} of {c.total} (gold {g['count']} of {g['total']})")
    ours = max(counts, key=lambda c: c.share or 0.0).venue if counts else None
    print(f"  more common by share: {ours} (gold {r['more_common_by_share']})")


def _membership(
    found: Any,
    r: dict[str, Any],
    gold_ids: list[str],
    where: dict[str, tuple[str, int]],
    matched: list[int],
) -> None:
    """Our papers against the gold ones within the question's venue and years."""
    low, high, venue = r.get("year_min") or 0, r.get("year_max") or 9999, r.get("venue")

    def within(pid: str) -> bool:
        v, y = where.get(pid, ("", 0))
        return low <= y <= high and (not venue or v.lower() == venue.lower())

    gold = {pid for pid in gold_ids if within(pid)}
    ours = {p.paper.paper_id for p in found.papers if within(p.paper.paper_id)}
    both = len(gold & ours)
    matched[0] += both
    matched[1] += len(ours)
    matched[2] += len(gold)
    print(f"  membership: {len(ours)} ours, {len(gold)} gold, {both} both")


def _papers() -> tuple[dict[str, list[str]], dict[str, tuple[str, int]]]:
    """Each paper's authors, and its venue and year, by id."""
    authors, where = {}, {}
    with PAPERS.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            authors[row["id"]] = row.get("authors") or []
            where[row["id"]] = (row.get("venue") or "", int(row.get("year") or 0))
    return authors, where


if __name__ == "__main__":
    sys.exit(main())
