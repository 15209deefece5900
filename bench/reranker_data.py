"""Training pairs for the reranker: (query, paper passage, label), hard negatives from the
product's own first stage.

    python bench/reranker_data.py                     # bench/out/reranker/pairs.jsonl
    python bench/reranker_data.py --synthetic 4000    # how many self-supervised queries

Queries, none of them an evaluation query and none about a paper of an evaluation set:

* ``tldr``: the training half of the ML TL;DR known-item set (``bench/fusion.py`` scores
  the other half; a fifth of the training half is kept for tuning, ``fusion.tuning``),
  over the needle index (the 23k ML abstracts and the bundled ones);
* ``scifact``: the training half of the SciFact training claims, over the SciFact index;
* ``written``: ``bench/fusion_train.jsonl``;
* ``synthetic``: one sentence drawn from the abstract of a random paper of the ML list, the
  positive passage being that paper's title and abstract *without* the sentence, so that
  the model learns which paper a statement belongs to rather than copying words (the
  inverse cloze task of Lee et al., 2019). Papers of any evaluation set (``eval/``,
  ``bench/fusion_test.jsonl``, the held-out TL;DR half and the keyword-topic golds) are
  never drawn.

Each query's pairs are kept ``--repeat`` times but the synthetic ones once. Each query is
searched as the product searches (hybrid, learned fusion, top ``--depth``);
the passage of a candidate is what the reranker reads at run time (``rag.retrieve.rerank.passage``):
its title and its best chunk. Negatives: the best ``--top`` non-relevant candidates,
``--random`` more from the rest of the depth and ``--easy`` from the whole index (without
them the model never leaves the labels' prior: every negative shares the query's topic).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

import fusion
import ml
from _common import REPO

from rag.evaluation import Filters, passage

OUT = REPO / "bench" / "out" / "reranker" / "pairs.jsonl"
ID = re.compile(r"\b[a-z]+20\d\d-[A-Za-z0-9_-]{6,}\b|\b[a-z]+(?:19|20)\d\d-\d+\b")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--synthetic", type=int, default=4000, help="self-supervised queries")
    p.add_argument("--depth", type=int, default=30)
    p.add_argument("--top", type=int, default=2, help="hard negatives: the best non-relevant")
    p.add_argument("--random", type=int, default=1, help="negatives drawn from the rest")
    p.add_argument("--easy", type=int, default=1, help="negatives drawn from the whole index")
    p.add_argument("--repeat", type=int, default=2, help="times each non-synthetic pair is kept")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    rng = random.Random(0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    needle = fusion._needle_index()
    tldr = [q for q in ml.read_queries(ml.DATA, "tldr") if _trained(q.qid)]
    written = [q for q in fusion.written()[1] if not fusion.tuning(q.qid)]
    rows += pairs(needle, [(q.text, q.relevant, "tldr") for q in tldr], args, rng)
    rows += pairs(needle, [(q.text, q.relevant, "written") for q in written], args, rng)
    sci, claims = fusion.scifact_set()
    claims = [q for q in claims if q.relevant and _trained(q.qid)]
    rows += pairs(sci, [(q.text, q.relevant, "scifact") for q in claims], args, rng)
    rows *= args.repeat  # the real queries count more than the self-supervised ones
    rows += synthetic(needle, args, rng)
    # no pair reads a paper of an evaluation set, as a positive or as a negative
    excluded = evaluation_papers()
    rows = [r for r in rows if r["paper"] not in excluded]
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(args.out)
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    print(f"written {len(rows)} pairs to {args.out.relative_to(REPO)}: {kinds}")
    return 0


def pairs(assistant, queries: list[tuple[str, tuple[str, ...], str]], args, rng,
          positives: dict[str, str] | None = None) -> list[dict]:  # fmt: skip
    """Each query's relevant papers (labelled 1) and hard negatives (0), as the first stage
    finds them; ``positives`` replaces a relevant paper's passage (the synthetic queries)."""
    retriever = assistant.retriever
    corpus = retriever.corpus
    everyone = list(corpus.papers)
    out: list[dict] = []
    started = time.monotonic()
    for n, (query, relevant, kind) in enumerate(queries, 1):
        hits = retriever.search(query, args.depth, Filters())
        wanted = set(relevant)
        for pid in relevant:
            if pid not in corpus.papers:
                continue
            found = next((h for h in hits if h.paper.paper_id == pid), None)
            text = (positives or {}).get(pid) or passage(
                corpus.papers[pid], found.evidence if found else _first(corpus, pid)
            )
            out.append(_row(query, text, 1, pid, kind))
        others = [h for h in hits if h.paper.paper_id not in wanted]
        chosen = others[: args.top]
        rest = others[args.top :]
        chosen += rng.sample(rest, min(args.random, len(rest)))
        out += [
            _row(query, passage(h.paper, h.evidence), 0, h.paper.paper_id, kind) for h in chosen
        ]
        for pid in rng.sample(everyone, args.easy):  # a paper of another topic, mostly
            if pid not in wanted:
                text = passage(corpus.papers[pid], _first(corpus, pid))
                out.append(_row(query, text, 0, pid, kind))
        if n % 200 == 0 or n == len(queries):
            rate = n / (time.monotonic() - started)
            print(f"{kind}: {n}/{len(queries)} queries, {rate:.1f}/s", file=sys.stderr, flush=True)
    return out


def synthetic(assistant, args, rng) -> list[dict]:
    excluded = evaluation_papers()
    corpus = assistant.retriever.corpus
    pool = sorted(p for p in corpus.papers if p not in excluded and not p.startswith("icml2026"))
    rng.shuffle(pool)
    queries, positives = [], {}
    for pid in pool:
        if len(queries) >= args.synthetic:
            break
        paper = corpus.papers[pid]
        sentences = _sentences(paper.abstract)
        usable = [i for i, s in enumerate(sentences) if 8 <= len(s.split()) <= 40]
        if len(sentences) < 3 or not usable:
            continue
        i = rng.choice(usable)
        rest = " ".join(s for j, s in enumerate(sentences) if j != i)
        positives[pid] = f"{paper.title}. {rest}"
        queries.append((sentences[i], (pid,), "synthetic"))
    return pairs(assistant, queries, args, rng, positives)


def evaluation_papers() -> set[str]:
    """Every paper id named by an evaluation file."""
    files = [*(REPO / "eval").rglob("*.jsonl"), *(REPO / "eval").rglob("*.json")]
    files.append(REPO / "bench" / "fusion_test.jsonl")
    found = {m for f in files for m in ID.findall(f.read_text(encoding="utf-8"))}
    for name in ("keyword", "tldr"):
        for q in ml.read_queries(ml.DATA, name):
            if name == "keyword" or fusion.held_out(q.qid):
                found.update(q.relevant)
    return found


def _trained(qid: str) -> bool:
    """Neither held out for reporting nor kept for tuning (``bench/fusion.py``)."""
    return not fusion.held_out(qid) and not fusion.tuning(qid)


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if s.strip()]


def _first(corpus, pid: str) -> tuple[str, ...]:
    return tuple(corpus.chunk_texts[i] for i in corpus.paper_chunks[pid][:1])


def _row(query: str, text: str, label: int, pid: str, kind: str) -> dict:
    return {"query": query, "evidence": text, "label": label, "paper": pid, "kind": kind}


if __name__ == "__main__":
    sys.exit(main())
