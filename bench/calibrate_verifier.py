"""Calibrate the verifier's thresholds on the dev corpora; report them on the test corpora.

    python bench/calibrate_verifier.py            # dev: sweep, choose, print
    python bench/calibrate_verifier.py --write    # ... and store them in the model manifest
    python bench/calibrate_verifier.py --test     # the chosen thresholds on the test corpora

Three uses, each from rows written from the abstracts alone (``eval/questions``,
``eval/statements``):

- ``support``: labelled statements about one paper (supported or not). Compared: the word-
  level check alone (``rag.answer.support`` before the verifier), the verifier alone, and the
  verifier behind the word-level checks of numbers, names and formulas.
- ``answers``: questions asked of one paper whose abstract answers them (``specific``,
  ``numeric``) against those it does not (``unstated``).
- ``member``: list questions against every paper of their corpus (members or not), and
  false-premise questions against every paper (none is).

Test corpora are only scored with thresholds chosen on dev.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval.corpora import CORPORA  # noqa: E402
from rag.evaluation import (  # noqa: E402
    Embedder,
    Verifier,
    split_sentences,
    support,
)

USES = ("support", "answers", "member")


@dataclass
class Paper:
    id: str
    title: str
    abstract: str
    sentences: list[str]


@dataclass
class Row:
    use: str
    corpus: str
    text: str
    paper: str
    label: bool
    kind: str
    logit: float = 0.0
    words_ok: bool = True  # the word-level checks of numbers, names and formulas pass
    old: bool = False  # the word-level check alone keeps it (statements)


def load_papers(name: str) -> dict[str, Paper]:
    path = REPO / "eval" / "corpora" / f"{name}.jsonl"
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        sentences = split_sentences(p["abstract"]) or [p["abstract"]]
        out[p["id"]] = Paper(p["id"], p["title"], p["abstract"], sentences)
    return out


def rows_of(name: str, papers: dict[str, Paper]) -> list[Row]:
    rows = []
    for line in (REPO / "eval" / "statements" / f"{name}.jsonl").read_text().splitlines():
        r = json.loads(line)
        pid = r["paper"].removeprefix("id:")
        rows.append(Row("support", name, r["statement"], pid, r["supported"], r["kind"]))
    for line in (REPO / "eval" / "questions" / f"{name}.jsonl").read_text().splitlines():
        q = json.loads(line)
        kind, rel = q["kind"], [r.removeprefix("id:") for r in q.get("relevant", [])]
        if kind in ("specific", "numeric") and len(rel) == 1:
            rows.append(Row("answers", name, q["question"], rel[0], True, kind))
        elif kind == "unstated":
            rows.append(Row("answers", name, q["question"], rel[0], False, kind))
        elif kind == "list":
            rows += [Row("member", name, q["question"], pid, pid in rel, kind) for pid in papers]
        elif kind == "false_premise":
            rows += [Row("member", name, q["question"], pid, False, kind) for pid in papers]
    return rows


def score_rows(rows: list[Row], papers: dict[str, dict[str, Paper]], verifier: Verifier) -> None:
    embedder = Embedder()
    for row in rows:
        p = papers[row.corpus][row.paper]
        row.logit = verifier.read(row.text, p.title, p.sentences).logit
        if row.use == "support":
            abstract = support.Abstract.of(
                1, p.title, p.abstract, embedder.embed(p.sentences), embedder.embed
            )
            row.words_ok = not support.unsupported(row.text, abstract)
            vector = embedder.embed_query(support.plain(row.text))
            statement = support.Statement(row.text, (1,), 0)
            row.old = support.judge(statement, vector, {1: abstract}).kept


def prf(decided: np.ndarray, labels: np.ndarray) -> tuple[float, float, float]:
    tp = float((decided & labels).sum())
    precision = tp / decided.sum() if decided.sum() else 1.0
    recall = tp / labels.sum() if labels.sum() else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def choose(rows: list[Row], use: str) -> float:
    """The threshold: for support, the lowest whose precision (behind the word checks) is at
    least 0.95 on dev, else the best F0.5; for the others, the best balanced accuracy
    (answers) or F1 (member)."""
    sel = [r for r in rows if r.use == use]
    logits = np.array([r.logit for r in sel])
    labels = np.array([r.label for r in sel])
    words = np.array([r.words_ok for r in sel])
    best, best_t = -1.0, 0.0
    for t in np.arange(-6, 6.01, 0.1):
        decided = (logits >= t) & (words if use == "support" else True)
        p, r, f1 = prf(decided, labels)
        if use == "support":
            f05 = 1.25 * p * r / (0.25 * p + r) if p + r else 0.0
            value = r if p >= 0.95 and r > 0 else -1 + f05
        elif use == "answers":
            tnr = float((~decided & ~labels).sum() / max((~labels).sum(), 1))
            value = (r + tnr) / 2
        else:
            value = f1
        if value > best:
            best, best_t = value, float(t)
    return round(best_t, 2)


def report(rows: list[Row], thresholds: dict[str, float], title: str) -> None:
    print(f"\n== {title}")
    for use in USES:
        sel = [r for r in rows if r.use == use]
        if not sel:
            continue
        labels = np.array([r.label for r in sel])
        logits = np.array([r.logit for r in sel])
        t = thresholds[use]
        print(f"{use}: {len(sel)} rows ({int(labels.sum())} positive), threshold {t:+.2f}")
        systems = {"verifier": logits >= t}
        if use == "support":
            words = np.array([r.words_ok for r in sel])
            systems = {
                "word-level check alone (before)": np.array([r.old for r in sel]),
                "verifier alone": logits >= t,
                "word checks + verifier": (logits >= t) & words,
            }
        for name, decided in systems.items():
            p, r, f1 = prf(decided, labels)
            extra = ""
            if use == "answers":
                tnr = float((~decided & ~labels).sum() / max((~labels).sum(), 1))
                extra = f"  unstated caught {tnr:.3f}"
            print(f"  {name:34s} precision {p:.3f}  recall {r:.3f}  F1 {f1:.3f}{extra}")
        curve = []
        for t_ in np.arange(-4, 6.01, 1.0):
            dec = (logits >= t_) & (
                np.array([r.words_ok for r in sel]) if use == "support" else True
            )
            p, r, _ = prf(dec, labels)
            curve.append(f"{t_:+.0f}: {p:.2f}/{r:.2f}")
        print("    precision/recall by threshold  " + "  ".join(curve))
        for corpus in dict.fromkeys(r.corpus for r in sel):
            part = [r for r in sel if r.corpus == corpus]
            lab = np.array([r.label for r in part])
            dec = np.array([r.logit >= t for r in part])
            if use == "support":
                dec &= np.array([r.words_ok for r in part])
            p, r, f1 = prf(dec, lab)
            print(f"    {corpus:12s} precision {p:.3f}  recall {r:.3f}  F1 {f1:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the thresholds")
    parser.add_argument("--test", action="store_true", help="report on the test corpora")
    parser.add_argument("--show", action="store_true", help="print the dev rows decided wrong")
    args = parser.parse_args(argv)
    verifier = Verifier()
    split = "test" if args.test else "dev"
    names = [c.name for c in CORPORA if c.split == split]
    papers = {n: load_papers(n) for n in names}
    rows = [r for n in names for r in rows_of(n, papers[n])]
    score_rows(rows, papers, verifier)
    if args.test:
        thresholds = verifier.model.thresholds
    else:
        thresholds = {use: choose(rows, use) for use in USES}
    report(rows, thresholds, f"{split} corpora: {', '.join(names)}")
    if args.show and not args.test:
        for r in rows:
            decided = r.logit >= thresholds[r.use] and (r.words_ok or r.use != "support")
            if decided != r.label and (r.use != "member" or r.label or r.logit > 0):
                print(f"  [{r.use}/{r.kind}] {'kept' if decided else 'missed'} "
                      f"{r.logit:+.2f} {r.text[:150]}")  # fmt: skip
    if args.write and not args.test:
        path = verifier.model.folder / "manifest.json"
        manifest = json.loads(path.read_text())
        manifest["thresholds"] = thresholds
        path.write_text(json.dumps(manifest, indent=1) + "\n")
        print(f"thresholds written to {path.relative_to(REPO)}: {thresholds}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
