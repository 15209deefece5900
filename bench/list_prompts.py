"""A list's candidates read with other questions put to the local model, in one run.

    python bench/list_prompts.py --split dev            # ~30 min; readings kept
    python bench/list_prompts.py --split dev --depth 8

The product asks the model of each of a list's closest candidates "Is this paper one of the
papers the request asks for?" (``rag.answer.judge.ASK``, with the question as the request).
This asks the same candidates (the ``--depth`` closest by ``lists.candidates_for``, as
``bench/list_judge.py --grid`` reads them) in other words, each the abstract then one ask:

- ``base``: the product's ask;
- ``topic``: "Topic: T / Is this paper about T?", T the list's topic (``lists.list_topic``);
- ``main``: "Topic: T / Is T one of the subjects of this paper, in these or other words?";
- ``study``: "Does this paper itself do what the request asks for?";
- ``inans``: "Should this paper be listed in the answer to the question?".

Printed for each ask and each pair of asks averaged: the AUC of members over the other
candidates, the AUC of a list's best candidate over an absent topic's, and the two best
(first, member) bars of a grid with what they list (as ``bench/list_judge.py`` prints it).
The best bars are chosen on the same readings they are scored on, so they flatter every
row alike. The readings are kept in bench/out/list_prompts-SPLIT.json (the abstract is read
once per paper, so each further ask costs its own words only).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from list_judge import auc  # noqa: E402
from list_membership import Question, line, open_corpus, questions, score  # noqa: E402

from eval.corpora import CORPORA  # noqa: E402
from rag.evaluation import Filters  # noqa: E402
from rag.evaluation import judge as judges  # noqa: E402
from rag.evaluation import lists as listing  # noqa: E402


def asks(question: str, topic: str) -> dict[str, str]:
    return {
        "base": f"Request: {question}\n{judges.ASK}",
        "topic": f"Topic: {topic}\nIs this paper about {topic}? Answer Yes or No.",
        "study": f"Request: {question}\nDoes this paper itself do what the request asks for? "
        "Answer Yes or No.",
        "inans": f"Question: {question}\nShould this paper be listed in the answer to the "
        "question? Answer Yes or No.",
        "main": f"Topic: {topic}\nIs {topic} one of the subjects of this paper, in these or "
        "other words? Answer Yes or No.",
    }


def read(split: str, depth: int, kept: dict[str, float]) -> list[tuple[Question, list[str]]]:
    """Each list question of the split with its ``depth`` closest candidates, every ask of
    each read into ``kept`` ("corpus|question id|paper id|ask" -> log-odds)."""
    rows = []
    started, asked = time.perf_counter(), 0
    for corpus in (c for c in CORPORA if c.split == split):
        a = open_corpus(corpus.name)
        judge = a.judge("local")
        assert judge is not None, "the local model cannot judge here"
        papers = a.retriever.corpus.papers
        vectors = a.retriever.vectors(a.retriever.corpus)
        per_paper: dict[str, list[Question]] = {}
        for q in questions(corpus.name):
            topic = listing.list_topic(q.text)
            found = listing.candidates_for(
                a.retriever.corpus, a.sentence_vectors, vectors, topic, Filters()
            )
            closest = [c.paper.paper_id for c in sorted(found, key=lambda c: -c.relevance)]
            rows.append((q, closest[:depth]))
            for pid in closest[:depth]:
                per_paper.setdefault(pid, []).append(q)
        for pid, qs in per_paper.items():  # one paper's asks in a row: its abstract read once
            p = papers[pid]
            head = f"Title: {p.title}\nAbstract: {p.abstract[: judges.ABSTRACT_CHARS]}\n\n"
            for q in qs:
                for name, ask in asks(q.text, listing.list_topic(q.text)).items():
                    key = f"{q.corpus}|{q.qid}|{pid}|{name}"
                    if key not in kept:
                        user = {"role": "user", "content": head + ask}
                        system = {"role": "system", "content": judges.SYSTEM}
                        kept[key] = float(judge.llm.yes_or_no([system, user]))
                        asked += 1
        print(f"{corpus.name}: {asked} readings, {time.perf_counter() - started:.0f} s",
              flush=True)  # fmt: skip
    return rows


def report(rows: list[tuple[Question, list[str]]], kept: dict[str, float]) -> None:
    names = list(asks("", ""))
    qs = [q for q, _ in rows]
    for combo in [(n,) for n in names] + list(itertools.combinations(names, 2)):
        scored = [
            (q, [(pid, float(np.mean([kept[f"{q.corpus}|{q.qid}|{pid}|{n}"] for n in combo])))
                 for pid in pids])
            for q, pids in rows
        ]  # fmt: skip
        member = [s for q, cs in scored for pid, s in cs if pid in q.members]
        other = [s for q, cs in scored for pid, s in cs if pid not in q.members]
        best = [(q.kind == "list", max((s for _, s in cs), default=-9.0)) for q, cs in scored]
        present = auc([s for k, s in best if k], [s for k, s in best if not k])
        print(f"{'+'.join(combo):<12} members first, AUC {auc(member, other):.3f}; "
              f"a list's best above an absent topic's, AUC {present:.3f}")  # fmt: skip
        grid = []
        for first in np.arange(-1.0, 4.01, 0.25):
            for bar in np.arange(-1.0, first + 0.01, 0.25):
                listed = {
                    (q.corpus, q.qid): {pid for pid, s in cs if s >= bar}
                    for q, cs in scored
                    if max((s for _, s in cs), default=-9.0) >= first
                }
                grid.append((score(listed, qs), float(first), float(bar)))
        grid.sort(key=lambda g: (g[0]["exact"], g[0]["recall"] + g[0]["precision"]), reverse=True)
        for s, first, bar in grid[:2]:
            print(line(f"    first {first:.2f}, member {bar:.2f}", s))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=("dev", "test"), required=True)
    p.add_argument("--depth", type=int, default=judges.JUDGED, help="candidates read")
    args = p.parse_args(argv)
    if args.split == "test":
        p.error("the asks are compared to choose one: dev only")
    out = REPO / "bench" / "out" / f"list_prompts-{args.split}.json"
    kept: dict[str, float] = json.loads(out.read_text()) if out.exists() else {}
    try:
        rows = read(args.split, args.depth, kept)
    finally:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(kept) + "\n")
    report(rows, kept)
    return 0


if __name__ == "__main__":
    sys.exit(main())
