"""The corpus as data: a topic's papers per year, per venue and per author, from the index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rag.answer.trends import asks_authors, asks_trend, compared_venues, trend_topic
from rag.index.embedder import Embedder

from .conftest import make_assistant

GRAPH = [
    "We propose a graph neural network that passes messages between the atoms of a molecule "
    "to predict its properties.",
    "Graph neural networks learn node representations by aggregating features from each "
    "node's neighbours; we study their expressive power.",
    "We introduce a graph convolutional network for semi-supervised node classification on "
    "citation graphs.",
    "This paper scales graph neural networks to graphs with billions of edges by sampling "
    "neighbourhoods during training.",
    "We show that graph neural networks over-smooth node features as depth grows and propose "
    "a residual remedy.",
    "A graph attention network weights each neighbour of a node by learned attention coefficients.",
]
OTHER = [
    "We study regret bounds for stochastic multi-armed bandits with heavy-tailed rewards.",
    "We present a speech recognition system trained end to end on raw audio waveforms.",
    "A convex relaxation for sparse principal component analysis with provable guarantees.",
    "We propose a new optimizer for training deep networks with adaptive learning rates.",
    "Protein structure prediction from amino-acid sequences with evolutionary couplings.",
    "An analysis of dropout as approximate Bayesian inference in deep networks.",
    "Differentially private stochastic gradient descent with tight privacy accounting.",
]
SETTINGS = [  # one per other paper: no two abstracts are the same paper
    f"We evaluate it on the {w} benchmark." for w in (
        "Atlas", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Grove", "Harbor", "Iris",
        "Juniper", "Kestrel", "Lagoon", "Meadow", "Nimbus",
    )
]  # fmt: skip
# year -> (graph papers, other papers); 2017 has papers but none on graphs, 2020 none at all
PLAN = {2015: (1, 3), 2016: (1, 2), 2017: (0, 3), 2018: (2, 2), 2019: (2, 1), 2021: (0, 2)}
AUTHORS = ["Ada Lovelace", "Alan Turing", "Grace Hopper"]


def write_papers(path: Path) -> Path:
    rows, g, o = [], 0, 0
    for year, (graphs, others) in PLAN.items():
        for _ in range(graphs):
            venue = "ICLR" if g % 2 else "NeurIPS"
            authors = [AUTHORS[0], AUTHORS[1 + g % 2]]
            rows.append(
                {"id": f"g{g}", "title": f"Graph study {chr(65 + g)}", "abstract": GRAPH[g],
                 "venue": venue, "year": year, "authors": authors}
            )  # fmt: skip
            g += 1
        for _ in range(others):
            venue = "ICLR" if o % 2 else "NeurIPS"
            abstract = f"{OTHER[o % len(OTHER)]} {SETTINGS[o]}"
            rows.append(
                {"id": f"o{o}", "title": f"Other study {chr(65 + o)}", "abstract": abstract,
                 "venue": venue, "year": year, "authors": ["Someone Else"]}
            )  # fmt: skip
            o += 1
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def years_index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    folder = tmp_path_factory.mktemp("years")
    make_assistant(folder / "index", embedder).ingest([write_papers(folder / "papers.jsonl")])
    return folder / "index"


def test_questions_about_the_corpus_are_told_apart() -> None:
    assert asks_trend("How has work on generative adversarial networks changed from 2014 to 2018?")
    assert asks_trend("What is the trend in graph neural networks over the years?")
    assert not asks_trend("Which papers propose graph neural networks?")
    assert not asks_trend("How does the method change the learning rate?")
    assert trend_topic("How has work on graph neural networks changed?") == "graph neural networks"
    assert asks_authors("Who works on Bayesian optimization?")
    assert asks_authors("Which authors publish most on graph neural networks?")
    assert not asks_authors("Who proposes the CSR defense?")
    assert not asks_authors("Who won the 2022 FIFA World Cup?")  # not about the papers
    assert not asks_trend("How does the model's representation differ from the change?")
    assert compared_venues(
        "Is meta-learning more common at ICLR or at NeurIPS?", ["NeurIPS", "ICLR"]
    ) == [
        "ICLR",
        "NeurIPS",
    ]
    assert compared_venues("Which ICLR papers use graphs?", ["NeurIPS", "ICLR"]) == []


def test_counts_per_year_are_the_complete_lists_of_each_year(years_index, embedder) -> None:
    assistant = make_assistant(years_index, embedder)
    trend = assistant.trend("graph neural networks", parse=False)
    by_year = {y.year: y for y in trend.years}
    assert [y.year for y in trend.years] == list(range(2015, 2022))
    for year, (graphs, others) in PLAN.items():
        listed = assistant.find_all("Which papers are about graph neural networks?", year=year)
        assert by_year[year].count == listed.count == graphs, year
        assert by_year[year].total == graphs + others  # the share is over the year's papers
        assert by_year[year].share == pytest.approx(graphs / (graphs + others))
    assert by_year[2020].total == 0 and by_year[2020].share is None  # a gap, not a zero
    assert trend.missing_years == [2020]
    assert "- 2020: no paper indexed" in trend.table()
    assert "- 2017: 0 of 3 (0.0%)" in trend.table()


def test_a_trend_answer_cites_examples_and_carries_its_series(years_index, embedder) -> None:
    answer = make_assistant(years_index, embedder).ask(
        "How has work on graph neural networks changed over the years?", llm="extractive"
    )
    assert answer.text.startswith("6 indexed papers from 2015 to 2021 match")
    assert "- 2018: 2 of 4 (50.0%)" in answer.text
    assert answer.citations and all(c.paper.paper_id.startswith("g") for c in answer.citations)
    assert [(y.year, y.count, y.total) for y in answer.series][:3] == [
        (2015, 1, 4),
        (2016, 1, 3),
        (2017, 0, 3),
    ]
    # every number shown is a count from the index or a cited paper's marker
    shown = set(re.findall(r"\d+(?:\.\d+)?", answer.text))
    counts = {str(n) for y in answer.series for n in (y.year, y.count, y.total)}
    shares = {f"{100 * y.share:.1f}" for y in answer.series if y.share is not None}
    markers = {str(c.number) for c in answer.citations}
    assert shown <= counts | shares | markers | {"6", "2015", "2021"}, shown - counts


def test_one_indexed_year_is_no_trend(tmp_path: Path, embedder: Embedder) -> None:
    rows = [
        {
            "id": f"p{i}",
            "title": f"Paper {chr(65 + i)}",
            "abstract": text,
            "venue": "ICML",
            "year": 2026,
        }
        for i, text in enumerate(GRAPH[:2] + OTHER[:3])
    ]
    source = tmp_path / "one.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assistant = make_assistant(tmp_path / "index", embedder)
    assistant.ingest([source])
    answer = assistant.ask(
        "How has work on graph neural networks changed over time?", llm="extractive"
    )
    assert answer.text.startswith("Only one year (2026) is indexed")
    assert "2 of 5 papers match" in answer.text
    assert answer.series == ()


def test_authors_are_those_of_the_papers_on_the_topic(years_index, embedder) -> None:
    assistant = make_assistant(years_index, embedder)
    found, ranked = assistant.authors("Who works on graph neural networks?")
    assert [a.name for a in ranked][:1] == ["Ada Lovelace"] and len(ranked[0].papers) == 6
    on_topic = {a for p in found.papers for a in p.paper.authors}
    assert {a.name for a in ranked} <= on_topic and "Someone Else" not in on_topic
    answer = assistant.ask("Which authors publish most on graph neural networks?", llm="extractive")
    assert "- Ada Lovelace: 6 papers" in answer.text, answer.text


def test_venues_are_compared_over_their_common_years(years_index, embedder) -> None:
    assistant = make_assistant(years_index, embedder)
    found, counts, years = assistant.venues("graph neural networks", ["ICLR", "NeurIPS"])
    assert years == [2015, 2016, 2017, 2018, 2019, 2021]
    assert sum(c.count for c in counts) == len(found.papers) == 6
    answer = assistant.ask(
        "Are graph neural networks more common at ICLR or at NeurIPS?", llm="extractive"
    )
    assert "over the years both have papers indexed" in answer.text
    assert re.search(r"- ICLR: 3 of \d+ papers", answer.text), answer.text


def test_an_authors_papers_on_a_topic(years_index, embedder) -> None:
    answer = make_assistant(years_index, embedder).ask(
        "What has Alan Turing published on graph neural networks?", llm="extractive"
    )
    assert answer.text.startswith("3 indexed papers by \"Alan Turing\" (stored as 'Alan Turing')")
    assert {c.paper.paper_id for c in answer.citations} == {"g0", "g2", "g4"}


def test_the_trend_and_authors_commands_print_counts_and_cited_papers(
    years_index, capsys: pytest.CaptureFixture[str]
) -> None:
    from rag.cli import main

    assert main(["trend", "graph neural networks", "--index-dir", str(years_index)]) == 0
    out = capsys.readouterr().out
    assert "- 2018: 2 of 4 (50.0%)" in out and "\nReferences:" in out and "Graph study" in out
    assert main(["authors", "graph neural networks", "--index-dir", str(years_index)]) == 0
    out = capsys.readouterr().out
    assert "- Ada Lovelace: 6 papers" in out and "\nReferences:" in out
