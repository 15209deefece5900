"""A card's "Related papers" button and the papers download, in a real browser."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import bibtexparser
import pytest

from rag.index.embedder import Embedder
from tests.test_ui_e2e import Page, browser, running  # noqa: F401  (browser: a fixture)

pytestmark = pytest.mark.browser


def test_related_button_and_download(browser: Any, bundled_index: Path, embedder: Embedder) -> None:  # noqa: F811
    with running(bundled_index, embedder) as url:
        tab = Page(browser, url)
        page = tab.page
        tab.ask("How many papers are about model merging?", turn=1)
        assert page.inner_text("#turn-1 .answer-text").startswith("2 indexed papers")
        assert page.locator("#turn-1 .src-card").count() == 2

        with page.expect_download() as download:  # the list's papers, as BibTeX
            page.click("#download")
        entries = bibtexparser.parse_file(str(download.value.path())).entries
        titles = sorted(e.fields_dict["title"].value for e in entries)
        assert [t.split("] ")[1][:4] for t in titles] == ["OPIC", "Trap"]

        card = page.locator("#turn-1 .src-card").first
        paper = card.locator(".src-title").inner_text().replace("derived title", "").strip()
        card.locator(".related-btn").click()
        page.wait_for_selector("#turn-2[data-done]")
        assert paper[:20] in page.inner_text("#turn-2 .question")
        related = page.locator("#turn-2 .src-card")
        assert related.count() == 5  # the papers-to-retrieve slider's default
        assert paper[:20] not in page.inner_text("#turn-2 .sources")

        page.get_by_label("CSV").check()
        page.wait_for_timeout(500)  # the file is written again in the new format
        with page.expect_download() as download:
            page.click("#download")
        rows = list(csv.DictReader(Path(download.value.path()).open(encoding="utf-8")))
        assert len(rows) == 5 and all(r["title_derived"] == "yes" for r in rows)
        tab.close()
