"""The word lists and thresholds of the answer checks live in one module, each with why it
is there and a value that turns it off; none names a bundled paper; turning one off before
the checks are imported changes what they do (what ``bench/rules.py`` relies on)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from rag.answer import rules
from rag.answer.answering import paper_name
from rag.ingest.readers import read_papers

ROOT = Path(__file__).parent.parent
BUNDLED = ROOT / "rag" / "data" / "icml2026_abstracts.txt"


def test_every_rule_says_why_and_can_be_turned_off() -> None:
    assert rules.RULES, "no rules registered"
    for name, rule in rules.RULES.items():
        assert getattr(rules, name) == rule.value, f"{name}: the module value is not the rule's"
        assert len(rule.why) > 40, f"{name}: say why the rule is there"
        assert rule.off != rule.value, f"{name}: its off value must differ from its value"
        assert type(rule.off) is type(rule.value) or isinstance(rule.value, float), name


def _strings(path: Path) -> list[str]:
    """The string constants of a module, less its docstrings (which may give examples)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documented = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, documented) and n.body and isinstance(n.body[0], ast.Expr)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def test_no_rule_names_a_bundled_paper() -> None:
    """No word list, pattern or threshold of the package is written for the demo papers:
    the rules' values, and every other string the package's code holds."""
    names = {paper_name(p) for p in read_papers(BUNDLED).papers} - {""}
    assert len(names) >= 5, "the bundled papers' names were not found"
    texts = [str(r.value) for r in rules.RULES.values()]
    for path in sorted((ROOT / "rag").rglob("*.py")):
        if path.name != "rules.py":  # its examples may quote a corpus; its values are above
            texts += _strings(path)
    joined = "\n".join(texts).lower()
    named = [n for n in names if re.search(rf"(?<![\w-]){re.escape(n.lower())}(?![\w-])", joined)]
    assert named == [], f"the package's rules name bundled papers: {named}"


def test_the_rules_module_imports_nothing_of_the_package() -> None:
    source = (ROOT / "rag" / "answer" / "rules.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(?:from \.|from rag|import rag)", source, re.M)


_TURNED_OFF = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("rag.answer.rules", {path!r})
rules = importlib.util.module_from_spec(spec)
sys.modules["rag.answer.rules"] = rules
spec.loader.exec_module(rules)
{change}
from rag.answer import premise
print(" ".join(premise.terms("Which papers deal with community detection?")))
"""


def _terms_with(change: str) -> list[str]:
    code = _TURNED_OFF.format(path=str(ROOT / "rag" / "answer" / "rules.py"), change=change)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return done.stdout.split()


def test_a_rule_turned_off_before_import_changes_the_check() -> None:
    assert "deal" not in _terms_with("")
    assert "deal" in _terms_with('rules.HOW_ASKED = rules.RULES["HOW_ASKED"].off')
