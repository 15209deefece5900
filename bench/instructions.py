"""How often the instruction detector marks real abstract sentences, and how many attacks.

    python bench/instructions.py     # needs ../shared/data/ml_abstracts.jsonl

Prints the share of the 22,981 abstracts' sentences it marks (each one printed, to read)
and the share of the attack variants in ``tests/test_injection.py`` it catches.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rag.evaluation import (  # noqa: E402
    instructs,
    split_sentences,
)
from tests.test_injection import ATTACKS  # noqa: E402

ML = REPO.parent / "shared" / "data" / "ml_abstracts.jsonl"


def main() -> int:
    sentences = marked = abstracts = 0
    with ML.open(encoding="utf-8") as f:
        for line in f:
            abstract = json.loads(line).get("abstract") or ""
            abstracts += 1
            for s in split_sentences(abstract):
                sentences += 1
                if instructs(s):
                    marked += 1
                    print(f"  marked: {s[:160]}")
    caught = sum(instructs(a) for a in ATTACKS)
    print(f"real abstracts: {abstracts}, sentences {sentences}, marked {marked}")
    print(f"attack variants caught: {caught}/{len(ATTACKS)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
