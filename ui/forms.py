"""The chat's form values as ``Assistant`` arguments, checked the way the Python API checks
them (a bad value is an ``InputError`` the page shows in one line)."""

from __future__ import annotations

from typing import Any

from rag import InputError


def filter_kwargs(venue: str | None, year: str | int | None) -> dict[str, Any]:
    """``venue=``/``year=`` for ``Assistant.stream``; an empty choice means no filter."""
    options: dict[str, Any] = {}
    if venue not in (None, ""):
        if not isinstance(venue, str):
            raise InputError(f"venue must be text, such as ICML; got {venue!r}.")
        options["venue"] = venue
    if year not in (None, ""):
        text = str(year).strip()
        if isinstance(year, bool) or not text.isdigit() or not 1000 <= int(text) <= 2999:
            raise InputError(f"year must be a year such as 2026; got {year!r}.")
        options["year"] = int(text)
    return options
