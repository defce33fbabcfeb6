#!/usr/bin/env python3
"""Fail when rustdoc left a reference to another mcds crate's item unlinked.

    scripts/check-rustdoc-links.py [DOC_DIR]     (default target/doc)

rustdoc links a path to another crate only when it knows where that crate's
docs are; when it does not, it prints the bare name (`impl Into<Scope>`
with no link into mcds_core), and `RUSTDOCFLAGS=-D warnings` says nothing.
This reads the generated HTML: in every signature and item declaration of
every `mcds*` crate, the text outside links is searched for the names of
the types, traits and aliases that *other* mcds crates define (a crate's
own items are always linked, and its declarations name them unlinked).
So is another mcds crate's name outside a link (an unlinked re-export
such as `pub use mcds_lock as lock;`). Each one found is an unlinked
cross-crate reference (a page's own enum
variants, and associated types bound as `Item = …`, are names, not
references). An intra-doc link rustdoc could not turn into a URL (an
`href="mcds_core::…"` left as written) counts too. The script lists them
and exits 1. It also fails when it finds no signatures at all (a wrong
DOC_DIR), so it cannot pass by reading nothing.
"""

import html
import os
import re
import sys
from collections import defaultdict

ITEM_FILE = re.compile(r"^(struct|enum|trait|type|union|traitalias)\.([A-Za-z0-9_]+)\.html$")
# Signatures: item declarations, the headers of impls, methods, associated
# items, fields and variants, and re-exports (`pub use mcds_lock as lock;`).
CODE = re.compile(
    r'<pre class="rust item-decl">(.*?)</pre>|<h[2-4] class="code-header">(.*?)</h[2-4]>'
    r'|<dt id="reexport\.[^"]*"><code>(.*?)</code>',
    re.S,
)
ANCHOR = re.compile(r"<a\b[^>]*>.*?</a>", re.S)
TAG = re.compile(r"<[^>]+>")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
CRATE_PATH = re.compile(r"\b(mcds_[a-z_]+)\b")
NAME = re.compile(r"\b([A-Z][A-Za-z0-9_]*)\b(\s*=)?")
VARIANT = re.compile(r'id="variant\.([A-Za-z0-9_]+)"')
RAW_LINK = re.compile(r'href="(mcds[a-z_]*::[^"]*)"')


def crate_items(doc):
    """{crate: set of type-like item names it documents}."""
    crates = {}
    for crate in sorted(os.listdir(doc)):
        root = os.path.join(doc, crate)
        if not crate.startswith("mcds") or not os.path.isdir(root):
            continue
        names = set()
        for _, _, files in os.walk(root):
            for f in files:
                m = ITEM_FILE.match(f)
                if m:
                    names.add(m.group(2))
        crates[crate] = names
    return crates


def main():
    doc = sys.argv[1] if len(sys.argv) > 1 else "target/doc"
    crates = crate_items(doc)
    if not crates:
        sys.exit(f"no mcds crates documented in {doc}: run cargo doc first")
    owners = defaultdict(set)
    for crate, names in crates.items():
        for name in names:
            owners[name].add(crate)
    signatures = 0
    unlinked = defaultdict(int)
    examples = {}
    for crate, own in crates.items():
        for dirpath, _, files in os.walk(os.path.join(doc, crate)):
            for f in files:
                if not f.endswith(".html"):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    page = fh.read()
                variants = set(VARIANT.findall(page))
                for link in RAW_LINK.findall(page):
                    key = (crate, f"link {link}")
                    unlinked[key] += 1
                    examples.setdefault(key, (os.path.relpath(path, doc), "an intra-doc link left as written"))
                    owners.setdefault(f"link {link}", {"?"})
                for m in CODE.finditer(page):
                    signatures += 1
                    text = m.group(1) or m.group(2) or m.group(3)
                    text = html.unescape(TAG.sub("", ANCHOR.sub("", text)))
                    text = COMMENT.sub("", text)
                    # Another crate named outside a link (`pub use mcds_lock
                    # as lock;` with no link into mcds_lock).
                    for other in CRATE_PATH.findall(text):
                        if other != crate and other in crates and other not in own:
                            key = (crate, other)
                            unlinked[key] += 1
                            examples.setdefault(key, (os.path.relpath(path, doc), text.strip()[:160]))
                            owners.setdefault(other, {other})
                    for name, binding in NAME.findall(text):
                        # Another crate's item, and not one of this crate's
                        # own (or a re-export of the same name), a variant
                        # of this page's enum or an associated type binding.
                        if binding or name in own or name in variants or not owners.get(name):
                            continue
                        key = (crate, name)
                        unlinked[key] += 1
                        examples.setdefault(key, (os.path.relpath(path, doc), text.strip()[:160]))
    if signatures == 0:
        sys.exit(f"no signatures found under {doc}: is it rustdoc's output?")
    total = sum(unlinked.values())
    print(f"rustdoc links: {signatures} signatures in {len(crates)} crates, {total} unlinked cross-crate references")
    for (crate, name), n in sorted(unlinked.items(), key=lambda kv: -kv[1]):
        page, text = examples[(crate, name)]
        defined = ", ".join(sorted(owners[name]))
        print(f"  {crate}: {name} ({defined}) x{n}, e.g. {page}: {text}")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
