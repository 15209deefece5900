"""Is a statement stated by the abstract it cites? The check every answer passes through.

answer text -> statements (each with the source numbers it cites) -> each statement checked
against its cited abstracts -> kept, with the abstract sentence it rests on, or removed, with
the reason. A statement its cited abstract does not support, but another source does, is
moved to that source.

A statement stands only when every one of these holds for one cited abstract (title
included):
- every number in it (digits or number words) is in the abstract;
- every name in it (acronyms, method and dataset names, capitalised words mid-sentence) is;
- every word inside parentheses is (an acronym's expansion is the abstract's, not invented);
- every other content word is, but for a few generic reporting words ("proposes", "method");
- one abstract sentence is close to it in meaning (cosine >= ``SIMILARITY_MIN``).
Word checks compare stems, so "merges" matches "merging". The thresholds are calibrated on
``eval/statements/labelled.jsonl`` by ``python eval/check_statements.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..index.lexical import STOPWORDS, fold, tokenize
from ..text.chunking import split_sentences
from ..text.instructions import abstract_sentences
from ..text.titles import SYMBOLS
from . import rules

# The bars and word lists of the check live in ``rules``, each with why it is there.
SIMILARITY_MIN = rules.SIMILARITY_MIN  # cosine between a statement and its closest sentence
FACT_SIMILARITY_MIN = rules.FACT_SIMILARITY_MIN  # ... when it holds the statement's facts
PARAPHRASE_ALLOWANCE = rules.PARAPHRASE_ALLOWANCE
QUESTION_ALLOWANCE = rules.QUESTION_ALLOWANCE
ASKED_ELSEWHERE = rules.ASKED_ELSEWHERE

MARKER = re.compile(r"\s?\[(\d+(?:\s*(?:,|-|–)\s*\d+)*)\]")
# a number alone ("6.2", "28,000", "28k", "2x"), or inside a name ("CIFAR-100")
_NUMBER = re.compile(
    r"(?<![\w.-])(\d+(?:[.,]\d+)*)(?=[kKMBx×]?(?!\w))|(?<=[A-Za-z-])(\d+(?:\.\d+)?)\b"
)
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_NAME = re.compile(r"(?<![\w$\\])([A-Za-z][\w²³⁺-]*[A-Z0-9²³][\w²³⁺-]*|[A-Z][a-z]+)(?![\w])")
_PARENTHESES = re.compile(r"\(([^()]{3,})\)")
_GENERIC = rules.GENERIC  # words that carry no claim of their own
_BOILERPLATE = re.compile(
    r"\b(code|implementation|data(?:set)?s?|models?) (?:is|are) (?:publicly |made )?available|"
    r"github\.com|\\url\{|https?://",
    re.I,
)


@dataclass(frozen=True)
class Statement:
    """One sentence of an answer, without its markers, and the sources it cites."""

    text: str
    cites: tuple[int, ...]
    line: int  # which line of the answer it is on (lists keep their shape)
    bullet: str = ""  # the list marker it started with ("- "), if any


@dataclass(frozen=True)
class Abstract:
    """A source's abstract prepared for checking: its sentences, vectors and words."""

    number: int
    title: str
    sentences: tuple[str, ...]
    vectors: np.ndarray
    # the parts of long sentences ("..., which ..."), each with the sentence it is from: a
    # short statement matches a part better than a long sentence
    part_vectors: np.ndarray | None = None
    part_of: tuple[int, ...] = ()
    stems: frozenset[str] = field(default_factory=frozenset)
    numbers: frozenset[str] = field(default_factory=frozenset)
    text_lower: str = ""

    @property
    def name(self) -> str:
        return method_name(self.title)

    @classmethod
    def of(
        cls,
        number: int,
        title: str,
        abstract: str,
        vectors: np.ndarray,
        embed: Callable[[list[str]], np.ndarray] | None = None,
    ) -> Abstract:
        """``vectors`` are the sentences'; ``embed`` (if given) embeds their parts."""
        text = plain(f"{title}. {abstract}")
        words = cls._words(title, text)
        sentences = abstract_sentences(abstract)
        parts = [(i, p) for i, s in enumerate(sentences) for p in sentence_parts(s)]
        return replace(
            words,
            number=number,
            sentences=sentences,
            vectors=vectors,
            part_vectors=embed([p for _, p in parts]) if embed and parts else None,
            part_of=tuple(i for i, _ in parts),
            numbers=frozenset(numbers_in(text)),
        )

    @classmethod
    def words_of(cls, title: str, abstract: str) -> Abstract:
        """Only the abstract's words (``stems``, ``text_lower``): what a premise check reads,
        at a fraction of the cost of ``of`` (no sentences, parts or numbers)."""
        return cls._words(title, plain(f"{title}. {abstract}"))

    @classmethod
    def _words(cls, title: str, text: str) -> Abstract:
        return cls(
            number=0,
            title=title,
            sentences=(),
            vectors=_NO_VECTORS,
            stems=frozenset(tokenize(text)) | frozenset(_word_stems(text)),
            text_lower=_flat(text),
        )


_NO_VECTORS = np.zeros((0, 1), dtype=np.float32)


@dataclass(frozen=True)
class Verdict:
    """What the check decided for a statement."""

    statement: Statement
    sources: tuple[int, ...]  # the sources that support it (none: removed)
    sentences: tuple[str, ...] = ()  # the abstract sentence it rests on, per source
    reason: str = ""  # why it was removed, or "" when kept

    @property
    def kept(self) -> bool:
        return bool(self.sources)


def method_name(title: str) -> str:
    """The short name a title gives its method ("CSR", "R³-Bench", "GIP" of "Generalized
    Ideal Parent (GIP): ..."), or "" if none."""
    head = re.split(r"\s*[:(]", title, maxsplit=1)[0].strip()
    if len(head.split()) > 2 or head == title.strip() and len(head.split()) > 1:
        short = _TITLE_SHORT.search(title)
        return short[1] if short else ""
    return head if len(head) >= 3 and re.search(r"[A-Z0-9²³]", head) else ""


# a short form the title spells out in brackets: two capitals or a capital and a digit
# ("(GIP)", "(DCNet)", "(K2-ABC)"; not "(Bandit)")
_TITLE_SHORT = re.compile(r"\((?=[^()]*[A-Z][^()]*[A-Z0-9²³])([A-Z][\w²³-]{1,14})\)")


_LATEX_COMMAND = re.compile(r"\\(?:textbf|textit|emph|texttt|mathrm|mathbf|text|url)\{([^{}]*)\}")
_SUPERSCRIPT = re.compile(r"\$\^\{?([23])\}?\$")


def plain(text: str) -> str:
    """Abstract text without LaTeX markup, as an answer would write it ("R$^3$" -> "R³")."""
    text = _LATEX_COMMAND.sub(r"\1", text)
    text = _SUPERSCRIPT.sub(lambda m: "²³"[int(m.group(1)) - 2], text)
    text = text.replace("\\%", "%").replace("\\&", "&").replace("{+}", "+")
    return text.replace("$", "")


_PART_BREAK = re.compile(r"(?<=[,;:])\s+|\s+(?=(?:while|whereas|but|which|where)\b)")


def sentence_parts(sentence: str, min_words: int = 5) -> list[str]:
    """The clauses of a long sentence, each of at least ``min_words`` words."""
    if len(sentence.split()) < 2 * min_words:
        return []
    parts = [p.strip(" ,;:") for p in _PART_BREAK.split(sentence)]
    return [p for p in parts if len(p.split()) >= min_words] if len(parts) > 1 else []


def _flat(text: str) -> str:
    """Lower case, one space, superscript digits as digits ("R³" and "R3" are one name)."""
    return re.sub(r"\s+", " ", text.lower().translate(_SUPERSCRIPTS))


_SUPERSCRIPTS = str.maketrans("²³", "23")


def _word_stems(text: str) -> list[str]:
    """Stems of the parts of hyphenated words too ("model-merging" -> model, merg)."""
    parts = [p for w in re.findall(r"\w+(?:-\w+)+", text) for p in w.split("-")]
    return tokenize(" ".join(parts)) if parts else []


GENERIC_STEMS = frozenset(tokenize(_GENERIC))


def numbers_in(text: str, standalone: bool = False) -> list[str]:
    """Numbers a text states, normalised: "28,000" -> "28000", "six" -> "6"; with
    ``standalone``, not those inside names ("CIFAR-100", "EMPIAR-10345")."""
    text = MARKER.sub(" ", text)
    found = [
        (a or b).replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", a or b) else (a or b)
        for a, b in _NUMBER.findall(text)
        if a or not standalone
    ]
    found = [n.rstrip(".,") for n in found]
    found += [_NUMBER_WORDS[w.lower()] for w in _NUMBER_WORD.findall(text)]
    return found


def _named_as_earlier_work(statement: str, abstract: Abstract) -> str:
    """A name of the statement that the abstract writes only in sentences about earlier
    work ("methods such as RMSProp, Adam, Nadam ..."): the paper's statement cannot take it
    as its own."""
    own = abstract.name.lower()
    for name in names_in(plain(statement)):
        if name.lower() == own or name.lower() in plain(abstract.title).lower():
            continue
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
        holding = [s for s in abstract.sentences if pattern.search(plain(s))]
        if holding and all(about_earlier_work(s, abstract.name) for s in holding):
            return name
    return ""


def names_in(text: str) -> list[str]:
    """Words that name something: acronyms, method and dataset names, mid-sentence capitals."""
    text = MARKER.sub(" ", text)
    names = []
    for m in _NAME.finditer(text):
        word = m.group(1).strip("-")
        start = m.start(1)
        sentence_start = not text[:start].strip() or text[:start].rstrip()[-1:] in ".:;!?(\"'-"
        if re.fullmatch(r"[A-Z][a-z]+", word) and sentence_start:
            continue  # an ordinary word that starts a sentence
        names.append(word)
    return names


def content_stems(text: str) -> list[str]:
    """Stems of the words a statement asserts, without the generic reporting words."""
    return [s for s in tokenize(MARKER.sub(" ", text)) if s not in GENERIC_STEMS]


def _has_name(abstract: Abstract, name: str) -> bool:
    """Whether the abstract says a name as a word of its own (its plural too, or a part of a
    hyphenated word: "GAN" in "MMD-GAN"), not inside a longer name ("II" in "III", "BERT"
    in "RoBERTa"); or spelled out ("GP": "Gaussian process")."""
    name_lower = _flat(plain(name))
    if re.search(rf"(?<![^\W_]){re.escape(name_lower)}(?:e?s)?(?![^\W_])", abstract.text_lower):
        return True
    stems = set(tokenize(name_lower))
    return (bool(stems) and stems <= abstract.stems) or _spelled_out_in(abstract, name)


def _spelled_out_in(abstract: Abstract, name: str) -> bool:
    """A short form ("GP", "GCNs", "ResNet") the abstract spells out instead ("Gaussian
    process", "graph convolutional networks", "residual networks")."""
    short = name[:-1] if name.endswith("s") and sum(c.isupper() for c in name) >= 2 else name
    if not short.isalpha() or sum(c.isupper() for c in short) < 2 or _NUMERAL.fullmatch(short):
        return False
    words = re.findall(r"[a-z0-9]+", abstract.text_lower)
    if len(short) >= 6 and spelled_out(short.lower(), words):
        return True
    # a capital stands for a word that says something: "in its" spells no "II"; a small
    # letter may stand for "of" ("MoE": "mixture of experts")
    return any(
        all(w not in STOPWORDS or c.islower() for w, c in zip(run, short, strict=True))
        for run in _initial_runs(short.lower(), words)
    )


_NUMERAL = re.compile(r"[IVX]+")  # "RNA polymerase III", "phase II": no short form


def spelled_out(short: str, words: list[str]) -> bool:
    """Whether consecutive ``words`` spell ``short`` out: by their first letters ("gp":
    "gaussian processes"), or by their first three letters or more each ("resnet":
    "residual networks")."""
    if not short.isalpha() or not 2 <= len(short) <= 10:
        return False
    if next(_initial_runs(short, words), None) is not None:
        return True
    return len(short) >= 6 and any(
        _by_syllables(short, words[i : i + 3]) for i, w in enumerate(words) if w[:1] == short[0]
    )


def _initial_runs(short: str, words: list[str]) -> Iterator[list[str]]:
    """Each run of consecutive ``words`` whose first letters spell ``short`` (2-6 letters)."""
    n = len(short)
    if not 2 <= n <= 6:
        return
    for i in range(len(words) - n + 1):
        run = words[i : i + n]
        if all(w[:1] == c for w, c in zip(run, short, strict=True)):
            yield run


def _by_syllables(short: str, words: list[str]) -> bool:
    """``short`` made of a prefix of three letters or more of each of two or three
    consecutive ``words``, all of them used."""
    if not short:
        return not words  # all letters used: every word given a piece
    if not words:
        return False
    word = words[0]
    for k in range(min(len(word), len(short)), 2, -1):
        if word[:k] == short[:k]:
            rest = short[k:]
            if not rest:
                return True
            if _by_syllables(rest, words[1:]):
                return True
    return False


def unsupported(statement: str, abstract: Abstract) -> str:
    """Why ``abstract`` does not state ``statement`` by words alone, or "" if it may."""
    statement = plain(statement)
    alone = set(numbers_in(statement, standalone=True))
    for number in dict.fromkeys(numbers_in(statement)):
        if number not in abstract.numbers:
            return f"the number {number} is not in the cited abstract"
        if number in alone and number not in _standalone_numbers(abstract):
            return f"the cited abstract has {number} only inside a name"
        if not _same_context(number, statement, abstract):
            return f"the cited abstract gives {number} for something else"
    text = None
    bare = MARKER.sub(" ", statement)
    for m in _MATH.finditer(bare):
        text = text if text is not None else _squash(" ".join(abstract.sentences))
        expression = m.group(0)
        if m.start() and bare[m.start() - 1] == "\\":  # "\sigma^2": a symbol's name
            expression = "\\" + expression
        if _squash(expression) not in text:
            return f'"{m.group(0)}" is not in the cited abstract'
    for name in dict.fromkeys(names_in(statement)):
        if not _has_name(abstract, name):
            return f'"{name}" is not in the cited abstract'
    for inner in _PARENTHESES.findall(MARKER.sub(" ", statement)):
        missing = [w for w in tokenize(inner) if w not in abstract.stems]
        if missing:
            return f'"({inner})" is not in the cited abstract'
    return ""


_TOKENS = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d][\w'-]*")
# a formula: "O(log T)", "Θ(n^2)", "T^{1-β}", "n²"
_MATH = re.compile(
    r"[OΘΩ]\((?:[^()]|\([^()]*\))+\)|\w+\s*\^\s*(?:\{[^{}]*\}|\(?[\w.+-]+\)?)|\w+[²³]"
)


def _squash(text: str) -> str:
    """A formula's characters without markup or spacing: "$O(\\log T)$" -> "o(logt)"."""
    text = re.sub(r"\\(?:left|right)\b|\\[,;!]", "", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    return re.sub(r"[\s${}\\]", "", plain(text)).lower()


def _standalone_numbers(abstract: Abstract) -> set[str]:
    """The numbers the abstract states on their own, not inside names ("EMPIAR-10345")."""
    return set(numbers_in(plain(" ".join(abstract.sentences)), standalone=True))


def _contexts(number: str, text: str, width: int = 2) -> list[tuple[set[str], set[str]]]:
    """For each place ``text`` states ``number``: the stems of the words before and after."""
    tokens = _TOKENS.findall(MARKER.sub(" ", text))
    places = []
    for i, token in enumerate(tokens):
        if token.replace(",", "") != number:
            continue
        sides = []
        for side in (tokens[i - 1 :: -1] if i else [], tokens[i + 1 :]):
            words = [w for t in side if not t[0].isdigit() for w in content_stems(t)]
            sides.append(set(words[:width]))
        places.append((sides[0], sides[1]))
    return places


def _same_context(number: str, statement: str, abstract: Abstract) -> bool:
    """Whether the statement says its number of what the abstract says it of: a word around
    it in the statement is around it in the abstract ("6.2% over the best RLIR baseline")."""
    said = _contexts(number, statement)
    if not said or not all(before or after for before, after in said):
        return True  # a bare number, or a number word: nothing to compare
    held = _contexts(number, plain(f"{abstract.title}. {' '.join(abstract.sentences)}"))
    return not held or any((sb & hb) or (sa & ha) for sb, sa in said for hb, ha in held)


def unstated_words(statement: str, abstract: Abstract) -> list[str]:
    """The statement's content words (stems) its abstract does not have."""
    statement = plain(statement)
    folded = {fold(s) for s in abstract.stems}
    stems = dict.fromkeys(content_stems(statement))
    return [s for s in stems if s not in abstract.stems and fold(s) not in folded]


def allowed_words(similarity: float) -> int:
    return max((n for floor, n in PARAPHRASE_ALLOWANCE if similarity >= floor), default=0)


def _surface(text: str, stems: list[str]) -> list[str]:
    """The words of ``text`` behind some stems, for a reason a person can read."""
    words = re.findall(r"(?u)\b\w\w+\b", MARKER.sub(" ", text))
    by_stem: dict[str, str] = {}
    for w in words:
        for s in tokenize(w):
            by_stem.setdefault(s, w)
    return [f'"{by_stem.get(s, s)}"' for s in stems[:3]]


_EARLIER = re.compile(rules.EARLIER_WORK, re.I)
_OWN = re.compile(r"\b(we|our|this paper|this work|here)\b", re.I)
# Words that make a claim a neighbouring sentence cannot lend (``rules.CLAIM_WORDS``).
# a word of a compound ("no-regret", "first-order") is no claim of its own
_ALONE = r"(?<![\w-])({})(?![\w-])"
_CLAIM = re.compile(_ALONE.format(rules.CLAIM_WORDS))


def about_earlier_work(sentence: str, name: str | None = "") -> bool:
    """A sentence about what earlier methods do or lack ("Existing methods rely on ..."),
    not about the paper itself: one that also says "we" or the paper's ``name`` is the
    paper's (``name=None``: any sentence that names earlier work)."""
    if not _EARLIER.search(sentence) or name is None:
        return bool(_EARLIER.search(sentence))
    return not speaks_of_itself(sentence, name)


def speaks_of_itself(sentence: str, name: str = "") -> bool:
    """The paper speaking of its own work: "we", "our", "this paper", or its method name."""
    return bool(_OWN.search(sentence)) or bool(name and name.lower() in plain(sentence).lower())


def _near(statement: str, vector: np.ndarray, abstract: Abstract, n: int = 2) -> list[str]:
    """The ``n`` abstract sentences closest to a statement."""
    order = np.argsort(-(abstract.vectors @ vector))[:n]
    return [plain(abstract.sentences[int(i)]) for i in order]


def is_boilerplate(sentence: str) -> bool:
    """A sentence about where the code lives, not about the research."""
    return bool(_BOILERPLATE.search(sentence))


def closest_sentence(statement: str, vector: np.ndarray, abstract: Abstract) -> tuple[int, float]:
    """The abstract sentence a statement rests on, and its cosine: one the statement quotes
    whole, else the closest in meaning (boilerplate only for a statement about code)."""
    flat = _flat(plain(statement))
    for i, sentence in enumerate(abstract.sentences):
        if _flat(plain(sentence)).rstrip(" .") in flat:
            return i, 1.0
    sims = abstract.vectors @ vector
    if abstract.part_vectors is not None:
        for owner, sim in zip(abstract.part_of, abstract.part_vectors @ vector, strict=True):
            sims[owner] = max(sims[owner], sim)
    about_code = is_boilerplate(statement) or "code" in statement.lower()
    order = [int(i) for i in np.argsort(-sims)]
    useful = [i for i in order if about_code or not is_boilerplate(abstract.sentences[i])]
    best = (useful or order)[0]
    return best, float(sims[best])


def _facts_in(statement: str, abstract: Abstract, index: int) -> bool:
    """Whether the statement states a number or a name, and abstract sentence ``index`` holds
    every one of them."""
    statement = plain(statement)
    own = _flat(plain(abstract.title))
    names = [n for n in names_in(statement) if _flat(n) not in own]
    facts = [*numbers_in(statement, standalone=True), *names]
    sentence = plain(abstract.sentences[index])
    held = set(numbers_in(sentence, standalone=True))
    flat = _flat(sentence)
    return bool(facts) and all(f in held or _flat(f) in flat for f in facts)


def without_title(statement: str, title: str) -> str:
    """A statement without the cited paper's title, before it ("Title: sentence") or as its
    subject ("Title learns to ..."): the title is the paper's name, not a claim ("...
    Corpora Only" claims no "only")."""
    name = plain(title).strip().rstrip(".")
    if not name:
        return statement
    return re.sub(rf"(?<!\w){re.escape(name)}(?!\w):?", " ", statement, flags=re.I)


class Shortfall(str):
    """Why a statement was removed, when only its wording fell short: no sentence of the
    abstract comes close enough, or it uses more words the abstract lacks than a paraphrase
    may, or it says the question's words with a fact of a sentence that lacks them
    (``rules.ASKED_ELSEWHERE``). Every number and name it states is in the abstract, none
    of the words it lacks is the question's, a sentence of the abstract comes within
    ``FACT_SIMILARITY_MIN`` of it, and no claim or attribution of it was found wrong: a
    reading of the statement against the abstract may keep it
    (``answering.Checker.reread``)."""


def check(
    statement: str, vector: np.ndarray, abstract: Abstract, asked: frozenset[str] = frozenset()
) -> tuple[str, str]:
    """(the sentence of ``abstract`` that states ``statement``, "") or ("", why not).
    ``asked``: the question's stems, of which a paraphrase may borrow only
    ``rules.QUESTION_ALLOWANCE`` that the abstract has none of."""
    reason = unsupported(statement, abstract)
    if reason:
        return "", reason
    index, similarity = closest_sentence(statement, vector, abstract)
    extra = unstated_words(statement, abstract)
    echoed = [w for w in extra if w in asked]
    # short of the bars only: a reading may keep it, unless a word it lacks is the question's
    # or no sentence comes even as close as one stating a fact must ("This is stated in the
    # abstract.", which a reading holds true of any abstract)
    short = str if echoed or similarity < FACT_SIMILARITY_MIN else Shortfall
    if similarity < (
        FACT_SIMILARITY_MIN if _facts_in(statement, abstract, index) else SIMILARITY_MIN
    ):
        return "", short("no sentence of the cited abstract states it")
    if len(echoed) > QUESTION_ALLOWANCE:
        words = ", ".join(_surface(statement, echoed))
        return "", f"the cited abstract does not say {words}, the question's words"
    if len(extra) > allowed_words(similarity):
        words = ", ".join(_surface(statement, extra))
        return "", short(f"the cited abstract does not say {words}")
    sentence = abstract.sentences[index]
    if not about_earlier_work(statement, None):
        if about_earlier_work(sentence, abstract.name):
            return "", "the cited abstract says this of earlier work, not of this paper"
        if earlier := _named_as_earlier_work(statement, abstract):
            return "", f'the cited abstract names "{earlier}" only as earlier work'
    claims = _CLAIM.findall(without_title(plain(statement), abstract.title).lower())
    near = " ".join([plain(sentence), *_near(statement, vector, abstract)]).lower()
    if any(re.search(_ALONE.format(c), near) is None for c in claims):
        return "", f'the cited abstract does not say "{claims[0]}"'
    if scope := _narrowed(plain(statement), plain(sentence)):
        return "", scope
    subject = _subject(plain(statement))
    if subject and _flat(subject) not in _flat(plain(abstract.title) + " " + near):
        # a statement about someone else's work ("Jung et al. (2025) learns ...") needs that
        # work named where the abstract says it, not anywhere in the abstract
        return "", f'the cited abstract does not say this of "{subject}"'
    if elsewhere := asked_elsewhere(statement, sentence, abstract, asked):
        # every word is the abstract's, only not together: a reading of the whole
        # statement against the abstract decides (``answering.Checker.reread``)
        words = ", ".join(_surface(statement, elsewhere))
        return "", Shortfall(f"the sentence it rests on does not say {words}, the question's words")
    return sentence, ""


def asked_elsewhere(
    statement: str, sentence: str, abstract: Abstract, asked: frozenset[str]
) -> list[str]:
    """The question's words (stems) a statement says that its abstract has, but no sentence
    holding the statement's other words has with them (nor the title), when there are
    ``ASKED_ELSEWHERE`` or more: the statement answers the question with another sentence's
    fact (``rules.ASKED_ELSEWHERE``). ``sentence``: the one it rests on, read when the
    statement has no words but the question's."""
    if not asked:
        return []
    folded = {fold(s) for s in abstract.stems}
    text = without_title(plain(statement), abstract.title)
    said = [
        s for s in dict.fromkeys(content_stems(text)) if s in abstract.stems or fold(s) in folded
    ]
    # what the statement calls its subjects ("the Bayesian state-space model", "the
    # schema"), often the question's words: a name for a thing, not what is said of it
    called = {fold(s) for m in _THE.finditer(text) for s in tokenize(m.group(1))}
    framing = [s for s in said if s in asked and fold(s) not in called]
    if len(framing) < ASKED_ELSEWHERE:
        return []
    title = _folded_stems(abstract.title)
    answer = {fold(s) for s in said if s not in asked}
    words = re.findall(r"[a-z0-9]+", abstract.text_lower)
    held = [
        h | _spelled_out_stems(s, words)
        for s in abstract.sentences
        if answer & (h := _folded_stems(s))
    ]
    borrowed = [
        [s for s in framing if fold(s) not in title | h] for h in held or [_folded_stems(sentence)]
    ]
    fewest = min(borrowed, key=len)
    return fewest if len(fewest) >= ASKED_ELSEWHERE else []


def joined_words(
    statement: str, abstract: Abstract, asked: frozenset[str] = frozenset()
) -> list[str]:
    """The words, quoted, of the part of ``statement`` that its closest sentence of
    ``abstract`` lacks most of, each a word the abstract says elsewhere (not in its title):
    a part saying words of two sentences joins what they say, truly ("... converges
    linearly for strongly convex functions") or not ("... on non-convex problems as well",
    of an abstract saying "non-convex" only of earlier work). Parts are cut where a
    statement joins two claims (commas, semicolons, colons, "and", "while", "which"), so
    two facts of two sentences, each said in its own part, join nothing
    (``rules.JUDGE_JOINED``). The question's words (``asked``) are the frame an answer
    repeats, which ``asked_elsewhere`` reads; a sentence's short forms count as the words
    the abstract spells them out with ("LCL-level": "lymphoblastoid cell lines")."""
    text = without_title(plain(statement), abstract.title)
    title = {fold(s) for s in tokenize(plain(abstract.title))} | set(numbers_in(abstract.title))
    elsewhere = {fold(s) for s in abstract.stems} - title - {fold(s) for s in asked}
    elsewhere |= set(abstract.numbers) - title
    words = re.findall(r"[a-z0-9]+", abstract.text_lower)
    sentences = [
        {fold(s) for s in tokenize(plain(x))} | _spelled_out_stems(x, words) | {*numbers_in(x)}
        for x in abstract.sentences
    ]
    worst: list[str] = []
    for part in _PARTS.split(text):
        said = [
            s
            for s in dict.fromkeys([*content_stems(part), *numbers_in(part)])
            if s in elsewhere or fold(s) in elsewhere
        ]
        if said and sentences:
            lacking = min(([s for s in said if fold(s) not in h] for h in sentences), key=len)
            worst = max(worst, lacking, key=len)
    return _surface(text, worst)


def turned(statement: str, sentence: str) -> str:
    """Why ``sentence``, the one a kept statement rests on, may not say what the statement
    takes from it: it says a word of contrast or concession (``rules.TURNING``: "rather
    than", "whereas", "although") that the statement does not, or gives the statement's
    numbers in another order ("32.8 and 15.1 on the Multi30k and WMT datasets",
    ``rules.NUMBER_ORDER``); "" if neither. Words alone cannot tell whether the statement
    kept the sentence's sense ("Tick die-out was due to a threshold event", of "... due to
    a steady increase in mortality rather than a threshold event"), so the local model
    reads it (``rules.JUDGE_JOINED``)."""
    said = plain(statement)
    own = {w.lower() for w in _TURNING.findall(said)}
    for word in (w.lower() for w in _TURNING.findall(plain(sentence))):
        if word not in own:
            return f'the sentence it rests on says "{word}", which it leaves out'
    if rules.NUMBER_ORDER:
        given = numbers_in(plain(sentence))
        shared = [n for n in dict.fromkeys(numbers_in(said)) if n in given]
        places = [given.index(n) for n in shared]
        if places != sorted(places):
            pair = " and ".join(f'"{n}"' for n in sorted(shared, key=given.index))
            return f"the sentence it rests on gives {pair} in the other order"
    return ""


_TURNING = re.compile(rf"(?<![\w-])(?:{rules.TURNING})(?![\w-])", re.I)


# where a statement joins two claims
_PARTS = re.compile(r";|[,:](?!\d)|\b(?:and|while|whereas|but|which|where|whose)\b")


# "the" and the words after it up to a word that carries no claim ("of", "with", "is")
_THE = re.compile(
    rf"\bthe\s+((?:(?!(?:{'|'.join(sorted(set(_GENERIC.split()) - {'the'}))})\b)[\w()²³-]+\s*)+)",
    re.I,
)


def _spelled_out_stems(sentence: str, words: list[str]) -> set[str]:
    """The stems of the words the abstract spells a sentence's short forms out with
    ("LCL-level": "lymphoblastoid cell lines")."""
    found: set[str] = set()
    for short in re.findall(r"(?<![\w])([A-Z]{2,6})s?(?![a-z])", plain(sentence)):
        for run in _initial_runs(short.lower(), words):
            found |= {fold(s) for s in tokenize(" ".join(run))}
    return found


def _folded_stems(text: str) -> set[str]:
    text = plain(text)
    return {fold(s) for s in [*tokenize(text), *_word_stems(text)]}


# "convex and strongly convex", "linear or deep linear": a word, and the same word narrowed
_BROADER = re.compile(r"\b([^\W\d][\w-]*)\s+(?:and|or)\s+((?:[^\W\d][\w-]*\s+){1,2})\1\b", re.I)


def _narrowed(statement: str, sentence: str) -> str:
    """Why ``sentence`` does not state a statement that claims something of both a thing and
    a narrower kind of it ("for convex and strongly convex problems"), when the sentence says
    it only of the narrower kind ("for strongly convex problems"); "" otherwise."""
    for match in _BROADER.finditer(statement):
        if _flat(match.group(0)) in _flat(sentence):
            continue  # the sentence says it so: "interdomain sparse approximations and ..."
        broad, narrowing = match.groups()
        last = narrowing.split()[-1]
        alone = rf"(?<!\b{re.escape(last)} )\b{re.escape(broad)}\b"
        if re.search(alone, sentence, re.I) is None:
            return f'the cited sentence says this of "{narrowing}{broad}" only, not of "{broad}"'
    return ""


def judge(
    statement: Statement,
    vector: np.ndarray,
    abstracts: dict[int, Abstract],
    embed: Callable[[list[str]], np.ndarray] | None = None,
    asked: frozenset[str] = frozenset(),
) -> Verdict:
    """Keep a statement that a cited abstract supports; else move it to a source that does;
    else, for a comparison ("A does X, while B does Y"), keep it when each part is stated by
    a source; else remove it, saying why (the reason given is the cited source's)."""
    cited = [abstracts[n] for n in statement.cites if n in abstracts]
    others = [a for n, a in abstracts.items() if n not in statement.cites]
    several = _SEVERAL.search(statement.text)
    if several and not any(_says(a, several.group(0)) for a in cited):
        # "both CLASP algorithms", said by CLASP's abstract of its own two, is one paper's
        return Verdict(statement, (), reason="it speaks of several papers at once")
    first_reason = ""
    for abstract in [*cited, *others]:
        sentence, reason = check(statement.text, vector, abstract, asked)
        if sentence:
            return Verdict(statement, (abstract.number,), (sentence,))
        if (abstract in cited or not cited) and not first_reason:
            first_reason = reason
    parts = clauses(statement.text)
    if embed is not None and len(parts) > 1:
        found = _each_part(parts, embed(parts), [*cited, *others], asked)
        if found:
            first: dict[int, str] = {}  # each source, in the order the parts name them,
            for number, sentence in found:  # with the first sentence it lends
                first.setdefault(number, sentence)
            return Verdict(statement, tuple(first), tuple(first.values()))
    if not statement.cites:
        first_reason = "it cites no source, and no source states it" + (
            f" ({first_reason})" if first_reason else ""
        )
    elif not cited:
        first_reason = "it cites a source that was not retrieved"
    return Verdict(statement, (), reason=first_reason)


def _says(abstract: Abstract, phrase: str) -> bool:
    return _flat(phrase) in _flat(plain(" ".join(abstract.sentences)))


# "Both papers ...", "All three methods ...": no one abstract states what several papers do.
_SEVERAL = re.compile(
    r"\b(both|all|these|the two|the three|each of the) (\w+ )?(papers|methods|works|approaches|"
    r"studies|frameworks|models|algorithms|techniques)\b",
    re.I,
)
_CLAUSE = re.compile(r",?\s+(?:while|whereas|but|and also)\s+|;\s+|,\s+and\s+(?=[A-Z])")


def clauses(statement: str) -> list[str]:
    """A compound statement's parts ("A does X, while B does Y"); one part if not compound."""
    return _CLAUSE.split(statement)


def _each_part(
    parts: list[str], vectors: np.ndarray, abstracts: list[Abstract], asked: frozenset[str]
) -> list[tuple[int, str]]:
    """For each part of a compound statement, a source that states it; [] if one has none."""
    found = []
    for part, vector in zip(parts, vectors, strict=True):
        stated = ((a.number, check(part, vector, a, asked)[0]) for a in abstracts)
        support = next(((n, s) for n, s in stated if s), None)
        if support is None:
            return []
        found.append(support)
    return found


def split_statements(text: str, titles: Sequence[str] = ()) -> list[Statement]:
    """The answer's sentences with the sources each cites.

    A marker covers its own sentence and the unmarked sentences before it on the same line
    ("X does A. It reaches B [1]."): small models often cite once per line. A bulleted line
    that begins with one of ``titles`` and a colon keeps the title whole with its first
    sentence: a title's "?" ("Do GANs learn the distribution? Some Theory and Empirics")
    does not end a sentence.
    """
    statements: list[Statement] = []
    for number, line in enumerate(text.splitlines()):
        bullet, body = split_bullet(line)
        on_line: list[tuple[str, tuple[int, ...]]] = []
        pending: list[str] = []
        heading = _title_heading(body, titles) if bullet else 0
        parts = split_sentences(body[heading:])
        if heading:
            parts = [body[:heading] + (parts[0] if parts else ""), *parts[1:]]
        for sentence in parts:
            cites = tuple(n for m in MARKER.finditer(sentence) for n in marker_numbers(m.group(1)))
            clean = strip_markers(sentence)
            if clean:
                pending.append(clean)
            if cites and pending:
                on_line += [(s, cites) for s in pending]
                pending = []
        on_line += [(s, ()) for s in pending]
        statements += [
            Statement(s, c, number, bullet if i == 0 else "") for i, (s, c) in enumerate(on_line)
        ]
    return statements


# "[1] introduces a tester ...": a marker where the sentence's subject should be, before a
# word in lower case (the line's start, after a bullet, or after a sentence's end)
_MARKER_SUBJECT = re.compile(r"(^\s*(?:(?:[-*•]|\d+[.)])\s+)?|[.!?]\s+)\[(\d+)\]\s+(?=[a-z])", re.M)


def cited_subjects(text: str, names: Mapping[int, str]) -> str:
    """The reply with a marker used as a sentence's subject made the name of the source it
    cites, the marker after it ("[1] introduces X." -> "<title> [1] introduces X."): with
    the marker moved to the sentence's end, the sentence would have no subject."""

    def named(m: re.Match[str]) -> str:
        name = names.get(int(m.group(2)))
        return f"{m.group(1)}{name} [{m.group(2)}] " if name else m.group(0)

    return _MARKER_SUBJECT.sub(named, text)


def _title_heading(body: str, titles: Sequence[str]) -> int:
    """The length of "<title>: " when ``body`` begins with one of ``titles`` whose words a
    sentence splitter would cut ("?", ". "); else 0."""
    for title in titles:
        title = title.strip()
        if re.search(r"[.!?]\s", title) and body.lower().startswith(title.lower() + ":"):
            return len(body) - len(body[len(title) + 1 :].lstrip())
    return 0


def split_bullet(line: str) -> tuple[str, str]:
    """ "- RLER ..." -> ("- ", "RLER ...")"""
    m = re.match(r"\s*([-*•]|\d+[.)])\s+", line)
    return ("- ", line[m.end() :].strip()) if m else ("", line.strip())


def strip_markers(sentence: str) -> str:
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", sentence)).strip()


def marker_numbers(marker: str) -> list[int]:
    """ "1, 3-5" -> [1, 3, 4, 5]"""
    numbers: list[int] = []
    for part in re.split(r"\s*,\s*", marker):
        bounds = [int(x) for x in re.split(r"\s*[-–]\s*", part) if x]
        if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < 20:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(bounds)
    return numbers


def _subject(statement: str) -> str:
    """The name a statement opens with, when it is one ("Jung et al.", "CLIP"), or ""."""
    m = re.match(r"\s*([A-Z][\w²³-]*(?:\s+[A-Z][\w²³-]*)*)(\s+et al\.?)?", statement)
    if not m:
        return ""
    if m.group(2):
        return m.group(1)
    words = m.group(1).split()
    return m.group(1) if set(words) <= set(names_in(statement)) else ""


def repeats(statement: Statement, question: str) -> bool:
    """A statement that only says the question back ("deals with black-box models")."""
    text, question = plain(statement.text), plain(question)
    if set(numbers_in(text)) - set(numbers_in(question)):
        return False
    said = {fold(w) for w in content_stems(text)}
    return bool(said) and said <= {fold(w) for w in tokenize(question)}


def is_lead_in(statement: Statement) -> bool:
    """A connective with nothing to check: "Two papers match:", "Yes.", "In short,". A
    whole sentence that says nothing checkable ("This method is described in the abstract.")
    is no connective: no abstract states it, so it goes."""
    text = statement.text.rstrip()
    if text.endswith(":"):
        return len(content_stems(text)) <= 4
    return len(text.split()) <= 3 and not content_stems(text)
