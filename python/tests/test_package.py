"""The package's shape: its public names, every example in it collected by
``doctest.testmod(simhash_rs)``, modules that import each other in no circle, and matching
settings resolved once, by the settings contract (the ``simhash`` command's), with nothing
defaulted again in Python."""

import ast
import doctest
import inspect
import json
import os
import pydoc
import re

import pytest

import simhash_rs
from simhash_rs import _native

PACKAGE = os.path.dirname(os.path.abspath(simhash_rs.__file__))
MODULES = sorted(f for f in os.listdir(PACKAGE) if f.endswith(".py"))

#: The public names as they were when ``__init__.py`` was split into modules, with
#: ``decontaminate`` and its result since, and ``audit``: a change here is a change of the API.
PUBLIC = [
    "AddResult",
    "Contamination",
    "CorruptIndexError",
    "DedupResult",
    "Index",
    "IndexLockedError",
    "MAX_PERM",
    "MAX_WINDOW",
    "MinHasher",
    "SimhashIndex",
    "audit",
    "clusters",
    "decontaminate",
    "dedup",
    "fingerprint",
    "fingerprints",
    "hamming",
    "pairs",
]

#: The matching arguments: what the caller gives is passed on, None when not given.
MATCHING = ("method", "jaccard", "lsh_threshold", "num_perm", "k", "blocks", "templates")

TEXTS = [
    "the quick brown fox jumps over the lazy dog by the river bank",
    "the quick brown fox jumps over the lazy dog by the river bank!",
    "an unrelated sentence about the weather in the high mountains",
]


def source(name):
    with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
        return f.read()


def test_public_names_are_unchanged():
    assert simhash_rs.__all__ == PUBLIC
    star = {}
    exec("from simhash_rs import *", star)
    assert sorted(set(star) - {"__builtins__"}) == sorted(PUBLIC)
    # Beyond __all__, the package shows only CHUNK (and __version__); the modules are private.
    assert {n for n in vars(simhash_rs) if not n.startswith("_")} == set(PUBLIC) | {"CHUNK"}
    assert simhash_rs.__version__ == _native.__version__
    assert simhash_rs.CHUNK > 0
    # help() of the package lists every public name; help() of each works.
    package_help = pydoc.render_doc(simhash_rs, renderer=pydoc.plaintext)
    for name in PUBLIC:
        obj = getattr(simhash_rs, name)
        assert name in package_help
        if callable(obj) and obj.__doc__:
            first = obj.__doc__.strip().splitlines()[0].strip()
            assert first in pydoc.render_doc(obj, renderer=pydoc.plaintext), name


def test_testmod_runs_every_example_in_the_package():
    # scripts/check/python_tests.sh runs doctest.testmod(simhash_rs): doctest looks only at
    # objects __init__.py defines itself, so the modules' must be listed for it (__test__).
    written = sum(len(re.findall(r"^\s*>>> ", source(m), re.MULTILINE)) for m in MODULES)
    result = doctest.testmod(simhash_rs)
    assert written > 0 and (result.attempted, result.failed) == (written, 0)


def imports_of(name):
    """The package's modules that module `name` imports (relative imports; not _native)."""
    found = set()
    for node in ast.walk(ast.parse(source(name))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            targets = [node.module] if node.module else [a.name for a in node.names]
            found.update(f"{t}.py" for t in targets if f"{t}.py" in MODULES)
    return found


def test_modules_import_each_other_in_no_circle():
    graph = {m: imports_of(m) for m in MODULES}
    assert all("__init__.py" not in targets for targets in graph.values())
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(module) :] + [module]))
        if module in done:
            return
        path.append(module)
        for target in sorted(graph[module]):
            visit(target)
        path.pop()
        done.add(module)

    for module in MODULES:
        visit(module)
    # __init__.py holds the docstring, the re-exports, __all__ and __test__: nothing defined.
    tree = ast.parse(source("__init__.py"))
    assert not [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def test_matching_arguments_default_to_none():
    # Not given is None, whose default only the contract knows; `method` of pairs, dedup and
    # clusters is the API's own choice, given to the contract as asked.
    calls = [simhash_rs.pairs, simhash_rs.dedup, simhash_rs.clusters, simhash_rs.Index.open,
             simhash_rs.Index.dedup, simhash_rs.MinHasher, simhash_rs.SimhashIndex]
    for call in calls:
        parameters = inspect.signature(call).parameters
        for name in MATCHING:
            if name in parameters and not (name == "method" and call in calls[:3]):
                assert parameters[name].default is None, (call, name)
    for call in calls[:3]:
        assert inspect.signature(call).parameters["method"].default == "minhash"


def test_no_defaults_in_the_python_code():
    """The contract's defaults (and names such as DEFAULT_JACCARD) appear in no code of the
    package: only in its prose."""
    minhash, simhash = _native.resolve_settings(), _native.resolve_settings(method="simhash")
    values = {minhash["jaccard"], minhash["lsh_threshold"], minhash["num_perm"], minhash["templates"]}
    for module in MODULES:
        tree = ast.parse(source(module))
        prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                assert not node.id.startswith("DEFAULT_"), (module, node.id)
            if isinstance(node, ast.Constant) and id(node) not in prose and type(node.value) is not bool:
                assert node.value not in values, (module, node.lineno, node.value)
    assert simhash["k"] not in (None, 0) and simhash["blocks"] is None


def test_nothing_asked_resolves_to_the_contracts_defaults(monkeypatch, cli):
    """With every matching argument left out, what reaches the native side is None and
    what it resolves to is the contract's defaults: those of `simhash explain`."""
    names = ("method", "preset", "window", "jaccard", "lsh_threshold", "num_perm", "k", "blocks", "spill", "templates")
    made = []
    real = _native.Matcher

    def recording(*args, **kwargs):
        matcher = real(*args, **kwargs)
        made.append(({**dict(zip(names, args)), **kwargs}, matcher))
        return matcher

    monkeypatch.setattr(_native, "Matcher", recording)
    simhash_rs.pairs(TEXTS)
    simhash_rs.dedup(TEXTS)
    simhash_rs.clusters(TEXTS)
    simhash_rs.dedup(TEXTS, method="simhash")
    assert len(made) == 4
    for asked, _ in made:
        assert [asked[n] for n in MATCHING[1:]] == [None] * 6, asked
    contract = _native.resolve_settings()
    contract_simhash = _native.resolve_settings(method="simhash")
    assert [m.settings() for _, m in made] == [contract] * 3 + [contract_simhash]
    assert contract == {"method": "minhash", **{k: contract[k] for k in ("jaccard", "lsh_threshold", "num_perm")},
                        "templates": "remove"}

    # The command resolves nothing asked to the same.
    def explained(*flags):
        out = cli("explain", "--json", *flags, "a b c d e", "a b c d f").stdout
        return json.loads(out)["settings"]

    command = explained()
    assert {k: command[k] for k in ("method", "jaccard", "lsh_threshold", "num_perm")} == {
        k: contract[k] for k in ("method", "jaccard", "lsh_threshold", "num_perm")
    }
    command = explained("--method", "simhash")
    assert (command["method"], command["distance"], command["blocks"]) == ("simhash", contract_simhash["k"], "auto")

    # The other calls that take matching settings.
    assert simhash_rs.MinHasher().num_perm == contract["num_perm"]
    assert simhash_rs.SimhashIndex().k == contract_simhash["k"]


def test_a_new_index_takes_the_contracts_defaults(tmp_path):
    contract = _native.resolve_settings()
    settings = simhash_rs.Index.open(tmp_path / "minhash", create=True).settings()
    assert settings["method"] == "minhash"
    assert {k: settings[k] for k in ("jaccard", "lsh_threshold", "num_perm")} == {
        k: contract[k] for k in ("jaccard", "lsh_threshold", "num_perm")
    }
    settings = simhash_rs.Index.open(tmp_path / "simhash", create=True, method="simhash").settings()
    assert (settings["method"], settings["k"]) == ("simhash", _native.resolve_settings(method="simhash")["k"])
    # auto, as `simhash index add` resolves it: simhash for k or a preset that implies it.
    assert simhash_rs.Index.open(tmp_path / "k", create=True, k=2).settings()["method"] == "simhash"
    assert simhash_rs.Index.open(tmp_path / "moz", create=True, preset="moz").settings()["method"] == "simhash"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: simhash_rs.pairs(["a"], method="simhash", k=65), "invalid k: "),
        (lambda p: simhash_rs.pairs(["a"], method="simhash", templates="keep"),
         "jaccard, lsh_threshold, num_perm and templates apply to method='minhash', not simhash"),
        (lambda p: simhash_rs.pairs(["a"], method="lsh"), 'method must be "minhash", "simhash" or "auto", not "lsh"'),
        (lambda p: simhash_rs.Index.open(p / "s", create=True, method="simhash").dedup(["a"], templates="keep"),
         "jaccard, lsh_threshold, num_perm and templates apply to method='minhash', not simhash"),
        (lambda p: (simhash_rs.Index.open(p / "s", create=True, method="simhash"),
                    simhash_rs.Index.open(p / "s", method="minhash")),
         "method='minhash': the index holds simhash sketches"),
        (lambda p: simhash_rs.Index.open(p / "m", create=True, lsh_threshold=-0.5),
         "lsh_threshold must be more than 0 and at most 1, not -0.5"),
        (lambda p: simhash_rs.MinHasher(num_perm=0), "num_perm must be between 1 and"),
        (lambda p: simhash_rs.SimhashIndex(k=3, blocks=3), "invalid blocks and k: "),
    ],
)
def test_refusals_name_the_arguments_not_the_flags(tmp_path, call, message):
    with pytest.raises(ValueError) as raised:
        call(tmp_path)
    assert str(raised.value).startswith(message) and "--" not in str(raised.value)
    assert not (tmp_path / "m").exists()
