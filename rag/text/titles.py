"""Titles for papers listed without one, derived from their abstracts.

``derive_title`` names the method, system or benchmark an abstract introduces, with a short
description ("DensityFlow: generative framework that constructs robust CEs"); an abstract
that names nothing gets a short phrase for its contribution or its first sentence.
``strip_markup`` turns the light LaTeX and Markdown found in titles into plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

MAX_WORDS = 8
MAX_CHARS = 80

_SUPERSCRIPTS = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")
SYMBOLS = {
    "ell": "ℓ", "infty": "∞", "propto": "∝", "sqrt": "√", "approx": "≈", "times": "×",
    "leq": "≤", "geq": "≥", "le": "≤", "ge": "≥", "pm": "±", "alpha": "α", "beta": "β",
    "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η", "theta": "θ",
    "lambda": "λ", "mu": "μ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
}  # fmt: skip
_TEXT_COMMANDS = re.compile(
    r"\\(?:textbf|textit|textsc|texttt|textrm|emph|underline|url|mathrm|mathbf|mathit|"
    r"mathcal|mathbb|mathsf|operatorname|text|tilde|hat|bar)\s*\{([^{}]*)\}"
)
_MARKUP = re.compile(r"[\\$*{}\[]|--")
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,2}(?=\S)([^*\n]+?)(?<=\S)\*{1,2}(?![\w*])")
_MATH = re.compile(r"\$([^$\n]{1,80})\$")
_CONTRIBUTION_VERBS = r"propose|present|introduce|develop|design"
_NAMING_WORDS = r"called|named|dubbed|termed"
_INTRODUCING = re.compile(rf"\b(?:(?P<verb>{_CONTRIBUTION_VERBS})|(?P<naming>{_NAMING_WORDS}))\s+")
_STUDY_VERBS = r"study|studies|investigate|consider|tackle|examine|address"
# Words a phrase may be cut before, so it ends on a whole noun phrase.
_SPLIT_WORDS = frozenset(
    "in for of on with during across from into over under between that which and or as at "
    "to by via using based together through without among within".split()
)
_TRAILING = _SPLIT_WORDS | frozenset(
    "a an the both its their our is are be can where when while whose who how than such some "
    "each these this those it around about against toward towards beyond upon per".split()
)
_HARD_STOPS = re.compile(
    r"[,;:]|\s[—–-]{1,3}\s|—|\.(?:\s|$)| by | via | which | while | where | whose | when "
    r"| whereas | although | because | instead of | in order to | such as | so that "
)
_GENERIC_HEADS = frozenset("framework method approach model algorithm system technique".split())
_VACUOUS = _GENERIC_HEADS | frozenset(
    "simple efficient effective general generic novel new unified principled practical flexible "
    "fast scalable robust powerful improved alternative class family procedure scheme strategy "
    "methods algorithms models approaches frameworks techniques paper work".split()
)
_OPENING = r"^(?:we|this (?:paper|work|note|article|study|research))\s+\w+\s+(?:that\s+)?"
_PRONOUNS = frozenset("it this these there we our they their such".split())
_SUBJECT = r"(?:\bwe\b|\bthis (?:paper|work|article|note|study)\b)"
_CONTRIBUTION_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"{_SUBJECT}.*?\b(?:{_CONTRIBUTION_VERBS})s?\s+(?P<p>(?:a|an)\s.+)",
        rf"{_SUBJECT}\s+(?:\w+\s+)?(?:{_STUDY_VERBS})s?\s+(?P<p>.+)",
        rf"{_SUBJECT}.*?\bby\s+(?P<p>\w+ing\s.+)",
    )
)
_LEAD_IN = re.compile(r"^(?:in this (?:paper|work),?\s*|\S+ et al\.\s*(?:\(\d{4}\)\s*)?\w+\s+)")
_MAIN_VERB = re.compile(r"\s(?:is|are|was|were|has|have|remains?|can|could|may|will)\s")
_LEADING_FILLER = re.compile(
    r"^(?:(?:a|an|the)\s+)?(?:(?:problem|task|question|use|issue|challenge)\s+of\s+(?:the\s+)?)?",
    re.IGNORECASE,
)
_NOT_OBJECTS = frozenset("this these that those it them such their its our how".split())


@dataclass(frozen=True)
class _Named:
    name: str
    expansion: str = ""
    description: str = ""


def derive_title(abstract: str) -> str:
    """A short title for a paper that has only an abstract.

    The name the abstract introduces plus what it is, where it names one; otherwise a
    phrase (at most ~8 words) for its contribution or its first sentence.
    """
    sentences = _sentences(strip_markup(abstract))
    named = _find_named(sentences)
    if named is not None:
        return _label(named, fallback=_best_phrase(_topic_phrases(sentences)))
    candidates = chain(_contribution_phrases(sentences), _topic_phrases(sentences))
    return _best_phrase(candidates) or _first_words(" ".join(sentences)) or "Untitled paper"


def strip_markup(text: str) -> str:
    """Plain text from light LaTeX/Markdown: ``\\textit{X}`` -> X, ``Trap$^{2}$`` -> Trap²."""
    if not _MARKUP.search(text):
        return " ".join(text.split())
    text = _MATH.sub(lambda m: _plain_math(m.group(1)), text)
    for _ in range(3):  # nested commands, innermost first
        text = _TEXT_COMMANDS.sub(r"\1", text)
    text = re.sub(r"\\(?:cite\w*|ref|label)\{[^{}]*\}", "", text)
    text = re.sub(r"\\([%&_#$])", r"\1", text)
    text = re.sub(r"\\(?:emph|em|textbf|bf|textit|it)(?![a-z])\s*", "", text)  # "\emphWord"
    text = re.sub(r"\\([A-Za-z]+)", lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", text)  # Markdown link -> its text
    text = _EMPHASIS.sub(r"\1", text)  # *emphasis* -> emphasis, but "A* search" stays
    text = text.replace("---", "—").replace("--", "–").replace("{", "").replace("}", "")
    return " ".join(text.split())


def _plain_math(math: str) -> str:
    math = re.sub(r"\^\{([^{}]*)\}|\^(\w)", _superscript, math)
    math = re.sub(r"\\(?:left|right)\b", "", math)
    math = re.sub(r"\\([A-Za-z]+)\s*", lambda m: SYMBOLS.get(m.group(1), ""), math)
    return math.replace("{", "").replace("}", "").replace("\\", "")


def _superscript(match: re.Match[str]) -> str:
    raw = match.group(1) if match.group(1) is not None else match.group(2)
    return raw.translate(_SUPERSCRIPTS) if re.fullmatch(r"[0-9+\-n]+", raw) else f"^{raw}"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])", text) if s.strip()]


# --- papers that name what they introduce ---------------------------------------------


def introduced_names(abstract: str) -> tuple[str, ...]:
    """Every name the abstract introduces for its own work ("R³-Bench", "R³-Refiner")."""
    sentences = _sentences(strip_markup(abstract))
    return tuple(dict.fromkeys(n.name for n in _all_named(sentences)))


def _find_named(sentences: list[str]) -> _Named | None:
    return next(_all_named(sentences), None)


def _all_named(sentences: list[str]) -> Iterator[_Named]:
    for sentence in sentences:
        if not re.search(r"\b(?:we|our)\b", sentence, re.IGNORECASE):
            continue  # "Jung et al. introduce ..." is prior work, not this paper's
        for match in _INTRODUCING.finditer(sentence):
            rest = sentence[match.end() :]
            if match.group("verb"):
                named = _name_after_verb(rest)
            else:
                named = _name_after_naming(rest, sentence[: match.start()])
            if named is not None:
                yield named


def _name_after_verb(rest: str) -> _Named | None:
    """The name in "we propose NAME, a ...", "we propose long words (ACRONYM), which ..."."""
    span, separator, tail = _split_span(rest)
    named = _parse_span(span, allow_capitalised=separator in {",", "—", "–"})
    if named is None:
        return None
    if re.match(r"(?:a|an|the)\s", tail, re.IGNORECASE):
        named = _Named(named.name, named.expansion, _cut_at_stops(tail))
    return named


def _name_after_naming(rest: str, before: str) -> _Named | None:
    """The name in "an efficient defense named Contrastive Spectral Rectification (CSR)"."""
    span, _, _ = _split_span(rest)
    named = _parse_span(span, allow_capitalised=True)
    if named is None:
        first = span.split()[0] if span.split() else ""
        named = _Named(first) if _is_name_token(first) else None
    if named is None:
        return None
    verb = list(re.finditer(rf"\b(?:{_CONTRIBUTION_VERBS})\s+", before))
    description = before[verb[-1].end() :] if verb else ""
    return _Named(named.name, named.expansion, description.strip(" ,"))


def _split_span(rest: str) -> tuple[str, str, str]:
    """The text up to the first comma, dash, colon or sentence end outside parentheses."""
    depth = 0
    for i, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ",;:—–" and (char != "–" or rest[i - 1 : i] == " "):
            return rest[:i].strip(), char, rest[i + 1 :].strip()
    return rest.strip().rstrip("."), "", ""


def _parse_span(span: str, *, allow_capitalised: bool) -> _Named | None:
    acronym = re.fullmatch(r"(?P<words>[^()]+?)\s*\((?P<acr>[^()\s]+)\)", span)
    if acronym and _abbreviates(acronym["acr"], acronym["words"].split()):
        return _Named(acronym["acr"], acronym["words"])  # "long words (ACRONYM)"
    defined = re.fullmatch(r"(?P<name>\S+)\s*\((?P<words>[^()]+)\)", span)
    if defined and _abbreviates(defined["name"], defined["words"].split()):
        return _Named(defined["name"], defined["words"])  # "NAME (Long Words)"
    inner = re.fullmatch(r"(?P<words>[^()]+?)\s*\((?P<acr>[^()\s]+)\)\s*(?P<rest>[^()]+)", span)
    if inner and _abbreviates(inner["acr"], inner["words"].split()):
        name = f"{inner['acr']} {inner['rest']}"  # "Random Process (RP) Flow" -> "RP Flow"
        return _Named(name) if len(name.split()) <= 3 else None
    tagged = re.match(r"(?P<before>(?:\S+\s+){0,5}?\S+)\s*\((?P<name>[^()\s]+)\)", span)
    if tagged and _is_name_token(tagged["name"]) and not _defines(tagged):
        return _Named(tagged["name"], description=tagged["before"])  # "a tool (ProveIt)"
    return _plain_name(span, allow_capitalised=allow_capitalised)


def _defines(tagged: re.Match[str]) -> bool:
    """Whether "(KMM)" abbreviates the words before it ("kernel mean matching (KMM)")."""
    words = tagged["before"].split()
    return any(_abbreviates(tagged["name"], words[-k:]) for k in range(1, len(words) + 1))


def _plain_name(span: str, *, allow_capitalised: bool) -> _Named | None:
    words = span.split()
    if not words or len(words) > 3 or not _is_name_token(words[0], allow_capitalised):
        return None
    if any(not w[:1].isupper() and not w[:1].isdigit() for w in words[1:]):
        return None  # "DensityFlow that ..." is cut elsewhere; lowercase words are no name
    return _Named(" ".join(words))


def _is_name_token(token: str, allow_capitalised: bool = False) -> bool:
    """DensityFlow, CryoACE, OPIC, Trap², R³-Bench, iTM-VAE: mixed case, capitals or
    digits."""
    token = token.strip(".,;:*")
    if len(token) >= 3 and token[0].islower() and sum(c.isupper() for c in token[1:]) >= 2:
        return True  # iTM-VAE, pLSA: a small first letter before capitals
    if len(token) < 2 or not (token[0].isupper() or token[0].isdigit()):
        return False
    if re.fullmatch(r"[A-Z]{1,6}s", token):
        return False  # plural acronyms ("LLMs", "CEs") name background, not the method
    if re.fullmatch(r"\d+[A-Za-z]?", token):
        return False  # "2D", "3"
    marked = any(c.isupper() or c.isdigit() or c in "²³⁴" for c in token[1:])
    return marked or (allow_capitalised and token[1:].isalpha())


def _abbreviates(acronym: str, words: list[str]) -> bool:
    """Whether ACRONYM's capitals are the initials of WORDS (small words may be skipped)."""
    letters = [c.lower() for c in acronym if c.isupper()]
    initials = [part[0].lower() for w in words for part in re.split(r"[-–]", w) if part]
    if len(letters) < 2 or not initials or letters[0] != initials[0]:
        return False
    position = 0
    for letter in letters:
        while position < len(initials) and initials[position] != letter:
            position += 1
        if position == len(initials):
            return False
        position += 1
    return True


def _label(named: _Named, fallback: str) -> str:
    """ "NAME (Expansion): description", "NAME: Expansion" or "NAME: description"."""
    if named.expansion:
        head = f"{named.name} ({named.expansion}): "
        described = _describe(named.description, MAX_CHARS - len(head))
        if described:
            return head + described
        if len(named.name) + len(named.expansion) + 2 <= MAX_CHARS:
            return f"{named.name}: {named.expansion}"
    budget = MAX_CHARS - len(named.name) - 2
    described = _describe(named.description, budget) or _describe(fallback, budget)
    return f"{named.name}: {described}" if described else named.name


def _describe(description: str, budget: int) -> str:
    """The description cut to ``budget`` characters; empty when nothing specific is left."""
    fitted = _shorten(_cut_at_stops(description), budget) if budget >= 12 else ""
    return fitted if _is_specific(fitted) else ""


# --- papers that name nothing -----------------------------------------------------------


def _best_phrase(candidates: Iterable[str]) -> str:
    """The first candidate that, shortened, still says something specific."""
    for candidate in candidates:
        phrase = _shorten(candidate, MAX_CHARS)
        if _is_specific(phrase):
            return _capitalise(phrase)
    return ""


def _contribution_phrases(sentences: list[str]) -> Iterator[str]:
    """What "we propose a ...", "this paper studies ..." or "we ... by learning ..." is about."""
    for pattern in _CONTRIBUTION_PATTERNS:
        for sentence in sentences:
            match = pattern.search(sentence)
            if match and match["p"].split()[0].lower() not in _NOT_OBJECTS:
                yield _cut_at_stops(match["p"])


def _topic_phrases(sentences: list[str]) -> Iterator[str]:
    """The subject of each of the first sentences ("Retrieval-augmented generation for ...")."""
    for sentence in sentences[:3]:
        sentence = _LEAD_IN.sub("", sentence)
        sentence = re.sub(r"^[^,]{1,40},\s+(?=\S)", "", sentence)  # "Recently, ..."
        sentence = re.sub(_OPENING, "", sentence, flags=re.IGNORECASE)
        phrase = _cut_at_stops(sentence)
        verb = _MAIN_VERB.search(phrase)
        yield phrase[: verb.start()] if verb and verb.start() > phrase.find(" ") else phrase


def _cut_at_stops(phrase: str) -> str:
    """The phrase up to its first clause boundary, skipping commas inside adjective lists."""
    phrase = re.sub(r"\s*\([^()]*\)", "", phrase)  # "(LLMs)", "(Convex Losses ...)"
    # "a novel, simple, and flexible approach" -> "a flexible approach"
    phrase = re.sub(r"^((?:an?|the)\s+)?(?:\w+,\s+)+(?:and\s+)?(?=\w+\s)", r"\1", phrase)
    return _HARD_STOPS.split(phrase, maxsplit=1)[0].strip()


def _shorten(phrase: str, budget: int) -> str:
    """At most MAX_WORDS words and ``budget`` characters, ending on a whole phrase."""
    words = [w for w in (w.strip("—–-,;:") for w in _strip_filler(phrase).split()) if w]
    if words and words[0].lower() in {"novel", "new"}:
        words = words[1:]
    cut = False
    while words and (len(words) > MAX_WORDS or len(" ".join(words)) > budget):
        words, cut = words[: _cut_point(words, budget)], True
    while words and (words[-1].lower() in _TRAILING or (cut and _is_dangling(words[-1]))):
        words = words[:-1]
    return " ".join(words)


def _cut_point(words: list[str], budget: int) -> int:
    """Where to cut: before the last split word in reach, else after MAX_WORDS words."""
    cuts = [i for i in range(1, min(len(words), MAX_WORDS + 1)) if words[i] in _SPLIT_WORDS]
    if cuts and (cuts[-1] >= 2 or len(" ".join(words[:MAX_WORDS])) > budget):
        return cuts[-1]
    return MAX_WORDS if len(words) > MAX_WORDS else len(words) - 1


def _is_dangling(word: str) -> bool:
    """ "governed", "efficiently": a cut that ends on one left its clause half-said."""
    return len(word) > 4 and word.islower() and word.endswith(("ed", "ly"))


def _is_specific(phrase: str) -> bool:
    words = [w.lower() for w in phrase.split()]
    if len(words) < 2 or words[0] in _PRONOUNS:
        return False
    return not all(w in _VACUOUS for w in words)


def _strip_filler(phrase: str) -> str:
    """Without a leading article or "the problem of"."""
    return _LEADING_FILLER.sub("", phrase.strip())


def _first_words(text: str) -> str:
    """Last resort: the abstract's first words, within MAX_CHARS."""
    words = text.split()[:MAX_WORDS]
    while len(" ".join(words)) > MAX_CHARS and len(words) > 1:
        words = words[:-1]
    return _capitalise(" ".join(words)[:MAX_CHARS])


def _capitalise(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]
