"""Crawl a signed-in user's pages with Django's test client and report Python object dumps.

A dump is a dict or list of dicts printed with ``str()`` / ``pprint`` (``{'key': ...}``) or
an object's default repr (``<Foo object at 0x...>``). Program code legitimately holds dict
literals, so text inside code displays is not checked: ``<pre><code>`` (statements' code
blocks), ``pre.code``, ``pre.io`` (test input and output), ``textarea`` and ``script``.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

from django.urls import Resolver404, resolve

DUMP = re.compile(r"\{'|\[\{'|\{\"[^\"]{1,40}\": |object at 0x[0-9a-f]+|<[\w.]+ object>")
CODE_CLASSES = {"code", "io"}
SKIP_TAGS = {"textarea", "script", "style"}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.text: list[str] = []
        self._stack: list[bool] = []  # per open element: is it a code display?

    def _in_code(self) -> bool:
        return any(self._stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        if tag in ("br", "img", "input", "meta", "link", "hr", "source", "col", "wbr"):
            return
        classes = set((attrs.get("class") or "").split())
        code = (
            tag in SKIP_TAGS
            or (tag == "pre" and bool(classes & CODE_CLASSES))
            or (tag == "code" and bool(self._stack) and self._parent == "pre")
        )
        self._parent = tag
        self._stack.append(code)

    _parent = ""

    def handle_endtag(self, tag):
        if tag in ("br", "img", "input", "meta", "link", "hr", "source", "col", "wbr"):
            return
        if self._stack:
            self._stack.pop()

    def handle_data(self, data):
        if not self._in_code():
            self.text.append(data)


def dumps_in(html: str) -> list[str]:
    """Every dump found in the page's checked text, with some context."""
    page = _Page()
    page.feed(html)
    text = " ".join(page.text)
    return [text[max(0, m.start() - 60) : m.end() + 60] for m in DUMP.finditer(text)]


def links_in(html: str) -> list[str]:
    page = _Page()
    page.feed(html)
    return page.links


def crawl(client, start: list[str], *, per_route: int = 6, skip=()) -> dict[str, list[str]]:
    """Visit every internal HTML page reachable from ``start`` (at most ``per_route`` pages
    per URL pattern), returning {url: [dump, ...]} for pages with dumps, and under the key
    ``"__visited__"`` the visited URLs' route names."""
    seen: set[str] = set()
    per: Counter = Counter()
    queue = deque(start)
    found: dict[str, list[str]] = {}
    visited: list[str] = []
    while queue:
        url = urldefrag(queue.popleft())[0]
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path.startswith("/") or url in seen:
            continue
        seen.add(url)
        try:
            match = resolve(parts.path)
        except Resolver404:
            continue
        name = match.view_name
        if any(s in url for s in skip) or per[name] >= per_route:
            continue
        per[name] += 1
        response = client.get(url)
        if response.status_code != 200 or "text/html" not in response.get("Content-Type", ""):
            continue
        visited.append(name)
        html = response.content.decode()
        dumps = dumps_in(html)
        if dumps:
            found[url] = dumps
        queue.extend(links_in(html))
    found["__visited__"] = visited
    return found
