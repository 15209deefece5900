"""Exports parse back: BibTeX with a BibTeX parser, CSV with the csv reader."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import bibtexparser
import pytest

from rag import Assistant, InputError, Paper
from rag.cli import main
from rag.export import DERIVED_NOTE, answer_papers, to_bibtex, to_csv, to_markdown, write

TITLED = Paper(
    paper_id="p1",
    title="Braces {and} 50% & #1 of $O(\\log T)$",
    abstract="An abstract with an unbalanced } brace, 10% gains & more.",
    venue="NeurIPS",
    year=2024,
    authors=("Ada Lovelace", "Émile Borel"),
    url="https://example.org/p1",
    keywords=("merging", "safety"),
)
SAME_KEY = Paper(
    "p2", "Braces again", "Second.", venue="NeurIPS", year=2024, authors=("A. Lovelace",)
)
DERIVED = Paper("p3", "CSR: efficient test-time defense", "We propose CSR.", title_derived=True)


def test_bibtex_parses_back_with_every_field() -> None:
    library = bibtexparser.parse_string(to_bibtex([TITLED, SAME_KEY, DERIVED]))
    assert not library.failed_blocks
    entries = library.entries
    assert len({e.key for e in entries}) == 3  # keys made unique
    first = entries[0].fields_dict
    assert entries[0].entry_type == "inproceedings" and entries[2].entry_type == "misc"
    assert first["title"].value == "Braces {and} 50\\% \\& \\#1 of $O(\\log T)$"
    assert first["author"].value == "Ada Lovelace and Émile Borel"
    assert first["booktitle"].value == "NeurIPS" and first["year"].value == "2024"
    assert "}" not in first["abstract"].value  # unbalanced braces dropped, not breaking it
    assert entries[0].key.startswith("lovelace2024")


def test_a_derived_title_is_exported_as_derived() -> None:
    entry = bibtexparser.parse_string(to_bibtex([DERIVED])).entries[0].fields_dict
    assert entry["title"].value == "[derived title] CSR: efficient test-time defense"
    assert entry["note"].value == DERIVED_NOTE
    row = next(csv.DictReader(io.StringIO(to_csv([DERIVED]))))
    assert row["title_derived"] == "yes" and row["title"].endswith("(derived title)")
    assert "(derived title)" in to_markdown([DERIVED])
    assert "derived" not in to_markdown([TITLED]).lower()


def test_csv_parses_back_row_per_paper() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv([TITLED, DERIVED]))))
    assert [r["id"] for r in rows] == ["p1", "p3"]
    assert rows[0]["title"] == TITLED.title and rows[0]["title_derived"] == "no"
    assert rows[0]["authors"] == "Ada Lovelace; Émile Borel" and rows[0]["year"] == "2024"
    assert rows[0]["abstract"] == TITLED.abstract


def test_write_picks_the_format_from_the_suffix(tmp_path: Path) -> None:
    for name in ("out.bib", "out.csv", "out.md"):
        write([TITLED], tmp_path / name)
    assert (tmp_path / "out.bib").read_text().startswith("@inproceedings{")
    assert (tmp_path / "out.csv").read_text().startswith("id,title,")
    assert (tmp_path / "out.md").read_text().startswith("1. **Braces")
    with pytest.raises(InputError, match=".bib, .csv or .md"):
        write([TITLED], tmp_path / "out.docx")


def test_an_answers_cited_papers_export(bundled: Assistant) -> None:
    answer = bundled.ask("What does the CSR paper report?")
    papers = answer_papers(answer)
    assert papers and [p.paper_id for p in papers] == [c.paper.paper_id for c in answer.citations]
    library = bibtexparser.parse_string(to_bibtex(papers))
    assert len(library.entries) == len(papers) and not library.failed_blocks


def test_cli_exports_a_list_a_search_and_related_papers(bundled_index, tmp_path: Path) -> None:
    where = ["--index-dir", str(bundled_index)]
    bib, table, md = tmp_path / "l.bib", tmp_path / "s.csv", tmp_path / "r.md"
    question = "Which papers are about model merging?"
    assert main(["ask", question, *where, "--llm", "extractive", "--export", str(bib)]) == 0
    titles = [e.fields_dict["title"].value for e in bibtexparser.parse_file(str(bib)).entries]
    assert len(titles) == 2 and all(t.startswith("[derived title] ") for t in titles)
    assert main(["search", "model merging", *where, "--export", str(table)]) == 0
    assert len(list(csv.DictReader(table.open(encoding="utf-8")))) == 2  # what was shown
    assert main(["related", "OPIC", *where, "--k", "3", "--export", str(md)]) == 0
    assert md.read_text().count("\n") == 3
