"""Titles for papers listed without one, derived from their abstracts.

``derive_title`` names the method, system or benchmark an abstract introduces, with a short
description ("DensityFlow: generative framework that constructs robust CEs"); an abstract
that names nothing gets a short phrase for its contribution or its first sentence.
``strip_markup`` turns the light LaTeX and Markdown found in titles into plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_WORDS = 8
MAX_CHARS = 80

_SUPERSCRIPTS = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")
_SYMBOLS = {
    "ell": "ℓ", "infty": "∞", "propto": "∝", "sqrt": "√", "approx": "≈", "times": "×",
    "leq": "≤", "geq": "≥", "le": "≤", "ge": "≥", "pm": "±", "alpha": "α", "beta": "β",
    "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "eta": "η", "theta": "θ",
    "lambda": "λ", "mu": "μ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
}  # fmt: skip
_TEXT_COMMANDS = re.compile(
    r"\\(?:textbf|textit|textsc|texttt|textrm|emph|underline|url|mathrm|mathbf|mathit|"
    r"mathcal|mathbb|mathsf|operatorname|text|tilde|hat|bar)\s*\{([^{}]*)\}"
)
_MATH = re.compile(r"\$([^$\n]{1,80})\$")
_CONTRIBUTION_VERBS = r"propose|present|introduce|develop|design"
_NAMING_WORDS = r"called|named|dubbed|termed"
_STUDY_VERBS = r"study|investigate|consider|tackle|examine"
# Words a phrase may be cut before, so it ends on a whole noun phrase.
_SPLIT_WORDS = frozenset(
    "in for of on with during across from into over under between that which and or as at "
    "to by via using based together through without among within".split()
)
_TRAILING = _SPLIT_WORDS | {"a", "an", "the", "both", "its", "their", "our", "is", "are"}
_HARD_STOPS = re.compile(
    r"[,;:]|\s[—–-]{1,3}\s|—|\.(?:\s|$)| by | via | using | which | while | where | whose "
    r"| instead of | in order to | such as | so that "
)
_GENERIC_HEADS = frozenset("framework method approach model algorithm system technique".split())
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
    if not sentences:
        return "Untitled paper"
    named = _find_named(sentences)
    if named is not None:
        return _label(named)
    phrase = _contribution_phrase(sentences) or _first_sentence_phrase(sentences[0])
    return _capitalise(_shorten(phrase, MAX_CHARS)) or "Untitled paper"


def strip_markup(text: str) -> str:
    """Plain text from light LaTeX/Markdown: ``\\textit{X}`` -> X, ``Trap$^{2}$`` -> Trap²."""
    text = _MATH.sub(lambda m: _plain_math(m.group(1)), text)
    for _ in range(3):  # nested commands, innermost first
        text = _TEXT_COMMANDS.sub(r"\1", text)
    text = re.sub(r"\\(?:cite\w*|ref|label)\{[^{}]*\}", "", text)
    text = re.sub(r"\\([%&_#$])", r"\1", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", text)  # Markdown link -> its text
    text = re.sub(r"\*{1,2}([^*\n]+?)\*{1,2}", r"\1", text)  # *emphasis* -> emphasis
    text = text.replace("---", "—").replace("--", "–").replace("{", "").replace("}", "")
    return " ".join(text.split())


def _plain_math(math: str) -> str:
    math = re.sub(r"\^\{([^{}]*)\}|\^(\w)", _superscript, math)
    math = re.sub(r"\\(?:left|right)\b", "", math)
    math = re.sub(r"\\([A-Za-z]+)\s*", lambda m: _SYMBOLS.get(m.group(1), ""), math)
    return math.replace("{", "").replace("}", "").replace("\\", "")


def _superscript(match: re.Match[str]) -> str:
    raw = match.group(1) if match.group(1) is not None else match.group(2)
    return raw.translate(_SUPERSCRIPTS) if re.fullmatch(r"[0-9+\-n]+", raw) else f"^{raw}"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])", text) if s.strip()]


# --- papers that name what they introduce ---------------------------------------------


def _find_named(sentences: list[str]) -> _Named | None:
    for sentence in sentences:
        if not re.search(r"\b(?:we|our)\b", sentence, re.IGNORECASE):
            continue  # "Jung et al. introduce ..." is prior work, not this paper's
        pattern = rf"\b(?:(?P<verb>{_CONTRIBUTION_VERBS})|(?P<naming>{_NAMING_WORDS}))\s+"
        for match in re.finditer(pattern, sentence):
            rest = sentence[match.end() :]
            if match.group("verb"):
                named = _name_after_verb(rest)
            else:
                named = _name_after_naming(rest, sentence[: match.start()])
            if named is not None:
                return named
    return None


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
    return _plain_name(span, allow_capitalised=allow_capitalised)


def _plain_name(span: str, *, allow_capitalised: bool) -> _Named | None:
    words = span.split()
    if not words or len(words) > 3 or not _is_name_token(words[0], allow_capitalised):
        return None
    if any(not w[:1].isupper() and not w[:1].isdigit() for w in words[1:]):
        return None  # "DensityFlow that ..." is cut elsewhere; lowercase words are no name
    return _Named(" ".join(words))


def _is_name_token(token: str, allow_capitalised: bool = False) -> bool:
    """DensityFlow, CryoACE, OPIC, Trap², R³-Bench: mixed case, capitals or digits."""
    token = token.strip(".,;:*")
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


def _label(named: _Named) -> str:
    description = _strip_article(named.description)
    generic = not description or description.lower() in _GENERIC_HEADS
    if named.expansion and not generic:
        head = f"{named.name} ({named.expansion}): "
        fitted = _shorten(description, MAX_CHARS - len(head))
        if fitted and fitted.lower() not in _GENERIC_HEADS:
            return head + fitted
    if named.expansion:
        return f"{named.name}: {named.expansion}"
    if generic:
        return named.name
    return f"{named.name}: {_shorten(description, MAX_CHARS - len(named.name) - 2)}"


# --- papers that name nothing -----------------------------------------------------------


def _contribution_phrase(sentences: list[str]) -> str:
    """What "we propose a ...", "we study ..." or "we ... by learning ..." is about."""
    patterns = (
        rf"\bwe\b.*?\b(?:{_CONTRIBUTION_VERBS})\s+(?P<p>(?:a|an)\s.+)",
        rf"\bwe\s+(?:\w+\s+)?(?:{_STUDY_VERBS})\s+(?P<p>.+)",
        r"\bwe\b.*?\bby\s+(?P<p>\w+ing\s.+)",
    )
    for pattern in patterns:
        for sentence in sentences:
            match = re.search(pattern, sentence, re.IGNORECASE)
            if match and match["p"].split()[0].lower() not in _NOT_OBJECTS:
                return _cut_at_stops(match["p"])
    return ""


def _first_sentence_phrase(sentence: str) -> str:
    sentence = re.sub(r"^(?:in this (?:paper|work),?\s*)", "", sentence, flags=re.IGNORECASE)
    sentence = re.sub(r"^\S+ et al\.\s*(?:\(\d{4}\)\s*)?\w+\s+", "", sentence)
    phrase = _cut_at_stops(sentence)
    verb = re.search(r"\s(?:is|are|was|were|has|have|remains?|can|could|may)\s", phrase)
    return phrase[: verb.start()] if verb and len(phrase[: verb.start()].split()) >= 2 else phrase


def _cut_at_stops(phrase: str) -> str:
    phrase = re.sub(r"\s*\([^()]*\)", "", phrase)  # "(LLMs)", "(Convex Losses ...)"
    return _HARD_STOPS.split(phrase, maxsplit=1)[0].strip()


def _shorten(phrase: str, budget: int) -> str:
    """At most MAX_WORDS words and ``budget`` characters, ending on a whole phrase."""
    words = _strip_article(phrase).split()
    if words and words[0].lower() in {"novel", "new"}:
        words = words[1:]
    while len(words) > MAX_WORDS or len(" ".join(words)) > budget:
        cuts = [i for i in range(1, min(len(words), MAX_WORDS + 1)) if words[i] in _SPLIT_WORDS]
        words = words[: cuts[-1] if cuts else len(words) - 1]
    while words and words[-1].lower() in _TRAILING:
        words = words[:-1]
    return " ".join(words)


def _strip_article(phrase: str) -> str:
    return re.sub(r"^(?:a|an|the)\s+", "", phrase.strip(), flags=re.IGNORECASE)


def _capitalise(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]
