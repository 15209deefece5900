"""How often the statement check keeps a blend: two sentences of one abstract mixed up.

    python bench/blends.py            # the dev corpora
    python bench/blends.py --test     # the test corpora: summary lines only

``eval/blends/<corpus>.jsonl`` holds, per corpus, 8 statements that join facts of two
sentences of one abstract rightly ("combined") and 8 that attach an element of one sentence
to another sentence's claim ("blend": "X was validated by K-ras mutation analysis" where the
abstract validates X by FISH and analyses K-ras apart), written from the abstracts alone
(checked by ``python eval/blends/check.py``). Each is checked as an answer's statement citing
its paper, with no question (``support.judge``): every word of a blend is the abstract's, so
what the word check can tell apart is measured here, and what a question adds is not
(``rules.ASKED_ELSEWHERE`` needs the question's words).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval.corpora import CORPORA  # noqa: E402
from rag.evaluation import Embedder, split_sentences, support  # noqa: E402


def kept(corpus: str, embedder: Embedder) -> dict[str, list[bool]]:
    """Per kind, whether the word check keeps each statement of ``corpus``."""
    papers = {}
    for line in (REPO / "eval" / "corpora" / f"{corpus}.jsonl").read_text().splitlines():
        p = json.loads(line)
        papers[p["id"]] = p
    out: dict[str, list[bool]] = {"combined": [], "blend": []}
    for line in (REPO / "eval" / "blends" / f"{corpus}.jsonl").read_text().splitlines():
        row = json.loads(line)
        p = papers[row["paper"].removeprefix("id:")]
        sentences = split_sentences(p["abstract"]) or [p["abstract"]]
        abstract = support.Abstract.of(
            1, p["title"], p["abstract"], embedder.embed(sentences), embedder.embed
        )
        statement = support.Statement(row["statement"], (1,), 0)
        vector = embedder.embed_query(support.plain(row["statement"]))
        out[row["kind"]].append(support.judge(statement, vector, {1: abstract}).kept)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--test", action="store_true", help="the test corpora")
    args = parser.parse_args()
    split = "test" if args.test else "dev"
    embedder = Embedder()
    total = {"combined": [0, 0], "blend": [0, 0]}
    print(f"{'corpus':<14}{'combined kept':>15}{'blends kept':>13}")
    for corpus in [c.name for c in CORPORA if c.split == split]:
        result = kept(corpus, embedder)
        for kind, flags in result.items():
            total[kind][0] += sum(flags)
            total[kind][1] += len(flags)
        c, b = result["combined"], result["blend"]
        print(f"{corpus:<14}{f'{sum(c)}/{len(c)}':>15}{f'{sum(b)}/{len(b)}':>13}")
    (ck, cn), (bk, bn) = total["combined"], total["blend"]
    print(f"{split + ' (all)':<14}{f'{ck}/{cn}':>15}{f'{bk}/{bn}':>13}")


if __name__ == "__main__":
    main()
