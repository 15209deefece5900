"""LaTeX and Markdown in abstracts, as readable text or as a tree to render.

Abstracts are copied from papers, so they carry LaTeX (``Trap$^{2}$``, ``$(K{+}1)$``,
``\\textit{DensityFlow}``, ``$\\rho_{\\text{noise}}$``, ``\\url{...}``, ``6.2\\%``) and some
Markdown (``*governance gap*``, ``[https://...](https://...)``). ``parse`` turns a string
into plain text and ``Span``s (math, superscript, emphasis, link, ...); ``readable``
writes that as Unicode text for a terminal or a table cell (``Trap²``, ``(K+1)``,
``ρ_noise``). The web chat renders the same tree as HTML (``ui.render``).

Only a small, common subset is understood; an unknown command keeps its argument (or its
name), so nothing a reader needs is dropped. ``$`` is math only as Pandoc reads it (no
space inside either dollar, no digit right after the closing one), so "$5 and $10" stays
as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["math", "var", "sup", "sub", "em", "strong", "link"]


@dataclass(frozen=True)
class Span:
    """Marked-up text: ``math`` (a formula), ``var`` (a math letter, set in italics),
    ``sup``/``sub``, ``em``, ``strong`` or ``link`` (to ``href``)."""

    kind: Kind
    children: tuple[Node, ...]
    href: str = ""


Node = str | Span

# -- what the commands mean ----------------------------------------------------------------------
_GREEK = (
    "alpha α beta β gamma γ delta δ epsilon ϵ varepsilon ε zeta ζ eta η theta θ vartheta ϑ "
    "iota ι kappa κ lambda λ mu μ nu ν xi ξ pi π varpi ϖ rho ρ varrho ϱ sigma σ varsigma ς "
    "tau τ upsilon υ phi ϕ varphi φ chi χ psi ψ omega ω Gamma Γ Delta Δ Theta Θ Lambda Λ "
    "Xi Ξ Pi Π Sigma Σ Upsilon Υ Phi Φ Psi Ψ Omega Ω"
).split()
GREEK = dict(zip(_GREEK[::2], _GREEK[1::2], strict=True))
_RELATIONS = (
    "in ∈ notin ∉ ni ∋ approx ≈ sim ∼ simeq ≃ cong ≅ equiv ≡ propto ∝ le ≤ leq ≤ ge ≥ "
    "geq ≥ ll ≪ gg ≫ ne ≠ neq ≠ subset ⊂ subseteq ⊆ supset ⊃ supseteq ⊇ to → rightarrow → "
    "leftarrow ← gets ← Rightarrow ⇒ Leftarrow ⇐ mapsto ↦ implies ⟹ iff ⟺ leftrightarrow ↔ "
    "mid | perp ⊥ prec ≺ succ ≻ preceq ⪯ succeq ⪰ vdash ⊢ models ⊨"
).split()
RELATIONS = dict(zip(_RELATIONS[::2], _RELATIONS[1::2], strict=True))
_SYMBOLS = (
    "times × cdot · pm ± mp ∓ div ÷ ast ∗ star ⋆ circ ∘ bullet • oplus ⊕ otimes ⊗ cup ∪ "
    "cap ∩ setminus ∖ wedge ∧ vee ∨ neg ¬ lnot ¬ forall ∀ exists ∃ infty ∞ partial ∂ "
    "nabla ∇ emptyset ∅ varnothing ∅ ell ℓ hbar ℏ Re ℜ Im ℑ aleph ℵ sum ∑ prod ∏ int ∫ "
    "oint ∮ ldots … dots … cdots ⋯ vdots ⋮ ddots ⋱ prime ′ top ⊤ bot ⊥ angle ∠ "
    "langle ⟨ rangle ⟩ lfloor ⌊ rfloor ⌋ lceil ⌈ rceil ⌉ lVert ‖ rVert ‖ Vert ‖ | ‖ "
    "vert | lvert | rvert | backslash \\ triangle △ square □ checkmark ✓ dagger † "
    "textendash – textemdash — S §"
).split()
SYMBOLS = dict(zip(_SYMBOLS[::2], _SYMBOLS[1::2], strict=True))
OPERATORS = frozenset(
    "log ln lg exp max min sup inf lim liminf limsup argmax argmin arg det dim ker deg gcd "
    "sin cos tan cot sec csc sinh cosh tanh arcsin arccos arctan Pr tr rank diag sgn".split()
)
_SPACES = {",": " ", ";": " ", ":": " ", "!": "", " ": " ", "quad": " ", "qquad": " "}
_IGNORED = frozenset(
    "left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr middle displaystyle "
    "textstyle scriptstyle limits nolimits nonumber noindent centering".split()
)
_ESCAPED = {c: c for c in "%&_#$@{}"}
_EM = frozenset("textit emph textsl mathit".split())
_STRONG = frozenset("textbf mathbf boldsymbol bm".split())
_UPRIGHT = frozenset(
    "text textrm textsf texttt textnormal textup textsc mbox mathrm mathsf mathtt "
    "operatorname underline mathcal mathscr mathfrak".split()
)
_ACCENTS = {
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "bar": "\u0304",
    "overline": "\u0305",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
}
_DOUBLE_STRUCK = str.maketrans("RNZQCEPF1", "ℝℕℤℚℂ𝔼ℙ𝔽𝟙")
_SUPERSCRIPT = str.maketrans("0123456789+-−=()ni", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱ")
_SUBSCRIPT = str.maketrans("0123456789+-−=()", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎")

# -- reading text ------------------------------------------------------------------------------
_SPECIAL = re.compile(r"[$\\*\[\-`']")
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?|\\(.)", re.DOTALL)
_STRONG_MD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*(?!\*)", re.DOTALL)
_EM_MD = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*\\])\*(?![\w*])")
_LINK_MD = re.compile(r"\[([^\[\]\n]+)\]\(([^()\s]+)\)")
_DASH = re.compile(r"(?<=\w)(-{2,3})(?=\w)")


def parse(text: str) -> tuple[Node, ...]:
    """``text`` as plain strings and ``Span``s; adjacent strings are joined."""
    return _Reader(text).text()


def readable(text: str) -> str:
    """``text`` with its LaTeX and Markdown written out as plain Unicode.

    >>> readable(r"Trap$^{2}$ and $(K{+}1)$-way, \\textit{DensityFlow}, $\\rho_{\\text{noise}}$")
    'Trap² and (K+1)-way, DensityFlow, ρ_noise'
    """
    if not _SPECIAL.search(text):
        return text
    return plain(parse(text))


def plain(nodes: tuple[Node, ...]) -> str:
    """Parsed text written out as plain Unicode (see ``readable``)."""
    return "".join(_plain(node) for node in nodes)


def _plain(node: Node) -> str:
    if isinstance(node, str):
        return node
    inner = plain(node.children)
    if node.kind == "math":
        return " ".join(inner.split())
    if node.kind == "sup":
        return _script(inner, _SUPERSCRIPT, "^")
    if node.kind == "sub":
        return _script(inner, _SUBSCRIPT, "_")
    if node.kind == "link" and inner != node.href:
        return f"{inner} ({node.href})"
    return inner


def _script(text: str, table: dict[int, int], mark: str) -> str:
    """A superscript or subscript in Unicode where it has the characters (R³, x₁), else
    marked (ρ_noise, T^(1−β))."""
    if not text:  # "O_{}": nothing to write
        return ""
    if all(ord(c) in table for c in text):
        return text.translate(table)
    if len(text) == 1 or text.isalnum() or (text[0] + text[-1]) in ("()", "{}", "[]"):
        return mark + text
    return f"{mark}({text})"


class _Reader:
    """A single pass over one string; ``text`` and ``math`` read until ``stop`` or the end."""

    def __init__(self, source: str) -> None:
        self.s = source
        self.i = 0

    # -- text mode ---------------------------------------------------------------------------
    def text(self, stop: str = "") -> tuple[Node, ...]:
        out: list[Node] = []
        s = self.s
        while self.i < len(s):
            if stop and s[self.i] == stop:
                break
            found = _SPECIAL.search(s, self.i)
            end = found.start() if found else len(s)
            if stop and stop in s[self.i : end]:
                end = s.index(stop, self.i)
            out.append(s[self.i : end])
            self.i = end
            if found and end == found.start():
                out.extend(self._text_special())
        return _joined(out)

    def _text_special(self) -> list[Node]:
        s, i = self.s, self.i
        char = s[i]
        if char == "$":
            return self._dollar_math()
        if char == "\\":
            return self._text_command()
        if char == "*":
            return self._emphasis()
        if char == "[" and (m := _LINK_MD.match(s, i)):
            self.i = m.end()
            return [Span("link", _Reader(m.group(1)).text(), m.group(2))]
        if char == "-" and (m := _DASH.match(s, i)):
            self.i = m.end()
            return ["–" if len(m.group(1)) == 2 else "—"]
        if s.startswith("``", i) or s.startswith("''", i):
            self.i += 2
            return ["“" if char == "`" else "”"]
        self.i += 1
        return [char]

    def _dollar_math(self) -> list[Node]:
        s, i = self.s, self.i
        display = s.startswith("$$", i)
        opener = "$$" if display else "$"
        close = s.find(opener, i + len(opener))
        inner = s[i + len(opener) : close] if close > 0 else ""
        if close < 0 or "\n\n" in inner or not _is_math(inner, s[close + len(opener) :]):
            self.i += len(opener)
            return [opener]
        self.i = close + len(opener)
        return [_math(inner)]

    def _text_command(self) -> list[Node]:
        m = _COMMAND.match(self.s, self.i)
        if m is None:  # a backslash at the very end
            self.i += 1
            return ["\\"]
        self.i = m.end()
        name, char = m.group(1), m.group(2)
        if char is not None:
            if char == "(":  # \( ... \)
                end = self.s.find("\\)", self.i)
                if end >= 0:
                    inner, self.i = self.s[self.i : end], end + 2
                    return [_math(inner)]
            if char == "\\":
                return [" "]
            return [_ESCAPED.get(char, SYMBOLS.get(char, char))]
        self._skip_spaces()
        if name == "url" and (arg := self._raw_group()) is not None:
            return [Span("link", (arg,), arg)]
        if name == "href" and (href := self._raw_group()) is not None:
            return [Span("link", self._text_group() or (href,), href)]
        if name in _EM | _STRONG | _UPRIGHT or self._at("{"):
            group = self._text_group()
            if group is None:
                return [SYMBOLS.get(name, GREEK.get(name, name))]
            if name in _EM:
                return [Span("em", group)]
            return [Span("strong", group)] if name in _STRONG else list(group)
        if name in _IGNORED:
            return []
        return [SYMBOLS.get(name, GREEK.get(name, RELATIONS.get(name, name)))]

    def _emphasis(self) -> list[Node]:
        for pattern, kind in ((_STRONG_MD, "strong"), (_EM_MD, "em")):
            m = pattern.match(self.s, self.i)
            if m:
                self.i = m.end()
                return [Span(kind, _Reader(m.group(1)).text())]  # type: ignore[arg-type]
        self.i += 1
        return ["*"]

    def _text_group(self) -> tuple[Node, ...] | None:
        if not self._at("{"):
            return None
        self.i += 1
        group = self.text(stop="}")
        self.i += 1
        return group

    def _raw_group(self) -> str | None:
        """A ``{...}`` argument taken as it is written (a URL), nested braces included."""
        if not self._at("{"):
            return None
        depth, start = 0, self.i
        for j in range(start, len(self.s)):
            depth += {"{": 1, "}": -1}.get(self.s[j], 0)
            if depth == 0:
                self.i = j + 1
                return self.s[start + 1 : j]
        return None

    # -- math mode ----------------------------------------------------------------------------
    def math(self, stop: str = "") -> list[Node]:
        out: list[Node] = []
        while self.i < len(self.s) and not (stop and self.s[self.i] == stop):
            out.extend(self._math_token(out))
        return out

    def _math_token(self, before: list[Node]) -> list[Node]:
        s, i = self.s, self.i
        char = s[i]
        self.i += 1
        if char.isspace():
            return []
        if char in "^_":
            return [Span("sup" if char == "^" else "sub", tuple(self._math_argument()))]
        if char == "{":
            group = self.math(stop="}")
            self.i += 1
            return group
        if char.isascii() and char.isalpha():
            return [Span("var", (char,))]
        if char in "=<>":
            return [f" {char} "]
        if char == "\\":
            self.i = i
            return self._math_command(before)
        return [{"-": "−", "'": "′", "~": " ", "*": "∗"}.get(char, char)]

    def _math_argument(self) -> list[Node]:
        """What ``^``, ``_`` or a command applies to: a ``{group}`` or one token."""
        self._skip_spaces()
        if self.i >= len(self.s):
            return []
        return self._math_token([])

    def _math_command(self, before: list[Node]) -> list[Node]:
        m = _COMMAND.match(self.s, self.i)
        if m is None:
            self.i += 1
            return []
        self.i = m.end()
        name, char = m.group(1), m.group(2)
        if char is not None:
            if char == "\\":  # "\\{" is a brace escaped twice over (JSON, then LaTeX)
                if self._at("{") or self._at("}"):
                    self.i += 1
                    return [self.s[self.i - 1]]
                return [" "]
            return [_SPACES.get(char, _ESCAPED.get(char, SYMBOLS.get(char, char)))]
        return self._named(name, before)

    def _named(self, name: str, before: list[Node]) -> list[Node]:
        if name in _IGNORED:
            self._skip_spaces()
            if name in ("left", "right") and self._at("."):
                self.i += 1
            return []
        if name in GREEK:
            return [Span("var", (GREEK[name],)) if name[0].islower() else GREEK[name]]
        if name in RELATIONS:
            return [f" {RELATIONS[name]} "]
        if name in ("times", "cdot", "pm", "mp", "div", "circ", "otimes", "oplus"):
            return [f" {SYMBOLS[name]} "]
        if name in SYMBOLS:
            return [SYMBOLS[name]]
        if name in _SPACES:
            return [_SPACES[name]]
        if name in OPERATORS:
            self._skip_spaces()
            nxt = self.s[self.i : self.i + 2]
            spaced = nxt[:1].isalnum() or (nxt[:1] == "\\" and nxt[1:].isalpha())
            return [name + " " if spaced else name]  # "log T", "max{...}", "log(x)"
        return self._with_arguments(name)

    def _with_arguments(self, name: str) -> list[Node]:
        if name in ("frac", "dfrac", "tfrac", "binom"):
            top, bottom = self._math_argument(), self._math_argument()
            sep = ", " if name == "binom" else "/"
            return [*_grouped(top), sep, *_grouped(bottom)]
        if name == "sqrt":
            self._skip_optional()
            return ["√", *_grouped(self._math_argument())]
        if name in _ACCENTS:
            arg = self._math_argument()
            text = plain(tuple(arg))
            if len(text) == 1:
                return [Span("var", (text + _ACCENTS[name],)) if text.isalpha() else text]
            return arg
        if name == "mathbb":
            return [plain(tuple(self._math_argument())).translate(_DOUBLE_STRUCK)]
        if name in _UPRIGHT:
            return [plain(self._text_group() or tuple(self._math_argument()))]
        if name in _EM | _STRONG:
            kind: Kind = "em" if name in _EM else "strong"
            return [Span(kind, tuple(self._math_argument()))]
        self._skip_spaces()
        return self._math_argument() if self._at("{") else [name]

    # -- small helpers --------------------------------------------------------------------------
    def _at(self, char: str) -> bool:
        return self.s.startswith(char, self.i)

    def _skip_spaces(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def _skip_optional(self) -> None:
        if self._at("["):
            end = self.s.find("]", self.i)
            self.i = end + 1 if end > 0 else self.i


def _is_math(inner: str, after: str) -> bool:
    """Whether ``$inner$`` is a formula rather than two prices (Pandoc's rule), allowing
    the spaces inside that LaTeX itself permits when the inside is clearly LaTeX."""
    if not inner.strip():
        return False
    tight = not inner[0].isspace() and not inner[-1].isspace() and not after[:1].isdigit()
    return tight or any(c in inner for c in "\\^_{")


def _math(source: str) -> Span:
    nodes = _joined(_Reader(source).math())
    return Span("math", _trimmed(nodes))


def _grouped(nodes: list[Node]) -> list[Node]:
    """A fraction's part, in parentheses when it is more than one symbol."""
    text = plain(tuple(nodes)).strip()
    return nodes if len(text) <= 1 or text.isalnum() else ["(", *nodes, ")"]


def _joined(nodes: list[Node]) -> tuple[Node, ...]:
    """Adjacent strings as one, and adjacent math letters as one ``var``; no empty strings."""
    out: list[Node] = []
    for node in nodes:
        last = out[-1] if out else None
        if isinstance(node, str):
            if not node:
                continue
            if isinstance(last, str):
                out[-1] = last + node
                continue
        elif isinstance(last, Span) and last.kind == node.kind == "var":
            out[-1] = Span("var", _joined([*last.children, *node.children]))
            continue
        out.append(node)
    return tuple(out)


def _trimmed(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    """A formula without spaces at its ends or doubled inside ("log  T" from "\\log T")."""
    out = [re.sub(r"\s{2,}", " ", n) if isinstance(n, str) else n for n in nodes]
    if out and isinstance(out[0], str):
        out[0] = out[0].lstrip()
    if out and isinstance(out[-1], str):
        out[-1] = out[-1].rstrip()
    return tuple(n for n in out if n != "")
