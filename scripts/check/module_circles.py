#!/usr/bin/env python3
"""Find module circles: Rust source files of one crate that import each other in a loop.

A module circle is a strongly connected component of two files or more in the file-level
import graph of a crate. It fails the check (exit 1) and is listed with the import edges
that tie it; with none the script prints "no module circles in N files" and exits 0.

    python3 scripts/check/module_circles.py [ROOT]      # ROOT: the workspace, by default this repo
    python3 scripts/check/module_circles.py --upward [ROOT]  # also count edges up to a parent
    python3 scripts/check/module_circles.py --self-test # the built-in checks on tiny crates

What counts as an edge A -> B (A, B files of one crate, A != B): A names an item that B
defines (fn, struct, enum, trait, type, const, static, union, macro_rules!, or B's module
itself, where the path ends at a module), through
  - a `use` declaration (nested trees, `self`, `as`, `super::super::`, globs), or
  - a path in code that starts with `crate::`, `super::`, `self::`, a child module that the
    file declares, or a name that a `use` brought in (`use crate::page; page::Report`).
Paths are followed through re-exports (`pub use child::Thing;`, `pub use self::child::*`) to
the file that defines the item, so a lib.rs or mod.rs that only hands names on is no hub.
Not an edge: a `mod child;` declaration; a `pub use` whose name the file itself never uses;
a path to an item of the same file; paths into other crates (std, the workspace's other
crates); anything in comments, doc comments, strings or char literals. A glob import
(`use super::*`) ties the file to the files that define the names it then uses, or, where
none can be told, to the glob's module file. An edge that only code under `#[cfg(test)]`
makes is marked as such (it counts all the same).

An edge from a file up to the module file that encloses it (a child's `use super::Entry`
into mod.rs, a module's `crate::peak_memory()` into main.rs or lib.rs) is left out of the
loops: a module file and its own submodules are one unit, and a parent that uses its
children while they use it is the ordinary shape of a Rust module. A loop that leaves the
module (mod.rs -> child -> a file elsewhere -> mod.rs) still counts. `--upward` counts
those edges too.

Crates: every package under ROOT (a Cargo.toml with [package]; target/ and hidden folders
skipped): src/lib.rs, src/main.rs, src/bin/*, tests/*, benches/*, examples/*, build.rs and
the targets' `path`s; each is its own crate root (`crate::` means its own tree). Module
files: `a/b.rs` or `a/b/mod.rs`, `#[path = "..."]`, and inline `mod x { ... }` blocks (part
of their file). The scan is lexical (no macro expansion, no type inference), dependency-free
(Python 3.11 standard library) and deterministic.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import tomllib

sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))

# ---------------------------------------------------------------------------------------------
# Lexing: comments, strings and char literals are dropped; what is left is identifiers,
# punctuation (`::` as one token), string literals (kept only for `#[path = "..."]`) and
# other literals. Comments, strings and chars are found first (a regex search for their first
# character), then the code between them is split into tokens by one findall.
_SPECIAL = re.compile(r"""/[/*]|["']""")
_STRING_REST = re.compile(r'(?:[^"\\]|\\.)*"', re.S)
_CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]{1,8}\}|.))'")
_COMMENT_EDGE = re.compile(r"/\*|\*/")
_RAW_IDENT = re.compile(r"(?<![\w#])r#(?=[^\W\d])")
_CODE_TOKEN = re.compile(r"::|\x00\d+|'[^\W\d]\w*|[^\W\d]\w*|\d\w*|\S")

ID, PUNCT, STR, LIT = "i", "p", "s", "l"


def _is_word(c: str) -> bool:
    return c == "_" or c.isalnum()


def _kind(t: str) -> str:
    c = t[0]
    if c == "_" or c.isalpha():
        return ID
    if c == "\x00":
        return STR
    if c.isdigit() or (c == "'" and len(t) > 1):
        return LIT
    return PUNCT


def tokenize(src: str) -> tuple[list[str], list[str]]:
    """The file's tokens (texts) and their kinds; never fails on any input."""
    src = src.replace("\x00", " ")
    n = len(src)
    code: list[str] = []
    strings: list[str] = []
    pos = 0
    search = _SPECIAL.search
    while pos < n:
        m = search(src, pos)
        if m is None:
            code.append(src[pos:])
            break
        start = m.start()
        c = src[start]
        if c == "/":
            code.append(src[pos:start])
            if src[start + 1] == "/":
                end = src.find("\n", start)
                end = n if end < 0 else end
            else:  # block comments nest
                depth, end = 1, n
                for e in _COMMENT_EDGE.finditer(src, start + 2):
                    depth += 1 if e.group() == "/*" else -1
                    if depth == 0:
                        end = e.end()
                        break
                code.append(" ")
        elif c == '"':
            # A prefix: r, br, cr (raw, with any number of #) or b, c.
            j = start
            while j > pos and src[j - 1] == "#":
                j -= 1
            hashes = start - j
            raw = j > pos and src[j - 1] == "r" and not (j - 1 > 0 and _is_word(src[j - 2]))
            if not raw and j > pos + 1 and src[j - 1] == "r" and src[j - 2] in "bc":
                raw = not (j - 2 > 0 and _is_word(src[j - 3]))
                first = j - 2
            else:
                first = j - 1 if raw else start
            if raw:
                close = src.find('"' + "#" * hashes, start + 1)
                end = n if close < 0 else close + 1 + hashes
            else:
                if start > pos and src[start - 1] in "bc" and not (
                    start > 1 and _is_word(src[start - 2])
                ):
                    first = start - 1
                rest = _STRING_REST.match(src, start + 1)
                end = n if rest is None else rest.end()
            code.append(src[pos:first])
            code.append(f" \x00{len(strings)} ")
            strings.append(src[first:end])
        else:  # a char literal (b'x' too), or the quote of a lifetime or label
            ch = _CHAR.match(src, start)
            if ch is None:
                code.append(src[pos : start + 1])
                end = start + 1
            else:
                first = start
                if start > pos and src[start - 1] == "b" and not (
                    start > 1 and _is_word(src[start - 2])
                ):
                    first = start - 1
                code.append(src[pos:first])
                code.append(" 0 ")
                end = ch.end()
        pos = end
    text = "".join(code)
    if "r#" in text:
        text = _RAW_IDENT.sub("", text)
    texts = _CODE_TOKEN.findall(text)
    cache: dict[str, str] = {}
    kinds = [cache.get(t) or cache.setdefault(t, _kind(t)) for t in texts]
    if strings:
        k = 0
        for i, kind in enumerate(kinds):
            if kind is STR:
                texts[i] = strings[k] if k < len(strings) else texts[i]
                k += 1
    return texts, kinds


def _unquote(lit: str) -> str:
    m = re.match(r'^[bc]?r(#*)"(.*)"\1$', lit, re.S)
    if m:
        return m.group(2)
    m = re.match(r'^[bc]?"(.*)"$', lit, re.S)
    return m.group(1).replace('\\"', '"').replace("\\\\", "\\") if m else lit


# ---------------------------------------------------------------------------------------------
# Scanning one file: its module scopes (the file, and its inline `mod x { ... }` blocks), with
# their definitions, `mod` declarations, `use` bindings and the paths used in code. This does
# not depend on the crate, so a file that two crates include is scanned once.

KEYWORDS = frozenset(
    "as async await break const continue dyn else enum extern false fn for if impl in let "
    "loop match mod move mut pub ref return static struct trait true type unsafe use where "
    "while abstract become box do final macro override priv typeof unsized virtual yield "
    "try gen Self".split()
)
# A single-segment name right after one of these is a binding or a declaration, not a use.
NOT_A_USE_AFTER = frozenset(
    ". let mut ref for fn struct enum trait type mod const static union macro_rules".split()
)
ITEM_DEF = frozenset("fn struct enum trait type".split())


class Use:
    __slots__ = ("segs", "name", "glob", "pub", "test")

    def __init__(self, segs, name, glob, pub, test):
        self.segs = segs  # tuple of path segments; '::' first for a global path
        self.name = name  # the bound name (None for `as _` and globs)
        self.glob = glob
        self.pub = pub
        self.test = test


class Scope:
    """One module's body inside a file: the file's own, or an inline `mod x { ... }`."""

    __slots__ = ("rel", "test", "defs", "decls", "inline", "uses", "paths")

    def __init__(self, rel, test):
        self.rel = rel  # names of the inline modules from the file's module down to here
        self.test = test  # the whole scope is under #[cfg(test)]
        self.defs: dict[str, bool] = {}  # name -> visible outside the module (any `pub`)
        self.decls: list[tuple[str, str | None, bool]] = []  # `mod x;`: name, #[path], test
        self.inline: list[str] = []  # `mod x { ... }`
        self.uses: list[Use] = []
        self.paths: list[tuple[tuple[str, ...], bool]] = []  # paths in code, test-only


def _is_cfg_test(attr: list[str]) -> bool:
    if not attr or attr[0] != "cfg" or "test" not in attr:
        return False
    return "not" not in attr and "any" not in attr


_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
_STRUCTURAL = frozenset("#([{)]};,")


def scan(texts: list[str], kinds: list[str]) -> list[Scope]:
    n = len(texts)
    # Sentinels: texts[n..n+3] and texts[-1] read as "" (no bounds checks below).
    texts = texts + ["", "", "", ""]
    kinds = kinds + [LIT, LIT, LIT, LIT]
    root = Scope((), False)
    scopes = [root]
    stack: list[tuple[Scope, int]] = [(root, 0)]  # scope, brace depth of its body
    scope, base = root, 0
    depth = 0
    test_item: int | None = None  # depth of the #[cfg(test)] item being read
    pending_scope: str | None = None  # `mod x` seen, its `{` comes next
    pending_path: str | None = None  # #[path = "..."] for the next `mod x;`
    i = 0
    while i < n:
        t = texts[i]
        k = kinds[i]
        if k is PUNCT:
            if t not in _STRUCTURAL:
                i += 1
                continue
            if t == "#":
                j = i + 1
                inner = texts[j] == "!"
                if inner:
                    j += 1
                if texts[j] == "[":
                    end, level = j, 0
                    while end < n:
                        if kinds[end] is PUNCT:
                            if texts[end] == "[":
                                level += 1
                            elif texts[end] == "]":
                                level -= 1
                                if level == 0:
                                    break
                        end += 1
                    attr = texts[j + 1 : end]
                    if _is_cfg_test(attr):
                        if inner:
                            scope.test = True
                        elif test_item is None:
                            test_item = depth
                    if len(attr) >= 3 and attr[0] == "path" and attr[1] == "=":
                        if kinds[j + 3] is STR:
                            pending_path = _unquote(attr[2])
                    i = end + 1
                    continue
            elif t in _OPEN:
                depth += 1
                if t == "{":
                    if pending_scope is not None:
                        test = scope.test or test_item is not None
                        child = Scope(scope.rel + (pending_scope,), test)
                        scopes.append(child)
                        stack.append((child, depth))
                        scope, base = child, depth
                        pending_scope = None
                    pending_path = None
            elif t in _CLOSE:
                depth -= 1
                if t == "}":
                    if len(stack) > 1 and depth < base:
                        stack.pop()
                        scope, base = stack[-1]
                    pending_scope = None
                    pending_path = None
                if test_item is not None and (
                    depth < test_item or (depth == test_item and t == "}")
                ):
                    test_item = None
            elif t == ";" or t == ",":
                if test_item is not None and depth == test_item and (t == ";" or depth > base):
                    test_item = None
                if t == ";":
                    pending_scope = None
                    pending_path = None
            i += 1
            continue
        if k is not ID:
            i += 1
            continue
        # An identifier.
        prev = texts[i - 1]
        if t == "use" and texts[i + 1] != "<" and prev != "." and prev != "::":
            i = _parse_use(texts, kinds, i, n, scope, scope.test or test_item is not None)
            continue
        if depth == base:  # at item level
            nxt = texts[i + 1]
            nxt_id = kinds[i + 1] is ID
            if t == "mod" and nxt_id:
                after = texts[i + 2]
                if after == "{":
                    scope.inline.append(nxt)
                    scope.defs[nxt] = _is_pub(texts, i)
                    pending_scope = nxt
                    i += 2
                    continue
                if after == ";":
                    scope.decls.append((nxt, pending_path, scope.test or test_item is not None))
                    scope.defs[nxt] = _is_pub(texts, i)
                    pending_path = None
                    i += 2
                    continue
            name = None
            if t in ITEM_DEF and nxt_id:
                name = nxt
            elif t == "union" and nxt_id and texts[i + 2] in ("{", "<", "where"):
                name = nxt
            elif t == "static" and nxt_id:
                name = texts[i + 2] if nxt == "mut" else nxt
            elif (
                t == "const"
                and nxt_id
                and nxt not in ("fn", "unsafe", "async", "extern")
                and texts[i + 2] == ":"
            ):
                name = nxt
            elif t == "macro_rules" and nxt == "!" and kinds[i + 2] is ID:
                name = texts[i + 2]
            elif t == "extern" and nxt == "crate" and kinds[i + 2] is ID:
                bound = texts[i + 4] if texts[i + 3] == "as" else texts[i + 2]
                test = scope.test or test_item is not None
                scope.uses.append(Use(("::", texts[i + 2]), bound, False, False, test))
                i += 3
                continue
            if name is not None:
                if name != "_" and name:
                    scope.defs.setdefault(name, _is_pub(texts, i))
                i += 1
                continue
        # A path in code: IDENT (:: IDENT)*, not after `.` (a field or method) nor `::`.
        if prev == "::" or prev == "." or (t in KEYWORDS and t != "Self"):
            i += 1
            continue
        j = i + 1
        if texts[j] == "::" and kinds[j + 1] is ID:
            segs = [t]
            while texts[j] == "::" and kinds[j + 1] is ID:
                segs.append(texts[j + 1])
                j += 2
            scope.paths.append((tuple(segs), scope.test or test_item is not None))
        elif (
            prev not in NOT_A_USE_AFTER
            and texts[j] != ":"
            and not (texts[j] == "=" and texts[j + 1] not in ("=", ">"))
        ):
            scope.paths.append(((t,), scope.test or test_item is not None))
        i = j
    return scopes


def _is_pub(texts: list[str], i: int) -> bool:
    """Whether the item whose keyword is at i has a visibility (`pub`, `pub(crate)`...)."""
    j = i - 1
    while j >= 0 and texts[j] in ("unsafe", "async", "const", "extern", "default", "safe"):
        j -= 1
    if j >= 0 and texts[j] == ")":
        level = 0
        while j >= 0:
            if texts[j] == ")":
                level += 1
            elif texts[j] == "(":
                level -= 1
                if level == 0:
                    break
            j -= 1
        j -= 1
    return j >= 0 and texts[j] == "pub"


def _parse_use(texts, kinds, i, n, scope: Scope, test: bool) -> int:
    """Reads the use declaration at i into scope.uses; returns the index of its `;`."""
    pub = _is_pub(texts, i)

    def tok(j):
        return texts[j] if j < n else ""

    def tree(j: int, prefix: list[str]) -> int:
        segs = list(prefix)
        if tok(j) == "::" and not segs:
            segs.append("::")
            j += 1
        while j < n:
            t = texts[j]
            if t == "$" and tok(j + 1) == "crate":
                j += 1
                t = "crate"
            if kinds[j] == ID and t not in ("as",):
                segs.append(t)
                j += 1
                if tok(j) == "::":
                    j += 1
                    continue
                break
            if t == "*":
                scope.uses.append(Use(tuple(segs), None, True, pub, test))
                return j + 1
            if t == "{":
                j += 1
                while j < n and texts[j] not in ("}", ";"):
                    before = j
                    j = tree(j, segs)
                    if tok(j) == ",":
                        j += 1
                    elif j == before:
                        j += 1
                return j + 1 if tok(j) == "}" else j
            return j  # not a use tree (a macro's fragment, say)
        alias = None
        if tok(j) == "as" and j + 1 < n:
            alias = texts[j + 1]
            j += 2
        if segs and segs[-1] == "self":
            segs.pop()
        if segs and segs != ["::"]:
            name = alias if alias is not None else segs[-1]
            scope.uses.append(Use(tuple(segs), None if name == "_" else name, False, pub, test))
        return j

    j = tree(i + 1, [])
    while j < n and texts[j] != ";":
        if texts[j] in ("{", "}") and kinds[j] == PUNCT:
            return j  # malformed: let the caller keep its brace depth
        j += 1
    return j


# ---------------------------------------------------------------------------------------------
# Crates and their module trees.


class Module:
    __slots__ = ("path", "file", "scope", "test", "children")

    def __init__(self, path, file, scope, test):
        self.path = path  # tuple of module names from the crate root
        self.file = file
        self.scope = scope
        self.test = test
        self.children: dict[str, tuple[str, ...]] = {}


class Workspace:
    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._scans: dict[str, list[Scope]] = {}

    def rel(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def scan_file(self, path: str) -> list[Scope]:
        got = self._scans.get(path)
        if got is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    src = f.read()
            except OSError:
                src = ""
            got = scan(*tokenize(src))
            self._scans[path] = got
        return got

    def packages(self) -> list[str]:
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(
                d for d in dirnames if not d.startswith(".") and d not in ("target", "node_modules")
            )
            if "Cargo.toml" in filenames:
                found.append(dirpath)
        return sorted(found)

    def crate_roots(self, pkg: str) -> list[str]:
        try:
            with open(os.path.join(pkg, "Cargo.toml"), "rb") as f:
                manifest = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            manifest = {}
        package = manifest.get("package")
        if manifest and not isinstance(package, dict):
            return []  # a virtual workspace manifest
        roots: list[str] = []

        def add(p: str) -> None:
            p = os.path.normpath(os.path.join(pkg, p))
            if os.path.isfile(p) and p not in roots:
                roots.append(p)

        for name in ("src/lib.rs", "src/main.rs", "build.rs"):
            add(name)
        build = package.get("build") if isinstance(package, dict) else None
        if isinstance(build, str):
            add(build)
        lib = manifest.get("lib")
        if isinstance(lib, dict) and isinstance(lib.get("path"), str):
            add(lib["path"])
        for folder in ("src/bin", "tests", "benches", "examples"):
            d = os.path.join(pkg, folder)
            if not os.path.isdir(d):
                continue
            for entry in sorted(os.listdir(d)):
                if entry.endswith(".rs"):
                    add(os.path.join(folder, entry))
                elif os.path.isfile(os.path.join(d, entry, "main.rs")):
                    add(os.path.join(folder, entry, "main.rs"))
        for kind in ("bin", "test", "bench", "example"):
            targets = manifest.get(kind, [])
            if isinstance(targets, list):
                for target in targets:
                    if isinstance(target, dict) and isinstance(target.get("path"), str):
                        add(target["path"])
        return roots

    def crate(self, root_file: str) -> dict[tuple[str, ...], Module]:
        """The crate's modules by path, from its root file down through `mod` declarations."""
        modules: dict[tuple[str, ...], Module] = {}
        seen_files: set[str] = set()
        work = [((), root_file, os.path.dirname(root_file), False)]
        while work:
            path, file, child_dir, test = work.pop()
            if file in seen_files:
                continue
            seen_files.add(file)
            for scope in self.scan_file(file):
                mpath = path + scope.rel
                mtest = test or scope.test
                mod = Module(mpath, file, scope, mtest)
                modules[mpath] = mod
                scope_dir = os.path.join(child_dir, *scope.rel)
                for name in scope.inline:
                    mod.children[name] = mpath + (name,)
                for name, attr_path, decl_test in scope.decls:
                    target = None
                    if attr_path is not None:
                        base = os.path.dirname(file) if not scope.rel else scope_dir
                        cand = os.path.normpath(os.path.join(base, attr_path))
                        if os.path.isfile(cand):
                            target = (cand, os.path.dirname(cand))
                    else:
                        for cand in (
                            os.path.join(scope_dir, name + ".rs"),
                            os.path.join(scope_dir, name, "mod.rs"),
                        ):
                            if os.path.isfile(cand):
                                target = (cand, os.path.join(scope_dir, name))
                                break
                    if target is None:
                        continue  # a file that is not there (generated, say)
                    mod.children[name] = mpath + (name,)
                    work.append((mpath + (name,), target[0], target[1], mtest or decl_test))
        return modules


# ---------------------------------------------------------------------------------------------
# Name resolution within one crate, and the edges.

EXTERNAL = ("x",)  # a name that leads out of the crate (std, another crate)


class Resolver:
    def __init__(self, modules: dict[tuple[str, ...], Module]):
        self.modules = modules
        self._cache: dict = {}
        self._active: set = set()
        self.named: dict[tuple[str, ...], dict[str, list[Use]]] = {}
        for p, m in modules.items():
            d: dict[str, list[Use]] = {}
            for u in m.scope.uses:
                if not u.glob and u.name is not None:
                    d.setdefault(u.name, []).append(u)
            self.named[p] = d

    def lookup(self, mpath, name, all_visible=True):
        """What `name` means in module mpath: ('i', file, name), ('m', path), EXTERNAL or None."""
        key = (mpath, name, all_visible)
        if key in self._cache:
            return self._cache[key]
        if key in self._active:
            return None
        self._active.add(key)
        try:
            result = self._lookup(mpath, name, all_visible)
        finally:
            self._active.discard(key)
        self._cache[key] = result
        return result

    def _lookup(self, mpath, name, all_visible):
        mod = self.modules.get(mpath)
        if mod is None:
            return None
        if name in mod.children:
            return ("m", mod.children[name])
        defs = mod.scope.defs
        if name in defs and (all_visible or defs[name]):
            return ("i", mod.file, name)
        bound = False
        for u in self.named[mpath].get(name, ()):
            if all_visible or u.pub:
                bound = True
                r = self.resolve(mpath, u.segs)
                if r is not None and r is not EXTERNAL:
                    return r
        if bound:  # brought in from another crate (or from what cannot be told)
            return EXTERNAL
        for u in mod.scope.uses:
            if u.glob and (all_visible or u.pub):
                target = self.resolve(mpath, u.segs)
                if target is not None and target[0] == "m":
                    r = self.lookup(target[1], name, target[1] == mpath[: len(target[1])])
                    if r is not None and r is not EXTERNAL:
                        return r
        return None

    def resolve(self, mpath, segs):
        """What a path means in module mpath (see lookup); a path that runs on past what is
        known ends at the last module it reached."""
        if not segs:
            return None
        first = segs[0]
        if first == "::" or first == "Self":
            return EXTERNAL if first == "::" else None
        if first in ("crate", "$crate"):
            cur = ("m", ())
        elif first == "self":
            cur = ("m", mpath)
        elif first == "super":
            cur = ("m", mpath[:-1]) if mpath else None
        else:
            cur = self.lookup(mpath, first)
        for s in segs[1:]:
            if cur is None or cur[0] != "m":
                break
            if s == "super":
                cur = ("m", cur[1][:-1]) if cur[1] else None
                continue
            if s == "self":
                continue
            nxt = self.lookup(cur[1], s, cur[1] == mpath[: len(cur[1])])
            if nxt is None:
                break  # not known (made by a macro, say): the module itself
            cur = nxt
        if cur is not None and cur[0] == "m" and cur[1] not in self.modules:
            return None
        return cur

    def target(self, entity):
        """(file, name) of an entity, or None."""
        if entity is None or entity[0] == "x":
            return None
        if entity[0] == "i":
            return entity[1], entity[2]
        mod = self.modules[entity[1]]
        return mod.file, (entity[1][-1] if entity[1] else "crate")


def crate_edges(modules, add_edge) -> None:
    res = Resolver(modules)
    # Each file's own module path (that of its outermost scope).
    file_path = {m.file: m.path for m in modules.values() if not m.scope.rel}
    for mpath, mod in sorted(modules.items()):
        scope, file = mod.scope, mod.file
        used_first = {segs[0] for segs, _ in scope.paths}
        own = file_path.get(file, mpath)

        def edge(entity, test, *, items_only=False):
            if items_only and (entity is None or entity[0] != "i"):
                return False
            got = res.target(entity)
            if got is None:
                return False
            if got[0] != file:
                other = file_path.get(got[0])
                if other is not None and len(other) < len(own) and own[: len(other)] == other:
                    family = "up"  # to a module file that encloses this one
                elif other is not None and len(own) < len(other) and other[: len(own)] == own:
                    family = "down"  # to a file of one of this module's own submodules
                else:
                    family = ""
                add_edge(file, got[0], got[1], test or mod.test, family)
            return True

        for u in scope.uses:
            if u.glob:
                target = res.resolve(mpath, u.segs)
                if target is None or target[0] == "x":
                    continue
                if target[0] == "i":  # `use Enum::*`: the enum's file
                    if not u.pub:
                        edge(target, u.test)
                    continue
                vis = target[1] == mpath[: len(target[1])]
                hit = any(res.lookup(target[1], name, vis) is not None for name in used_first)
                if not hit and not u.pub:
                    edge(target, u.test)  # nothing it brings in is seen used: its module
                continue
            target = res.resolve(mpath, u.segs)
            if target is None or target[0] == "x":
                continue
            if target[0] == "i":
                if not u.pub or u.name in used_first:
                    edge(target, u.test)
            elif not u.pub and (u.name is None or u.name not in used_first):
                edge(target, u.test)  # a module brought in but not seen used in a path
        for segs, test in scope.paths:
            if len(segs) == 1:
                edge(res.lookup(mpath, segs[0]), test, items_only=True)
            else:
                edge(res.resolve(mpath, segs), test)


def find_circles(root: str, upward: bool = False):
    """(circles, edges, number of files). A circle is a sorted list of files; edges maps
    (a, b) to {name: test_only}, the edges that count (see --upward)."""
    ws = Workspace(root)
    edges: dict[tuple[str, str], dict[str, bool]] = {}
    files: set[str] = set()

    family: dict[tuple[str, str], str] = {}

    def add_edge(a, b, name, test, fam):
        names = edges.setdefault((a, b), {})
        names[name] = names.get(name, True) and test
        family[(a, b)] = fam if family.get((a, b), fam) == fam else ""

    for pkg in ws.packages():
        for root_file in ws.crate_roots(pkg):
            modules = ws.crate(root_file)
            files.update(m.file for m in modules.values())
            crate_edges(modules, add_edge)
    graph: dict[str, list[str]] = {}
    counted = {e for e in edges if upward or family[e] != "up"}
    for a, b in sorted(counted):
        graph.setdefault(a, []).append(b)
    circles = [sorted(c) for c in strongly_connected(graph) if len(c) > 1]
    circles.sort()
    rel_edges = {(ws.rel(a), ws.rel(b)): edges[(a, b)] for a, b in counted}
    return [[ws.rel(f) for f in c] for c in circles], rel_edges, len(files)


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative, in a fixed order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            pushed = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    pushed = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if pushed:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)
    return out


def report(circles, edges, nfiles) -> list[str]:
    if not circles:
        return [f"no module circles in {nfiles} files"]
    lines = []
    for k, circle in enumerate(circles, 1):
        lines.append(f"module circle {k}: {len(circle)} files: {', '.join(circle)}")
        members = set(circle)
        for (a, b), names in sorted(edges.items()):
            if a in members and b in members:
                note = " [only from #[cfg(test)] code]" if all(names.values()) else ""
                lines.append(f"  {a} -> {b}: {', '.join(sorted(names))}{note}")
    lines.append(
        f"{len(circles)} module circle{'s' if len(circles) != 1 else ''} in {nfiles} files: "
        "break each by moving what both sides need into a file that imports neither"
    )
    return lines


# ---------------------------------------------------------------------------------------------
# Self-test: tiny synthetic crates.

_CARGO = '[package]\nname = "t"\nversion = "0.1.0"\nedition = "2024"\n'

# Each case: a title, its files (under a package with that Cargo.toml), the circles it must
# give, edges (a, b, name) that must be counted, edges that must not; "upward": True runs it
# as --upward does; "test_only": edges whose names must all be marked test-only.
SELF_TESTS = [
    {
        "title": "a two-file circle through `use super::x`",
        "files": {
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use super::b::B;\npub struct A(B);\n",
            "src/b.rs": "use super::a;\npub struct B;\nfn f(_: a::A) {}\n",
        },
        "circles": [["src/a.rs", "src/b.rs"]],
        "edges": [("src/a.rs", "src/b.rs", "B"), ("src/b.rs", "src/a.rs", "A")],
    },
    {
        "title": "a circle through `pub use` re-exports in lib.rs, seen at the defining files",
        "files": {
            "src/lib.rs": "mod clusters;\nmod star;\npub use clusters::Clusters;\n"
            "pub use star::star;\n",
            "src/clusters.rs": "pub struct Clusters;\nimpl Clusters {\n"
            "    pub fn s(&self) { crate::star(self) }\n}\n",
            "src/star.rs": "use crate::Clusters;\npub fn star(_: &Clusters) {}\n",
        },
        "circles": [["src/clusters.rs", "src/star.rs"]],
        "edges": [
            ("src/star.rs", "src/clusters.rs", "Clusters"),
            ("src/clusters.rs", "src/star.rs", "star"),
        ],
        "no_edges": [("src/star.rs", "src/lib.rs"), ("src/lib.rs", "src/clusters.rs")],
    },
    {
        "title": "uses in doc comments, comments, strings and char literals do not count",
        "files": {
            "src/lib.rs": "//! ```\n//! use crate::b::B;\n//! ```\nmod a;\nmod b;\n",
            "src/a.rs": "//! use crate::b::B;\n/// crate::b::B\n/* use crate::b::B; /* nested */ "
            "crate::b::B */\npub struct A;\n"
            'const S: &str = "crate::b::B \\" crate::b::B";\n'
            'const R: &str = r#"use crate::b::B; "crate::b::B" "#;\n'
            "const C: char = '\"';\nconst Q: u8 = b'\\'';\n"
            "fn f<'a>(x: &'a str) -> &'a str { x }\n",
            "src/b.rs": "use crate::a::A;\npub struct B(A);\n",
        },
        "circles": [],
        "edges": [("src/b.rs", "src/a.rs", "A")],
        "no_edges": [("src/a.rs", "src/b.rs"), ("src/lib.rs", "src/b.rs")],
    },
    {
        "title": "a nested use tree",
        "files": {
            "src/lib.rs": "mod a;\nmod b;\nmod m;\n",
            "src/a.rs": "pub struct X;\n",
            "src/b.rs": "pub mod c;\npub mod d;\n",
            "src/b/c.rs": "pub struct C;\npub fn f() -> crate::m::M { todo!() }\n",
            "src/b/d.rs": "use crate::m::M;\npub struct D(Option<Box<M>>);\n",
            "src/m.rs": "use crate::{a::X, b::{self, c, d as e}};\n"
            "pub struct M(X, c::C, e::D);\nfn f(_: b::c::C) {}\n",
        },
        "circles": [["src/b/c.rs", "src/b/d.rs", "src/m.rs"]],
        "edges": [("src/m.rs", "src/a.rs", "X"), ("src/m.rs", "src/b/d.rs", "D")],
        "no_edges": [("src/m.rs", "src/b.rs")],
    },
    {
        "title": "a parent's `mod child;` is no edge, nor a local named like the child",
        "files": {
            "src/lib.rs": "mod parent;\n",
            "src/parent.rs": "mod child;\npub struct P;\n"
            "fn f() { let child = 1; let _ = child; }\n",
            "src/parent/child.rs": "use super::P;\nfn g(_: P) {}\n",
        },
        "upward": True,
        "circles": [],
        "edges": [("src/parent/child.rs", "src/parent.rs", "P")],
        "no_edges": [("src/parent.rs", "src/parent/child.rs")],
    },
    {
        "title": "a module file and its own submodule: no circle unless --upward",
        "files": {
            "src/lib.rs": "mod rewrite;\n",
            "src/rewrite/mod.rs": "mod copy;\nuse copy::Copy;\npub struct Entry;\n"
            "fn f(_: Copy) {}\n",
            "src/rewrite/copy.rs": "use super::Entry;\npub struct Copy(Entry);\n",
        },
        "circles": [],
        "edges": [("src/rewrite/mod.rs", "src/rewrite/copy.rs", "Copy")],
        "no_edges": [("src/rewrite/copy.rs", "src/rewrite/mod.rs")],
    },
    {
        "title": "the same with --upward",
        "files": {
            "src/lib.rs": "mod rewrite;\n",
            "src/rewrite/mod.rs": "mod copy;\nuse copy::Copy;\npub struct Entry;\n"
            "fn f(_: Copy) {}\n",
            "src/rewrite/copy.rs": "use super::Entry;\npub struct Copy(Entry);\n",
        },
        "upward": True,
        "circles": [["src/rewrite/copy.rs", "src/rewrite/mod.rs"]],
        "edges": [("src/rewrite/copy.rs", "src/rewrite/mod.rs", "Entry")],
    },
    {
        "title": "test-only edges, `use super::*`, `#[path]`, a name from another crate",
        "files": {
            "src/lib.rs": "mod a;\nmod b;\nmod settings;\n"
            "#[path = \"other/c_impl.rs\"]\npub(crate) mod c;\n",
            "src/settings.rs": "pub use serde::Serialize;\n",
            "src/a.rs": "pub fn one() -> u8 { crate::c::three() }\n#[cfg(test)]\nmod tests {\n"
            "    use super::*;\n    #[test]\n    fn t() { crate::b::two(one()); }\n}\n",
            "src/b.rs": "pub fn two(x: u8) -> u8 { x + crate::a::one() }\n"
            "fn s<T: crate::settings::Serialize>() {}\n",
            "src/other/c_impl.rs": "pub fn three() -> u8 { 3 }\n",
        },
        "circles": [["src/a.rs", "src/b.rs"]],
        "edges": [("src/b.rs", "src/a.rs", "one"), ("src/a.rs", "src/other/c_impl.rs", "three")],
        "no_edges": [("src/b.rs", "src/settings.rs")],
        "test_only": [("src/a.rs", "src/b.rs")],
    },
]


def self_test() -> int:
    failures = 0
    with tempfile.TemporaryDirectory(prefix="module_circles_") as tmp:
        for k, case in enumerate(SELF_TESTS):
            root = os.path.join(tmp, f"case{k}")
            for path, text in {"Cargo.toml": _CARGO, **case["files"]}.items():
                full = os.path.join(root, path)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w", encoding="utf-8") as f:
                    f.write(text)
            circles, edges, _ = find_circles(root, upward=case.get("upward", False))
            problems = []
            if circles != case["circles"]:
                problems.append(f"circles {circles}, want {case['circles']}")
            for a, b, name in case.get("edges", []):
                if name not in edges.get((a, b), {}):
                    problems.append(f"no edge {a} -> {b}: {name}")
            for a, b in case.get("no_edges", []):
                if (a, b) in edges:
                    problems.append(f"an edge {a} -> {b}: {', '.join(edges[(a, b)])}")
            for a, b in case.get("test_only", []):
                if not edges.get((a, b)) or not all(edges[(a, b)].values()):
                    problems.append(f"{a} -> {b} is not test-only: {edges.get((a, b))}")
            status = "ok" if not problems else "FAILED: " + "; ".join(problems)
            print(f"self-test {k + 1}: {case['title']}: {status}")
            failures += bool(problems)
    print(f"self-test: {len(SELF_TESTS) - failures} of {len(SELF_TESTS)} passed")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    args = argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__)
        return 0
    if "--self-test" in args:
        return self_test()
    upward = "--upward" in args
    rest = [a for a in args if a != "--upward"]
    if len(rest) > 1 or (rest and rest[0].startswith("-")):
        print("usage: module_circles.py [--upward] [ROOT] | --self-test", file=sys.stderr)
        return 2
    root = rest[0] if rest else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    if not os.path.isdir(root):
        print(f"module_circles.py: {root} is not a folder", file=sys.stderr)
        return 2
    circles, edges, nfiles = find_circles(root, upward=upward)
    print("\n".join(report(circles, edges, nfiles)))
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
