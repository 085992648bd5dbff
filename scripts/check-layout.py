#!/usr/bin/env python3
"""Checks the source layout of the core and the shell, and of the end-to-end tests' files
(`tests/src`, `tests/tests`), as CONTRIBUTING.md states it:

- no source file is longer than 600 lines (a file in ALLOWED_LONG_FILES is let through, said,
  until its split lands; a listed file within the limit fails, so its entry goes with the split);
- every source file opens with a `//!` line saying its one job (a file another one `include!`s,
  listed in INCLUDERS, opens with a plain `//` line: an inner doc cannot sit in an included file);
- in the core and the shell only: no two source files import each other, directly or around a
  circle (a crate root that only declares modules and re-exports is no stop on the way: its
  names are other files' items);
- in the core and the shell only: no two folders import each other, directly or around a circle: a file's folder is its
  crate's top-level module (`shell/src/transport/http.rs` is in `transport`, `shell/src/web.rs`
  in `web`), and a folder imports another when one of its files imports one of the other's.
  Each folder circle is named with one file-level import per step. A circle through a folder
  import listed in ALLOWED_FOLDER_IMPORTS is let through (said, not failed) until its issue
  removes that import; a listed import on no circle fails, so its entry goes with the fix.

    scripts/check-layout.py              print what is wrong and exit 1, or say all is well
    scripts/check-layout.py --self-test  check this script on small trees in a temp folder

Imports are read from the text: `use` items and `crate::`/`super::`/`self::` paths, each
resolved to the file of the module it names (through one level of `pub use` re-export, so a
`mod.rs` that re-exports a child's item is not a stop on the way). Test modules at the bottom
of a file (`#[cfg(test)] mod …`) are left out: they belong to the file they test.
"""
import os
import re
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CRATES = [("core", "core/src/lib.rs"), ("shell", "shell/src/lib.rs"), ("redmark", "shell/src/main.rs")]
MAX_LINES = 600
# Folders whose `*.rs` files (all of them, at any depth) are held to the line limit and the
# opening line, without the import checks: the end-to-end tests' library and test files.
FILE_RULE_FOLDERS = ["tests/src", "tests/tests"]
# Files over the line limit for now: path -> why. Said, not failed; an entry whose file is
# within the limit (or gone) fails, so it goes with the split.
ALLOWED_LONG_FILES: dict[str, str] = {}
# Files that `include!` others (by a path relative to their own folder): an included file opens
# with a plain `//` line saying its job, since an inner `//!` doc is refused there.
INCLUDERS = ["tests/build.rs"]
INCLUDE = re.compile(r'^\s*include!\(\s*"([^"]+)"\s*\)', re.M)
# Folder imports that point the wrong way for now: (crate, folder, the folder it imports) ->
# why, naming the issue that removes it. A circle through one is said, not failed. Remove an
# entry when its import is on no circle any more (the check fails until it is).
ALLOWED_FOLDER_IMPORTS: dict = {}
# At most this many folder circles are named per crate (the rest are counted), out of at most
# MAX_CIRCLES_FOUND looked for.
MAX_CIRCLES_NAMED = 20
MAX_CIRCLES_FOUND = 10000

MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
USE_ITEM = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
INLINE_PATH = re.compile(r"\b((?:crate|super|self)(?:::\w+)+)")
TEST_TAIL = re.compile(r"^#\[cfg\((?:all\()?test\b[^\n]*\]\s*\n(?:\s*#\[[^\n]*\n)*\s*mod\s+\w+\s*\{", re.M)
COMMENT = re.compile(r"//[^\n]*")
VISIBILITY = re.compile(r"pub\(in [^)]*\)")


def read(root, f):
    """The text of the file `f` under `root`."""
    with open(os.path.join(root, f), encoding="utf-8") as src:
        return src.read()


def module_files(root_file, root=ROOT):
    """Module path (tuple) -> file, following `mod x;` declarations from the crate root."""
    found = {(): root_file}
    todo = [((), root_file)]
    while todo:
        path, f = todo.pop()
        text = read(root, f)
        here = os.path.dirname(f)
        base = os.path.basename(f)
        if base not in ("lib.rs", "main.rs", "mod.rs"):
            here = os.path.join(here, base[:-3])
        for name in MOD_DECL.findall(strip_tests(text)):
            for cand in (os.path.join(here, name + ".rs"), os.path.join(here, name, "mod.rs")):
                if os.path.exists(os.path.join(root, cand)):
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


def edges(mods, root_dir=ROOT):
    """File -> files it imports from, and (file, file) -> the first path that imports."""
    files = {f: p for p, f in mods.items()}
    root = mods[()]
    texts = {f: strip_tests(read(root_dir, f)) for f in files}
    graph = {f: set() for f in files}
    why = {}
    for f, here in files.items():
        text = texts[f]
        paths = []
        for tree in USE_ITEM.findall(text):
            paths += expand_use(tree)
        paths += INLINE_PATH.findall(text)
        for p in paths:
            named = p
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
                why.setdefault((f, target), named)
    return graph, why


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


def folder_of(path):
    """A module's folder: its crate's top-level module (the crate root is its own)."""
    return path[0] if path else "(crate root)"


def folder_graph(mods, graph, why):
    """Folder -> folders it imports from, and (folder, folder) -> one file-level import
    (importing file, the path it names), the first in file order."""
    folder = {f: folder_of(p) for p, f in mods.items()}
    out = {d: set() for d in folder.values()}
    example = {}
    for f in sorted(graph):
        for t in sorted(graph[f]):
            a, b = folder[f], folder[t]
            if a != b:
                out[a].add(b)
                example.setdefault((a, b), (f, why[(f, t)]))
    return out, example


def circles(graph, comp, limit):
    """The elementary circles inside one strongly connected component, shortest first, each
    starting at its smallest folder; at most `limit` (and whether there were more)."""
    order = sorted(comp)
    found = []
    more = False

    def walk(start, allowed, path):
        nonlocal more
        for w in sorted(graph[path[-1]] & allowed):
            if len(found) >= limit:
                more = True
                return
            if w == start:
                found.append(list(path))
            elif w not in path:
                walk(start, allowed, path + [w])

    for i, start in enumerate(order):
        walk(start, set(order[i:]), [start])
    return sorted(found, key=lambda c: (len(c), c)), more


def describe(circle, example):
    """`a -> b (file uses path) -> a (file uses path)`."""
    steps = [circle[0]]
    for a, b in zip(circle, circle[1:] + circle[:1]):
        f, p = example[(a, b)]
        steps.append(f"{b} ({f} uses {p})")
    return " -> ".join(steps)


def included_files(root, includers):
    """The files that `includers` `include!`, as paths from `root`."""
    found = set()
    for f in includers:
        if os.path.exists(os.path.join(root, f)):
            for path in INCLUDE.findall(read(root, f)):
                found.add(os.path.normpath(os.path.join(os.path.dirname(f), path)))
    return found


def folder_files(root, folders):
    """Every `*.rs` file under `folders` (paths from `root`), sorted."""
    out = []
    for folder in folders:
        for here, _, names in os.walk(os.path.join(root, folder)):
            out += [os.path.relpath(os.path.join(here, n), root) for n in names if n.endswith(".rs")]
    return sorted(out)


def file_problems(root, f, included, allowed_long, notes):
    """What is wrong with file `f` alone: its length, its opening line."""
    problems = []
    lines = read(root, f).splitlines()
    if len(lines) > MAX_LINES:
        if f in allowed_long:
            notes.append(f"{f}: {len(lines)} lines [allowed for now: {allowed_long[f]}]")
        else:
            problems.append(f"{f}: {len(lines)} lines (at most {MAX_LINES})")
    elif f in allowed_long:
        problems.append(f"{f}: {len(lines)} lines, within the limit: remove it from "
                        f"ALLOWED_LONG_FILES")
    opening = "//" if f in included else "//!"
    if not lines or not lines[0].startswith(opening) or (
            opening == "//" and lines[0].startswith("//!")):
        problems.append(f"{f}: does not open with a `{opening}` line saying its job")
    return problems


def check(root=ROOT, crates=CRATES, allowed=None, folders=None, allowed_long=None):
    """(problems, notes) for the tree at `root`: each problem fails the check."""
    allowed = ALLOWED_FOLDER_IMPORTS if allowed is None else allowed
    folders = FILE_RULE_FOLDERS if folders is None else folders
    allowed_long = ALLOWED_LONG_FILES if allowed_long is None else allowed_long
    problems, notes, seen = [], [], set()
    included = included_files(root, INCLUDERS)
    rule_files = folder_files(root, folders)
    for f in rule_files:
        problems += file_problems(root, f, included, allowed_long, notes)
    for f in sorted(allowed_long):
        in_a_checked_folder = any(f.startswith(d + "/") and os.path.isdir(os.path.join(root, d))
                                  for d in folders)
        if in_a_checked_folder and f not in rule_files:
            problems.append(f"{f}: gone: remove it from ALLOWED_LONG_FILES")
    for crate, crate_root in crates:
        mods = module_files(crate_root, root)
        for f in sorted(set(mods.values())):
            problems += file_problems(root, f, included, {}, notes)
        graph, why = edges(mods, root)
        for comp in cycles(graph):
            ring = " <-> ".join(comp)
            problems.append(f"{crate}: files importing each other: {ring}")
        folders, example = folder_graph(mods, graph, why)
        failing, more = [], False
        for comp in cycles(folders):
            found, cut = circles(folders, comp, MAX_CIRCLES_FOUND)
            more = more or cut
            for circle in found:
                text = f"{crate}: folder circle: {describe(circle, example)}"
                through = [(crate, a, b) for a, b in zip(circle, circle[1:] + circle[:1])
                           if (crate, a, b) in allowed]
                if through:
                    seen.update(through)
                    why = "; ".join(f"{a} -> {b}: {allowed[(c, a, b)]}" for c, a, b in through)
                    notes.append(f"{text} [allowed for now: {why}]")
                else:
                    failing.append(text)
        problems += failing[:MAX_CIRCLES_NAMED]
        if len(failing) > MAX_CIRCLES_NAMED or more:
            problems.append(f"{crate}: {len(failing) - MAX_CIRCLES_NAMED}"
                            f"{' or more' if more else ''} folder circles more")
    for crate, a, b in sorted(set(allowed) - seen):
        if any(c == crate for c, _ in crates):
            problems.append(
                f"{crate}: the allowed folder import {a} -> {b} ({allowed[(crate, a, b)]}) is "
                f"on no circle any more: remove it from ALLOWED_FOLDER_IMPORTS")
    return problems, notes


class SelfTest(unittest.TestCase):
    """The checks on small crates written to a temp folder (`--self-test`)."""

    SHELL = [("shell", "shell/src/lib.rs")]

    def tree(self, files):
        """A temp repository holding `files` (path -> text), each opening with its job."""
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        for path, text in files.items():
            full = os.path.join(tmp.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as out:
                out.write(f"//! {path}.\n{text}")
        return tmp.name

    def folders(self, a_uses_b=True, b_uses_a=True, extra=None):
        """Folders `a` and `b`, each importing the other's leaf file if asked: no file
        circle, a folder circle when both are asked."""
        files = {
            "shell/src/lib.rs": "mod a;\nmod b;\nmod c;\n",
            "shell/src/a/mod.rs": "mod x;\nmod y;\n",
            "shell/src/a/x.rs": "use crate::b::z::Z;\n" if a_uses_b else "",
            "shell/src/a/y.rs": "pub struct Y;\n",
            "shell/src/b/mod.rs": "pub mod z;\nmod w;\n",
            "shell/src/b/z.rs": "pub struct Z;\n",
            "shell/src/b/w.rs": "use crate::a::y::Y;\n" if b_uses_a else "",
            "shell/src/c.rs": "",
        }
        files.update(extra or {})
        return self.tree(files)

    def test_a_folder_circle_fails_naming_one_import_each_way(self):
        problems, _ = check(self.folders(), self.SHELL, {})
        self.assertEqual(problems, [
            "shell: folder circle: a -> b (shell/src/a/x.rs uses crate::b::z::Z) "
            "-> a (shell/src/b/w.rs uses crate::a::y::Y)"])

    def test_folders_that_point_one_way_pass(self):
        self.assertEqual(check(self.folders(b_uses_a=False), self.SHELL, {}), ([], []))

    def test_a_circle_around_three_folders_is_named_whole(self):
        root = self.folders(b_uses_a=False, extra={
            "shell/src/b/w.rs": "fn f() { super::super::c::g() }\n",
            "shell/src/c.rs": "use crate::a::y::Y;\npub fn g() {}\n"})
        problems, _ = check(root, self.SHELL, {})
        self.assertEqual(problems, [
            "shell: folder circle: a -> b (shell/src/a/x.rs uses crate::b::z::Z) "
            "-> c (shell/src/b/w.rs uses super::super::c::g) "
            "-> a (shell/src/c.rs uses crate::a::y::Y)"])

    def test_a_circle_through_an_allowed_import_is_said_and_only_it_passes(self):
        allowed = {("shell", "b", "a"): "issue 0"}
        problems, notes = check(self.folders(), self.SHELL, allowed)
        self.assertEqual(problems, [])
        self.assertEqual(len(notes), 1)
        self.assertIn("[allowed for now: b -> a: issue 0]", notes[0])
        root = self.folders(extra={
            "shell/src/a/x.rs": "use crate::b::z::Z;\nuse crate::c::C;\n",
            "shell/src/c.rs": "use crate::a::y::Y;\npub struct C;\n"})
        problems, notes = check(root, self.SHELL, allowed)
        self.assertEqual(problems, [
            "shell: folder circle: a -> c (shell/src/a/x.rs uses crate::c::C) "
            "-> a (shell/src/c.rs uses crate::a::y::Y)"])
        self.assertEqual(len(notes), 1)

    def test_an_allowed_import_on_no_circle_fails(self):
        allowed = {("shell", "b", "a"): "issue 0"}
        problems, _ = check(self.folders(a_uses_b=False), self.SHELL, allowed)
        self.assertEqual(problems, [
            "shell: the allowed folder import b -> a (issue 0) is on no circle any more: "
            "remove it from ALLOWED_FOLDER_IMPORTS"])

    def test_test_files_are_held_to_the_length_and_the_opening_line(self):
        root = self.tree({
            "tests/build.rs": 'include!("src/tools.rs");\n',
            "tests/src/lib.rs": "mod tools;\n",
            "tests/tests/short.rs": "",
            "tests/tests/helpers/mod.rs": "\n" * MAX_LINES,
            "tests/tests/pending.rs": "\n" * MAX_LINES,
        })
        with open(os.path.join(root, "tests/src/tools.rs"), "w", encoding="utf-8") as out:
            out.write("// Included by the build script: no inner doc.\n")
        with open(os.path.join(root, "tests/tests/no_job.rs"), "w", encoding="utf-8") as out:
            out.write("use std::io;\n")
        problems, notes = check(root, [], {}, ["tests/src", "tests/tests"],
                                {"tests/tests/pending.rs": "split pending"})
        self.assertEqual(problems, [
            f"tests/tests/helpers/mod.rs: {MAX_LINES + 1} lines (at most {MAX_LINES})",
            "tests/tests/no_job.rs: does not open with a `//!` line saying its job"])
        self.assertEqual(notes, [
            f"tests/tests/pending.rs: {MAX_LINES + 1} lines [allowed for now: split pending]"])

    def test_an_allowed_long_file_within_the_limit_or_gone_fails(self):
        root = self.tree({"tests/tests/short.rs": ""})
        problems, _ = check(root, [], {}, ["tests/tests"],
                            {"tests/tests/short.rs": "x", "tests/tests/gone.rs": "y"})
        self.assertEqual(problems, [
            "tests/tests/short.rs: 1 lines, within the limit: remove it from ALLOWED_LONG_FILES",
            "tests/tests/gone.rs: gone: remove it from ALLOWED_LONG_FILES"])

    def test_a_file_circle_still_fails(self):
        root = self.folders(b_uses_a=False, extra={"shell/src/b/z.rs": "use crate::a::x;\n"})
        problems, _ = check(root, self.SHELL, {})
        self.assertIn("shell: files importing each other: shell/src/a/x.rs <-> shell/src/b/z.rs",
                      problems)


def main():
    if sys.argv[1:] == ["--self-test"]:
        unittest.main(argv=sys.argv[:1], verbosity=2)
    problems, notes = check()
    for n in notes:
        print(f"check-layout: {n}")
    for p in problems:
        print(f"check-layout: {p}")
    if problems:
        sys.exit(1)
    print("check-layout: every file under 600 lines, each says its job (core, shell, tests), no "
          "import circle between files or folders (core, shell)")


if __name__ == "__main__":
    main()
