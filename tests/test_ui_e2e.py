"""The web chat in a real browser: the real server over a real index of the bundled papers,
driven through headless Chromium (extractive answers, so no LLM is needed)."""

from __future__ import annotations

import json
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rag import Assistant, Step
from rag.index.embedder import Embedder
from tests.conftest import make_assistant
from ui.app import serve

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).parent.parent
OUTPUT = ROOT / "test-output"
SCREENSHOT = ROOT / "docs" / "screenshot-chat.png"
TIMEOUT_MS = 90_000  # an extractive answer embeds on the CPU; slow machines need a while

GALAXY = {
    "id": "galaxy-sae",
    "title": "Sparse autoencoders for galaxy morphology",
    "abstract": (
        "We train sparse autoencoders on telescope images of galaxies to discover "
        "interpretable morphology features without labels. The learned dictionary separates "
        "spiral arms, bars and tidal tails. On Galaxy Zoo the features agree with expert "
        "morphology classifications in 91% of galaxies."
    ),
    "authors": ["Vera Rubin", "Edwin Hubble"],
    "venue": "NeurIPS",
    "year": 2025,
    "url": "https://example.org/galaxy-sae",
}
HOSTILE = {
    "id": "hostile",
    "title": "<img src=x onerror=alert(1)>Galaxy cluster lensing",
    "abstract": (
        "<script>alert(2)</script> We measure weak gravitational lensing of galaxy clusters "
        "in telescope surveys <img src=x onerror=alert(3)> and classify galaxy morphology "
        "from the lensed images with a convolutional network."
    ),
    "url": "javascript:alert(4)",
}

# Records whether an in-progress turn was ever on screen (it may last only a moment), the
# stages it showed, and how wide the page was meanwhile.
WATCH_PROGRESS = """
window.sawProgress = false;
window.stages = [];
window.widths = [];
new MutationObserver(() => {
  const working = document.querySelector('.turn .working');
  if (!working) return;
  window.sawProgress = true;
  const stage = working.dataset.stage;
  if (window.stages[window.stages.length - 1] !== stage) window.stages.push(stage);
  window.widths.push(document.querySelector('.gradio-container').offsetWidth);
}).observe(document.body, {childList: true, subtree: true});
"""
PAGE_WIDTH = "document.querySelector('.gradio-container').offsetWidth"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SlowReader(Assistant):
    """The real assistant, pausing once the papers are found, so that the page can be seen
    while an answer is on its way (as it is while a local model writes)."""

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for event in super().stream(*args, **kwargs):
            yield event
            if isinstance(event, Step) and event.stage == "reading":
                time.sleep(2)


@contextmanager
def running(
    index_dir: Path, embedder: Embedder, assistant: Assistant | None = None
) -> Iterator[str]:
    """The web chat served on a free loopback port; its URL."""
    port = free_port()
    assistant = assistant or make_assistant(index_dir, embedder)
    demo = serve(assistant, host="127.0.0.1", port=port, block=False)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


@pytest.fixture(scope="module")
def app_url(
    bundled_index: Path, embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    # a copy, so that uploads here leave the session's shared index as it was
    index_dir = tmp_path_factory.mktemp("ui-index") / "index"
    shutil.copytree(bundled_index, index_dir)
    with running(index_dir, embedder) as url:
        yield url


class Page:
    """A browser tab on the app that records dialogs (script that ran) and requests that
    left the machine."""

    def __init__(self, browser: Any, url: str) -> None:
        self.dialogs: list[str] = []
        self.external: list[str] = []
        self.page = browser.new_page(viewport={"width": 1440, "height": 1000})
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.on("dialog", self._dialog)
        self.page.on("request", self._request)
        self.page.goto(url, wait_until="load")
        self.page.wait_for_selector("#question textarea")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _request(self, request: Any) -> None:
        if not request.url.startswith(("http://127.0.0.1", "data:", "blob:")):
            self.external.append(request.url)

    def ask(self, question: str, turn: int) -> Any:
        """Send a question and wait until its answer (or error) is complete."""
        self.page.fill("#question textarea", question)
        self.page.keyboard.press("Enter")
        self.page.wait_for_selector(f"#turn-{turn}")
        return self.page.wait_for_selector(f"#turn-{turn}[data-done]")

    def close(self) -> None:
        assert not self.dialogs, f"script from the data ran: {self.dialogs}"
        assert not self.external, f"the page fetched from outside: {self.external}"
        self.page.close()


def test_ask_cite_follow_up(browser: Any, app_url: str) -> None:
    tab = Page(browser, app_url)
    page = tab.page
    page.evaluate(WATCH_PROGRESS)
    empty_width = page.evaluate(PAGE_WIDTH)
    tab.ask("Which papers tackle model merging?", turn=1)
    assert page.evaluate("window.sawProgress")  # "Searching…" showed before the answer
    # the page keeps its width while an answer comes (it used to shrink to the content)
    assert set(page.evaluate("window.widths")) == {empty_width} == {page.evaluate(PAGE_WIDTH)}
    assert not page.locator("#examples").is_visible()  # examples only on an empty chat

    link = page.locator("#turn-1 sup.cite a").first
    assert link.get_attribute("href") == "#src-1-1"
    card = page.locator("#src-1-1")
    assert card.is_visible() and card.locator("mark").count() >= 1
    title = card.locator(".src-title").inner_text().replace("derived title", "").strip()
    assert "model merging" in (card.inner_text() + page.inner_text("#turn-1 .answer")).lower()
    link.click()
    assert page.evaluate("location.hash") == "#src-1-1"  # a jump within the page, no reload
    assert page.locator("#turn-1").is_visible()

    # the bundled papers have no link: each card offers a search, marked as one
    find = card.locator("a.find")
    assert find.inner_text().startswith("search for paper")
    assert (find.get_attribute("href") or "").startswith("https://scholar.google.com/scholar?q=")
    # each abstract shows once; "Whole abstract" shows the rest, with its math rendered
    for toggle in page.locator("#turn-1 details.whole summary").all():
        toggle.click()
    cards = page.locator("#turn-1 .sources")
    assert cards.locator(".src-abstract mark").count() == page.locator("#turn-1 .src-card").count()
    assert cards.locator(".math").count() >= 1, "no cited abstract with math (Trap$^{2}$?)"
    shown = page.inner_text("#turn-1")
    for raw in ("$", "\\textit", "\\textbf", "{+}", "*governance"):
        assert raw not in shown, raw

    tab.ask("What are its limitations?", turn=2)
    searched = page.inner_text("#turn-2 .searched")
    name = title.split(":")[0].split()[0]
    assert "searched for:" in searched and name in searched, (searched, title)
    assert page.locator("#turn-2 .src-card").count() >= 1

    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "ui-chat.png"))
    SCREENSHOT.parent.mkdir(exist_ok=True)
    shutil.copyfile(OUTPUT / "ui-chat.png", SCREENSHOT)

    tab.ask("What is the best recipe for chocolate cake?", turn=3)
    refusal = page.inner_text("#turn-3 .refusal")
    assert "No answer from these papers." in refusal  # said plainly, nothing made up
    assert page.locator("#turn-3 .src-card.near").count() >= 1  # the closest papers
    assert page.locator("#turn-3 sup.cite").count() == 0

    page.click("#new-chat")
    page.wait_for_selector("#turn-1", state="detached")
    assert page.locator("#examples").is_visible()

    # no endpoint is configured here, so the menu does not offer the OpenAI-compatible one
    page.click("#backend input")
    options = [o.replace("✓", "").strip() for o in page.get_by_role("option").all_inner_texts()]
    assert options == ["Local model", "Extractive (no LLM)"], options
    assert "OpenAI-compatible: not offered" in page.inner_text("#backend")
    page.keyboard.press("Escape")
    tab.close()


def test_each_stage_shows_and_the_papers_before_the_answer(
    browser: Any, bundled_index: Path, embedder: Embedder
) -> None:
    real = make_assistant(bundled_index, embedder)
    slow = SlowReader(real.settings, real.store, embedder)
    with running(bundled_index, embedder, slow) as url:
        tab = Page(browser, url)
        page = tab.page
        page.evaluate(WATCH_PROGRESS)
        width = page.evaluate(PAGE_WIDTH)
        page.fill("#question textarea", "Which papers tackle model merging?")
        page.keyboard.press("Enter")
        reading = page.wait_for_selector("#turn-1 .working[data-stage=reading]")
        assert "Reading" in reading.inner_text() and "papers" in reading.inner_text()
        assert page.locator("#turn-1 .sources .src-card").count() >= 1  # before the answer
        assert "reading ·" in page.inner_text("#turn-1 .aside-title").lower()
        assert page.evaluate(PAGE_WIDTH) == width
        page.wait_for_selector("#turn-1[data-done]")
        assert page.evaluate("window.stages")[:2] == ["searching", "reading"]
        assert "sources ·" in page.inner_text("#turn-1 .aside-title").lower()
        tab.close()


def test_upload_then_find_and_ask_about_the_new_papers(
    browser: Any, app_url: str, tmp_path: Path
) -> None:
    papers = tmp_path / "new_papers.jsonl"
    papers.write_text("\n".join(json.dumps(r) for r in (GALAXY, HOSTILE)) + "\n")
    broken = tmp_path / "broken.json"
    broken.write_text('[{"title": "unterminated"')
    tab = Page(browser, app_url)
    page = tab.page
    OUTPUT.mkdir(exist_ok=True)

    chat_width = page.evaluate(PAGE_WIDTH)
    page.get_by_role("tab", name="Library").click()
    table = page.locator("#library")
    table.get_by_text("CLASP").first.wait_for()
    # the library opens at the page's full width, every header on one line
    assert page.evaluate(PAGE_WIDTH) == chat_width
    heights = {round(h) for h in table.locator("th").evaluate_all(
        "cells => cells.map(c => c.getBoundingClientRect().height)")}  # fmt: skip
    assert len(heights) == 1, heights
    page.set_input_files("#upload input[type=file]", [str(papers), str(broken)])
    page.locator("#upload").get_by_text("broken").wait_for()  # uploaded
    page.click("#add")
    results = page.wait_for_selector("#ingest-results tr.failed")
    text = results.evaluate("el => el.closest('table').innerText")
    assert "new_papers.jsonl" in text and "2 added" in text
    assert "broken.json" in text and "Not added." in text  # with the reader's reason
    assert "/tmp" not in text  # files are named as the user knows them

    table.get_by_text("Sparse autoencoders for galaxy morphology").wait_for()
    assert page.locator("#library-count").inner_text().startswith("21 indexed papers")
    # the header says how many papers the venue and year filters cannot find
    summary = page.inner_text(".index-summary")
    assert summary.startswith("21 papers") and "1 without venue or year" in summary, summary
    table.get_by_text("<img src=x onerror=alert(1)>Galaxy cluster lensing").wait_for()
    page.screenshot(path=str(OUTPUT / "ui-library.png"), full_page=True)

    page.get_by_role("tab", name="Chat").click()
    page.click("#venue input")
    page.get_by_role("option", name="NeurIPS (1)").wait_for()  # filters know the new venue
    page.keyboard.press("Escape")
    tab.ask("Which papers classify galaxy morphology?", turn=1)
    sources = page.inner_text("#turn-1 .sources")
    assert "Sparse autoencoders for galaxy morphology" in sources
    if "Galaxy cluster lensing" in sources:  # the hostile paper shows as text, inert
        assert "<img src=x onerror=alert(1)>" in sources
    assert page.locator("#transcript img").count() == 0
    page.screenshot(path=str(OUTPUT / "ui-chat-uploaded.png"))
    tab.close()


def test_the_ask_endpoint_answers_as_json(app_url: str) -> None:
    from gradio_client import Client

    client = Client(app_url, verbose=False)
    answer = client.predict(
        "Which papers tackle model merging?", 3, None, None, "extractive", api_name="/ask"
    )
    assert answer["grounded"] and answer["citations"]
    assert answer["citations"][0]["paper"]["title"] in answer["references"]
    assert answer["backend"] == "extractive"


def test_the_app_starts_without_an_index(browser: Any, embedder: Embedder, tmp_path: Path) -> None:
    with running(tmp_path / "no-index", embedder) as url:
        tab = Page(browser, url)
        page = tab.page
        banner = page.wait_for_selector("#banner .banner")
        assert "No papers to search yet" in banner.inner_text()
        assert "Library" in banner.inner_text()
        page.get_by_role("button", name="What are the main themes of the indexed papers?").click()
        page.wait_for_selector("#turn-1[data-done]")
        error = page.inner_text("#turn-1 .error")
        assert "Could not answer." in error and "Traceback" not in error
        tab.close()


def test_a_trend_answer_shows_its_chart(browser: Any, embedder: Embedder, tmp_path: Path) -> None:
    from .test_trends import write_papers

    make_assistant(tmp_path / "index", embedder).ingest([write_papers(tmp_path / "p.jsonl")])
    with running(tmp_path / "index", embedder) as url:
        tab = Page(browser, url)
        tab.ask("How has work on graph neural networks changed over the years?", 1)
        chart = tab.page.locator("#turn-1 figure.trend-chart svg")
        assert chart.count() == 1
        assert tab.page.locator("#turn-1 figure.trend-chart rect.bar").count() == 6  # 2020: a gap
        assert "share of the year's papers" in chart.inner_html()
        assert "2018: 2 of 4 papers (50.0%)" in chart.inner_html()
        assert "no paper indexed" in chart.inner_html()
        tab.page.locator("#turn-1").screenshot(path=str(ROOT / "docs" / "screenshot-trend.png"))
        tab.close()
