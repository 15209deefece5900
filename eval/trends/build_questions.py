"""Write questions.jsonl: the question texts below plus gold answers computed
from gold.json (counts) and the JSONL (author strings of the matched papers).

Usage:  python3 build_questions.py      (run gold.py first)

Gold fields by kind:
  trend   : gold_per_year  {year: {count, total, share}} for the years in range
            that have papers under the filter; years_with_papers; years_without_papers
  authors : gold_authors   [[author string as stored, matched papers], ...]
            (top 5 positions, ties at the 5th count included);
            author_variants: other spellings of the same person found among the
            matched papers (exact-string counts are NOT merged)
  venues  : years_compared (years in range where every compared venue has papers),
            gold_venues {venue: {count, total, share}}, more_common_by_share,
            more_common_by_count
A vague question has vague: true and no gold.
"""

import json
import re
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from gold import load_papers

HERE = Path(__file__).resolve().parent

QUESTIONS = [
    # ---- trend -----------------------------------------------------------
    dict(
        split="dev",
        kind="trend",
        topic="gan",
        year_min=2014,
        year_max=2019,
        question="How has work on generative adversarial networks changed from 2014 to 2019?",
        note="All venues. NeurIPS and ICLR have no 2019 papers in this corpus, so the 2019 "
        "total is smaller and drawn from other venues; compare shares, not raw counts.",
    ),
    dict(
        split="test",
        kind="trend",
        topic="diffusion_models",
        year_min=2020,
        year_max=2025,
        question="How did research on diffusion models evolve between 2020 and 2025?",
        note="All venues. Venue mix changes over these years (CoRL from 2021, COLM from 2024).",
    ),
    dict(
        split="test",
        kind="trend",
        topic="gaussian_processes",
        venue="NeurIPS",
        year_min=1995,
        year_max=2018,
        question="How has the amount of NeurIPS work on Gaussian processes changed from 1995 to 2018?",
    ),
    dict(
        split="dev",
        kind="trend",
        topic="multi_armed_bandits",
        venue="COLT",
        year_min=2011,
        year_max=2024,
        question="Did multi-armed bandit research at COLT grow between 2011 and 2024?",
        note="Counts roughly double while the share of COLT papers falls; a good answer "
        "distinguishes the two.",
    ),
    dict(
        split="test",
        kind="trend",
        topic="rlhf",
        year_min=2017,
        year_max=2025,
        question="How has research on reinforcement learning from human feedback and "
        "preference-based alignment developed from 2017 to 2025?",
        note="All venues; most matches come from COLM (2024-2025 only).",
    ),
    dict(
        split="dev",
        kind="trend",
        topic="variational_autoencoders",
        venue="ICLR",
        year_min=2013,
        year_max=2018,
        question="How did work on variational autoencoders at ICLR change from 2013 to 2018?",
        note="Only some years in this range have ICLR papers in the corpus "
        "(see years_with_papers); 2015 and 2016 are absent, not zero.",
    ),
    dict(
        split="test",
        kind="trend",
        topic="contrastive_self_supervised",
        year_min=2016,
        year_max=2025,
        question="How has the popularity of contrastive and self-supervised learning changed "
        "between 2016 and 2025?",
        note="All venues; venue coverage changes (NeurIPS ends 2018, ICML 2019, CoRL starts 2021).",
    ),
    dict(
        split="dev",
        kind="trend",
        topic="machine_learning",
        vague=True,
        year_min=1987,
        year_max=2025,
        question="How has machine learning research changed over the years?",
        note="Too vague to count: every paper in the corpus is machine learning. Expected "
        "behaviour: say so and ask for / suggest a narrower topic; no gold counts.",
    ),
    # ---- authors ---------------------------------------------------------
    dict(
        split="dev",
        kind="authors",
        topic="bayesian_optimization",
        question="Which authors publish most on Bayesian optimization?",
    ),
    dict(
        split="test",
        kind="authors",
        topic="multi_armed_bandits",
        venue="COLT",
        question="Who are the most prolific authors of multi-armed bandit papers at COLT?",
    ),
    dict(
        split="dev",
        kind="authors",
        topic="gaussian_processes",
        venue="AISTATS",
        question="Which authors have written the most AISTATS papers on Gaussian processes?",
    ),
    dict(
        split="test",
        kind="authors",
        topic="graph_neural_networks",
        question="Who are the leading authors on graph neural networks in this collection?",
    ),
    # ---- venues ----------------------------------------------------------
    dict(
        split="dev",
        kind="venues",
        topic="meta_learning",
        venues=["ICLR", "NeurIPS"],
        question="Is meta-learning more common at ICLR or at NeurIPS?",
    ),
    dict(
        split="test",
        kind="venues",
        topic="gaussian_processes",
        venues=["AISTATS", "ICML"],
        question="Are Gaussian processes a bigger topic at AISTATS or at ICML?",
        note="AISTATS is ahead by share, ICML by raw count over the compared years.",
    ),
    dict(
        split="test",
        kind="venues",
        topic="diffusion_models",
        venues=["CoRL", "AISTATS"],
        question="Are diffusion models more common at CoRL or at AISTATS?",
    ),
]


def person_key(name):
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    toks = [t for t in re.split(r"[\s.]+", s) if len(t) > 1]
    return (toks[0], toks[-1]) if toks else (s,)


def main():
    gold = json.loads((HERE / "gold.json").read_text())
    papers = {p["id"]: p for p in load_papers()}
    totals = gold["totals"]["per_venue_year"]
    out = []
    for q in QUESTIONS:
        q = dict(q)
        q.setdefault("venue", None)
        q.setdefault("year_min", None)
        q.setdefault("year_max", None)
        q.setdefault("venues", None)
        q.setdefault("vague", False)
        if q["vague"]:
            out.append(q)
            continue
        t = gold["topics"][q["topic"]]
        lo, hi = q["year_min"] or 0, q["year_max"] or 9999

        def in_range(y, lo=lo, hi=hi):
            return lo <= int(y) <= hi

        if q["kind"] == "trend":
            venues = [q["venue"]] if q["venue"] else list(totals)
            per_year = {}
            for y in range(lo, hi + 1):
                total = sum(totals[v].get(str(y), 0) for v in venues)
                count = sum(t["per_venue_year"].get(v, {}).get(str(y), 0) for v in venues)
                if total:
                    per_year[str(y)] = dict(count=count, total=total, share=round(count / total, 4))
            q["gold_per_year"] = per_year
            q["years_with_papers"] = [int(y) for y in per_year]
            q["years_without_papers"] = [y for y in range(lo, hi + 1) if str(y) not in per_year]
        elif q["kind"] == "authors":
            counts, variants = Counter(), defaultdict(Counter)
            for pid in t["ids"]:
                p = papers[pid]
                if q["venue"] and p["venue"] != q["venue"]:
                    continue
                if not in_range(p["year"]):
                    continue
                for a in p["authors"]:
                    counts[a] += 1
                    variants[person_key(a)][a] += 1
            ranked = counts.most_common()
            cutoff = ranked[min(4, len(ranked) - 1)][1]
            top = [[a, n] for a, n in ranked if n >= cutoff]
            q["gold_authors"] = top
            q["author_variants"] = {
                a: {v: n for v, n in variants[person_key(a)].items() if v != a}
                for a, _ in top
                if len(variants[person_key(a)]) > 1
            }
        elif q["kind"] == "venues":
            years = [
                y
                for y in totals[q["venues"][0]]
                if in_range(y) and all(totals[v].get(y, 0) for v in q["venues"])
            ]
            gv = {}
            for v in q["venues"]:
                count = sum(t["per_venue_year"].get(v, {}).get(y, 0) for y in years)
                total = sum(totals[v][y] for y in years)
                gv[v] = dict(count=count, total=total, share=round(count / total, 4))
            q["years_compared"] = [int(y) for y in sorted(years)]
            q["gold_venues"] = gv
            q["more_common_by_share"] = max(gv, key=lambda v: gv[v]["share"])
            q["more_common_by_count"] = max(gv, key=lambda v: gv[v]["count"])
        out.append(q)
    with open(HERE / "questions.jsonl", "w") as f:
        for q in out:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    print(
        f"{len(out)} questions;", Counter(q["kind"] for q in out), Counter(q["split"] for q in out)
    )


if __name__ == "__main__":
    main()
