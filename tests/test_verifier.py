"""The trained verifier (rag/data/models/verifier): its files are checked before use, its
readings are stable, and it tells what an abstract states from what it does not.

The abstract below is made up for these tests: no paper of any evaluation corpus, and not
one of the bundled papers."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from rag.answer.verifier import Verifier, windows
from rag.crossencoder import MODELS, CrossEncoder
from rag.errors import ConfigError
from rag.settings import Settings
from rag.text.chunking import split_sentences

TITLE = "Quillnet: Sparse Routing for Protein Contact Prediction"
ABSTRACT = (
    "Predicting which residues of a protein touch is a bottleneck for structure modelling. "
    "We introduce Quillnet, a transformer whose attention heads are routed sparsely by a "
    "learned gate. Quillnet is trained on 12,000 families from the Pfam database. "
    "On the CASP14 benchmark it raises long-range contact precision from 61% to 68% over the "
    "best previous method. Sparse routing also cuts inference memory by a factor of three."
)
SENTENCES = split_sentences(ABSTRACT)


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier()


def test_each_sentence_is_read_with_its_neighbour() -> None:
    assert windows(["A.", "B.", "C."]) == ["A. B.", "B. C."]
    assert windows(["Only one."]) == ["Only one."]
    assert windows([]) == []


def test_a_statement_the_abstract_makes_reads_above_its_negation(verifier: Verifier) -> None:
    stated = verifier.read("Quillnet is trained on protein families from Pfam.", TITLE, SENTENCES)
    negated = verifier.read("Quillnet does not use attention.", TITLE, SENTENCES)
    assert stated.logit >= verifier.threshold("support") > negated.logit
    assert "Pfam" in stated.text  # the window it rests on is the one that says it


def test_a_paper_is_a_member_of_its_own_topic_only(verifier: Verifier) -> None:
    member = verifier.read("Which papers predict protein contacts?", TITLE, SENTENCES)
    other = verifier.read("Which papers study image segmentation?", TITLE, SENTENCES)
    assert member.logit >= verifier.threshold("member") > other.logit


def test_readings_are_the_same_on_every_load(verifier: Verifier) -> None:
    pairs = [("Which papers predict protein contacts?", f"{TITLE}. {s}") for s in SENTENCES]
    first = verifier.scores(pairs)
    again = Verifier().scores(pairs)  # a fresh model, nothing cached
    assert np.allclose(first, again, atol=1e-5)


def test_thresholds_are_calibrated_for_each_use(verifier: Verifier) -> None:
    assert set(verifier.model.thresholds) >= {"support", "answers", "member"}


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "verifier"
    shutil.copytree(MODELS / "verifier", folder)
    return folder


def test_an_altered_model_file_is_refused_with_how_to_restore_it(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    with (folder / "tokenizer.json").open("ab") as f:
        f.write(b" ")
    with pytest.raises(ConfigError) as err:
        CrossEncoder("verifier", folder).logits([("a question", "a passage")])
    message = str(err.value)
    assert "altered" in message
    assert "git checkout -- rag/data/models/verifier" in message
    assert "bench/train_crossencoder.py verifier" in message


def test_a_missing_model_file_is_refused_with_how_to_restore_it(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "model.onnx").unlink()
    with pytest.raises(ConfigError, match="git checkout -- rag/data/models/verifier"):
        CrossEncoder("verifier", folder).logits([("a question", "a passage")])


def test_the_verifier_is_off_unless_the_setting_turns_it_on(tmp_path: Path, embedder) -> None:
    from rag.assistant import Assistant
    from rag.index.store import PaperStore

    off = Settings().with_overrides(**{"store.index_dir": tmp_path})
    on = off.with_overrides(**{"checks.verifier": True})
    assert Assistant(on, PaperStore(on.store), embedder).verifier is not None
    assert Assistant(off, PaperStore(off.store), embedder).verifier is None


def test_with_the_verifier_on_an_unasked_detail_is_said_to_be_unstated(
    tmp_path: Path, embedder
) -> None:
    import json

    from rag.assistant import Assistant
    from rag.index.store import PaperStore

    source = tmp_path / "papers.jsonl"
    source.write_text(json.dumps({"id": "q", "title": TITLE, "abstract": ABSTRACT}) + "\n")
    settings = Settings().with_overrides(
        **{"store.index_dir": tmp_path / "idx", "checks.verifier": True}
    )
    assistant = Assistant(settings, PaperStore(settings.store), embedder)
    assistant.ingest([source])
    unstated = assistant.ask("What learning rate does Quillnet use?", llm="extractive")
    assert unstated.coverage == "unstated", unstated.text
    stated = assistant.ask("Which database is Quillnet trained on?", llm="extractive")
    assert stated.coverage == "answered" and "Pfam" in stated.text, stated.text


def test_each_sentence_reads_as_the_better_of_its_two_windows(verifier: Verifier) -> None:
    question = "How many protein families is Quillnet trained on?"
    per_sentence = verifier.per_sentence(question, TITLE, SENTENCES)
    windows_read = verifier.scores([(question, f"{TITLE}. {w}") for w in windows(SENTENCES)])
    assert per_sentence.shape == (len(SENTENCES),)
    assert per_sentence[0] == pytest.approx(windows_read[0], abs=1e-5)
    assert per_sentence[-1] == pytest.approx(windows_read[-1], abs=1e-5)
    for i in range(1, len(SENTENCES) - 1):
        assert per_sentence[i] == pytest.approx(max(windows_read[i - 1 : i + 1]), abs=1e-5)
    best = int(per_sentence.argmax())  # in the best window: itself or a neighbour says it
    assert "12,000 families" in " ".join(SENTENCES[max(best - 1, 0) : best + 2])
    assert not verifier.per_sentence(question, TITLE, ["One sentence only."]).any()
