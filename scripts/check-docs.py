#!/usr/bin/env python3
"""Every link in the built guide (docs/book) resolves, offline: each
relative href names a file of the book (or of the repository, for links
out of it), and each #fragment an id on that page. Prints what it checked;
exits 1 listing every broken link."""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

BOOK = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/book")


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value and tag == "a":
                self.links.append(value)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def main() -> int:
    pages = {p: parse(p) for p in BOOK.rglob("*.html")}
    if not pages:
        print(f"no HTML under {BOOK}: build the guide first (mdbook build docs)", file=sys.stderr)
        return 1
    broken: list[str] = []
    checked = 0
    for path, page in pages.items():
        for href in page.links:
            parts = urlsplit(href)
            if parts.scheme or href.startswith("//"):
                continue  # external: not checked offline
            if path.name == "print.html" or path.name == "toc.html":
                continue  # mdBook's generated pages
            checked += 1
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(BOOK)}: {href} (no {target})")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(BOOK)}: {href} (no #{parts.fragment} there)")
    print(f"guide: {len(pages)} pages, {checked} internal links checked, {len(broken)} broken")
    for b in broken:
        print("  broken:", b, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
