"""Apply the topic definitions in definitions.md to the abstracts and write gold.json.

Usage:  python3 gold.py [--data PATH] [--out PATH]

The patterns are read from the ```patterns blocks of definitions.md, so the
counts follow exactly what that file states. A paper is on a topic when
title + "\n" + abstract matches any `include` pattern after every `exclude`
pattern has been blanked out (case-insensitive).
"""

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = Path("/work/shared/data/ml_abstracts.jsonl")


def load_definitions(path=HERE / "definitions.md"):
    """Return {topic_key: {"name", "include": [regex], "exclude": [regex]}}."""
    topics, key, in_block = {}, None, False
    for line in path.read_text().splitlines():
        m = re.match(r"^### `(\w+)` — (.+)$", line)
        if m:
            key = m.group(1)
            topics[key] = {"name": m.group(2).strip(), "include": [], "exclude": []}
            continue
        if line.strip() == "```patterns":
            in_block = True
            continue
        if in_block and line.strip() == "```":
            in_block = False
            continue
        if in_block:
            kind, _, pattern = line.partition(":")
            topics[key][kind.strip()].append(re.compile(pattern.strip(), re.IGNORECASE))
    # keep only countable topics (those that have patterns)
    return {k: v for k, v in topics.items() if v["include"]}


def paper_text(paper):
    return f"{paper['title']}\n{paper['abstract']}"


def matches(topic, text):
    """Return the list of include-pattern hits (empty list = not on topic)."""
    for rx in topic["exclude"]:
        text = rx.sub(" ", text)
    hits = []
    for rx in topic["include"]:
        hits.extend(m.group(0) for m in rx.finditer(text))
    return hits


def load_papers(path=DATA):
    with open(path) as f:
        return [json.loads(line) for line in f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--out", default=str(HERE / "gold.json"))
    args = ap.parse_args()

    topics = load_definitions()
    papers = load_papers(args.data)

    per_year, per_venue, per_venue_year = Counter(), Counter(), defaultdict(Counter)
    for p in papers:
        per_year[p["year"]] += 1
        per_venue[p["venue"]] += 1
        per_venue_year[p["venue"]][p["year"]] += 1

    out_topics = {}
    for key, topic in topics.items():
        ids, ty, tv, tvy = [], Counter(), Counter(), defaultdict(Counter)
        for p in papers:
            if matches(topic, paper_text(p)):
                ids.append(p["id"])
                ty[p["year"]] += 1
                tv[p["venue"]] += 1
                tvy[p["venue"]][p["year"]] += 1
        out_topics[key] = {
            "name": topic["name"],
            "total": len(ids),
            "per_year": dict(sorted(ty.items())),
            "per_venue": dict(sorted(tv.items())),
            "per_venue_year": {v: dict(sorted(c.items())) for v, c in sorted(tvy.items())},
            "ids": sorted(ids),
        }

    gold = {
        "source": args.data,
        "text_used": "title + abstract (tldr and keywords ignored)",
        "definitions": "definitions.md",
        "n_papers": len(papers),
        "totals": {
            "per_year": dict(sorted(per_year.items())),
            "per_venue": dict(sorted(per_venue.items())),
            "per_venue_year": {
                v: dict(sorted(c.items())) for v, c in sorted(per_venue_year.items())
            },
        },
        "topics": out_topics,
    }
    Path(args.out).write_text(json.dumps(gold, indent=1) + "\n")
    for key, t in out_topics.items():
        print(f"{key:30s} {t['total']:5d}")


if __name__ == "__main__":
    main()
