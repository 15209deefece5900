"""The web chat's rendering and handlers, without a browser: what a reader sees, and that
nothing from a paper or a model can put markup or script into the page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest

from rag import (
    Answer,
    Citation,
    Hit,
    IndexStats,
    IngestReport,
    LLMUnavailableError,
    NoIndexError,
    Paper,
    Removed,
    Settings,
    Step,
)
from ui import render
from ui.app import Handlers, backend_choices, filter_kwargs, parse_auth
from ui.render import FileResult, Turn

XSS_TITLE = "<img src=x onerror=alert(1)>Trojan title"
XSS_ABSTRACT = (
    "<script>alert('abstract')</script> We study galaxy morphology with sparse autoencoders. "
    "The features match expert labels <img src=x onerror=alert(2)> in 91% of cases."
)
# LaTeX and Markdown around hostile text: rendering them must not let the text out.
XSS_MARKUP = (
    r"Trap$^{<img src=x onerror=alert(5)>}$ and $\text{<script>alert(6)</script>}$, "
    r"\textbf{<svg onload=alert(7)>}, \url{javascript:alert(8)}, [click](javascript:alert(9)), "
    r"*<b onclick=alert(10)>em</b>* and [ok](https://x.org/\"onmouseover=alert(11))"
)
# The tags this module writes; anything else in the output came from the data.
OURS = {
    "a", "article", "aside", "b", "br", "button", "code", "details", "div", "em", "h3", "h4",
    "header", "h1", "i", "li", "mark", "p", "q", "section", "span", "strong", "sub", "summary",
    "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(markup: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(markup)
    return parser.tags


def assert_inert(markup: str) -> None:
    """Only our own tags, no event handlers, no script URLs."""
    for tag, attrs in tags(markup):
        assert tag in OURS, f"unexpected <{tag}> in output"
        assert not [a for a in attrs if a.startswith("on")], f"event handler on <{tag}>"
        assert "javascript:" not in (attrs.get("href") or "").lower()


def paper(title: str = "DensityFlow", **kw: Any) -> Paper:
    fields: dict[str, Any] = {
        "paper_id": title.lower()[:12],
        "title": title,
        "abstract": "We propose DensityFlow. It constructs robust counterfactuals. It is fast.",
        "venue": "ICML",
        "year": 2026,
    }
    return Paper(**{**fields, **kw})


def grounded(text: str, *citations: Citation, **kw: Any) -> Answer:
    return Answer(text=text, grounded=True, query="q", citations=citations, **kw)


# -- escaping ------------------------------------------------------------------------------------
def test_a_hostile_abstract_and_title_render_as_text() -> None:
    hostile = paper(XSS_TITLE, abstract=XSS_ABSTRACT, url="javascript:alert(3)")
    card = render.source_card_html(Citation(1, hostile, "We study galaxy morphology"))
    assert_inert(card)
    assert "&lt;script&gt;alert(&#x27;abstract&#x27;)&lt;/script&gt;" in card
    assert "&lt;img src=x onerror=alert(1)&gt;Trojan title" in card
    assert "javascript:" not in card  # the bad URL is not linked at all


def test_model_output_is_escaped_before_citations_are_linked() -> None:
    cited = Citation(1, paper())
    answer = grounded('<b onmouseover="x()">Bold</b> claim [1]. <script>x()</script>', cited)
    out = render.answer_html(answer)
    assert_inert(out)
    assert "&lt;b onmouseover=&quot;x()&quot;&gt;Bold&lt;/b&gt;" in out
    assert "&lt;script&gt;" in out


def test_everything_the_chat_shows_is_inert() -> None:
    hostile = paper(XSS_TITLE, abstract=f"{XSS_ABSTRACT} {XSS_MARKUP}.", url="javascript:x()")
    hit = Hit(hostile, 0.5, evidence=(XSS_ABSTRACT, XSS_MARKUP))
    answer = grounded(
        f"{XSS_ABSTRACT} [1]\n- {XSS_MARKUP} [1]",
        Citation(1, hostile, XSS_MARKUP),
        removed=(Removed(XSS_TITLE, XSS_ABSTRACT), Removed(XSS_MARKUP, "<b>why</b>")),
        hits=(hit,),
    )
    refused = Answer(text=render.esc("<i>no</i>"), grounded=False, query=XSS_TITLE, hits=(hit,))
    turns = [Turn(XSS_TITLE, answer=answer), Turn("q", answer=refused), Turn(XSS_TITLE)]
    turns += [Turn("q", draft=XSS_ABSTRACT), Turn("q", error=XSS_TITLE)]
    turns += [Turn("q", draft=XSS_MARKUP, stage="reading", hits=(hit,))]
    out = render.transcript_html(turns)
    assert_inert(out)
    assert "&lt;script&gt;alert(6)&lt;/script&gt;" in out  # inside a formula, still text
    assert 'href="javascript' not in out  # the text may say it; no link goes there


def test_math_and_markup_in_answers_and_abstracts_are_rendered() -> None:
    out = render.markup_html(
        r"Trap$^{2}$ and R$^3$-Refiner, a $(K{+}1)$-way test ($\rho_{\text{noise}}$), "
        r"\textit{DensityFlow}, *governance gap*, 6.2\% at \url{https://github.com/x/y}"
    )
    assert 'Trap<span class="math"><sup>2</sup></span> and R<span class="math">' in out
    assert "(<i>K</i>+1)</span>-way" in out
    assert '<span class="math"><i>ρ</i><sub>noise</sub></span>' in out
    assert "<em>DensityFlow</em>, <em>governance gap</em>, 6.2%" in out
    assert '<a href="https://github.com/x/y" target="_blank" rel="noopener noreferrer">' in out
    assert "$" not in out and "\\" not in out
    # a citation marker inside an answer still links; one in a link's text does not
    linked = render.text_html(r"Trap$^{2}$ protects [1].", lambda n: "src-1-1")
    assert '<sup>2</sup></span> protects <sup class="cite">[<a href="#src-1-1"' in linked


def test_library_cells_are_plain_text_and_links_are_http_only() -> None:
    rows = render.library_rows(
        [
            paper("Named", authors=("A", "B", "C", "D", "E"), url="https://x.org/p"),
            paper(XSS_TITLE, title_derived=True, url="javascript:alert(1)", year=None),
            paper(r"R$^3$-Refiner and \textit{Trap}$^{2}$"),
        ]
    )
    assert rows[0] == ["Named", "ICML", "2026", "A, B, C, D et al.", "https://x.org/p"]
    assert rows[1] == [f"{XSS_TITLE} (derived title)", "ICML", "", "", ""]
    assert rows[2][0] == "R³-Refiner and Trap²"  # the table shows text: LaTeX written out


# -- citations and sources ---------------------------------------------------------------------
def test_citation_markers_link_to_the_cards_of_their_turn() -> None:
    cites = (Citation(1, paper("A")), Citation(2, paper("B")))
    answer = grounded("First [1]. Both [1, 2]. Unknown [3].", *cites)
    out = render.answer_html(answer, turn=4)
    hrefs = [a["href"] for t, a in tags(out) if t == "a"]
    assert hrefs == ["#src-4-1", "#src-4-1", "#src-4-2"]
    assert "[3]" in out  # a number with no card stays text
    ids = [a["id"] for t, a in tags(render.source_cards_html(cites, turn=4)) if t == "article"]
    assert ids == ["src-4-1", "src-4-2"]


def test_the_supporting_sentence_is_marked_within_the_abstract() -> None:
    abstract = "We propose X. It beats Y by 3 < 4 points. Code is public."
    assert render.highlight(abstract, "It beats Y by 3 < 4 points.") == (
        "We propose X. <mark>It beats Y by 3 &lt; 4 points.</mark> Code is public."
    )
    # sentence splitting may change the spacing; the mark still lands
    assert "<mark>It beats Y by 3 &lt; 4\npoints.</mark>" in render.highlight(
        abstract.replace("4 points", "4\npoints"), "It beats  Y by 3 < 4 points."
    )
    assert "<mark>" not in render.highlight(abstract, "A sentence from elsewhere.")


def visible_text(markup: str) -> str:
    """The text of ``markup`` as shown before anything is opened: hidden parts left out."""
    markup = re.sub(r'<span class="more">.*?</span>', "", markup)
    return re.sub(r"<[^>]+>", "", markup)


def test_a_card_shows_the_abstract_once_with_the_quote_marked() -> None:
    p = paper(authors=("Ada Lovelace",), url="https://example.org/df")
    card = render.source_card_html(Citation(2, p, "It constructs robust counterfactuals."), turn=1)
    assert card.count("<mark>It constructs robust counterfactuals.</mark>") == 1
    assert card.count("We propose DensityFlow.") == 1  # short: the whole abstract, once
    assert "Whole abstract" not in card  # nothing is hidden, so nothing to open
    assert 'href="https://example.org/df"' in card and 'rel="noopener noreferrer"' in card
    assert "ICML 2026 · Ada Lovelace" in card
    assert 'id="src-1-2"' in card


def test_a_long_abstract_shows_the_quote_in_context_and_the_rest_on_demand() -> None:
    sentences = [f"Sentence {i} says something about topic {i}." for i in range(1, 30)]
    p = paper(abstract=" ".join(sentences))
    card = render.source_card_html(Citation(1, p, "Sentence 15 says something about topic 15."))
    assert card.count("Sentence 15 says") == 1 and card.count("<mark>") == 1
    shown = visible_text(card)
    assert "Sentence 14 says" in shown and "Sentence 16 says" in shown  # its neighbours
    assert "Sentence 1 says" not in shown and "Sentence 29 says" not in shown
    for sentence in sentences:  # ...and every sentence is in the page exactly once
        assert card.count(sentence.rstrip(".")) == 1, sentence
    # the toggle comes first in the page so that CSS can show the rest when it is open
    assert card.index('<details class="whole">') < card.index('<span class="more">')


def test_a_readable_quote_is_found_in_its_latex_abstract() -> None:
    abstract = (
        "Model hubs make merging easy. To close this gap, we propose Trap$^{2}$, a framework. "
        "It keeps released weights effective in standalone use."
    )
    card = render.source_card_html(Citation(1, paper(abstract=abstract), "we propose Trap²"))
    assert '<mark>To close this gap, we propose Trap<span class="math"><sup>2</sup>' in card


def test_a_paper_without_a_link_gets_a_search_for_it_marked_as_a_search() -> None:
    derived = paper("OPIC: model merging framework", title_derived=True)
    card = render.source_card_html(Citation(1, derived, ""))
    assert "derived title" in card and "search for paper" in card
    (href,) = [a["href"] for t, a in tags(card) if t == "a"]
    assert href == render.search_url(derived)
    assert href.startswith("https://scholar.google.com/scholar?q=OPIC%3A+model+merging")
    assert "We+propose+DensityFlow." in href  # the abstract's first sentence
    named = render.search_url(paper("Sparse autoencoders for galaxies"))
    assert named.endswith("q=%22Sparse+autoencoders+for+galaxies%22")  # the exact title
    linked = render.source_card_html(Citation(1, paper(url="https://x.org/p")))
    assert "search for paper" not in linked


def test_derived_titles_are_marked_and_given_titles_are_not() -> None:
    derived = render.source_card_html(Citation(1, paper(title_derived=True)))
    given = render.source_card_html(Citation(1, paper()))
    assert "derived title" in derived
    assert "derived title" not in given


def test_a_refusal_says_so_and_lists_the_closest_papers() -> None:
    near = (Hit(paper("CryoACE"), 0.2, evidence=("Cryo-EM maps to atoms.",)), Hit(paper("B"), 0.1))
    refused = Answer(
        text="The indexed papers do not cover this question.",
        grounded=False,
        query="chocolate cake?",
        hits=near,
    )
    out = render.turn_html(Turn("chocolate cake?", answer=refused), 1)
    assert "No answer from these papers." in out
    assert "do not cover this question" in out
    assert "Closest papers" in out and "CryoACE" in out and "Cryo-EM maps to atoms." in out
    assert "src-1-" not in out and 'class="cite"' not in out  # nothing is presented as cited


def test_removed_statements_show_as_a_note_that_opens_to_each_and_why() -> None:
    clean = grounded("Claim [1].", Citation(1, paper()))
    assert 'class="checks"' not in render.answer_html(clean)
    flagged = grounded(
        "Claim [1].",
        Citation(1, paper()),
        removed_citations=2,
        removed=(
            Removed("It is 8x faster [1].", "the number 8 is in no cited abstract"),
            Removed("It uses Trap$^{2}$.", "no cited abstract says so"),
        ),
    )
    out = render.answer_html(flagged)
    assert (
        "<details><summary>2 statements removed: not supported by the cited abstracts"
        "</summary>" in out
    )
    assert 'It is 8x faster [1].</span> <span class="reason">— the number 8 is in no' in out
    assert 'It uses Trap<span class="math"><sup>2</sup>' in out
    assert "2 citation markers naming no retrieved paper were removed." in out
    assert out.index("</summary>") < out.index("It is 8x faster")  # hidden until opened


def test_the_searched_for_line_shows_the_rewritten_query() -> None:
    followup = Answer(
        text="x [1]",
        grounded=True,
        query="What are DensityFlow's limitations?",
        citations=(Citation(1, paper()),),
        backend="extractive",
        timings={"retrieve": 0.2, "generate": 0.3},
    )
    out = render.meta_html(followup)
    assert "searched for:" in out and "DensityFlow&#x27;s limitations?" in out
    assert "extractive" in out and "0.5 s" in out


def test_model_markdown_lists_and_bold_become_html() -> None:
    out = render.text_html("**Two papers:**\n- OPIC merges models [1]\n- Trap² protects [2]")
    assert out == (
        "<p><strong>Two papers:</strong></p><ul><li>OPIC merges models [1]</li>"
        "<li>Trap² protects [2]</li></ul>"
    )
    assert render.text_html("One.\nTwo.\n\nThree.") == "<p>One.<br>Two.</p><p>Three.</p>"


# -- the library ---------------------------------------------------------------------------------
def test_ingest_results_show_counts_skips_and_errors_per_file() -> None:
    report = IngestReport(added=2, duplicates=1, skipped=[("good.jsonl:3", "no <abstract>")])
    out = render.ingest_results_html(
        [
            FileResult("good.jsonl", report),
            FileResult("bad.json", error="bad.json: not valid JSON (line 1)."),
        ]
    )
    assert_inert(out)
    assert "2 added, 1 duplicates, 1 skipped" in out
    assert "good.jsonl:3: no &lt;abstract&gt;" in out
    assert "Not added.</strong> bad.json: not valid JSON (line 1)." in out
    # the page has a checkbox, not a command-line flag
    told = render.ingest_results_html(
        [
            FileResult(
                "b.jsonl",
                error="b.jsonl:7: malformed JSON. Fix the line or pass "
                "--skip-invalid to skip bad records.",
            )
        ]
    )
    assert "--skip-invalid" not in told
    assert "Fix the line or tick “Skip invalid records” to skip bad records." in told


def test_header_and_banner() -> None:
    assert "no index yet" in render.header_html(None)
    full = IndexStats("i", 19, 28, {"ICML": 19}, {2026: 19}, "MiniLM", 256)
    assert "19 papers · ICML · 2026</div>" in render.header_html(full)
    mixed = IndexStats("i", 21, 30, {"?": 1, "ICML": 19, "NeurIPS": 1}, {2025: 1, 2026: 19}, "", 0)
    assert "21 papers · ICML, NeurIPS · 2025–2026 · 1 without venue or year" in (
        render.header_html(mixed)
    )
    apart = IndexStats("i", 22, 30, {"?": 2, "ICML": 20}, {2026: 21}, "", 0)
    assert "2 without venue, 1 without year" in render.header_html(apart)
    assert render.banner_html("") == ""
    banner = render.banner_html("No index in index_store/. Run `rag ingest PATH` first.")
    assert "Library" in banner and "rag ingest --bundled" in banner
    assert "No index in index_store/" in banner


# -- the chat handler, over a fake assistant ----------------------------------------------------
class FakeAssistant:
    """The slice of ``Assistant`` the handlers use; ``stream`` replays what it was given."""

    def __init__(self, events: list[Any] | Exception, no_index: bool = False) -> None:
        self.events = events
        self.no_index = no_index
        self.calls: list[dict[str, Any]] = []
        self.settings = type("S", (), {"llm": type("L", (), {"backend": "extractive"})()})()

    def stream(self, question: str, history: list[Answer], **options: Any) -> Iterator[Any]:
        self.calls.append({"question": question, "history": list(history), **options})
        if isinstance(self.events, Exception):
            raise self.events
        yield from self.events

    def stats(self) -> IndexStats:
        if self.no_index:
            raise NoIndexError("No index in index_store/. Run `rag ingest PATH` first.")
        return IndexStats("index_store/", 1, 1, {"ICML": 1}, {2026: 1}, "MiniLM", 256)


def run_ask(handlers: Handlers, question: str, turns: list[Turn], **kw: Any) -> list[Any]:
    options = {"backend": "extractive", "k": 3, "venue": "ICML", "year": "2026", **kw}
    return list(handlers.ask(question, turns, **options))


def test_the_answer_streams_then_is_replaced_by_the_checked_text() -> None:
    final = grounded("Checked [1].", Citation(1, paper()))
    fake = FakeAssistant(["Draft ", "text [3]", final])
    updates = run_ask(Handlers(fake), "Which paper?", [])  # type: ignore[arg-type]
    transcripts = [u[0] for u in updates]
    assert "Searching the papers" in transcripts[0]
    assert "Draft" in transcripts[1] and "Writing" in transcripts[1]  # the first piece shows
    assert "Checked" in transcripts[-1] and "Draft" not in transcripts[-1]
    assert "Writing" not in transcripts[-1] and "working" not in transcripts[-1]
    assert updates[-1][1] == [Turn("Which paper?", answer=final)]
    assert fake.calls[0] == {
        "question": "Which paper?",
        "history": [],
        "llm": "extractive",
        "k": 3,
        "venue": "ICML",
        "year": 2026,
    }


def test_each_stage_shows_as_it_starts_and_the_papers_as_soon_as_they_are_found() -> None:
    found = (Hit(paper("OPIC"), 0.9, evidence=("OPIC merges models.",)), Hit(paper("B"), 0.5))
    final = grounded("OPIC merges models [1].", Citation(1, paper("OPIC")))
    events = [Step("searching"), Step("reading", found, "q"), Step("writing", found, "q")]
    fake = FakeAssistant([*events, "OPIC merges models [1].", final])
    transcripts = [u[0] for u in run_ask(Handlers(fake), "Model merging?", [])]  # type: ignore[arg-type]
    searching, reading, writing = transcripts[1:4]
    assert "Searching the papers…" in searching and "src-card" not in searching
    assert "Reading 2 papers…" in reading and "Searching" not in reading
    assert "Reading · 2 papers" in reading and "OPIC merges models." in reading  # the cards
    assert reading.count('class="src-card near"') == 2
    assert "Writing the answer" in writing and "Reading 2 papers" not in writing
    assert "Sources · 1 paper" in transcripts[-1]


def test_a_followup_sends_the_earlier_answers_as_history() -> None:
    first = grounded("A [1].", Citation(1, paper()))
    fake = FakeAssistant([grounded("B [1].", Citation(1, paper()))])
    turns = [Turn("first?", answer=first), Turn("failed?", error="boom")]
    run_ask(Handlers(fake), "What are its limitations?", turns)  # type: ignore[arg-type]
    assert fake.calls[0]["history"] == [first]


@pytest.mark.parametrize(
    ("error", "no_index", "shown"),
    [
        (NoIndexError("No index in index_store/. Run `rag ingest`."), True, "No index in"),
        (LLMUnavailableError("Cannot reach http://127.0.0.1:8080/v1."), False, "Cannot reach"),
        (ValueError("internal detail"), False, "Something went wrong (ValueError)"),
        # an unexpected error with no index behind it is told as the missing index
        (KeyError("internal detail"), True, "No papers to search yet; add paper lists"),
    ],
)
def test_errors_become_a_message_in_the_chat(error: Exception, no_index: bool, shown: str) -> None:
    fake = FakeAssistant(error, no_index=no_index)
    updates = run_ask(Handlers(fake), "Anything?", [])  # type: ignore[arg-type]
    transcript, turns = updates[-1][0], updates[-1][1]
    assert shown in transcript and "Could not answer." in transcript
    assert "Traceback" not in transcript and "internal detail" not in transcript
    assert turns[-1].answer is None  # an error is not history for the next question


def test_an_empty_question_changes_nothing() -> None:
    fake = FakeAssistant([])
    assert all(
        u == {"__type__": "update"}
        for u in run_ask(Handlers(fake), "  ", [])[0]  # type: ignore[arg-type]
    )
    assert not fake.calls


def test_the_backend_menu_offers_only_what_is_configured(monkeypatch: Any) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    plain = Settings.model_validate({})
    offered, why_not = backend_choices(plain)
    assert [v for _, v in offered] == ["local", "extractive"]
    assert "OpenAI-compatible" in why_not and "llm.openai.base_url" in why_not
    served = plain.with_overrides(**{"llm.openai.base_url": "http://gpu:8000/v1"})
    offered, why_not = backend_choices(served)
    assert [v for _, v in offered] == ["local", "openai", "extractive"] and not why_not
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu:8000/v1")
    assert "openai" in [v for _, v in backend_choices(plain)[0]]


def test_options_and_auth() -> None:
    assert filter_kwargs("", "") == {}
    assert filter_kwargs("ICML", "2026") == {"venue": "ICML", "year": 2026}
    assert parse_auth("ada:s3cret:x") == ("ada", "s3cret:x")
    assert parse_auth(None) is None
    with pytest.raises(Exception, match="user:pass"):
        parse_auth("nopassword")
