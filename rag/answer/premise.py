"""What a question presumes, and whether any retrieved abstract says it.

"Which paper proposes a graph neural network for molecule generation?" presumes a paper on
graph neural networks for molecule generation; "How many GPUs did OPIC use?" presumes the
OPIC abstract states a GPU count. Small models confirm such premises fluently, so they are
checked before any model is asked, by the words of the question against the abstracts:

question -> its terms (content words, less the words every question uses) ->
- a question that names a paper ("the CSR paper"): the terms that paper's abstract lacks are
  facts it does not state ("the abstract does not say");
- any other question: when no retrieved abstract has enough of its terms, no indexed paper
  does what it presumes ("no indexed paper ...").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..index.lexical import fold, tokenize
from . import rules
from .support import GENERIC_STEMS, Abstract, about_earlier_work, names_in, spelled_out

# Verbs a question asks with ("Which papers deal with / involve / try to ..."), and the words
# questions use to ask, not to say what they are about (``rules``).
HOW_ASKED = rules.HOW_ASKED
_ASKING = f"{rules.ASKING} {HOW_ASKED}"
# "Which paper ...?", "Does any paper ...?", "Are there papers on ...?": questions that ask
# to find a paper, so presume one exists.
_FIND = re.compile(
    r"^\s*(?:(?:which|what)\s+(?:(?!(?:does|do|did|is|are|was|were|has|have|can)\b)\w+\s+){0,3}?"
    r"(?:papers?|works?|methods?|approach(?:es)?|"
    r"stud(?:y|ies)|articles?)\b|(?:does|do|did)\s+(?:any|a|some)\s+(?:\w+\s+)?(?:papers?|"
    r"works?|stud(?:y|ies)|methods?)\b|(?:is|are)\s+there\s+(?:any\s+|a\s+)?(?:\w+\s+)?"
    r"(?:papers?|works?|methods?|stud(?:y|ies))\b|(?:list|find|show)\b|(?:any\s+)?papers?\s+"
    r"(?:on|about|that)\b)",
    re.I,
)
# "Which earlier works does the L-BFGS paper draw on?", "Which methods did they test?": the
# papers asked for are what another subject does something with (cites, builds on, tests),
# so the question is about that subject, not a search for papers
OBJECT_OF = re.compile(
    r"^\s*(?:does|did|do|has|had|have)\s+(?:the|a|an|this|that|its|their|it|they)\b", re.I
)
# Words that set two things side by side ("differentially private" is not one of them).
# "differ", "differs", "differences", not the adjective: "visually different renderings"
_COMPARE = re.compile(
    r"\b(compare|comparison|contrast|differ(?:s|ed|ing|ences?)?|versus|vs)\b", re.I
)
# Words that set two papers side by side in a question about papers ("What does each
# protect against?", "How do X and Y ..."), but one paper's two things in a question that
# asks to find a paper ("Which paper handles both A and B?", "... between A and B?"). "each"
# and "both" set papers side by side only as what a verb is asked of ("what does each
# protect against?") or with the papers named: of a thing of one paper ("how many Gibbs
# steps are used in each update?", "what is proposed for each of the two cases?") they ask
# of that paper; "between" only when it opens the question ("Between the rate paper and
# the optimizer paper, which ...?"), not "the dissimilarity between observed and simulated
# data".
_COMPARE_PAPERS = re.compile(
    r"\b(?:do|does|did)\s+(?:each|both)\b|\bboth (?:papers|works|studies)\b|"
    r"\b(?:each|both) of (?:the|these|them|those)(?: two)? (?:papers|works|studies)\b|"
    r"\bhow do\b[^?]*\band\b|"
    # two subjects of one plural verb: "Which datasets are X and the Y paper evaluated on?"
    r"\b(?:do|did|are|were|have)\s+(?:the\s+)?[^?,;]{2,80}?\s+and\s+(?:the|a|an)\s|"
    r"^\s*between\b[^?]*\band\b",
    re.I,
)
_SIDES = re.compile(r"\s+(?:and|vs\.?|versus)\s+", re.I)


def two_sides(question: str) -> list[str]:
    """A comparison's two halves, split at its first "and" ("How do NoisyNet" / "RESLOPE
    differ in ..."): each names or describes one of the papers compared; [] if no "and"."""
    parts = _SIDES.split(question, maxsplit=1)
    return [p.strip() for p in parts] if len(parts) == 2 and all(p.strip() for p in parts) else []


# What a comparison asks of both papers, not a description of either: "How do" before the
# first, "differ in task and technique?" after the second.
_ASKED_BEFORE = re.compile(
    r"^\s*(?:how|what|which|in what ways?)\b[^?]*?\b(?:do|does|did|are|is|were|was)\s+", re.I
)
_ASKED_AFTER = re.compile(r"\s+(?:differ|compare|contrast)\w*\b.*$", re.I | re.S)


def subjects(question: str) -> list[str]:
    """The two papers a comparison describes, without what it asks of both ("How do the
    graph-kernel CNN and the GCN training paper differ in task?" -> "the graph-kernel
    CNN", "the GCN training paper"); [] if it has no two sides."""
    sides = two_sides(question)
    if not sides:
        return []
    left, right = _ASKED_BEFORE.sub("", sides[0]), _ASKED_AFTER.sub("", sides[1])
    return [new if new.strip() else old for new, old in zip((left, right), sides, strict=True)]


# How a question calls a paper it does not name ("the time-limits-in-RL paper", "the work on
# optimizers playing against no-regret learners in Bayesian games"): ``rules.DESCRIBED_AS``.
_DESCRIBED = re.compile(rules.DESCRIBED_AS, re.I)
_DESCRIBED_MIN_WORDS = 4  # "the work on X Y": a description cut shorter says too little


def descriptions(question: str) -> list[str]:
    """The phrases ``question`` calls a paper by without naming it, as written."""
    return [m.group(0).strip() for m in _DESCRIBED.finditer(question)]


# A relative clause describing the paper a question asks of ("... of the network that
# applies ..."): ``rules.DESCRIPTION_CLAUSE``; it ends at the question's end or at a comma
# before what is asked ("In the paper that ..., what is ...?").
_CLAUSE = re.compile(rules.DESCRIPTION_CLAUSE, re.I)
_ASKED_AFTER_CLAUSE = re.compile(r",\s+(?:what|which|how|where|when|who|does|do|is|are)\b", re.I)


def asked_part(question: str) -> str:
    """``question`` without the clause that describes its paper: what is asked of it ("How
    many GPUs are used for the model-parallel training of the network that applies
    first-order perturbation theory to ...?" -> "How many GPUs are used for the
    model-parallel training of the network?"); the question itself when it has none."""
    found = _clause(question)
    if found is None:
        return question
    body, m, end = found
    return body[: m.start("clause")].rstrip() + body[end:] + "?"


def description(question: str) -> str | None:
    """What ``question`` says of its paper in a relative clause, as a question asking for
    that paper ("How many Gibbs steps are used in the work that builds a stochastic unit
    from any smooth nonlinearity?" -> "Which paper is about the work that builds a
    stochastic unit from any smooth nonlinearity?"); None when it has no such clause."""
    found = _clause(question)
    if found is None:
        return None
    body, m, end = found
    return f"Which paper is about {body[m.start() : end]}?"


def _clause(question: str) -> tuple[str, re.Match[str], int] | None:
    """The question without its question mark, the match of a clause describing its paper,
    and where the clause ends (at the comma before what is asked, or the question's end)."""
    body = question.strip().rstrip("?").rstrip()
    m = _CLAUSE.search(body)
    if m is None:
        return None
    rest = _ASKED_AFTER_CLAUSE.search(body, m.end())
    return body, m, rest.start() if rest else len(body)


# Where a question joins a second ask to its first (", and on which dataset ..."):
# ``rules.ASKS_JOINED``.
_JOINED = re.compile(rules.ASKS_JOINED, re.I)


def asks(question: str) -> list[str]:
    """The asks ``question`` joins, each as a question ("How does WRPN make up for its
    low-precision activations, and on which dataset does it report its results?" -> "How
    does WRPN make up for its low-precision activations?", "On which dataset does it report
    its results?"); the question alone when it asks one thing."""
    body = question.strip().rstrip("?").rstrip()
    parts = [p.strip() for p in _JOINED.split(body) if p.strip()]
    if len(parts) < 2:
        return [question]
    return [p[0].upper() + p[1:] + "?" for p in parts]


def described_in(phrase: str, text: str) -> tuple[int, int] | None:
    """Where ``text`` calls a paper by ``phrase`` (any case), or by a phrase "the paper on
    ..." cut short ("the paper on non-stationary strategies" of "the paper on non-stationary
    strategies for general-sum games prove"); None if it does not."""
    words = phrase.split()
    shortest = len(words) if _ends_in_noun(words) else _DESCRIBED_MIN_WORDS
    for n in range(len(words), shortest - 1, -1):
        pattern = r"(?<![\w-])" + r"\s+".join(map(re.escape, words[:n])) + r"(?![\w-])"
        if m := re.search(pattern, text, re.I):
            return m.span()
    return None


def _ends_in_noun(words: list[str]) -> bool:
    """ "the X paper": the description ends in what it describes, so is only said whole."""
    return words[-1].lower() in {"paper", "work", "study", "article"}


_NUMERIC = re.compile(
    r"\bhow (?:many|much|large|long|fast|big|small|close|far)\b|"
    r"\bwhat(?: is| are)?(?: the)?(?: exact)? "
    r"(?:percentage|number|value|rate|size|constant|speed-?up|accuracy|sample complexity|"
    r"bound)\b|\bby how\b|\bby what (?:margin|factor|amount|percentage)\b|"
    r"\bwhat is (?:\w+'s )?(?:the )?(?:largest|biggest|average|mean|total) ",
    re.I,
)


# "Which (real-world time series) datasets ...", also after a clause ("Besides X, which
# language pair ..."); not "What is the ..." (a verb between).
_NAMES_ASKED = re.compile(
    r"(?:^|[,;:]\s*)(?:on |in |with |from )?(?:which|what)\s+"
    r"(?:(?!(?:is|are|was|were|does|do|did|has|have)\b)[\w-]+\s+){0,4}"
    r"(?P<noun>datasets?|benchmarks?|corpora|corpus|models?|llms?|baselines?|kernels?|architectures?|"
    r"backbones?|languages?|(?:language )?pairs?|gpus?|hardware|robots?|arms?|"
    r"simulators?|metrics?|competitors?)\b",
    re.I,
)


def names_asked(question: str) -> str:
    """The stem of what a question asks to be named ("Which datasets ..." -> "dataset"),
    "" when it asks for no names."""
    m = _NAMES_ASKED.search(question)
    stems = tokenize(m["noun"]) if m and not asks_to_find(question) else []
    return stems[-1] if stems else ""


# "What is the name of ...", "What is the new variant called?"
_NAME_OF = re.compile(
    r"\bwhat\s+(?:is|are|was|were)\s+(?:the\s+)?names?\s+of\b|"
    r"\bwhat\s+(?:is|are|was|were)\b[^?]*\bcalled\s*\?",
    re.I,
)


def asks_name_of(question: str) -> bool:
    """The question asks what something is called ("What is the name of ...?")."""
    return bool(_NAME_OF.search(question))


def asks_for_names(question: str) -> bool:
    """The question asks which datasets, models, baselines ..., or what something is
    called (the answer names them)."""
    asked = bool(_NAMES_ASKED.search(question)) or asks_name_of(question)
    return asked and not asks_to_find(question)


_LIMITS = re.compile(
    r"\b(limitations?|limits?|weakness(?:es)?|drawbacks?|shortcomings?|downsides?|"
    r"failure (?:modes?|cases?)|fails?(?!\s+to\b)|caveats?)\b",
    re.I,
)


def asks_limitations(question: str) -> bool:
    """The question asks for a paper's own limitations or failures."""
    return bool(_LIMITS.search(question))


def own_limitations(abstract: Abstract) -> list[str]:
    """Sentences in which the paper states a limitation of its own, not of earlier work
    ("To address these limitations, we ..." is about earlier work)."""
    return [
        s
        for s in abstract.sentences
        if _LIMITS.search(s)
        and re.search(r"\b(we|our)\b", s, re.I)
        and not about_earlier_work(s, None)
        and not _THEIR_LIMITS.search(s)
    ]


_THEIR_LIMITS = re.compile(
    r"\b(address|overcome|mitigate|tackle|alleviate|remedy|these|such|their|existing|prior)\b"
    r"[^.]{0,30}\b(limitation|limit|weakness|drawback|shortcoming|fail)",
    re.I,
)


# "Which eight European countries ...", "What are the three role archetypes ...": which of
# a collection the question counts (``counted_asked``)
_COUNTED_ASKED = re.compile(
    r"\b(?:which|what)\s+(?:(?:are|were|is|was)\s+)?(?:the\s+)?"
    r"(?P<n>\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
    r"(?P<what>[\w-]+(?:\s+[\w-]+){0,2})",
    re.I,
)


def counted_asked(question: str) -> tuple[str, list[str]] | None:
    """The number and the stems of the collection a question asks the members of ("Which
    eight European countries took part ...?" -> ("eight", ["european", "countri", "took"])),
    None when it asks of no counted collection (``rules.COUNTED_NAMES_NONE``)."""
    m = _COUNTED_ASKED.search(question)
    if not rules.COUNTED_NAMES_NONE or m is None or asks_to_find(question):
        return None
    return m["n"].lower(), [s for s in tokenize(m["what"]) if s not in ASKING_STEMS]


def asks_to_find(question: str) -> bool:
    """The question asks which paper does something (so presumes that one does); not
    which papers another one does something with (``OBJECT_OF``)."""
    m = _FIND.search(question)
    return m is not None and not OBJECT_OF.match(question[m.end() :])


def compares(question: str) -> bool:
    """The question sets two papers (or a paper and something else) side by side."""
    if _COMPARE.search(question):
        return True
    if rules.TWO_DESCRIBED and len({d.lower() for d in descriptions(question)}) >= 2:
        return True  # "In the amyloidosis transplant study and the EML4-ALK study, which ..."
    return not asks_to_find(question) and bool(_COMPARE_PAPERS.search(question))


def asks_number(question: str) -> bool:
    return bool(_NUMERIC.search(question))


_COUNTED = re.compile(
    r"\bhow many\s+(?P<what>(?:[\w-]+\s+){0,3}?[\w-]+?)"
    r"(?=\s+(?:does|do|did|is|are|was|were|has|have|had|in|of|on|for|can|could|would|will)\b|\s*\?|$)",
    re.I,
)


def counted_noun(question: str) -> str:
    """The stem of what a "how many ..." question counts ("GPUs" -> "gpu", "density maps"
    -> "map"), else ""."""
    match = _COUNTED.search(question)
    stems = tokenize(match["what"].split()[-1]) if match else []
    return stems[-1] if stems else ""


# How a paper is said to hold a result, not what the result is about ("papers that prove
# regret guarantees" are about regret guarantees, whether the abstract proves or provides).
CLAIMING_STEMS = frozenset(tokenize(rules.CLAIMING))
ASKING_STEMS = frozenset(tokenize(_ASKING)) | GENERIC_STEMS | CLAIMING_STEMS
PREMISE_COVERAGE_MIN = rules.PREMISE_COVERAGE_MIN  # share of its terms one abstract must have

# Words an abstract may say differently: each group is one term.
_SAME = rules.SAME_TERMS


def _groups() -> dict[str, str]:
    canon: dict[str, str] = {}
    for group in _SAME:
        stems = tokenize(group)
        for s in stems:
            canon.setdefault(s, stems[0])
    return canon


_CANON = _groups()


def terms(question: str, extra_asking: Iterable[str] = ()) -> list[str]:
    """The stems a question is about, in order, without asking words, years or venues."""
    skip = ASKING_STEMS | set(tokenize(" ".join(extra_asking)))
    text = re.sub(r"\b(19|20)\d\d\b", " ", question)
    return list(dict.fromkeys(s for s in tokenize(text) if s not in skip))


def missing(question_terms: list[str], abstract: Abstract, shorts: Iterable[str] = ()) -> list[str]:
    """The question's terms the abstract (title included) does not have; of the question's
    short forms (``shorts``, ``short_forms``), one the abstract spells out counts as had
    ("GGM": "Gaussian graphical models", "ResNet": "residual networks")."""
    have = {_CANON.get(s, s) for s in abstract.stems} | abstract.stems
    have |= {fold(s) for s in have}
    lacking = [
        t
        for t in question_terms
        if t not in abstract.stems and _CANON.get(t, t) not in have and fold(t) not in have
    ]
    shorts = set(shorts) & set(lacking)
    if not shorts:
        return lacking
    words = re.findall(r"[a-z0-9]+", abstract.text_lower)
    return [t for t in lacking if t not in shorts or not spelled_out(t, words)]


def short_forms(question: str) -> frozenset[str]:
    """The stems of the question's words written with two capitals or more ("GP", "GGMs",
    "ResNet"): short forms an abstract may spell out instead."""
    words = re.findall(r"[\w-]+", question)
    return frozenset(
        s for w in words if sum(c.isupper() for c in w) >= 2 for s in tokenize(w.replace("-", " "))
    )


def named_phrases(question: str, extra_asking: Iterable[str] = ()) -> list[str]:
    """The names a question uses, whole ("UK Biobank", "Layer Normalization", "RNA",
    "text-to-video"): an abstract about what the question presumes has every one of them."""
    skip = {w.lower() for w in extra_asking}
    names = {n.lower() for n in names_in(question)} - skip
    found: list[str] = []
    run: list[str] = []
    for word in [*re.findall(r"[\w²³'-]+|[^\w\s]", question), "."]:
        if word.lower().removesuffix("'s") in names:
            run.append(word.removesuffix("'s"))
            continue
        if run:
            found.append(" ".join(run))
        run = []
    found += re.findall(r"\b[a-z]+(?:-[a-z]+){2,}\b", question)  # "text-to-video"
    return [p for p in dict.fromkeys(found) if not set(tokenize(p)) <= ASKING_STEMS]


def has_phrase(abstract: Abstract, phrase: str) -> bool:
    """Whether the abstract says the phrase, in singular or plural ("Neural ODEs"), letters
    in brackets read as part of their word ("T(FH)" says "TFH"). Names the question puts
    side by side ("New Zealand Crohn's", "Australian GP") or joins to a word that asks
    ("SAP-using") are said when each name is, as a name (``_said_as_name``)."""
    words = [re.escape(w.removesuffix("s")) for w in re.split(r"[\s-]+", phrase.lower()) if w]
    pattern = r"(?<!\w)" + r"s?[\s-]+".join(words) + r"s?(?!\w)"
    if re.search(pattern, _BRACKETED.sub(r"\1", abstract.text_lower)) is not None:
        return True
    parts = re.split(r"[\s-]+", phrase)
    named = [p for p in parts if p and not set(tokenize(p)) <= ASKING_STEMS]
    if not rules.NAMES_APART or len(parts) < 2 or not all(_is_name(p) for p in named):
        return False
    text = _BRACKETED.sub(r"\1", " ".join((abstract.title, *abstract.sentences)))
    return bool(named) and all(_said_as_name(text, p) for p in named)


_BRACKETED = re.compile(r"(?<=\w)\((\w+)\)")  # "T(FH)": a subscript written in brackets


def _is_name(word: str) -> bool:
    return any(c.isupper() for c in word)


def _said_as_name(text: str, name: str) -> bool:
    """Whether ``text`` says ``name`` as written (a plural or possessive after it), or the
    place a name of a people is of ("Australian": "Australia", "European": "Europe",
    "Chinese": "China", "Italian": "Italy")."""
    places = []
    if name.endswith("an"):
        places += [name[:-1], name[:-2]]
    if name.endswith(("ian", "ese")):
        places += [name[:-3], name[:-3] + "a", name[:-3] + "y"]
    forms = [name, *(f for f in places if len(f) >= 4)]
    return any(re.search(rf"(?<![\w-]){re.escape(f)}s?(?!\w)", text) for f in forms)


def shortfall(question_terms: list[str], lacking: list[str]) -> bool:
    """Too little of the question in an abstract: more than a quarter of its terms."""
    return bool(question_terms) and len(lacking) / len(question_terms) > 1 - PREMISE_COVERAGE_MIN


def alternatives(question: str) -> list[list[str]]:
    """The sides a question offers as alternatives, as stems ("Neural ODEs or flow
    matching" -> [["neural", "ode"], ["flow", "match"]]): an abstract needs only one side,
    and a side is there when all of its words are."""
    if " or " not in question:
        return []
    left, _, right = question.partition(" or ")
    sides = [tokenize(" ".join(left.split()[-2:])), tokenize(" ".join(right.split()[:3]))]
    return [side for side in sides if side]


@dataclass(frozen=True)
class Premise:
    """How well the best retrieved abstract covers what the question is about."""

    terms: tuple[str, ...]
    missing: tuple[str, ...]  # the best abstract's missing terms
    holds: bool


def premise(
    question: str, question_terms: list[str], abstracts: Iterable[Abstract], required: list[str]
) -> Premise:
    """The premise as the abstract that covers most of the question's terms sees it: it
    holds when one abstract has the question's names and three quarters of its terms."""
    best: list[str] | None = None
    holds = False
    terms = set(question_terms)
    sides = [kept for side in alternatives(question) if (kept := [t for t in side if t in terms])]
    either = {t for side in sides for t in side}
    shorts = short_forms(question)
    for abstract in abstracts:
        lacking = missing(question_terms, abstract, shorts)
        names = required
        if there := [side for side in sides if not missing(side, abstract)]:
            # one alternative is there whole: the others are not needed, nor their names
            lacking = [t for t in lacking if t not in either]
            other = either - {t for side in there for t in side}
            names = [p for p in required if not set(tokenize(p)) <= other]
        has_names = all(has_phrase(abstract, p) for p in names)
        holds = holds or (has_names and not shortfall(question_terms, lacking))
        if best is None or len(lacking) < len(best):
            best = lacking
    lacking = best if best is not None else question_terms
    return Premise(tuple(question_terms), tuple(lacking), holds)


def unsaid_phrases(question: str, lacking: Iterable[str]) -> list[str]:
    """The question's runs of two or more terms in a row that are all ``lacking`` (stems an
    abstract has none of), each with the word after it when that word has a term: "semantic
    role labeling" of "... features for semantic role labeling?", "air-pollution dataset"."""
    lacking = set(lacking)
    words = re.findall(r"[\w'-]+|[^\w\s]", question)
    stems = [tokenize(w.replace("-", " ")) for w in words]
    phrases: list[str] = []
    start = 0
    while start < len(words):
        end = start
        while end < len(words) and stems[end] and set(stems[end]) <= lacking:
            end += 1
        if sum(len(s) for s in stems[start:end]) >= 2:
            tail = end + 1 if end < len(words) and stems[end] else end
            phrases.append(" ".join(words[start:tail]))
        start = max(end, start + 1)
    return phrases


def surface(question: str, stems: Iterable[str]) -> list[str]:
    """The question's own words behind some stems ("gpu" -> "GPUs")."""
    words = re.findall(r"(?u)\b[\w-]{2,}\b", question)
    by_stem: dict[str, str] = {}
    for w in words:
        for s in tokenize(w.replace("-", " ")):
            by_stem.setdefault(s, w)
    return list(dict.fromkeys(by_stem.get(s, s) for s in stems))
