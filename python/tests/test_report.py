"""`DedupResult.report(path)` writes the page `simhash dedup --report` writes: on the shared
dev set, a Python run and the command's run on the same texts give pages whose data (the
sampled pairs, the buckets' counts, the labelling order, the clusters, the texts shown) is
the same but for what names the run's input."""

import json
import os

import pytest

import simhash_rs


def page_data(path):
    text = open(path, encoding="utf-8").read()
    start = text.index('<script type="application/json" id="data">')
    return json.loads(text[text.index(">", start) + 1 : text.index("</script>", start)])


@pytest.mark.parametrize(
    "flags, kwargs",
    [
        ([], {}),
        (["--method", "simhash", "--keep", "longest"], {"method": "simhash", "keep": "longest"}),
    ],
)
def test_report_equals_the_clis(cli, devset, tmp_path, flags, kwargs):
    path, ids, texts = devset
    cli_page = tmp_path / "cli.html"
    kept = tmp_path / "kept.jsonl"
    cli("dedup", path, "-q", "-o", kept, "--report", cli_page, "--report-sample", "8", *flags)
    py_page = tmp_path / "py.html"
    result = simhash_rs.dedup(texts, ids, **kwargs)
    result.report(py_page, sample=8)
    expected, got = page_data(cli_page), page_data(py_page)
    # What legitimately differs: the run id hashes the run's figures too, whose input is
    # named (a file, or texts from Python) and counted (the file's bytes, or the texts').
    assert expected.pop("run_id") != got.pop("run_id")
    # Each shown record's input: the file as the command was given it, or the texts.
    assert {d.pop("shard") for d in expected["docs"]} == {str(path)}
    assert {d.pop("shard") for d in got["docs"]} == {f"{len(texts)} texts from Python"}
    assert got == expected
    # A test that can fail: 8 pairs in each of several buckets, with their texts.
    assert len(got["buckets"]) >= 4 and len(got["pairs"]) >= 8 * 4
    assert all(d["text"] for d in got["docs"])
    assert sum(b["total"] for b in got["buckets"]) == len(result.removed)


def test_report_of_an_iterator_needs_the_texts_again(devset, tmp_path):
    _, ids, texts = devset
    texts, ids = texts[:3000], ids[:3000]
    from_list = tmp_path / "list.html"
    simhash_rs.dedup(texts, ids).report(from_list, sample=5)
    result = simhash_rs.dedup(iter(texts), ids)
    page = tmp_path / "iter.html"
    with pytest.raises(ValueError, match=r"iterator.*report\(path, texts=\.\.\.\)"):
        result.report(page)
    assert not page.exists()
    result.report(page, texts=texts, sample=5)
    # The same run: the same id and the same data.
    assert page_data(page) == page_data(from_list)
    # Other texts than the run read (or fewer) are refused.
    with pytest.raises(ValueError, match=r"texts\[\d+\] is not the text dedup read"):
        result.report(page, texts=texts[::-1])
    with pytest.raises(ValueError, match="2999 texts for a run of 3000"):
        result.report(page, texts=texts[1:])
    with pytest.raises(ValueError, match="not an iterator"):
        result.report(page, texts=iter(texts))
    with pytest.raises(ValueError, match="sample"):
        result.report(page, texts=texts, sample=0)


def test_report_is_written_whole_or_not_at_all(tmp_path):
    texts = ["the quick brown fox jumps over the lazy dog by the river %d" % (i % 7) for i in range(50)]
    result = simhash_rs.dedup(texts)
    page = tmp_path / "page.html"
    page.write_text("an earlier page", encoding="utf-8")
    result.report(page)
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert os.listdir(tmp_path) == ["page.html"], "no temporary file is left"
    # Twice to the same path in one process: each call is a run of its own.
    result.report(str(page))
    with pytest.raises(OSError, match="missing"):
        result.report(tmp_path / "missing" / "page.html")
    assert os.listdir(tmp_path) == ["page.html"]
    # A result made by hand has no run to show.
    bare = simhash_rs.DedupResult(result.keep, result.duplicate_of, result.similarity, result.method)
    with pytest.raises(TypeError, match="simhash_rs.dedup"):
        bare.report(page)


def test_report_of_arrow_texts_can_be_audited(tmp_path):
    pa = pytest.importorskip("pyarrow")
    texts = [f"record {i % 40}: the quick brown fox jumps over the lazy dog by the river" for i in range(200)]
    result = simhash_rs.dedup(pa.array(texts), method="simhash")
    page = tmp_path / "page.html"
    result.report(page)
    data = page_data(page)
    assert data["command"] == "dedup" and data["measure"] == "distance"
    assert {d["text"] for d in data["docs"]} <= set(texts)
    # Labels given on the Python run's page are audited as the command's are.
    labels = tmp_path / "labels.jsonl"
    with open(labels, "w", encoding="utf-8") as f:
        for a, b, *_ in data["pairs"]:
            ids = data["docs"][a]["id"], data["docs"][b]["id"]
            f.write(json.dumps({"run_id": data["run_id"], "id_a": ids[0], "id_b": ids[1], "label": "DUP"}) + "\n")
    estimate = simhash_rs.audit(page, labels)
    assert estimate["run_id"] == data["run_id"]
    assert estimate["labels_read"] == len(data["pairs"]) > 0


def test_report_refuses_ids_that_repeat(tmp_path):
    """Ids are labels to dedup and may repeat; the page's labels (and `simhash audit`) name
    each pair by its two ids, so its report refuses them, as ints and strs alike (1, "1")."""
    texts = ["the quick brown fox jumps over the lazy dog by the river %d" % (i % 2) for i in range(4)]
    page = tmp_path / "page.html"
    for ids in (["x", "y", "x", "y"], [1, "a", "1", "b"]):
        result = simhash_rs.dedup(texts, ids=ids)
        with pytest.raises(ValueError, match="texts 0 and 2 both have the id"):
            result.report(page)
        assert not page.exists()
    simhash_rs.dedup(texts, ids=["a", "b", "c", "d"]).report(page)
    assert page.exists()


def group_table(path, name):
    text = open(path, encoding="utf-8").read()
    start = text.index(f"<caption>per value of {name}</caption>")
    return text[start : text.index("</table>", start)]


def test_report_groups_equal_the_clis(cli, devset, tmp_path):
    path, ids, texts = devset
    ids, texts = ids[:4000], texts[:4000]
    # A field with two values, missing from every seventh record.
    langs = [None if i % 7 == 0 else ("en" if len(t) % 3 else "fr") for i, t in enumerate(texts)]
    corpus = tmp_path / "corpus.jsonl"
    with open(corpus, "w", encoding="utf-8") as f:
        for i, t, lang in zip(ids, texts, langs):
            record = {"id": i, "text": t} if lang is None else {"id": i, "text": t, "lang": lang}
            f.write(json.dumps(record) + "\n")
    cli_page = tmp_path / "cli.html"
    cli("dedup", corpus, "-q", "-o", tmp_path / "kept.jsonl", "--report", cli_page, "--report-group", "lang")
    result = simhash_rs.dedup(texts, ids)
    py_page = tmp_path / "py.html"
    result.report(py_page, group=langs, group_name="lang")
    table = group_table(py_page, "lang")
    assert table == group_table(cli_page, "lang")
    assert "<td>(none)</td>" in table and "<td>fr</td>" in table
    assert page_data(py_page)["pairs"] == page_data(cli_page)["pairs"]
    with pytest.raises(ValueError, match="3999 group values for a run of 4000"):
        result.report(py_page, group=langs[1:])
    with pytest.raises(TypeError, match=r"group\[0\] is int"):
        result.report(py_page, group=[1] * len(texts))
