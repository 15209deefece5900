"""Questions, paraphrases and one-line gists written by the local model about abstracts.

    python bench/verifier_llm.py [--minutes 90] [--threads 2]

For randomly chosen papers of the training pool (``bench/verifier_pool.py``), the local model
reads the title and one sentence of the abstract and writes a question that sentence answers,
the sentence in other words (its numbers and names kept) and, in under twelve words, what the
paper does. Rows are appended to ``bench/out/verifier/llm.jsonl`` as they come, so a stopped
run resumes where it was; ``bench/verifier_data.py`` turns them into training pairs.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time

from verifier_pool import OUT, informative, papers, shuffled

from rag.evaluation import local_llm_path, numbers_in

PROMPT = (
    "Paper title: {title}\nOne sentence of its abstract: {sentence}\n\n"
    "Write exactly three lines:\n"
    "Q: a short question a researcher could ask about this paper that the sentence answers "
    "(do not copy the sentence; name the method if the sentence names it).\n"
    "P: the sentence in your own words, keeping every number and name, starting with "
    "{subject}.\n"
    "G: a question asking which paper does this, in other words than the sentence and "
    "without the method name (start with 'Which paper')."
)
SEED = 7


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=90.0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from llama_cpp import Llama

    out = OUT / "llm.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(x)["paper"] for x in out.read_text().splitlines()} if out.exists() else set()
    llm = Llama(model_path=str(local_llm_path()), n_ctx=1024, n_threads=args.threads, verbose=False)
    pool = shuffled(papers(), SEED)
    deadline = time.monotonic() + args.minutes * 60
    written = 0
    with out.open("a", encoding="utf-8") as sink:
        for paper in pool:
            if time.monotonic() > deadline:
                break
            if paper.id in done:
                continue
            rng = random.Random(paper.id)
            choices = [i for i, s in enumerate(paper.sentences) if informative(s)]
            if not choices:
                continue
            index = rng.choice(choices)
            row = ask(llm, paper.title, paper.sentences[index])
            if row is None:
                continue
            sink.write(json.dumps({"paper": paper.id, "sentence": index, **row}) + "\n")
            sink.flush()
            written += 1
            if written % 10 == 0:
                left = (deadline - time.monotonic()) / 60
                print(f"{written} written ({len(done) + written} in all), {left:.0f} min left",
                      file=sys.stderr, flush=True)  # fmt: skip
    return 0


def ask(llm, title: str, sentence: str) -> dict[str, str] | None:
    subject = f'"{_name(title)}"' if _name(title) else '"The paper"'
    prompt = PROMPT.format(title=title, sentence=sentence, subject=subject)
    reply = llm.create_chat_completion(
        messages=[{"role": "user", "content": prompt}], max_tokens=140, temperature=0.3, seed=SEED
    )["choices"][0]["message"]["content"]
    lines = dict(re.findall(r"^\s*\**([QPG])\**\s*:\s*(.+?)\s*$", reply, re.M))
    if set(lines) != {"Q", "P", "G"} or not lines["Q"].endswith("?"):
        return None
    # a paraphrase that changed a number is not one
    if set(numbers_in(lines["P"])) != set(numbers_in(sentence)):
        lines["P"] = ""
    return {"question": lines["Q"], "paraphrase": lines["P"], "gist": lines["G"]}


def _name(title: str) -> str:
    from rag.evaluation import method_name

    return method_name(title)


if __name__ == "__main__":
    sys.exit(main())
