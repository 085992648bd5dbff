#!/usr/bin/env python3
"""Checks the source layout of the core and the shell, as CONTRIBUTING.md states it:

- no source file is longer than 600 lines;
- every source file opens with a `//!` line saying its one job;
- no two source files import each other, directly or around a circle (a crate root that only
  declares modules and re-exports is no stop on the way: its names are other files' items).

    scripts/check-layout.py        print what is wrong and exit 1, or say all is well

Imports are read from the text: `use` items and `crate::`/`super::`/`self::` paths, each
resolved to the file of the module it names (through one level of `pub use` re-export, so a
`mod.rs` that re-exports a child's item is not a stop on the way). Test modules at the bottom
of a file (`#[cfg(test)] mod …`) are left out: they belong to the file they test.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CRATES = [("core", "core/src/lib.rs"), ("shell", "shell/src/lib.rs"), ("redmark", "shell/src/main.rs")]
MAX_LINES = 600

MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
USE_ITEM = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
INLINE_PATH = re.compile(r"\b((?:crate|super|self)(?:::\w+)+)")
TEST_TAIL = re.compile(r"^#\[cfg\((?:all\()?test\b[^\n]*\]\s*\n(?:\s*#\[[^\n]*\n)*\s*mod\s+\w+\s*\{", re.M)
COMMENT = re.compile(r"//[^\n]*")
VISIBILITY = re.compile(r"pub\(in [^)]*\)")


def module_files(crate, root_file):
    """Module path (tuple) -> file, following `mod x;` declarations from the crate root."""
    found = {(): root_file}
    todo = [((), root_file)]
    while todo:
        path, f = todo.pop()
        text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        here = os.path.dirname(f)
        base = os.path.basename(f)
        if base not in ("lib.rs", "main.rs", "mod.rs"):
            here = os.path.join(here, base[:-3])
        for name in MOD_DECL.findall(strip_tests(text)):
            for cand in (os.path.join(here, name + ".rs"), os.path.join(here, name, "mod.rs")):
                if os.path.exists(os.path.join(ROOT, cand)):
                    found[path + (name,)] = cand
                    todo.append((path + (name,), cand))
                    break
    return found


def strip_tests(text):
    """The file without its test module at the bottom, comments (doc links) and `pub(in …)`
    paths (a visibility, not an import)."""
    m = TEST_TAIL.search(text)
    return VISIBILITY.sub("pub", COMMENT.sub("", text[: m.start()] if m else text))


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (aliases and globs dropped)."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(t):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(t[start:i])
                start = i + 1
        parts.append(t[start:])
        for p in filter(None, parts):
            if "{" in p:
                head, rest = p.split("{", 1)
                walk(prefix + head, rest[:-1])
            else:
                p = p.split("as", 1)[0] if "::" not in p.split("as", 1)[-1] else p
                out.append(prefix + re.sub(r"as\w+$", "", p))

    walk("", tree)
    return [p.rstrip(":").removesuffix("::*") for p in out]


def resolve(path, here, mods):
    """The module (tuple) a `crate::`/`super::`/`self::` path reaches, or None."""
    parts = path.split("::")
    if parts[0] == "crate":
        at, parts = (), parts[1:]
    elif parts[0] in ("super", "self"):
        at = here
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                at = at[:-1]
            parts = parts[1:]
    else:
        return None, []
    while parts and at + (parts[0],) in mods:
        at, parts = at + (parts[0],), parts[1:]
    return at, parts


def reexports(text):
    """Names a module re-exports with `pub use`, each with the path it comes from."""
    names = {}
    for m in re.finditer(r"^\s*pub(?:\([^)]*\))?\s+use\s+([^;]+);", text, re.M):
        for p in expand_use(m.group(1)):
            names[p.split("::")[-1]] = p
    return names


def edges(mods):
    """File -> files it imports from."""
    files = {f: p for p, f in mods.items()}
    root = mods[()]
    texts = {f: strip_tests(open(os.path.join(ROOT, f), encoding="utf-8").read()) for f in files}
    graph = {f: set() for f in files}
    for f, here in files.items():
        text = texts[f]
        paths = []
        for tree in USE_ITEM.findall(text):
            paths += expand_use(tree)
        paths += INLINE_PATH.findall(text)
        for p in paths:
            head = p.split("::")[0]
            if head not in ("crate", "super", "self"):
                # A path from a child module of this one (`use child::Item;`).
                if here + (head,) not in mods:
                    continue
                p = "self::" + p
            at, rest = resolve(p, here, mods)
            if at is None:
                continue
            target = mods[at]
            # Through one re-export: `mod.rs` saying `pub use child::Item` is not the source.
            if rest and target != f:
                src = reexports(texts[target]).get(rest[0])
                if src:
                    at2, _ = resolve(src if src.split("::")[0] in ("crate", "super", "self")
                                     else "self::" + src, at, mods)
                    if at2 is not None:
                        target = mods[at2]
            if target != f and not (target == root and routes_only(texts[root])):
                graph[f].add(target)
    return graph


def routes_only(text):
    """Whether a crate root holds nothing but `mod` declarations and `use` items: a path
    through it (a re-export, or a `#[macro_export]` macro, which lives at the root) names
    another file's item, so it is no import of the root."""
    body = re.sub(r"#!?\[[^\]]*\]", "", USE_ITEM.sub("", MOD_DECL.sub("", text)))
    return body.strip() == ""


def cycles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    problems = []
    for crate, root in CRATES:
        mods = module_files(crate, root)
        for f in sorted(set(mods.values())):
            lines = open(os.path.join(ROOT, f), encoding="utf-8").read().splitlines()
            if len(lines) > MAX_LINES:
                problems.append(f"{f}: {len(lines)} lines (at most {MAX_LINES})")
            if not lines or not lines[0].startswith("//!"):
                problems.append(f"{f}: does not open with a `//!` line saying its job")
        graph = edges(mods)
        for comp in cycles(graph):
            ring = " <-> ".join(comp)
            problems.append(f"{crate}: files importing each other: {ring}")
    for p in problems:
        print(f"check-layout: {p}")
    if problems:
        sys.exit(1)
    print("check-layout: every file under 600 lines, each says its job, no import circle")


if __name__ == "__main__":
    main()
