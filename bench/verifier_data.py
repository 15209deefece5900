"""Training pairs for the verifier: (statement or question, a window of an abstract) -> does
the window state it?

    python bench/verifier_data.py [--papers 9000]     # -> bench/out/verifier/pairs.jsonl

A window is a paper's title and two consecutive sentences of its abstract, as the product
reads them (``rag.answer.verifier.windows``). Made from the training pool (``verifier_pool.py``):

supported (1)
  a sentence as an answer would say it ("We propose X" -> "<Name> proposes X"), one of its
  clauses, the sentence without its asides; the local model's paraphrase of it
  (``verifier_llm.py``); the model's question it answers; the model's "Which paper ...?"
  question about the paper, and a written needle question (``bench/fusion_train.jsonl``),
  against the paper's closest window; "Which papers are about <keyword>?" for a keyword the
  paper lists and its abstract says; SciFact training claims against their evidence
  (SUPPORT).
unsupported (0)
  the same statement with a number changed, a name swapped for a neighbouring abstract's, a
  negation, a widened claim ("the first", "all", "always"), a name the neighbour uses added;
  a neighbouring paper's own sentence given to this paper; a sentence about earlier work
  given to this paper; a statement or question against a window of the same abstract that
  does not hold it; a question about the paper against a neighbour's closest window; a
  question with a name swapped; SciFact training claims against evidence that contradicts
  them.

Neighbours are the most similar abstracts by TF-IDF. Every random choice is seeded.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from verifier_pool import OUT, REPO, SHARED, Paper, held_out, informative, papers, shuffled

from eval.corpora import eval_paper_ids, scifact_sentences
from rag.evaluation import (
    GENERIC_STEMS,
    about_earlier_work,
    method_name,
    names_in,
    tokenize,
    windows,
)

SEED = 2026
WRITTEN = REPO / "bench" / "fusion_train.jsonl"
SCIFACT = SHARED / "bench" / "scifact"


@dataclass(frozen=True)
class Pair:
    query: str
    evidence: str
    label: int
    kind: str
    paper: str

    def json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=9000, help="papers to draw sentences from")
    args = parser.parse_args()
    pool = papers()
    by_id = {p.id: p for p in pool}
    chosen = shuffled(pool, SEED)[: args.papers]
    llm_rows = _llm_rows(by_id)
    written = _written(by_id)
    with_keywords = shuffled([p for p in pool if p.keywords], SEED)[: args.papers // 6]
    needed = {p.id for p in chosen} | {p for p, _ in written} | {r["paper"] for r in llm_rows}
    needed |= {p.id for p in with_keywords} | {p.id for p in pool if p.tldr}
    near = neighbours(pool, needed)
    rng = random.Random(SEED)
    pairs: list[Pair] = []
    for paper in chosen:
        pairs += sentence_pairs(paper, by_id[near[paper.id][0]], rng)
        pairs += question_pairs(paper, [by_id[n] for n in near[paper.id][:3]], rng)
    for row in llm_rows:
        paper = by_id[row["paper"]]
        pairs += llm_pairs(paper, row, [by_id[n] for n in near[paper.id][:3]], rng)
    for pid, question in written:
        pairs += find_pairs(question, by_id[pid], [by_id[n] for n in near[pid][:3]], "written")
    for paper in pool:
        if paper.tldr:
            ev = evidence(paper, closest_window(paper, paper.tldr))
            pairs.append(Pair(paper.tldr, ev, 1, "tldr", paper.id))
            other = by_id[near[paper.id][0]] if paper.id in near else None
            if other is not None and foreign(paper.tldr, other):
                ev = evidence(other, closest_window(other, paper.tldr))
                pairs.append(Pair(paper.tldr, ev, 0, "tldr_neighbour", other.id))
    for paper in with_keywords:
        pairs += keyword_pairs(paper, [by_id[n] for n in near[paper.id][:3]], rng)
    pairs += scifact_pairs()
    pairs = shuffled(pairs, SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "pairs.jsonl").write_text("".join(p.json() + "\n" for p in pairs), encoding="utf-8")
    counts = Counter((p.kind, p.label) for p in pairs)
    for (kind, label), n in sorted(counts.items()):
        print(f"{kind:22s} {label} {n:6d}")
    print(f"{len(pairs)} pairs, {sum(p.label for p in pairs)} supported -> {OUT / 'pairs.jsonl'}")
    return 0


# -- neighbours --------------------------------------------------------------------------------
def neighbours(pool: list[Paper], needed: set[str], n: int = 5) -> dict[str, list[str]]:
    """For each needed paper, the ``n`` most similar other papers by TF-IDF cosine."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = [f"{p.title} {p.abstract}" for p in pool]
    matrix = TfidfVectorizer(sublinear_tf=True, min_df=2, stop_words="english").fit_transform(texts)
    rows = [i for i, p in enumerate(pool) if p.id in needed]
    found = {}
    for start in range(0, len(rows), 512):
        block = rows[start : start + 512]
        sims = (matrix[block] @ matrix.T).toarray()
        sims[np.arange(len(block)), block] = -1
        best = np.argsort(-sims, axis=1)[:, :n]
        for i, row in zip(block, best, strict=True):
            found[pool[i].id] = [pool[j].id for j in row]
    return found


# -- answers as a model writes them ------------------------------------------------------------
_OPENING = re.compile(r"^(?:[A-Za-z][^,;:]{0,60},\s+|here\s+|then\s+|thus\s+)?we\s+", re.I)
_ADVERBS = {"also", "further", "then", "first", "empirically", "theoretically", "additionally",
            "experimentally", "formally", "carefully", "systematically", "next", "finally",
            "here", "now", "therefore", "thus", "instead", "still", "hence"}  # fmt: skip
_KEEP = {"can", "could", "will", "would", "may", "might", "must", "should"}


def subject_of(paper: Paper) -> str:
    name = method_name(paper.title)
    return name if name else "The paper"


def third_person(verb: str) -> str:
    irregular = {"are": "is", "have": "has", "do": "does", "were": "was"}
    if verb.lower() in irregular:
        return irregular[verb.lower()]
    if verb.lower() in _KEEP or re.search(r"ed$", verb):
        return verb
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def as_claim(sentence: str, subject: str) -> str:
    """A sentence of the paper as an answer says it: "We propose X" -> "<subject> proposes
    X"; "our" -> "its". Sentences not opening with "we" are kept as they are."""
    m = _OPENING.match(sentence)
    if not m:
        text = sentence
    else:
        words = sentence[m.end() :].split()
        lead = []
        while words and words[0].lower() in _ADVERBS:
            lead.append(words.pop(0))
        if not words:
            return sentence
        verb = third_person(words[0])
        text = " ".join([subject, *lead, verb, *words[1:]])
    text = re.sub(r"\bour\b", "its", text)
    text = re.sub(r"\bOur\b", "Its", text)
    text = re.sub(r"\b[Ww]e\b", "the authors", text)
    return text[0].upper() + text[1:]


# -- perturbations: each returns "" when it does not apply --------------------------------------
# words an answer uses for the abstract's (both ways): a reworded sentence says the same
_SYNONYMS = [
    ("propose", "introduce"), ("proposes", "introduces"), ("show", "demonstrate"),
    ("shows", "demonstrates"), ("method", "approach"), ("methods", "approaches"),
    ("improves", "boosts"), ("significantly", "substantially"), ("novel", "new"),
    ("utilize", "use"), ("utilizes", "uses"), ("leverages", "uses"), ("obtain", "get"),
    ("achieves", "attains"), ("state-of-the-art", "leading"), ("experiments", "evaluations"),
    ("results", "findings"), ("efficient", "fast"), ("framework", "system"),
    ("outperforms", "beats"), ("approximately", "about"), ("enables", "allows"),
    ("large", "big"), ("accurate", "precise"), ("problem", "task"), ("tasks", "problems"),
]  # fmt: skip


def reword(text: str, rng: random.Random) -> str:
    """Swap a few words for ones that say the same, drop an adverb."""
    pairs = _SYNONYMS + [(b, a) for a, b in _SYNONYMS]
    found = [(a, b) for a, b in pairs if re.search(rf"\b{re.escape(a)}\b", text)]
    for a, b in rng.sample(found, min(2, len(found))):
        text = re.sub(rf"\b{re.escape(a)}\b", b, text, count=1)
    text = re.sub(r"\b(very|also|further|simply|easily|often|clearly)\s+", "", text, count=1)
    return text


def summary(paper: Paper, index: int, subject: str) -> str:
    """The first clause of a sentence and of the next one, joined: what a summary says."""
    heads = []
    for s in paper.sentences[index : index + 2]:
        head = re.split(r"[,;:]\s+|\s+(?:which|while|whereas|by|thereby)\s+", as_claim(s, subject))[
            0
        ]
        if len(head.split()) < 4:
            return ""
        heads.append(head.rstrip(" ."))
    second = heads[1]
    second = (
        second[len(subject) + 1 :]
        if second.startswith(subject + " ")
        else second[0].lower() + second[1:]
    )
    return f"{heads[0]}, and {second}."


def swap_number(text: str, rng: random.Random) -> str:
    found = [m for m in re.finditer(r"(?<![\w.-])(\d+(?:\.\d+)?)(?![\w-])", text)]
    if not found:
        return ""
    m = rng.choice(found)
    old = m.group(1)
    if "." in old:
        digits = len(old.split(".")[1])
        new = (
            f"{float(old) * rng.choice([0.5, 0.8, 1.25, 1.5, 2]) + rng.choice([0.1, 1]):.{digits}f}"
        )
    else:
        value = int(old)
        new = str(rng.choice([value + rng.randint(1, 9), max(0, value - rng.randint(1, 5)),
                              value * 2, value * 10]))  # fmt: skip
    if new == old:
        return ""
    return text[: m.start(1)] + new + text[m.end(1) :]


def swap_name(text: str, own: Paper, other: Paper, rng: random.Random) -> str:
    mine = [n for n in names_in(text) if len(n) > 2 and n.lower() not in own.title.lower()[:0]]
    theirs = [
        n
        for n in dict.fromkeys(names_in(other.abstract))
        if len(n) > 2 and n.lower() not in own.abstract.lower()
    ]
    if not mine or not theirs:
        return ""
    old = rng.choice(mine)
    new = rng.choice(theirs)
    return re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", lambda _: new, text, count=1)


_NEGATIONS = [
    (r"\boutperforms\b", "underperforms"),
    (r"\bimproves\b", "degrades"),
    (r"\bincreases\b", "decreases"),
    (r"\bdecreases\b", "increases"),
    (r"\breduces\b", "increases"),
    (r"\bbetter\b", "worse"),
    (r"\bfaster\b", "slower"),
    (r"\bhigher\b", "lower"),
    (r"\blower\b", "higher"),
    (r"\bmore\b", "less"),
    (r"\bcan\b", "cannot"),
    (r"\bis\b", "is not"),
    (r"\bare\b", "are not"),
    (r"\bwithout\b", "with"),
    (r"\brequires\b", "does not require"),
    (r"\b(achieves|attains|reaches|obtains)\b", "fails to reach"),
    (r"\b(significantly|substantially|consistently)\b", "rarely"),
    (r"\b(converges)\b", "diverges"),
    (r"\b(possible)\b", "impossible"),
]


def negate(text: str, subject: str, rng: random.Random) -> str:
    options = [(p, r) for p, r in _NEGATIONS if re.search(p, text)]
    if text.startswith(subject + " "):
        verb = text[len(subject) + 1 :].split(" ", 1)
        if len(verb) == 2 and verb[0].endswith("s") and verb[0] not in ("is", "has", "was"):
            options.append(
                (rf"^{re.escape(subject)} {verb[0]}\b", f"{subject} does not {_base(verb[0])}")
            )
    if not options:
        return ""
    pattern, repl = rng.choice(options)
    return re.sub(pattern, lambda _: repl, text, count=1)


def _base(verb: str) -> str:
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(sses|shes|ches|xes|zes|oes)$", verb):
        return verb[:-2]
    return verb[:-1]


def widen(text: str, subject: str, rng: random.Random) -> str:
    options = []
    if text.startswith(subject + " "):
        rest = text[len(subject) + 1 :]
        verb, _, tail = rest.partition(" ")
        if verb.endswith("s") and tail and verb not in ("is", "has", "was"):
            options.append(f"{subject} is the first to {_base(verb)} {tail}")
    m = re.search(r"\b(outperforms|improves on|beats|surpasses)\b\s+(.*)$", text)
    if m:
        options.append(text[: m.start(2)] + "all existing methods on every benchmark.")
    m = re.search(r"\b(improves|outperforms|converges|achieves|reduces|increases|matches)\b", text)
    if m:
        options.append(text[: m.start()] + "always " + text[m.start() :])
    m = re.search(r"\b(some|several|many|most|certain)\b", text)
    if m:
        options.append(text[: m.start()] + "all" + text[m.end() :])
    return rng.choice(options) if options else ""


def add_name(text: str, own: Paper, other: Paper, rng: random.Random) -> str:
    theirs = [n for n in dict.fromkeys(names_in(other.abstract))
              if len(n) > 2 and n.lower() not in own.abstract.lower()]  # fmt: skip
    if not theirs:
        return ""
    body = text.rstrip(" .")
    return f"{body} {rng.choice(['on', 'using', 'with', 'compared with'])} {rng.choice(theirs)}."


_EARLIER_SUBJECT = re.compile(
    r"^(?:however,\s+)?(?:(?:most|many|existing|prior|previous|current|conventional|traditional|"
    r"standard|typical|recent)\s+(?:\w+\s+)?(?:methods|approaches|works|techniques|models|"
    r"algorithms|systems|studies|solutions))\s+(\w+)\s+",
    re.I,
)


def earlier_as_own(sentence: str, subject: str) -> str:
    """ "Existing methods rely on X" -> "<subject> relies on X" (unsupported)."""
    m = _EARLIER_SUBJECT.match(sentence)
    if not m or m.group(1).lower() in _NOT_VERBS:
        return ""
    return f"{subject} {third_person(m.group(1))} {sentence[m.end() :]}"


_NOT_VERBS = set("to of for in on with that which by from as at and or the a an".split())


# -- pairs -------------------------------------------------------------------------------------
def evidence(paper: Paper, window: str) -> str:
    return f"{paper.title}. {window}"


def window_of(paper: Paper, index: int) -> tuple[int, str]:
    """The window (number, text) that starts with sentence ``index``, or ends with it for the
    last sentence."""
    ws = windows(paper.sentences)
    start = min(index, len(ws) - 1)
    return start, ws[start]


def far_windows(paper: Paper, text: str) -> list[str]:
    """Windows of the paper that share little with ``text``: they do not state it."""
    said = set(_stems(text))
    far = []
    for w in windows(paper.sentences):
        have = set(_stems(w))
        if said and len(said & have) / len(said) < 0.3:
            far.append(w)
    return far


def closest_window(paper: Paper, text: str) -> str:
    said = set(_stems(text))
    return max(windows(paper.sentences), key=lambda w: len(said & set(_stems(w))))


def _stems(text: str) -> list[str]:
    return [s for s in tokenize(text) if s not in GENERIC_STEMS]


def foreign(text: str, paper: Paper) -> bool:
    """``text`` says something ``paper`` does not: a name, or two content words it lacks."""
    have = set(tokenize(f"{paper.title} {paper.abstract}"))
    lower = paper.abstract.lower() + paper.title.lower()
    missing_names = [n for n in names_in(text) if n.lower() not in lower]
    missing = [s for s in set(_stems(text)) if s not in have]
    return bool(missing_names) or len(missing) >= 2


def sentence_pairs(paper: Paper, neighbour: Paper, rng: random.Random) -> list[Pair]:
    subject = subject_of(paper)
    out: list[Pair] = []
    choices = [i for i, s in enumerate(paper.sentences) if informative(s)]
    for index in rng.sample(choices, min(2, len(choices))):
        sentence = paper.sentences[index]
        _, window = window_of(paper, index)
        ev = evidence(paper, window)
        claim = as_claim(sentence, subject)
        own = not about_earlier_work(sentence, method_name(paper.title))
        if own:
            out.append(Pair(claim, ev, 1, "sentence", paper.id))
            parts = [
                p.strip(" ,;") for p in re.split(r"[,;]\s+|\s+(?:while|whereas|which)\s+", claim)
            ]
            parts = [p for p in parts if len(p.split()) >= 6]
            if len(parts) > 1:
                out.append(Pair(rng.choice(parts), ev, 1, "clause", paper.id))
            short = re.sub(r"\s*\([^()]*\)", "", claim)
            if short != claim:
                out.append(Pair(short, ev, 1, "shortened", paper.id))
            reworded = reword(claim, rng)
            if reworded != claim:
                out.append(Pair(reworded, ev, 1, "reworded", paper.id))
                if bad := swap_number(reworded, rng) or negate(reworded, subject, rng):
                    out.append(Pair(bad, ev, 0, "reworded_changed", paper.id))
            if index + 1 < len(paper.sentences) and (joined := summary(paper, index, subject)):
                out.append(Pair(joined, ev, 1, "summary", paper.id))
            for kind, bad in (
                ("number_swap", swap_number(claim, rng)),
                ("name_swap", swap_name(claim, paper, neighbour, rng)),
                ("negation", negate(claim, subject, rng)),
                ("widened", widen(claim, subject, rng)),
                (
                    "added_name",
                    add_name(claim, paper, neighbour, rng) if rng.random() < 0.4 else "",
                ),
            ):
                if bad and bad != claim:
                    out.append(Pair(bad, ev, 0, kind, paper.id))
            far = far_windows(paper, sentence)
            if far:
                out.append(Pair(claim, evidence(paper, rng.choice(far)), 0, "elsewhere", paper.id))
        elif bad := earlier_as_own(sentence, subject):
            out.append(Pair(bad, ev, 0, "earlier_work", paper.id))
    # a neighbour's own claim, given to this paper
    theirs = [
        s for s in neighbour.sentences if informative(s) and re.search(r"\b(we|our)\b", s, re.I)
    ]
    if theirs:
        claim = as_claim(rng.choice(theirs), subject)
        if foreign(claim, paper):
            out.append(
                Pair(claim, evidence(paper, closest_window(paper, claim)), 0, "neighbour", paper.id)
            )
    return out


def llm_pairs(paper: Paper, row: dict, near: list[Paper], rng: random.Random) -> list[Pair]:
    out: list[Pair] = []
    index = row["sentence"]
    sentence = paper.sentences[index]
    _, window = window_of(paper, index)
    ev = evidence(paper, window)
    question, paraphrase, find = row["question"], row["paraphrase"], row["gist"]
    if paraphrase:
        out.append(Pair(paraphrase, ev, 1, "paraphrase", paper.id))
        bad = swap_number(paraphrase, rng) or swap_name(paraphrase, paper, near[0], rng)
        if bad:
            out.append(Pair(bad, ev, 0, "paraphrase_swap", paper.id))
    out.append(Pair(question, ev, 1, "question", paper.id))
    far = far_windows(paper, sentence)
    if far:
        out.append(
            Pair(question, evidence(paper, rng.choice(far)), 0, "question_elsewhere", paper.id)
        )
    out.append(Pair(question, evidence(paper, said_back(question)), 0, "question_back", paper.id))
    swapped = swap_name(question, paper, near[0], rng)
    if swapped and swapped != question:
        out.append(Pair(swapped, ev, 0, "question_swap", paper.id))
    if find.lower().startswith("which") and find.endswith("?"):
        out += find_pairs(find, paper, near, "find")
    return out


_WH = re.compile(
    r"^(?:what|which|how|why|where|when|who|whom|whose|does|do|did|is|are|can|in what|"
    r"on what|on which|in which|by how much|to what extent)\b\s*(?:\w+\s+)?"
    r"(?:does|do|did|is|are|was|were|can)?\s*",
    re.I,
)


def said_back(question: str) -> str:
    """A question said back as a statement, its answer left out: what an answer that only
    repeats the question looks like ("... uses the technique of X?" -> "uses the technique
    of X.")."""
    body = _WH.sub("", question.strip()).rstrip(" ?")
    return (body[:1].upper() + body[1:] + ".") if body else question


# -- questions a user asks of one paper --------------------------------------------------------
_PROPOSE = re.compile(r"\bwe (propose|introduce|present|develop|design|describe)\b", re.I)
_SHOW = re.compile(r"\bwe (show|prove|demonstrate|find|establish|derive)\b", re.I)
_ON = re.compile(r"\b(?:on|using|with|including|such as)\s+(?:the\s+)?([A-Z][\w-]*[A-Z0-9][\w-]*)")
_GAIN = re.compile(r"\d(?:\.\d+)?\s*(?:%|\\%|x\b|×|times\b|percent)")
# details an abstract seldom gives: a question about one whose words the abstract lacks has
# no answer there ("the abstract does not say")
DETAILS = [
    ("What learning rate does {n} use?", "learning rate"),
    ("How many GPUs were used to train {n}?", "gpu"),
    ("What batch size does {n} use?", "batch size"),
    ("How long does {n} take to train?", "training time"),
    ("How many parameters does {n} have?", "parameters"),
    ("What is the exact constant in the bound of {n}?", "constant"),
    ("On which datasets is {n} evaluated?", "dataset"),
    ("What is the sample size used by {n}?", "sample size"),
    ("Which programming language is {n} implemented in?", "implemented"),
    ("What accuracy does {n} reach on ImageNet?", "imagenet"),
    ("How much does {n} improve over the best baseline, in percent?", "%"),
    ("What is the regret bound of {n}?", "regret"),
    ("What hardware does {n} run on?", "hardware"),
    ("Which optimizer is used to train {n}?", "optimizer"),
    ("What is the running time complexity of {n}?", "complexity"),
    ("How many layers does the network of {n} have?", "layers"),
    ("Which baselines does {n} compare against?", "baseline"),
    ("What are the limitations of {n}?", "limitation"),
    ("Is the code of {n} publicly available?", "code"),
    ("How many participants took part in the study of {n}?", "participants"),
]


def called(paper: Paper, rng: random.Random) -> str:
    """How a question names the paper: its method name, or a few words of its title."""
    name = method_name(paper.title)
    if name:
        return name
    words = re.sub(r"[^\w\s-]", "", paper.title).split()
    return "the paper on " + " ".join(words[: rng.randint(3, 6)]).lower()


def question_pairs(paper: Paper, near: list[Paper], rng: random.Random) -> list[Pair]:
    """Questions of the kinds users ask, from the sentence that answers them; each against
    that sentence's window (1), a window that does not hold it (0), the question said back
    (0); a detail the abstract never mentions against the closest window (0)."""
    n = called(paper, rng)
    out: list[Pair] = []
    for index, sentence in enumerate(paper.sentences):
        asked = []
        if m := _PROPOSE.search(sentence):
            asked.append(f"What does {n} {m.group(1).lower()}?")
        if m := _SHOW.search(sentence):
            asked.append(f"What does {n} {m.group(1).lower()}?")
        if (m := _ON.search(sentence)) and m.group(1).lower() not in paper.title.lower():
            asked.append(rng.choice([f"On which datasets or benchmarks is {n} evaluated?",
                                     f"Which benchmarks does {n} use?"]))  # fmt: skip
        if _GAIN.search(sentence):
            gains = [
                f"How much does {n} improve?",
                f"By how much does {n} outperform the baselines?",
            ]
            asked.append(rng.choice(gains))
        if not asked or rng.random() < 0.5:
            continue
        question = rng.choice(asked)
        _, window = window_of(paper, index)
        out.append(Pair(question, evidence(paper, window), 1, "template", paper.id))
        others = [w for w in windows(paper.sentences) if sentence not in w]
        if others and rng.random() < 0.7:
            ev = evidence(paper, rng.choice(others))
            out.append(Pair(question, ev, 0, "template_elsewhere", paper.id))
        out.append(
            Pair(question, evidence(paper, said_back(question)), 0, "question_back", paper.id)
        )
        if len(out) >= 6:
            break
    text = f"{paper.title} {paper.abstract}".lower()
    absent = [(q, key) for q, key in DETAILS if key not in text]
    if absent:
        q, key = rng.choice(absent)
        question = q.format(n=n)
        out.append(
            Pair(
                question, evidence(paper, closest_window(paper, question)), 0, "unstated", paper.id
            )
        )
    return out


def find_pairs(question: str, paper: Paper, near: list[Paper], kind: str) -> list[Pair]:
    """A question asking which paper does something: the paper's closest window holds it;
    a neighbour's closest window does not, when the neighbour lacks what it asks."""
    out = [Pair(question, evidence(paper, closest_window(paper, question)), 1, kind, paper.id)]
    for other in near:
        if foreign(question, other):
            ev = evidence(other, closest_window(other, question))
            out.append(Pair(question, ev, 0, f"{kind}_neighbour", other.id))
            break
    return out


def keyword_pairs(paper: Paper, near: list[Paper], rng: random.Random) -> list[Pair]:
    out: list[Pair] = []
    have = set(tokenize(f"{paper.title} {paper.abstract}"))
    said = [k for k in paper.keywords if tokenize(k) and set(tokenize(k)) <= have]
    if not said:
        return out
    keyword = rng.choice(said)
    question = f"Which papers are about {keyword}?"
    out.append(
        Pair(question, evidence(paper, closest_window(paper, keyword)), 1, "keyword", paper.id)
    )
    for other in near:
        lacks = not set(tokenize(keyword)) <= set(tokenize(f"{other.title} {other.abstract}"))
        if lacks:
            ev = evidence(other, closest_window(other, keyword))
            out.append(Pair(question, ev, 0, "keyword_neighbour", other.id))
            break
    return out


def scifact_pairs() -> list[Pair]:
    """SciFact training claims against their evidence sentences, held-out claims and the
    evaluation corpus's documents left out."""
    csv.field_size_limit(sys.maxsize)
    out_docs = {i.removeprefix("scifact-") for i in eval_paper_ids() if i.startswith("scifact-")}
    docs = {}
    with (SCIFACT / "corpus.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            docs[row["doc_id"]] = (row["title"], scifact_sentences(row["abstract"]))
    out: list[Pair] = []
    with (SCIFACT / "claims_train.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            doc = row["evidence_doc_id"]
            if not doc or doc in out_docs or held_out(row["id"]) or doc not in docs:
                continue
            title, sentences = docs[doc]
            picked = [int(x) for x in re.findall(r"\d+", row["evidence_sentences"] or "")]
            if not picked:
                continue
            first = picked[0]
            window = " ".join(sentences[first : first + 2])
            label = 1 if row["evidence_label"] == "SUPPORT" else 0
            out.append(Pair(row["claim"], f"{title}. {window}", label, "scifact", f"scifact-{doc}"))
    return out


def _llm_rows(by_id: dict[str, Paper]) -> list[dict]:
    path = OUT / "llm.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [r for r in rows if r["paper"] in by_id]


def _written(by_id: dict[str, Paper]) -> list[tuple[str, str]]:
    rows = (json.loads(x) for x in WRITTEN.read_text().splitlines() if x.strip())
    return [(r["paper"], r["question"]) for r in rows if r["paper"] in by_id]


def iter_pairs(path=OUT / "pairs.jsonl") -> Iterator[Pair]:
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line:
            continue
        yield Pair(**json.loads(line))


if __name__ == "__main__":
    sys.exit(main())
