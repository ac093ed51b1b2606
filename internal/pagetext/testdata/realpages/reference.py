#!/usr/bin/env python3
"""Build the real-page corpus and its reference extractions.

Run from the repository root, with the Debian documentation packages listed in
README.md installed:

    python3 internal/pagetext/testdata/realpages/reference.py

It draws the pages (seeded, so the same packages give the same pages), copies
each one here as NAME.html and writes NAME.ref.txt, the reference main text,
and corpus.tsv, the list with source package, version and license.

The reference is independent of strata's extractor: another language, another
HTML parser (Python's html.parser), and no scoring at all. Each layout marks
its own main content, and the reference is the text of that element, minus the
furniture the layout puts inside it (permalink glyphs, prev/next links, source
links), as README.md explains layout by layout. Text is rendered as a browser
lays it out by default: block elements end a line, table cells are separated by
a tab, inline elements run on; the separators a layout's stylesheet generates
(Sphinx's " : " before a classifier) are inserted, since a reader sees them.
"""

import glob
import os
import random
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "param", "source", "track", "wbr"}
# Elements a browser does not render as text.
INVISIBLE = {"head", "script", "style", "noscript", "template", "svg", "math", "button",
             "select", "textarea", "input", "iframe", "object", "video", "audio", "canvas"}
# CSS display: block (and friends) in the browsers' default style sheet.
BLOCK = {"address", "article", "aside", "blockquote", "body", "center", "details", "dialog",
         "dd", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
         "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
         "listing", "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table",
         "tbody", "thead", "tfoot", "tr", "ul", "caption", "br", "xmp"}
CELL = {"td", "th"}
# An open element of the first kind is closed by a start tag of the second.
AUTOCLOSE = {"p": BLOCK - {"br"}, "li": {"li"}, "dt": {"dt", "dd"}, "dd": {"dt", "dd"},
             "tr": {"tr"}, "td": {"td", "th", "tr"}, "th": {"td", "th", "tr"},
             "option": {"option"}}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.parent, self.children = tag, parent, []
        self.attrs = {k: (v or "") for k, v in attrs}
        self.classes = set(self.attrs.get("class", "").split())


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", [], None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        while self.cur.tag in AUTOCLOSE and tag in AUTOCLOSE[self.cur.tag]:
            self.cur = self.cur.parent
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.cur = self.cur.parent

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(path):
    t = Tree()
    with open(path, encoding="utf-8", errors="replace") as f:
        t.feed(f.read())
    t.close()
    return t.root


SEL = re.compile(r"^(?P<tag>[a-z0-9]*)(?P<rest>(?:[#.][\w-]+|\[[\w-]+=[^\]]*\])*)$")


def matches(n, sel):
    """A simple selector: tag, #id, .class and [attr=value], combined."""
    m = SEL.match(sel)
    if not m:
        raise ValueError(sel)
    if m["tag"] and n.tag != m["tag"]:
        return False
    for part in re.findall(r"[#.][\w-]+|\[[\w-]+=[^\]]*\]", m["rest"]):
        if part[0] == "#" and n.attrs.get("id") != part[1:]:
            return False
        if part[0] == "." and part[1:] not in n.classes:
            return False
        if part[0] == "[":
            k, v = part[1:-1].split("=", 1)
            if n.attrs.get(k) != v.strip("\"'"):
                return False
    return True


def find_all(n, sel):
    out = []
    for c in n.children:
        if isinstance(c, Node):
            if matches(c, sel):
                out.append(c)
            else:
                out.extend(find_all(c, sel))
    return out


def hidden(n):
    if "hidden" in n.attrs or n.attrs.get("aria-hidden") == "true":
        return True
    style = n.attrs.get("style", "").replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


class Renderer:
    """Text as a browser lays it out by default (see the module comment)."""

    def __init__(self, drop, before):
        self.drop, self.before = drop, before
        self.lines, self.line = [], ""

    def brk(self):
        s = re.sub(r"[ \t\u00a0]+", " ", self.line).strip()
        if s:
            self.lines.append(s)
        self.line = ""

    def walk(self, n, pre=False):
        for c in n.children:
            if isinstance(c, str):
                if pre:
                    parts = c.split("\n")
                    self.line += parts[0]
                    for p in parts[1:]:
                        self.brk()
                        self.line += p
                else:
                    self.line += re.sub(r"\s+", " ", c)
                continue
            if c.tag in INVISIBLE or hidden(c) or any(matches(c, s) for s in self.drop):
                continue
            for sel, text in self.before:
                if matches(c, sel):
                    self.line += text
            if c.tag in BLOCK:
                self.brk()
            elif c.tag in CELL:
                self.line += "\t"
            self.walk(c, pre or c.tag in ("pre", "listing", "xmp"))
            if c.tag in BLOCK:
                self.brk()
            elif c.tag in CELL:
                self.line += "\t"


def title_of(doc):
    t = find_all(doc, "title")
    return re.sub(r"\s+", " ", "".join(x for x in t[0].children if isinstance(x, str))).strip() if t else ""


# Each layout: the element(s) that hold the main content, the furniture inside
# them, and the text the layout's style sheet generates before elements.
SPHINX_BEFORE = [("span.classifier", " : ")]
# Sphinx's headerlink is the permalink glyph after each heading; viewcode's
# "[source]" links an API entry to its source code.
SPHINX_DROP = [".headerlink", "span.viewcode-link"]
LAYOUTS = {
    # pydata-sphinx-theme (SciPy): <main role=main> holds the document and the
    # previous/next links.
    "sphinx-pydata": (["main"], SPHINX_DROP + [".prev-next-area"], SPHINX_BEFORE),
    # Sphinx's classic theme (Python, developers-reference):
    # <div class="body" role="main">.
    "sphinx-classic": (["div.body"], SPHINX_DROP, SPHINX_BEFORE),
    # Django's own theme (YUI grid): the document is #yui-main, the sidebar
    # and the header's site title are outside it.
    "sphinx-django": (["div#yui-main"], SPHINX_DROP, SPHINX_BEFORE),
    # rustdoc: #main-content; its out-of-band box holds the "since" version,
    # the source link and the collapse-all control, and each item has a
    # source link and a permalink anchor; "Expand description" is the label
    # of a collapse control.
    "rustdoc": (["section#main-content"], [".out-of-band", "a.srclink", "a.anchor", "a.rightside",
                                           "span.rightside", "summary.hideme"], []),
    # mdBook (The Rust Programming Language): <main>.
    "mdbook": (["main"], [], []),
    # Publican (Debian Administrator's Handbook): the body, minus the banner
    # and the two docnav lists; DocBook sidebars (boxed asides) are content.
    "publican": (["body"], ["div#banner", "ul.docnav", "div#site_footer"], []),
    # DocBook XSL (Debian Reference): the body minus the navigation header
    # and footer and the generated table of contents.
    "docbook-xsl": (["body"], ["div.navheader", "div.navfooter", "div.toc"], []),
    # AsciiDoc (Git's manual pages and guides): #header (title and NAME) and
    # #content; #footer is the "last updated" line.
    "asciidoc": (["div#header", "div#content"], ["div#toc"], []),
    # sqlite.org's own templates: the body minus the menus (div.nosearch at
    # the top, which also holds the per-page table of contents box) and the
    # centred "This page last modified" line at the bottom.
    "sqlite": (["body"], ["div.nosearch", "p[align=center]"], []),
    # ikiwiki: #content (role=main); header, actions and footer are outside.
    "ikiwiki": (["div#content"], [], []),
    # Apache httpd's manual: #page-content minus the quick-reference box,
    # the "top" links, the language lists and the comments note.
    "apache": (["div#page-content"], ["div#quickview", "div.top", "div.toplang", "div.bottomlang",
                                      "div#comments_section", "div.outofdate"], []),
}


def reference(path, layout):
    roots, drop, before = LAYOUTS[layout]
    doc = parse(path)
    r = Renderer(drop, before)
    found = []
    for sel in roots:
        found.extend(find_all(doc, sel))
    if not found:
        raise SystemExit(f"{path}: no {roots} for layout {layout}")
    for n in found:
        r.walk(n)
        r.brk()
    return "\n".join([title_of(doc)] + r.lines) + "\n"


# The packages, where their pages are, and how many to draw.
SOURCES = [
    # name prefix, package, layout, glob (relative to /), count, license
    ("scipy", "python-scipy-doc", "sphinx-pydata", "usr/share/doc/python-scipy-doc/html/**/*.html", 8,
     "BSD-3-Clause"),
    ("python", "python3.11-doc", "sphinx-classic", "usr/share/doc/python3.11/html/**/*.html", 5,
     "PSF-2.0"),
    ("django", "python-django-doc", "sphinx-django", "usr/share/doc/python-django-doc/html/**/*.html", 4,
     "BSD-3-Clause"),
    ("devref", "developers-reference", "sphinx-classic", "usr/share/developers-reference/*.html", 2,
     "GPL-2"),
    ("ruststd", "rust-doc", "rustdoc", "usr/share/doc/rust-doc/html/std/**/*.html", 5,
     "MIT or Apache-2.0"),
    ("rustbook", "rust-doc", "mdbook", "usr/share/doc/rust-doc/html/book/ch*.html", 3,
     "MIT or Apache-2.0"),
    ("handbook", "debian-handbook", "publican", "usr/share/doc/debian-handbook/html/en-US/*.html", 4,
     "GPL-2+ or CC-BY-SA-3.0"),
    ("debref", "debian-reference-en", "docbook-xsl", "usr/share/debian-reference/*.en.html", 2,
     "GPL-2+"),
    ("git", "git-doc", "asciidoc", "usr/share/doc/git-doc/*.html", 3, "GPL-2"),
    ("sqlite", "sqlite3-doc", "sqlite", "usr/share/doc/sqlite3/*.html", 3, "public-domain"),
    ("ikiwiki", "ikiwiki", "ikiwiki", "usr/share/doc/ikiwiki/html/**/*.html", 3, "GPL-2+"),
    ("apache", "apache2-doc", "apache", "usr/share/doc/apache2-doc/manual/en/**/*.html", 3,
     "Apache-2.0"),
]

MAX_BYTES = 80_000  # pages drawn are at most this big, to keep the corpus small
# Pages without a document: Sphinx's search page (filled by JavaScript),
# generated indexes, redirect stubs.
SKIP = re.compile(r"/(search|genindex|py-modindex|_modules/.*|_static/.*|webpack-macros)\.html$|/_modules/")


def version(pkg):
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True,
                          text=True, check=True).stdout


def main():
    rng = random.Random(19)
    rows = []
    for prefix, pkg, layout, pattern, count, lic in SOURCES:
        files = sorted(p for p in glob.glob("/" + pattern, recursive=True)
                       if not SKIP.search(p) and os.path.getsize(p) <= MAX_BYTES)
        # rustdoc's redirect stubs and Sphinx pages without the layout's main
        # element are not documents.
        cands = []
        for p in files:
            with open(p, encoding="utf-8", errors="replace") as f:
                head = f.read(4096)
            if "http-equiv=\"refresh\"" in head or "Redirecting to" in head:
                continue
            cands.append(p)
        picked = rng.sample(cands, count)
        ver = version(pkg)
        for i, p in enumerate(sorted(picked)):
            base = re.sub(r"[^a-z0-9]+", "-", os.path.splitext(os.path.basename(p))[0].lower()).strip("-")
            if base.startswith(prefix + "-"):
                base = base[len(prefix) + 1:]
            name = f"{prefix}-{base}"
            shutil.copyfile(p, os.path.join(HERE, name + ".html"))
            with open(os.path.join(HERE, name + ".ref.txt"), "w", encoding="utf-8") as f:
                f.write(reference(p, layout))
            rows.append((name, layout, pkg, ver, lic, p))
    with open(os.path.join(HERE, "corpus.tsv"), "w", encoding="utf-8") as f:
        f.write("name\tlayout\tpackage\tversion\tlicense\tsource\n")
        for r in rows:
            f.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
