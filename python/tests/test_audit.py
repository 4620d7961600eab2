"""`simhash_rs.audit` gives the estimate `simhash audit --json` prints, on the same files:
a page of a `simhash dedup --report` run on the shared dev set, and labels for its pairs."""

import json

import pytest

import simhash_rs


@pytest.fixture(scope="module")
def page(cli, devset, tmp_path_factory):
    path, _, _ = devset
    out = tmp_path_factory.mktemp("audit")
    report = out / "report.html"
    cli("dedup", path, "-o", out / "kept.jsonl", "--report", report, "--report-sample", "8", "-q")
    text = report.read_text(encoding="utf-8")
    start = text.index('<script type="application/json" id="data">')
    data = json.loads(text[text.index(">", start) + 1 : text.index("</script>", start)])
    return report, data


def write_labels(path, data, run_id, every=1):
    """Labels for every `every`-th pair of the labelling order, cycling through the four."""
    docs, pairs = data["docs"], data["pairs"]
    names = ["DUP", "TEMPLATE", "DISTINCT", "UNSURE", "DUP"]
    with open(path, "w", encoding="utf-8") as f:
        for n, i in enumerate(data["order"][::every]):
            a, b = docs[pairs[i][0]]["id"], docs[pairs[i][1]]["id"]
            f.write(json.dumps({"run_id": run_id, "id_a": a, "id_b": b, "label": names[n % 5]}) + "\n")


def test_audit_equals_the_cli(cli, page, tmp_path):
    report, data = page
    labels = tmp_path / "labels.jsonl"
    write_labels(labels, data, data["run_id"], every=2)
    expected = json.loads(cli("audit", report, labels, "--json").stdout)
    got = simhash_rs.audit(report, labels)
    # The same numbers: the report's and labels' names are given alike.
    assert got == expected
    assert got["labels_read"] == len(data["order"][::2]) > 10
    assert got["run_id"] == data["run_id"]
    # Every bucket with labels has its Wilson interval around its share.
    for bucket in got["buckets"]:
        for share in bucket["shares"]:
            if share["share"] is None:
                assert (share["low"], share["high"]) == (0.0, 1.0)
            else:
                assert share["low"] <= share["share"] <= share["high"]
    lost = got["lost_as_distinct"]
    assert lost["low"] <= lost["estimate"] <= lost["high"] <= lost["of"]


def test_audit_refuses_another_runs_labels(page, tmp_path):
    report, data = page
    labels = tmp_path / "other.jsonl"
    write_labels(labels, data, "0123456789abcdef")
    with pytest.raises(ValueError, match=f"0123456789abcdef.*{data['run_id']}"):
        simhash_rs.audit(str(report), str(labels))
    with pytest.raises(FileNotFoundError):
        simhash_rs.audit(str(tmp_path / "missing.html"), str(labels))
    with pytest.raises(FileNotFoundError):
        simhash_rs.audit(str(report), str(tmp_path / "missing.jsonl"))
    # Not a page: an OSError still, not a missing file.
    not_a_page = tmp_path / "not-a-page.html"
    not_a_page.write_text("<html></html>", encoding="utf-8")
    with pytest.raises(OSError) as refused:
        simhash_rs.audit(str(not_a_page), str(labels))
    assert not isinstance(refused.value, FileNotFoundError)
