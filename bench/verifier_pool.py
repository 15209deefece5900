"""The abstracts training examples may be made from, and what must stay out of them.

Out: every paper of the evaluation corpora (``eval/corpora.py``), the papers of the held-out
needle questions (``bench/fusion_test.jsonl``), the gold papers of the held-out half of the
TL;DR queries (``bench/fusion.py``'s split), and every TL;DR text but those of the training
half (a TL;DR is a benchmark query). The bundled ICML 2026 abstracts are not in the list.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval.corpora import eval_paper_ids  # noqa: E402
from rag.evaluation import split_sentences  # noqa: E402

SHARED = REPO.parent / "shared"
ML = SHARED / "data" / "ml_abstracts.jsonl"
TLDR = SHARED / "bench" / "ml" / "tldr_known_item.jsonl"
WRITTEN_TEST = REPO / "bench" / "fusion_test.jsonl"
OUT = REPO / "bench" / "out" / "verifier"


def held_out(qid: str) -> bool:
    """The TL;DR and SciFact split of ``bench/fusion.py``: odd first byte, never trained on."""
    return hashlib.sha1(qid.encode()).digest()[0] % 2 == 1


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    abstract: str
    sentences: tuple[str, ...]
    tldr: str  # only a training-half TL;DR, else ""
    keywords: tuple[str, ...]


def excluded() -> set[str]:
    ids = eval_paper_ids()
    ids |= {json.loads(x)["paper"] for x in WRITTEN_TEST.read_text().splitlines() if x.strip()}
    for line in TLDR.read_text().splitlines():
        row = json.loads(line)
        if held_out(row["qid"]):
            ids.update(row["gold"])
    return ids


def training_tldrs() -> dict[str, str]:
    """Paper id -> its TL;DR, for the training half of the TL;DR queries only."""
    kept = {}
    for line in TLDR.read_text().splitlines():
        row = json.loads(line)
        if not held_out(row["qid"]) and len(row["gold"]) == 1:
            kept[row["gold"][0]] = row["query"]
    return kept


def papers(min_chars: int = 400) -> list[Paper]:
    """Every usable paper of the ML list, in a fixed order."""
    out, tldrs = excluded(), training_tldrs()
    found = []
    for row in _rows():
        if row["id"] in out or len(row["abstract"]) < min_chars or not row["title"].strip():
            continue
        sentences = tuple(s for s in split_sentences(row["abstract"]) if len(s.split()) >= 4)
        if len(sentences) < 3:
            continue
        found.append(
            Paper(
                row["id"],
                row["title"].strip(),
                row["abstract"],
                sentences,
                tldrs.get(row["id"], ""),
                tuple(k for k in row.get("keywords") or () if isinstance(k, str)),
            )
        )
    return found


def _rows() -> Iterator[dict]:
    with ML.open(encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def shuffled(items: list, seed: int) -> list:
    items = list(items)
    random.Random(seed).shuffle(items)
    return items


_INFORMATIVE = re.compile(r"\d|\b[A-Z][\w-]*[A-Z0-9]|\b(?i:we|our)\b")


def informative(sentence: str) -> bool:
    """A sentence worth asking about: it names, counts or says what the paper does."""
    return bool(_INFORMATIVE.search(sentence)) and 8 <= len(sentence.split()) <= 60
