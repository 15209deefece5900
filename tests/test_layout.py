"""docs/layout.md names every module of rag/ and ui/, and only those; modules import only
their own layer and the layers below it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).parent.parent

# each module's layer and the layer's rank (docs/layout.md): a module may import its own
# layer and layers of a lower rank
CORE, ADAPTERS, ROOT_ = "core", "adapters", "assistant"
LAYERS = {"core": 0, "text": 1, "index": 2, "ingest": 3, "retrieve": 3, "answer": 4}
LAYERS |= {ROOT_: 5, ADAPTERS: 6}
TOP = {
    "rag.errors": CORE,
    "rag.types": CORE,
    "rag.settings": CORE,
    "rag.models": CORE,
    "rag.crossencoder": CORE,
    "rag._offline": CORE,
    "rag.assistant": ROOT_,
    "rag.llama_retriever": ROOT_,
    "rag.cli": ADAPTERS,
    "rag.jsonform": ADAPTERS,
    "rag.export": ADAPTERS,
    "rag.testing": ADAPTERS,
    "rag.evaluation": ADAPTERS,
    "rag": ADAPTERS,  # rag/__init__.py
}


def _layout_page() -> str:
    return (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")


def test_the_layout_page_lists_every_module_and_only_existing_ones() -> None:
    listed = re.findall(r"^\| `((?:rag|ui)/[\w/]+\.py)` \| .+ \|$", _layout_page(), re.M)
    files = {
        p.relative_to(ROOT).as_posix()
        for d in ("rag", "ui")
        for p in (ROOT / d).rglob("*.py")
        if "data" not in p.relative_to(ROOT).parts
    }
    files.discard("ui/__init__.py")  # empty: it only makes ui a package
    assert listed, "no module rows found"
    assert len(listed) == len(set(listed)), "a module is listed twice"
    assert sorted(files - set(listed)) == [], "modules missing from docs/layout.md"
    assert sorted(set(listed) - files) == [], "docs/layout.md lists modules that do not exist"


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    """The layer a module belongs to: its package under rag, or the table's."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in LAYERS:
        return parts[1]
    if ".".join(parts[:2]) in TOP:
        return TOP[".".join(parts[:2])]
    if module in TOP:
        return TOP[module]
    raise AssertionError(f"{module} is in no layer of tests/test_layout.py")


def _imports(path: Path) -> list[tuple[int, str]]:
    """The rag modules a file imports (lines under ``if TYPE_CHECKING:`` left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names] if not node.module else [target]
            found += [(node.lineno, t) for t in names if t.startswith("rag")]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("rag")]
    return found


def test_every_module_imports_only_its_layer_and_those_below() -> None:
    wrong = []
    for path in sorted((ROOT / "rag").rglob("*.py")):
        mine = _layer(_module(path))
        for line, target in _imports(path):
            theirs = _layer(target)
            if theirs == mine:
                continue
            if LAYERS[theirs] >= LAYERS[mine]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert wrong == []


# what the adapters outside rag/ (the web chat, the evaluation, the benchmarks) may import
PUBLIC = {
    "rag",
    "rag.types",
    "rag.settings",
    "rag.export",
    "rag.jsonform",
    "rag.testing",
    "rag.evaluation",
    "rag.text.markup",  # the web chat renders the abstracts' LaTeX and Markdown
    "rag.text.sanitize",  # ... and shows only safe text and links, as rag's clients must
}


def test_the_adapters_use_only_public_modules_and_names() -> None:
    wrong = []
    for folder in ("ui", "eval", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rag"):
                    if node.module not in PUBLIC:
                        wrong.append(f"{where} imports {node.module}")
                    wrong += [f"{where} imports {a.name}" for a in node.names if a.name[0] == "_"]
                elif isinstance(node, ast.Import):
                    wrong += [
                        f"{where} imports {a.name}"
                        for a in node.names
                        if a.name.startswith("rag.") and a.name not in PUBLIC
                    ]
    assert wrong == []


def test_the_readme_is_a_short_front_door_whose_links_resolve() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):  # a web address
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
                slugs = {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}
                if anchor not in slugs:
                    broken.append(f"{page.relative_to(ROOT)} -> {target} (no such heading)")
    assert broken == []
