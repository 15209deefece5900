"""docs/layout.md names every module of rag/ and ui/, and only those."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def _layout_page() -> str:
    return (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")


def test_the_layout_page_lists_every_module_and_only_existing_ones() -> None:
    listed = re.findall(r"^\| `((?:rag|ui)/[\w/]+\.py)` \| .+ \|$", _layout_page(), re.M)
    files = {p.relative_to(ROOT).as_posix() for d in ("rag", "ui") for p in (ROOT / d).glob("*.py")}
    files.discard("ui/__init__.py")  # empty: it only makes ui a package
    assert listed, "no module rows found"
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert sorted(files - set(listed)) == [], "modules missing from docs/layout.md"
    assert sorted(set(listed) - files) == [], "docs/layout.md lists modules that do not exist"
