"""Reading paper lists: formats, field aliases, derived titles, dedup and bad input."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rag.errors import InputError
from rag.ingest.readers import (
    detect_format,
    normalise_abstract,
    paper_id_for,
    read_papers,
)
from rag.text.titles import derive_title, strip_markup

BUNDLED = Path(__file__).resolve().parents[1] / "rag" / "data" / "icml2026_abstracts.txt"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

ABSTRACT_A = "We propose FooNet, a graph network that predicts molecule properties from 3D shape."
ABSTRACT_B = "Large language models (LLMs) hallucinate. We study retrieval for grounded answers."


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def jsonl(*records: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


# --- the bundled text list ------------------------------------------------------------------

# A phrase only that abstract contains -> the name its derived title must start with.
BUNDLED_NAMES = {
    "we propose DensityFlow": "DensityFlow",
    "ensembled rewards": "RLER",
    "We present CryoACE": "CryoACE",
    "we propose Trap$^{2}$": "Trap²",
    "propose SparseOpt": "SparseOpt",
    "we introduce CLASP": "CLASP",
    "propose OPIC": "OPIC",
    "Contrastive Spectral Rectification (CSR)": "CSR",
    "We introduce ConDA": "ConDA",
    "introduce R$^3$-Bench": "R³-Bench",
    "Random Process (RP) Flow": "RP Flow",
}


@pytest.fixture(scope="module")
def bundled() -> list:
    return read_papers(BUNDLED).papers


def test_bundled_list_has_19_icml_2026_papers(bundled: list) -> None:
    assert len(bundled) == 19
    assert {(p.venue, p.year) for p in bundled} == {("ICML", 2026)}
    assert all(p.title_derived and p.label.endswith("(derived title)") for p in bundled)
    assert all(p.paper_id == paper_id_for(p.abstract) for p in bundled)
    assert bundled[0].abstract.startswith("Counterfactual explanations (CEs) are essential")


def test_bundled_titles_are_distinct_short_and_name_the_method(bundled: list) -> None:
    titles = [p.title for p in bundled]
    assert len(set(titles)) == 19
    assert all(4 <= len(t) <= 80 and "$" not in t and "\\" not in t for t in titles)
    raw = BUNDLED.read_text(encoding="utf-8").split("\n\n")[1:]
    for phrase, name in BUNDLED_NAMES.items():
        (index,) = [i for i, paragraph in enumerate(raw) if phrase in paragraph]
        title = bundled[index].title
        assert title.startswith(name), (name, title)
        assert len(title) > len(name) + 5, f"{title!r} should say what {name} is"


def test_bundled_titles_without_a_name_are_short_phrases(bundled: list) -> None:
    named = tuple(BUNDLED_NAMES.values())
    unnamed = [p.title for p in bundled if not p.title.startswith(named)]
    assert len(unnamed) == 19 - len(named)
    assert all(2 <= len(t.split()) <= 8 and t[0].isupper() for t in unnamed)
    assert "Principled cost-aware stopping rule for Bayesian optimization" in unnamed


# --- derive_title and strip_markup ----------------------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "expected"),
    [
        (ABSTRACT_A, "FooNet: graph network that predicts molecule properties"),
        ("Proofs are hard. We present a tool (\\textbf{ProveIt}) for checking them.", "ProveIt: "),
        ("We design a sampler, dubbed QuickMix, for mixtures.", "QuickMix"),
        ("Our method, called DeepRank, learns to rank documents.", "DeepRank"),
        ("We propose Trap$^{2}$, a merging defense for released weights.", "Trap²"),
        (
            "We propose sparse mixture routing (SMR), which routes tokens.",
            "SMR: sparse mixture routing",
        ),
    ],
)
def test_derive_title_names_what_the_abstract_introduces(abstract: str, expected: str) -> None:
    assert derive_title(abstract).startswith(expected)


def test_derive_title_ignores_background_acronyms_and_prior_work() -> None:
    title = derive_title(
        "Large language models (LLMs) are widely used. Smith et al. (2024) introduce "
        "GraphBench, a benchmark. We study calibration of LLM judges under distribution shift."
    )
    assert "LLMs" not in title and "GraphBench" not in title
    assert title == "Calibration of LLM judges under distribution shift"


def test_derive_title_falls_back_to_a_short_phrase() -> None:
    title = derive_title(
        "Retrieval-augmented generation for long documents is slow because every chunk is "
        "prefilled again and again for each question that is asked."
    )
    assert title == "Retrieval-augmented generation for long documents"


@pytest.mark.parametrize("abstract", ["a", "x y", "The.", "  ", "We propose it."])
def test_derive_title_is_never_empty(abstract: str) -> None:
    title = derive_title(abstract)
    assert title.strip() and len(title) <= 80


def test_strip_markup_keeps_titles_readable() -> None:
    assert strip_markup("\\textit{DensityFlow}: robust CEs") == "DensityFlow: robust CEs"
    assert strip_markup("R$^3$-Bench and Trap$^{2}$") == "R³-Bench and Trap²"
    assert strip_markup("With $\\tilde{O}(\\sqrt{T})$ regret") == "With O(√T) regret"
    assert strip_markup("A* search with *emphasis*") == "A* search with emphasis"


# --- the text format -------------------------------------------------------------------------


def test_text_list_joins_wrapped_lines_and_reads_the_header(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "list.txt",
        "NeurIPS 2024 paper list\n\nFirst abstract starts here\nand continues here.\n\n\n"
        "Second abstract, on one line.\n",
    )
    result = read_papers(path)
    assert [p.abstract for p in result.papers] == [
        "First abstract starts here and continues here.",
        "Second abstract, on one line.",
    ]
    assert {(p.venue, p.year) for p in result.papers} == {("NeurIPS", 2024)}
    assert result.source == str(path)


def test_text_list_without_header_takes_venue_and_year_from_arguments(tmp_path: Path) -> None:
    long_abstract = "We propose FooNet, a network for molecules. " * 5
    path = write(tmp_path, "list.txt", f"{long_abstract}\n\n{ABSTRACT_B}\n")
    papers = read_papers(path, venue="ICLR", year=2025).papers
    assert len(papers) == 2
    assert {(p.venue, p.year) for p in papers} == {("ICLR", 2025)}
    assert papers[0].title.startswith("FooNet")


# --- JSON, JSONL, CSV -------------------------------------------------------------------------


def test_json_array_maps_every_field(tmp_path: Path) -> None:
    record = {
        "id": 42,
        "title": "Foo: \\textit{Networks}",
        "abstract": "  An abstract\n about   foo. ",
        "authors": ["Ada Lovelace", " Alan Turing "],
        "url": "https://example.org/42",
        "pdf": "https://example.org/42.pdf",
        "venue": "ICML",
        "year": "2023",
        "keywords": "graphs; molecules",
        "tldr": "NEVER USE THIS",
    }
    (paper,) = read_papers(write(tmp_path, "p.json", json.dumps([record]))).papers
    assert paper.paper_id == "42"
    assert paper.title == "Foo: Networks" and not paper.title_derived
    assert paper.abstract == "An abstract about foo."
    assert paper.authors == ("Ada Lovelace", "Alan Turing")
    assert paper.url == "https://example.org/42"
    assert (paper.venue, paper.year) == ("ICML", 2023)
    assert paper.keywords == ("graphs", "molecules")
    assert "NEVER" not in repr(paper)


def test_aliases_are_matched_case_insensitively(tmp_path: Path) -> None:
    record = {
        "Paper_ID": " x-1 ",
        "Paper_Title": "A title",
        "Summary": ABSTRACT_B,
        "Creators": "A. One and B. Two",
        "PDF_URL": "https://example.org/x.pdf",
        "Conference": "COLT",
        "Published": "2021-07-15",
        "Tags": ["theory", "bandits"],
    }
    (paper,) = read_papers(write(tmp_path, "p.jsonl", jsonl(record))).papers
    assert (paper.paper_id, paper.title, paper.abstract) == ("x-1", "A title", ABSTRACT_B)
    assert paper.authors == ("A. One", "B. Two")
    assert paper.url == "https://example.org/x.pdf"
    assert (paper.venue, paper.year, paper.keywords) == ("COLT", 2021, ("theory", "bandits"))


@pytest.mark.parametrize(
    ("authors", "expected"),
    [
        ("A One; B Two; C Three", ("A One", "B Two", "C Three")),
        ("A One, B Two and C Three", ("A One", "B Two", "C Three")),
        ("A One, B Two, and C Three", ("A One", "B Two", "C Three")),
        ("A One and B Two", ("A One", "B Two")),
        ("Solo Author", ("Solo Author",)),
        (["A One", "", {"name": "B Two"}], ("A One", "B Two")),
    ],
)
def test_author_lists_are_split(tmp_path: Path, authors: object, expected: tuple) -> None:
    path = write(tmp_path, "p.jsonl", jsonl({"abstract": ABSTRACT_A, "author": authors}))
    assert read_papers(path).papers[0].authors == expected


def test_bare_doi_becomes_a_link(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", jsonl({"abstract": ABSTRACT_A, "doi": "10.1000/xyz.1"}))
    assert read_papers(path).papers[0].url == "https://doi.org/10.1000/xyz.1"


def test_venue_and_year_fill_only_what_records_lack(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.jsonl",
        jsonl({"abstract": ABSTRACT_A}, {"abstract": ABSTRACT_B, "venue": "UAI", "year": 2019}),
    )
    first, second = read_papers(path, venue="ICML", year=2026).papers
    assert (first.venue, first.year) == ("ICML", 2026)
    assert (second.venue, second.year) == ("UAI", 2019)


def test_jsonl_allows_blank_lines_and_derives_missing_titles(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", "\n" + jsonl({"abstract": ABSTRACT_A}) + "\n\n")
    (paper,) = read_papers(path).papers
    assert paper.title_derived and paper.title.startswith("FooNet")
    assert paper.paper_id == paper_id_for(ABSTRACT_A)


def test_csv_with_quoted_multiline_and_big_fields(tmp_path: Path) -> None:
    big = "word " * 40_000  # over the csv module's default 128 KiB field limit
    content = (
        f'ID,Title,Abstract,Authors\n1,"Quoted, title","Line one\nline two",A; B\n2,Big,"{big}",C\n'
    )
    path = write(tmp_path, "p.csv", content)
    with pytest.raises(InputError, match=r"p.csv:4: abstract has 199,999 characters, more than"):
        read_papers(path)  # the csv module reads it; the schema refuses it
    result = read_papers(path, skip_invalid=True)
    (first,) = result.papers
    assert (first.paper_id, first.title, first.abstract) == (
        "1",
        "Quoted, title",
        "Line one line two",
    )
    assert first.authors == ("A", "B")
    assert [where for where, _ in result.skipped] == [f"{path}:4"]


def test_tsv_is_read_as_csv(tmp_path: Path) -> None:
    path = write(tmp_path, "p.tsv", f"title\tabstract\nT\t{ABSTRACT_B}\n")
    (paper,) = read_papers(path).papers
    assert (paper.title, paper.abstract) == ("T", ABSTRACT_B)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (json.dumps([{"abstract": ABSTRACT_A}]), "json"),
        (jsonl({"abstract": ABSTRACT_A}), "jsonl"),
        (f'title,abstract\nT,"{ABSTRACT_A}"\n', "csv"),
        (f"My list\n\n{ABSTRACT_A}\n", "text"),
    ],
)
def test_format_is_detected_from_content(tmp_path: Path, content: str, expected: str) -> None:
    path = write(tmp_path, "papers.dat", content)
    assert detect_format(path) == expected
    assert read_papers(path).papers[0].abstract == ABSTRACT_A


@pytest.mark.parametrize(
    ("name", "expected"),
    [("a.txt", "text"), ("a.md", "text"), ("a.JSON", "json"), ("a.ndjson", "jsonl"),
     ("a.jsonl", "jsonl"), ("a.csv", "csv"), ("a.tsv", "csv")],
)  # fmt: skip
def test_format_is_detected_from_extension(name: str, expected: str) -> None:
    assert detect_format(Path(name)) == expected


def test_format_argument_overrides_the_extension(tmp_path: Path) -> None:
    path = write(tmp_path, "papers.txt", jsonl({"abstract": ABSTRACT_A, "title": "T"}))
    assert read_papers(path, format="jsonl").papers[0].title == "T"


# --- dedup and ids -----------------------------------------------------------------------------


def test_same_abstract_twice_is_one_paper(tmp_path: Path) -> None:
    shouting = "  " + ABSTRACT_A.upper().replace(" ", "\n ") + " "
    path = write(
        tmp_path,
        "p.jsonl",
        jsonl({"abstract": ABSTRACT_A, "title": "first"}, {"abstract": shouting}),
    )
    result = read_papers(path)
    assert [p.title for p in result.papers] == ["first"]
    assert result.duplicates == 1
    assert normalise_abstract(shouting) == normalise_abstract(ABSTRACT_A)


def test_paper_ids_hash_the_normalised_abstract() -> None:
    assert paper_id_for("A  b\u00a0C") == paper_id_for("a b c")
    assert paper_id_for("a b c").startswith("h-") and len(paper_id_for("a b c")) == 18
    assert paper_id_for("a b c") != paper_id_for("a b d")


def test_one_id_for_two_different_papers_is_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path, "p.jsonl", jsonl({"id": 1, "abstract": "A."}, {"id": 1, "abstract": "B."})
    )
    with pytest.raises(InputError, match=r"p\.jsonl:2: id '1' already used"):
        read_papers(path)


# --- bad input ---------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.json: no such file"):
        read_papers(tmp_path / "nope.json")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        read_papers(tmp_path)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path, "p.txt", "x")
    path.chmod(0)
    with pytest.raises(InputError, match="permission denied"):
        read_papers(path)


def test_not_utf8_names_the_line_even_with_skip_invalid(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", b'{"abstract": "ok"}\n{"abstract": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"p\.jsonl:2: not UTF-8"):
        read_papers(path, skip_invalid=True)


def test_utf8_with_bom_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "\ufeffabstract\nAn abstract.\n".encode())
    assert read_papers(path).papers[0].abstract == "An abstract."


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.json", "", "empty file"),
        ("blank.txt", " \n\n ", "empty file"),
        ("header.csv", "title,abstract\n", "only a header line"),
        ("none.json", "[]", "no papers"),
        ("title-only.txt", "ICML 2026 paper list\n", "no papers"),
    ],
)
def test_empty_inputs(tmp_path: Path, name: str, content: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_papers(write(tmp_path, name, content), skip_invalid=True)


def test_malformed_json_array_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", '[\n  {"abstract": "a"},\n  {"abstract": "b"\n  {}\n]')
    with pytest.raises(InputError, match=r"p\.json:4: malformed JSON \(Expecting ','"):
        read_papers(path, skip_invalid=True)


def test_malformed_jsonl_line_names_the_line_and_the_way_out(tmp_path: Path) -> None:
    path = write(tmp_path, "papers.jsonl", jsonl({"abstract": "a"}) + '\n{"abstract": "b",}\n')
    with pytest.raises(InputError) as info:
        read_papers(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: malformed JSON (")
    assert message.endswith("Fix the line or pass --skip-invalid to skip bad records.")
    assert "\n" not in message


def test_record_without_abstract_names_the_record(tmp_path: Path) -> None:
    records = [{"abstract": "a"}, {"title": "no abstract", "tldr": "a tldr is no abstract"}]
    path = write(tmp_path, "p.json", json.dumps(records))
    with pytest.raises(InputError, match=r"p\.json record 2: record has no abstract"):
        read_papers(path)


def test_json_that_is_not_an_array_of_papers(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", json.dumps({"papers": [{"abstract": "a"}]}))
    with pytest.raises(InputError, match="expected a JSON array of paper objects, found an object"):
        read_papers(path, skip_invalid=True)


def test_record_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", jsonl({"abstract": "a"}, ["not", "an", "object"]))
    with pytest.raises(InputError, match=r"p\.jsonl:2: record is a list, not an object"):
        read_papers(path)


def test_unknown_format_name(tmp_path: Path) -> None:
    path = write(tmp_path, "p.txt", "abstract")
    with pytest.raises(InputError, match="Unknown format 'xml'. Use one of: text, json"):
        read_papers(path, format="xml")


def test_csv_without_abstract_column(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "title,authors\nT,A\n")
    with pytest.raises(InputError, match=r"p\.csv:1: no abstract column .*\(title, authors\)"):
        read_papers(path)


def test_skip_invalid_lists_what_it_skipped(tmp_path: Path) -> None:
    content = (
        jsonl({"abstract": ABSTRACT_A}, {"title": "no abstract"}, 7)
        + "{broken\n"
        + jsonl({"abstract": ABSTRACT_B})
    )
    path = write(tmp_path, "p.jsonl", content)
    result = read_papers(path, skip_invalid=True)
    assert [p.abstract for p in result.papers] == [ABSTRACT_A, ABSTRACT_B]
    assert [where for where, _ in result.skipped] == [f"{path}:2", f"{path}:3", f"{path}:4"]
    reasons = [reason for _, reason in result.skipped]
    assert reasons[0] == "record has no abstract"
    assert reasons[1] == "record is a number, not an object"
    assert reasons[2].startswith("malformed JSON")


# --- real published shapes ------------------------------------------------------------------------


def test_paperlist_record_without_abstract_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"paperlist_icml\.json record 3: record has no abstract"):
        read_papers(FIXTURES / "paperlist_icml.json")


def test_paperlist_shape_is_read(tmp_path: Path) -> None:
    result = read_papers(FIXTURES / "paperlist_icml.json", skip_invalid=True, year=2019)
    assert len(result.papers) == 2
    assert result.skipped == [
        (f"{FIXTURES / 'paperlist_icml.json'} record 3", "record has no abstract")
    ]
    first = result.papers[0]
    assert first.paper_id == "3768"
    assert first.title.startswith("A Baseline for Any Order Gradient Estimation")
    assert first.authors[2] == "Tim Rocktäschel" and len(first.authors) == 6
    assert first.url == "https://icml.cc/virtual/2019/poster/3768"
    assert (first.venue, first.year, first.title_derived) == ("", 2019, False)


def test_paperlist_file_name_gives_venue_and_year(tmp_path: Path) -> None:
    path = tmp_path / "icml2019.json"
    shutil.copy(FIXTURES / "paperlist_icml.json", path)
    papers = read_papers(path, skip_invalid=True).papers
    assert {(p.venue, p.year) for p in papers} == {("ICML", 2019)}
    assert {(p.venue, p.year) for p in read_papers(path, skip_invalid=True, venue="X").papers} == {
        ("X", 2019)
    }


def test_ml_abstracts_shape_is_read() -> None:
    result = read_papers(FIXTURES / "ml_abstracts_sample.jsonl")
    assert len(result.papers) == 4 and result.duplicates == 1  # two ACML 2019 share an abstract
    by_id = {p.paper_id: p for p in result.papers}
    sparse = by_id["acml2017-d546a38e65"]
    assert sparse.title == "Data sparse nonparametric regression with ε-insensitive losses"
    assert (sparse.venue, sparse.year) == ("ACML", 2017)
    assert sparse.url == "https://proceedings.mlr.press/v77/sangnier17a.html"
    assert "\t" not in sparse.abstract
    instruct = by_id["colm2024-0UK8c2kg7c"]
    assert instruct.keywords[-1] == "InstructAV" and instruct.authors[0] == "Yujia Hu"
    bev = by_id["corl2022-00OqOl4txhe"]
    assert bev.abstract.startswith("Monocular visual-inertial odometry")


# The shared data folder beside the repository (../shared/data), or RAG_SHARED_DATA.
SHARED = Path(
    os.environ.get("RAG_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)


@pytest.mark.skipif(
    not (SHARED / "paperlists" / "icml").is_dir(),
    reason=f"no paperlists/icml in {SHARED} (RAG_SHARED_DATA names the shared data folder)",
)
def test_full_shared_paper_lists_are_read() -> None:
    lists = sorted((SHARED / "paperlists" / "icml").glob("icml20*.json"))
    assert lists
    for path in lists:
        result = read_papers(path, skip_invalid=True)
        total = len(json.loads(path.read_text(encoding="utf-8")))
        assert len(result.papers) + len(result.skipped) + result.duplicates == total
        assert all(reason == "record has no abstract" for _, reason in result.skipped)
        assert {p.venue for p in result.papers} == {"ICML"}


@pytest.mark.skipif(
    not (SHARED / "ml_abstracts.jsonl").is_file(),
    reason=f"no ml_abstracts.jsonl in {SHARED} (RAG_SHARED_DATA names the shared data folder)",
)
def test_all_22981_shared_abstracts_are_read() -> None:
    result = read_papers(SHARED / "ml_abstracts.jsonl")
    assert len(result.papers) + result.duplicates == 22_981 and not result.skipped
    assert len({p.paper_id for p in result.papers}) == len(result.papers)
