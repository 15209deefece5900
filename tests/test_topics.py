"""Topics and overview questions over real indexes: the fixture's three subjects are found
and named, the cache follows ingests, and an overview answer's themes cite papers that say
them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rag import Assistant, Topic
from rag.answer.overview import asks_overview, stated_label, theme_stems
from rag.answer.topics import TopicCache, checked_label, document, selection_key
from rag.index.embedder import Embedder
from rag.index.lexical import tokenize
from tests.conftest import make_assistant

FIXTURE = Path(__file__).parent / "fixtures" / "topics_papers.jsonl"
# each subject of the fixture, and words a name for it may use
SUBJECTS = {
    "astro": {"galaxy", "galaxies", "telescope", "surveys", "sky", "light curves"},
    "molecules": {"molecules", "molecule", "molecular", "chemical", "drug", "graph neural"},
    "speech": {"speech", "audio", "spoken", "speech recognition", "word error"},
}


@pytest.fixture(scope="module")
def fixture_index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    index_dir = tmp_path_factory.mktemp("topics-index")
    make_assistant(index_dir, embedder).ingest([FIXTURE])
    return index_dir


def subject(topic: Topic) -> str:
    found = {p.paper_id.split("-")[0] for p in topic.papers}
    assert len(found) == 1, f"{topic.label!r} mixes subjects: {found}"
    return found.pop()


def test_the_three_subjects_are_found_and_named_by_their_terms(
    fixture_index: Path, embedder: Embedder
) -> None:
    topics = make_assistant(fixture_index, embedder).topics()
    assert sorted(subject(t) for t in topics) == sorted(SUBJECTS)
    for t in topics:
        words = SUBJECTS[subject(t)]
        assert t.size == len(t.papers) == len(t.points) == 6
        assert any(w in t.label for w in words), (t.label, subject(t))
        assert sum(term in words for term in t.terms[:5]) >= 2, t.terms
        assert all(-1 <= x <= 1 and -1 <= y <= 1 for x, y in t.points)


def test_the_cache_is_reused_until_an_ingest(tmp_path: Path, embedder: Embedder) -> None:
    assistant = make_assistant(tmp_path / "index", embedder)
    assistant.ingest([FIXTURE])
    first = assistant.topics()
    cached = TopicCache(assistant.store).path(
        assistant.store.version(), selection_key(None, None, None)
    )
    written = cached.stat().st_mtime_ns
    # what is read back is what was built, and the file is not written again
    assert assistant.topics() == first
    assert cached.stat().st_mtime_ns == written

    extra = tmp_path / "more.jsonl"
    extra.write_text(
        json.dumps(
            {
                "id": "astro-new",
                "title": "Galaxy cluster masses from telescope surveys",
                "abstract": "We weigh galaxy clusters in telescope sky surveys from the "
                "velocities of their member galaxies, calibrated against weak lensing.",
                "venue": "TOPICS",
                "year": 2025,
            }
        )
        + "\n"
    )
    assistant.ingest([extra])
    after = assistant.topics()
    astro = next(t for t in after if subject(t) == "astro")
    assert astro.size == 7 and "astro-new" in {p.paper_id for p in astro.papers}
    assert not cached.exists()  # the older version's files are gone


@pytest.mark.parametrize(
    ("question", "overview"),
    [
        ("What are the main themes of ICML 2026?", True),
        ("Summarize the main themes of the ICML 2026 papers.", True),
        ("What is ICML 2026 about?", True),
        ("What topics recur?", True),
        ("What is OPIC about?", False),
        ("Which papers are about model merging?", False),
        ("List all ICML 2026 papers", False),
    ],
)
def test_overview_questions_are_told_from_others(question: str, overview: bool) -> None:
    assert asks_overview(question, ["ICML"]) is overview


THEME = re.compile(r"^Theme: (?P<label>.+?) \((?P<size>\d+) papers?\): .*?\[(?P<cites>[\d, ]+)\]")


def test_an_overview_names_each_theme_with_its_size_and_papers_that_say_it(
    bundled: Assistant,
) -> None:
    answer = bundled.ask("What are the main themes of ICML 2026?")
    sizes = {stated_label(t): t.size for t in bundled.topics("ICML", 2026)}
    themes = [m for line in answer.text.splitlines() if (m := THEME.match(line))]
    assert answer.grounded and answer.coverage == "answered"
    assert len(themes) >= 2, answer.text
    assert answer.text.startswith(f"The {sum(sizes.values())} ICML 2026 papers fall into")
    for m in themes:
        assert sizes[m.group("label")] == int(m.group("size"))
        for n in (int(x) for x in m.group("cites").split(",")):
            paper = answer.citations[n - 1].paper
            assert theme_stems(m.group("label")) <= set(tokenize(document(paper))), paper.title
    assert not answer.removed, answer.removed


def test_a_model_label_stands_only_in_the_groups_own_words(
    fixture_index: Path, embedder: Embedder
) -> None:
    speech = next(
        t for t in make_assistant(fixture_index, embedder).topics() if subject(t) == "speech"
    )
    assert checked_label("Speech recognition and audio", speech.terms, speech.papers) == (
        "Speech recognition and audio"
    )
    assert checked_label("Topic: Spoken audio.", speech.terms, speech.papers) == "Spoken audio"
    assert checked_label("Quantum chemistry of stars", speech.terms, speech.papers) == ""
    assert checked_label("Voice", speech.terms, speech.papers) == ""  # none of the top terms


def test_words_most_papers_use_name_no_theme() -> None:
    from rag.answer.topics import COMMON_SHARE, distinctive_terms

    docs = [f"neural networks training for speech audio {i}" for i in range(12)]
    docs += [f"neural networks training for galaxy telescopes {i}" for i in range(12)]
    labels = np.array([0] * 12 + [1] * 12)
    terms = distinctive_terms(docs, labels)
    assert COMMON_SHARE < 1
    common = {"neural", "networks", "training"}
    for group in terms:
        assert group and not any(set(t.split()) <= common for t in group), group
    assert "audio" in terms[0] and "galaxy telescopes" in terms[1]


def test_a_model_label_of_words_every_paper_uses_is_refused(
    fixture_index: Path, embedder: Embedder
) -> None:
    speech = next(
        t for t in make_assistant(fixture_index, embedder).topics() if subject(t) == "speech"
    )
    assert checked_label("Speech and audio", speech.terms, speech.papers)
    # one distinctive word among generic ones is not a name for the theme
    assert checked_label("Deep neural speech learning models", speech.terms, speech.papers) == ""


def test_map_labels_stay_inside_the_map_and_apart() -> None:
    from ui.topics import HEIGHT, WIDTH, place_labels

    centres = [(5.0, 5.0), (8.0, 9.0), (WIDTH - 2.0, HEIGHT - 1.0), (10.0, 8.0)]
    texts = ["a very long label for a theme", "another long label", "edge label", "short"]
    spots = place_labels(centres, texts)
    boxes = []
    for (x, y), text in zip(spots, texts, strict=True):
        half = len(text) * 6.8 / 2
        assert x - half >= 0 and x + half <= WIDTH and 12 <= y <= HEIGHT
        boxes.append((x - half, y - 12, x + half, y + 3))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3])


def test_suggested_questions_come_from_the_index(fixture_index: Path, embedder: Embedder) -> None:
    asked = make_assistant(fixture_index, embedder).suggestions()
    assert asked[0] == "What are the main themes of TOPICS 2025?"
    theme = re.fullmatch(r"Which papers are about (.+)\?", asked[1])
    assert theme and any(theme[1] in words for words in SUBJECTS.values()), asked
    assert not any("CSR" in q for q in asked)


def test_a_comparison_of_two_described_papers_cites_both(
    fixture_index: Path, embedder: Embedder
) -> None:
    answer = make_assistant(fixture_index, embedder).ask(
        "How do the paper that detects exoplanet transits and the paper that generates "
        "drug-like molecules differ in what they produce?"
    )
    cited = {c.paper.paper_id for c in answer.citations}
    assert {"astro-2", "molecules-1"} <= cited, answer.text
