"""Draw the hand-check samples (fixed seed) and print them for reading.

Usage:  python3 sample.py TOPIC matches|near|targeted [--ids-only]

Each topic gets a fixed random order of the whole corpus:
random.Random(f"{kind}-{TOPIC}-{SEED}").shuffle(sorted ids). A sample is the
first papers of that order that fall in the pool, so refining a definition
only adds/removes the papers whose membership changed (re-checks stay small).

* matches: the first 50 papers (in that order) that the definition matches.
* near: the first 20 papers that do NOT match but contain one of the topic's
  related words (NEAR below).
* targeted: an extra near-miss check (20 papers) from a narrower pool
  (TARGETED below), only for the topics whose broad near-miss sample found no
  miss although misses were suspected.
Matched / related words are shown in [[double brackets]].
"""

import random
import re
import sys
import textwrap

from gold import load_definitions, load_papers, matches, paper_text

SEED = 2024
N_MATCH, N_NEAR = 50, 20

# Related words that define each topic's near-miss pool (case-insensitive).
NEAR = {
    "gan": r"\bdiscriminators?\b|\bgenerators?\b|\badversarial (?:training|learning|networks?|nets?|loss|objective|game|auto-?encoders?|imitation)\b|\bmode collapse\b|\bimplicit generative\b",
    "bayesian_optimization": r"\bacquisition functions?\b|\bhyper-?parameter (?:optimi[sz]ation|tuning|search)\b|\bblack-box optimi[sz]ation\b|\bsurrogate models?\b|\bexpected improvement\b|\bupper confidence bound\b",
    "meta_learning": r"\bmeta\b|\bmeta-\w+|\bfew-shot\b|\bmulti-?task learning\b|\blearning to (?:optimi[sz]e|adapt)\b|\bfast adaptation\b",
    "graph_neural_networks": r"\bgraphs?\b[^.]{0,60}\bneural\b|\bmessage[- ]passing\b|\bnode (?:classification|embeddings?)\b|\bgraph (?:embeddings?|representation learning)\b|\bgraph-structured\b",
    "diffusion_models": r"\bdiffusion\b|\bscore matching\b|\bdenoising\b|\bscore-based\b|\bflow matching\b",
    "variational_autoencoders": r"\bvariational\b[^.]{0,40}\b(?:inference|bayes|lower bound)\b|\bauto-?encoders?\b|\belbo\b|\bamorti[sz]ed inference\b|\bdeep generative models?\b|\blatent variable models?\b",
    "contrastive_self_supervised": r"\bcontrastive\b|\bpre-?train\w*|\bunsupervised representation|\brepresentation learning\b|\bunlabell?ed data\b|\bdata augmentations?\b",
    "multi_armed_bandits": r"\bregret\b|\bexploration[- ]exploitation\b|\barms?\b|\bthompson sampling\b|\bucb\w*\b|\bexp3\b",
    "gaussian_processes": r"\bgaussian\b[^.]{0,30}\b(?:prior|random field|field|kernel|regression)s?\b|\bgps?\b|\bkernel (?:ridge )?regression\b|\bbayesian non-?parametric|\bsurrogate models?\b",
    "rlhf": r"\bhuman feedback\b|\bpreferences?\b[^.]{0,60}\b(?:reward|policy|policies|llms?|language models?|alignment)\b|\balignment\b|\breward models?\b|\bpairwise comparisons?\b",
}


# Narrower near-miss pools for the extra check (both regexes must match).
TARGETED = {
    "diffusion_models": (
        r"\bdiffusion\b",
        r"\bgenerat\w*|\bdenois\w*|\bscore\b|\bsampl\w*|\bpolic(?:y|ies)\b",
    ),
    "contrastive_self_supervised": (
        r"\bcontrastive\b|\bself-?supervis\w*|\bmasked (?:language|image|auto)|\bpretext\b|\bunsupervised representation learning\b",
        r".",
    ),
    "rlhf": (
        r"\bpreferences?\b|\bhuman feedback\b|\breward models?\b",
        r"\blanguage models?\b|\bllms?\b|\breward\w*|\bpolic(?:y|ies)\b|\breinforcement learning\b",
    ),
}


def draw(topic_key, which):
    topic = load_definitions()[topic_key]
    papers = sorted(load_papers(), key=lambda p: p["id"])
    random.Random(f"{which}-{topic_key}-{SEED}").shuffle(papers)
    if which == "matches":
        pool = [p for p in papers if matches(topic, paper_text(p))]
        n, rx = N_MATCH, topic["include"]
    elif which == "near":
        near = re.compile(NEAR[topic_key], re.IGNORECASE)
        pool = [
            p for p in papers if near.search(paper_text(p)) and not matches(topic, paper_text(p))
        ]
        n, rx = N_NEAR, [near]
    else:  # targeted
        a, b = (re.compile(x, re.IGNORECASE) for x in TARGETED[topic_key])
        pool = [
            p
            for p in papers
            if a.search(paper_text(p))
            and b.search(paper_text(p))
            and not matches(topic, paper_text(p))
        ]
        n, rx = N_NEAR, [a]
    return pool, pool[:n], rx


def mark(text, regexes):
    for rx in regexes:
        text = rx.sub(lambda m: f"[[{m.group(0)}]]", text)
    return text


if __name__ == "__main__":
    key, which = sys.argv[1], sys.argv[2]
    pool, sample, rx = draw(key, which)
    print(f"# {key} {which}: pool={len(pool)} sample={len(sample)}")
    for i, p in enumerate(sample, 1):
        if "--ids-only" in sys.argv:
            print(p["id"])
            continue
        print(f"\n## {i}. {p['id']} | {p['venue']} {p['year']}")
        print("T:", mark(p["title"], rx))
        print(textwrap.fill(mark(p["abstract"], rx), 160))
