"""Checks of the blended-statement sets (``python eval/blends/check.py``).

For each corpus file <corpus>.jsonl in this directory:
  * every line is a JSON object with exactly the fields
    paper, statement, supported, kind, note (correct types);
  * "paper" is "id:<id>" and <id> exists in ../corpora/<corpus>.jsonl;
  * kind is "combined" (supported true) or "blend" (supported false);
  * exactly 16 lines: 8 combined + 8 blend, 16 different papers;
  * the abstract has at least 5 sentences;
  * the statement does not reproduce a whole abstract sentence verbatim.
For blend lines it prints the statement words (lowercased, alphabetic,
length >= 4) that are not substrings of the lowercased abstract.  The abstract
is also tried after NFKC normalisation (ligatures such as U+FB01) and removal of
line-break hyphenation ("prin- cipal"), which some PDF-extracted abstracts have.
Exit status 1 if any structural check fails.
"""

import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = os.path.join(HERE, "..", "corpora")
NAMES = ["iclr2018", "colt2022", "aistats2016", "scifact-dev", "corl2023", "neurips2003", "scifact"]
FIELDS = {"paper", "statement", "supported", "kind", "note"}
SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def norm(text):
    t = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"(\w)- (\w)", r"\1\2", t)


def main():
    errors = 0
    total = {"combined": 0, "blend": 0}
    for name in NAMES:
        corpus = {}
        with open(os.path.join(CORPORA, name + ".jsonl"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    corpus[r["id"]] = r
        path = os.path.join(HERE, name + ".jsonl")
        if not os.path.exists(path):
            print(f"[{name}] MISSING FILE {path}")
            errors += 1
            continue
        with open(path, encoding="utf-8") as f:
            lines = [row for row in f if row.strip()]
        counts = {"combined": 0, "blend": 0}
        papers = set()
        print(f"== {name}: {len(lines)} lines")
        for n, line in enumerate(lines, 1):

            def err(msg, n=n):
                nonlocal errors
                errors += 1
                print(f"  ERROR line {n}: {msg}")

            try:
                o = json.loads(line)
            except json.JSONDecodeError as e:
                err(f"bad JSON: {e}")
                continue
            if set(o) != FIELDS:
                err(f"fields {sorted(o)} != {sorted(FIELDS)}")
                continue
            if not all(
                isinstance(o[k], str) and o[k].strip()
                for k in ("paper", "statement", "note", "kind")
            ):
                err("paper/statement/note/kind must be non-empty strings")
                continue
            if not isinstance(o["supported"], bool):
                err("supported must be a JSON boolean")
            if not o["paper"].startswith("id:"):
                err(f"paper must start with 'id:': {o['paper']}")
                continue
            pid = o["paper"][3:]
            if pid not in corpus:
                err(f"paper id {pid} not in corpus {name}")
                continue
            if pid in papers:
                err(f"paper {pid} used twice")
            papers.add(pid)
            kind = o["kind"]
            if kind not in counts:
                err(f"kind {kind!r} invalid")
                continue
            counts[kind] += 1
            if (kind == "combined") != (o["supported"] is True):
                err(f"kind {kind} with supported={o['supported']}")
            abstract = corpus[pid]["abstract"]
            sents = SENT.split(abstract.strip())
            if len(sents) < 5:
                err(f"abstract of {pid} has only {len(sents)} sentences")
            st = o["statement"].strip().rstrip(".").lower()
            for s in sents:
                s2 = s.strip().rstrip(".").lower()
                if len(s2) > 20 and s2 in st:
                    err(f"statement contains a whole abstract sentence: {s[:60]}...")
            if kind == "blend":
                low, nrm = abstract.lower(), norm(abstract)
                words = re.findall(r"[a-z]+", o["statement"].lower())
                missing = sorted(
                    {w for w in words if len(w) >= 4 and w not in low and w not in nrm}
                )
                print(f"  blend line {n} ({pid}): missing {missing}")
        if len(lines) != 16 or counts != {"combined": 8, "blend": 8}:
            errors += 1
            print(f"  ERROR counts {counts}, {len(lines)} lines (want 8+8=16)")
        print(f"  counts: {counts}, distinct papers: {len(papers)}")
        for k in total:
            total[k] += counts[k]
    print(f"TOTAL: {total}; errors: {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
