"""The Topics tab in a real browser, over a real index of the three-subject fixture: the map
draws every paper coloured by theme, a hover names the paper, a click on a theme lists its
papers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.index.embedder import Embedder
from tests.conftest import make_assistant
from tests.test_topics import FIXTURE
from tests.test_ui_e2e import Page, browser, running  # noqa: F401  (the browser fixture)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def topics_url(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[str]:
    index_dir = tmp_path_factory.mktemp("topics-ui-index")
    make_assistant(index_dir, embedder).ingest([FIXTURE])
    with running(index_dir, embedder) as url:
        yield url


def test_the_map_shows_the_themes_and_a_click_lists_a_themes_papers(
    browser: Any,  # noqa: F811
    topics_url: str,
) -> None:
    tab = Page(browser, topics_url)
    page = tab.page
    page.get_by_role("tab", name="Topics").click()
    page.click("#topics-show")
    page.wait_for_selector("#topics svg circle.dot")
    assert page.locator("#topics circle.dot").count() == 18
    assert page.locator("#topics text.map-label").count() == 3
    colours = {d.get_attribute("fill") for d in page.locator("#topics circle.dot").all()}
    assert len(colours) == 3
    sizes = page.locator("#topics .topic-list .topic-size").all_inner_texts()
    assert sizes == ["6 papers"] * 3

    # no theme's papers are listed until one is clicked
    assert not any(d.is_visible() for d in page.locator("#topics .topic-papers").all())
    speech = page.locator("#topics .topic-list button", has_text="speech").first
    speech.click()
    shown = page.locator("#topics .topic-papers:visible")
    assert shown.count() == 1
    text = shown.inner_text()
    assert "Streaming speech recognition with transducers" in text
    assert "Speaker diarization in meetings" in text
    assert "galaxy" not in text.lower()

    # a click on the map picks a theme too; a hover names the paper
    dot = page.locator("#topics circle.dot").first
    dot.hover()
    tip = page.locator("#topics .map-tip")
    assert tip.is_visible() and tip.inner_text() == dot.get_attribute("data-title")
    dot.click()
    listed = page.locator("#topics .topic-papers:visible").inner_text()
    assert dot.get_attribute("data-title") in listed
    tab.close()


def test_the_tab_is_there_without_an_index(
    browser: Any,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    with running(tmp_path / "empty", embedder, make_assistant(tmp_path / "empty", embedder)) as url:
        tab = Page(browser, url)
        tab.page.get_by_role("tab", name="Topics").click()
        tab.page.click("#topics-show")
        tab.page.wait_for_selector("#topics .topics-empty >> text=/ingest/i")
        tab.close()
