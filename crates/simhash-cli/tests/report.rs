//! `--report FILE.html`: the page's data (sampled pairs, clusters) is deterministic at any
//! thread count, every sampled removal comes with its kept record, the run's outputs are
//! the same with and without it, hostile texts stay text, its size is bounded, and
//! Parquet inputs give their texts and group columns.

use std::collections::{BTreeMap, BTreeSet};

use crate::util::{Dir, corpus};

/// The page's embedded JSON.
fn page_data(page: &str) -> serde_json::Value {
    let start = page.find(r#"<script type="application/json" id="data">"#).expect("data element");
    let rest = &page[start..];
    let open = rest.find('>').expect("open") + 1;
    let close = rest.find("</script>").expect("close");
    serde_json::from_str(&rest[open..close]).expect("page JSON")
}

/// The sampled pairs as (first id, second id, score).
fn pairs(data: &serde_json::Value) -> Vec<(String, String, String)> {
    let docs = data["docs"].as_array().expect("docs");
    let id = |i: &serde_json::Value| {
        docs[i.as_u64().expect("index") as usize]["id"].as_str().expect("id").to_string()
    };
    data["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| (id(&p[0]), id(&p[1]), p[2].as_str().expect("score").to_string()))
        .collect()
}

#[test]
fn dedup_report_same_at_any_thread_count_and_outputs_unchanged() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(150, 7));
    dir.run(&[
        "dedup",
        "in.jsonl",
        "-o",
        "plain.jsonl",
        "--removed",
        "plain-removed.jsonl",
        "-j1",
        "-q",
    ])
    .code(0);
    for j in ["-j1", "-j2"] {
        let (out, removed, page) =
            (format!("out{j}.jsonl"), format!("rem{j}.jsonl"), format!("page{j}.html"));
        dir.run(&[
            "dedup",
            "in.jsonl",
            "-o",
            &out,
            "--removed",
            &removed,
            "--report",
            &page,
            j,
            "-q",
        ])
        .code(0);
        assert_eq!(dir.read(&out), dir.read("plain.jsonl"), "{j}: output changed by --report");
        assert_eq!(dir.read(&removed), dir.read("plain-removed.jsonl"), "{j}: --removed changed");
    }
    let one = page_data(&dir.read("page-j1.html"));
    let two = page_data(&dir.read("page-j2.html"));
    assert_eq!(one, two, "the page's data differs between -j1 and -j2");

    // The removals on the page are removals of the run, with their kept records and the
    // score --removed prints.
    let mut want: BTreeSet<(String, String, String)> = BTreeSet::new();
    for line in dir.read("plain-removed.jsonl").lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("removed line");
        want.insert((
            r["id"].as_str().expect("id").into(),
            r["duplicate_of"].as_str().expect("kept").into(),
            format!("{:.4}", r["jaccard"].as_f64().expect("jaccard")),
        ));
    }
    assert!(want.len() > 20, "the corpus should have removals");
    let got: BTreeSet<_> = pairs(&one).into_iter().collect();
    assert!(got.is_subset(&want), "a sampled pair that is not a removal with its kept record");
    // Each sampled pair says what it is, as --removed does.
    let removed = dir.read("plain-removed.jsonl");
    for p in one["pairs"].as_array().expect("pairs") {
        let relation = p[3].as_str().expect("a relation");
        let id = one["docs"][p[0].as_u64().expect("index") as usize]["id"].as_str().expect("id");
        let line = format!("\"id\":\"{id}\",");
        let found = removed.lines().find(|l| l.contains(&line)).expect("the removal");
        assert!(found.ends_with(&format!("\"relation\":\"{relation}\"}}")), "{found}");
    }
    // Per similarity bucket: every removal, or the cap's worth of them.
    let bucket = |score: &str| {
        let code = (score.parse::<f64>().expect("score") * 10_000.0).round() as u64;
        (code * 20 / 10_000).min(19)
    };
    let per_bucket = |set: &BTreeSet<(String, String, String)>| {
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for (_, _, score) in set {
            *counts.entry(bucket(score)).or_default() += 1;
        }
        counts
    };
    let capped: BTreeMap<u64, usize> =
        per_bucket(&want).into_iter().map(|(b, n)| (b, n.min(30))).collect();
    assert_eq!(per_bucket(&got), capped);
    assert!(got.len() < want.len(), "the cap should apply in one bucket here");
    // Their texts were read back.
    for doc in one["docs"].as_array().expect("docs") {
        assert!(doc["text"].as_str().is_some_and(|t| !t.is_empty()), "{doc}");
    }
    assert!(!one["clusters"].as_array().expect("clusters").is_empty());
}

#[test]
fn sample_is_capped_per_bucket_nearest_threshold_first() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(3000, 11));
    dir.run(&[
        "dedup",
        "in.jsonl",
        "-o",
        "out.jsonl",
        "--removed",
        "rem.jsonl",
        "--report",
        "p.html",
        "-q",
    ])
    .code(0);
    let removed = dir.read("rem.jsonl").lines().count();
    let data = page_data(&dir.read("p.html"));
    let pairs = pairs(&data);
    let mut per_bucket: BTreeMap<u64, usize> = BTreeMap::new();
    for (_, _, score) in &pairs {
        let code = (score.parse::<f64>().expect("score") * 10_000.0).round() as u64;
        *per_bucket.entry((code * 20 / 10_000).min(19)).or_default() += 1;
    }
    assert!(removed > pairs.len(), "{removed} removals, {} sampled", pairs.len());
    assert!(per_bucket.values().all(|&n| n <= 30), "{per_bucket:?}");
    let scores: Vec<f64> = pairs.iter().map(|p| p.2.parse().expect("score")).collect();
    assert!(scores.windows(2).all(|w| w[0] <= w[1]), "nearest the threshold first");
    // Every sampled pair is a removal of the run, with its kept record.
    let all: BTreeSet<(String, String)> = dir
        .read("rem.jsonl")
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).expect("line");
            (r["id"].as_str().expect("id").into(), r["duplicate_of"].as_str().expect("kept").into())
        })
        .collect();
    for (a, b, _) in &pairs {
        assert!(all.contains(&(a.clone(), b.clone())), "{a} {b}");
    }
}

#[test]
fn hostile_texts_stay_text_and_long_texts_are_cut() {
    let dir = Dir::new();
    let hostile = "</script><img src=x onerror=alert(1)><!-- <script>alert(2)</script> \u{2028}\u{2029} &amp;";
    let long = "word ".repeat(5000);
    let mut input = String::new();
    for (i, text) in [hostile, hostile, &long, &long].iter().enumerate() {
        input += &serde_json::json!({"id": format!("h{i}"), "text": format!("{text} shared tail words here")}).to_string();
        input.push('\n');
    }
    dir.write("in.jsonl", &input);
    dir.run(&["dedup", "in.jsonl", "-o", "out.jsonl", "--report", "p.html", "-q"]).code(0);
    let page = dir.read("p.html");
    // The two script elements' own closings, and no other.
    assert_eq!(page.matches("</script>").count(), 2, "{page}");
    assert!(!page.contains("<img"));
    assert!(!page.contains("<!--"));
    assert!(!page.contains('\u{2028}') && !page.contains('\u{2029}'));
    assert!(page.contains("default-src 'none'"));
    let data = page_data(&page);
    let docs = data["docs"].as_array().expect("docs");
    assert!(docs.iter().any(|d| d["text"].as_str().is_some_and(|t| t.starts_with(hostile))));
    let cut = docs.iter().find(|d| d["id"] == "h2" || d["id"] == "h3").expect("long doc");
    assert_eq!(cut["text"].as_str().expect("text").chars().count(), 1500);
    assert_eq!(cut["chars"], 25_000 + " shared tail words here".len());
}

#[test]
fn size_is_bounded() {
    // 400 families of near-copies of 8 000-character texts: the sample caps the page.
    let dir = Dir::new();
    let mut input = String::new();
    let mut rng = crate::util::Rng(99);
    for f in 0..400 {
        let words: Vec<String> = (0..1400).map(|_| format!("w{}", rng.below(5000))).collect();
        for c in 0..3 {
            let mut copy = words.clone();
            copy[(c * 7) % 1400] = format!("edit{c}");
            input +=
                &serde_json::json!({"id": format!("f{f}c{c}"), "text": copy.join(" ")}).to_string();
            input.push('\n');
        }
    }
    dir.write("in.jsonl", &input);
    dir.run(&["dedup", "in.jsonl", "-o", "out.jsonl", "--report", "p.html", "-q"]).code(0);
    let size = std::fs::metadata(dir.path("p.html")).expect("page").len();
    assert!(input.len() > 20 << 20 || size < 3 << 20, "page of {size} bytes");
    assert!(size < input.len() as u64 / 4, "page of {size} bytes for {} of input", input.len());
}

#[test]
fn pairs_and_cluster_reports() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(100, 3));
    dir.run(&["pairs", "in.jsonl", "-o", "pairs.tsv", "--report", "pairs.html", "-q"]).code(0);
    dir.run(&["pairs", "in.jsonl", "-o", "plain.tsv", "-q"]).code(0);
    assert_eq!(dir.read("pairs.tsv"), dir.read("plain.tsv"));
    let data = page_data(&dir.read("pairs.html"));
    assert_eq!(data["command"], "pairs");
    let lines = dir.read("pairs.tsv").lines().count();
    assert_eq!(pairs(&data).len(), lines.min(pairs(&data).len()));
    assert!(!pairs(&data).is_empty());

    dir.run(&[
        "cluster", "in.jsonl", "--method", "simhash", "-o", "c.tsv", "--report", "c.html", "-q",
    ])
    .code(0);
    let data = page_data(&dir.read("c.html"));
    assert_eq!(data["command"], "cluster");
    assert_eq!(data["measure"], "distance");
    assert!(!data["clusters"].as_array().expect("clusters").is_empty());
}

#[test]
fn report_is_checked_with_the_other_outputs() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(20, 5));
    let r = dir.run(&["dedup", "in.jsonl", "-o", "out.jsonl", "--report", "in.jsonl"]);
    r.code(2);
    assert!(r.stderr.contains("--report"), "{}", r.stderr);
    let r = dir.run(&["dedup", "in.jsonl", "-o", "same.html", "--report", "same.html"]);
    r.code(2);
    assert!(dir.read("in.jsonl").starts_with("{\"id\""));
    // --report-group needs --report.
    dir.run(&["dedup", "in.jsonl", "-o", "out.jsonl", "--report-group", "lang"]).code(2);
    // A run that fails after the page was begun writes no page (nor any other output).
    dir.write("bad.jsonl", format!("{}not json\n", corpus(20, 5)));
    dir.run(&["dedup", "bad.jsonl", "-o", "o.jsonl", "--report", "p.html", "--strict"]).code(2);
    assert!(!dir.path("p.html").exists() && !dir.path("o.jsonl").exists());
    dir.run(&["dedup", "bad.jsonl", "-o", "o.jsonl", "--report", "p.html", "-q"]).code(1);
    assert!(
        dir.read("p.html").contains("<td>invalid_json: 1</td>"),
        "the skipped record is in the figures"
    );
}

#[test]
fn report_groups_count_removals_per_value() {
    let dir = Dir::new();
    let mut input = String::new();
    for (i, line) in corpus(60, 9).lines().enumerate() {
        let mut r: serde_json::Value = serde_json::from_str(line).expect("line");
        r["meta"] = serde_json::json!({"source": if i % 2 == 0 { "even" } else { "odd" }});
        input += &r.to_string();
        input.push('\n');
    }
    dir.write("in.jsonl", &input);
    dir.run(&[
        "dedup",
        "in.jsonl",
        "-o",
        "out.jsonl",
        "--removed",
        "rem.jsonl",
        "--report",
        "p.html",
        "--report-group",
        "meta.source",
        "-q",
    ])
    .code(0);
    let page = dir.read("p.html");
    let removed: BTreeSet<String> = dir
        .read("rem.jsonl")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("line")["id"]
                .as_str()
                .expect("id")
                .to_string()
        })
        .collect();
    let even_removed =
        removed.iter().filter(|id| id[1..].parse::<usize>().expect("n") % 2 == 0).count();
    let total = input.lines().count();
    let row = format!("<tr><td>even</td><td>{}</td><td>{even_removed}</td>", total.div_ceil(2));
    assert!(page.contains(&row), "no row {row}");
    // A field no record has (a typo) is warned of, on stderr and on the page; the run and
    // its outputs are as before.
    let run = dir.run(&[
        "dedup",
        "in.jsonl",
        "-o",
        "out2.jsonl",
        "--report",
        "p2.html",
        "--report-group",
        "meta.sorce",
    ]);
    run.code(0);
    let warning = "--report-group meta.sorce: no record has a string field \"meta.sorce\"";
    assert!(run.stderr.contains(&format!("simhash: warning: {warning}")), "{}", run.stderr);
    assert!(dir.read("p2.html").contains("no record has a string field"), "no note on the page");
    assert_eq!(dir.read("out2.jsonl"), dir.read("out.jsonl"));
    // Records that have it are not warned of.
    assert!(
        !dir.run(&[
            "dedup",
            "in.jsonl",
            "-o",
            "out3.jsonl",
            "--report",
            "p3.html",
            "--report-group",
            "meta.source"
        ])
        .stderr
        .contains("warning")
    );
}

#[test]
fn parquet_inputs_give_texts_and_groups() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, RecordBatch, StringArray};

    let dir = Dir::new();
    let jsonl = corpus(40, 13);
    let rows: Vec<serde_json::Value> =
        jsonl.lines().map(|l| serde_json::from_str(l).expect("line")).collect();
    let column = |f: &dyn Fn(usize, &serde_json::Value) -> String| -> ArrayRef {
        Arc::new(StringArray::from(
            rows.iter().enumerate().map(|(i, r)| f(i, r)).collect::<Vec<_>>(),
        ))
    };
    let batch = RecordBatch::try_from_iter([
        ("id", column(&|_, r| r["id"].as_str().expect("id").to_string())),
        ("text", column(&|_, r| r["text"].as_str().expect("text").to_string())),
        ("source", column(&|i, _| if i % 3 == 0 { "three" } else { "other" }.to_string())),
    ])
    .expect("batch");
    let file = std::fs::File::create(dir.path("in.parquet")).expect("create");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(7))
        .build();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    let args = ["-o", "out", "--removed", "rem.jsonl", "--report-group", "source", "-q"];
    dir.run(&[&["dedup", "in.parquet", "--report", "pq.html"][..], &args].concat()).code(0);
    let page = dir.read("pq.html");
    let data = page_data(&page);
    let text_of: BTreeMap<&str, &str> = rows
        .iter()
        .map(|r| (r["id"].as_str().expect("id"), r["text"].as_str().expect("text")))
        .collect();
    let docs = data["docs"].as_array().expect("docs");
    assert!(!docs.is_empty());
    for doc in docs {
        let id = doc["id"].as_str().expect("id");
        let want: String = text_of[id].chars().take(1500).collect();
        assert_eq!(doc["text"].as_str(), Some(want.as_str()), "{id}");
    }
    let removed = dir.read("rem.jsonl").lines().count();
    let three_removed = dir
        .read("rem.jsonl")
        .lines()
        .filter(|l| {
            let r: serde_json::Value = serde_json::from_str(l).expect("line");
            r["id"].as_str().expect("id")[1..].parse::<usize>().expect("n") % 3 == 0
        })
        .count();
    let row =
        format!("<tr><td>three</td><td>{}</td><td>{three_removed}</td>", rows.len().div_ceil(3));
    assert!(page.contains(&row), "no row {row}");
    let row = format!(
        "<td>{}</td><td>{}</td>",
        rows.len() - rows.len().div_ceil(3),
        removed - three_removed
    );
    assert!(page.contains(&row), "no row {row}");
}

/// The `<caption>`-less count rows of the page's group table: (label, records, flagged).
fn group_rows(page: &str, field: &str) -> Vec<(String, u64, u64)> {
    let start = page.find(&format!("<caption>per value of {field}</caption>")).expect("table");
    let table = &page[start..start + page[start..].find("</table>").expect("end")];
    table
        .split("<tr><td>")
        .skip(1)
        .map(|row| {
            let cells: Vec<&str> = row.split("</td><td>").collect();
            let n = |i: usize| cells[i].split('<').next().expect("cell").parse().expect("count");
            (cells[0].to_string(), n(1), n(2))
        })
        .collect()
}

/// F4: ids and group values are cut on the page (a 100,000-character id, a group value of
/// as many), so its size does not grow with them; F5: every record is in exactly one row of
/// the group table: a literal "(none)" value is not a missing one.
#[test]
fn long_ids_and_group_values_are_cut_and_every_record_counted_once() {
    let dir = Dir::new();
    let long = "x".repeat(100_000);
    let mut input = String::new();
    for (i, line) in corpus(30, 21).lines().enumerate() {
        let mut r: serde_json::Value = serde_json::from_str(line).expect("line");
        if i < 2 {
            r["id"] = serde_json::json!(format!("{long}{i}"));
        }
        match i % 4 {
            0 => r["g"] = serde_json::json!("(none)"),
            1 => {}
            2 => r["g"] = serde_json::json!(format!("{long}{}", i % 8)),
            _ => r["g"] = serde_json::json!(7),
        }
        input += &r.to_string();
        input.push('\n');
    }
    // Both long-id records' texts are copies, so they are among the sampled pairs.
    let text = "one two three four five six seven eight nine ten eleven twelve thirteen";
    for i in 0..2 {
        let id = format!("{long}{i}");
        input += &serde_json::json!({"id": format!("{id}-copy"), "text": text}).to_string();
        input += "\n";
    }
    let records = input.lines().count() as u64;
    dir.write("in.jsonl", &input);
    let args = ["dedup", "in.jsonl", "-o", "out.jsonl", "--report", "p.html"];
    dir.run(&[&args[..], &["--report-group", "g", "-q"]].concat()).code(0);
    let page = dir.read("p.html");
    assert!(page.len() < 300_000, "the page holds the long strings: {} bytes", page.len());
    let data = page_data(&page);
    let ids: Vec<&str> = data["docs"]
        .as_array()
        .expect("docs")
        .iter()
        .map(|d| d["id"].as_str().expect("id"))
        .collect();
    assert!(
        ids.iter().any(|id| id.ends_with("… (100006 characters)") && id.len() < 300),
        "{:?}",
        ids.iter().map(|id| &id[id.len().saturating_sub(40)..]).collect::<Vec<_>>()
    );
    let rows = group_rows(&page, "g");
    let count = |label: &str| rows.iter().find(|r| r.0 == label).map(|r| r.1);
    let total: u64 = rows.iter().map(|r| r.1).sum();
    assert_eq!(total, records, "{rows:?}");
    // The literal value is its own row, quoted; records without a string value are (none).
    let (literal, missing) = (input.matches(r#""g":"(none)""#).count() as u64, count("(none)"));
    assert_eq!(count("&quot;(none)&quot;"), Some(literal), "{rows:?}");
    assert!(missing.is_some_and(|n| n > 0), "{rows:?}");
    // The two long values are two rows, each cut and named by its length.
    let long_rows: Vec<_> = rows.iter().filter(|r| r.0.contains("(100001 characters, #")).collect();
    assert_eq!(long_rows.len(), 2, "{rows:?}");
    assert!(long_rows.iter().all(|r| r.0.len() < 300));
}

/// F5: a Parquet group column that is not a string column counts every record of the file
/// under (none), rather than dropping the file's records from the table.
#[test]
fn parquet_group_column_of_numbers_counts_every_record() {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};

    let dir = Dir::new();
    let rows: Vec<serde_json::Value> =
        corpus(40, 17).lines().map(|l| serde_json::from_str(l).expect("line")).collect();
    let strings = |f: &dyn Fn(&serde_json::Value) -> String| -> ArrayRef {
        Arc::new(StringArray::from(rows.iter().map(f).collect::<Vec<_>>()))
    };
    let batch = RecordBatch::try_from_iter([
        ("id", strings(&|r| r["id"].as_str().expect("id").to_string())),
        ("text", strings(&|r| r["text"].as_str().expect("text").to_string())),
        (
            "n",
            Arc::new(Int64Array::from_iter_values(
                (0..rows.len()).map(|i| [0i64, 1, 2, 3, 4][i % 5]),
            )) as ArrayRef,
        ),
    ])
    .expect("batch");
    let file = std::fs::File::create(dir.path("in.parquet")).expect("create");
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).expect("w");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
    let args = ["dedup", "in.parquet", "-o", "out", "--report", "p.html", "--report-group", "n"];
    dir.run(&[&args[..], &["-q"]].concat()).code(0);
    let page = dir.read("p.html");
    let rows_of = group_rows(&page, "n");
    assert_eq!(rows_of.len(), 1, "{rows_of:?}");
    assert_eq!((rows_of[0].0.as_str(), rows_of[0].1), ("(none)", rows.len() as u64));
}

/// F5: with --against, the removals that matched the index are counted in the similarity
/// chart and the relations (said to be counted, not shown), so the chart's total is every
/// removal.
#[test]
fn index_removals_are_counted_in_the_charts() {
    let dir = Dir::new();
    let all = corpus(60, 23);
    let lines: Vec<&str> = all.lines().collect();
    let (first, second) = lines.split_at(lines.len() / 2);
    dir.write("a.jsonl", first.join("\n") + "\n");
    dir.write("b.jsonl", second.join("\n") + "\n");
    dir.run(&["index", "add", "ix", "a.jsonl", "-q"]).code(0);
    let args = ["dedup", "b.jsonl", "--against", "ix", "-o", "out", "--removed", "rem.jsonl"];
    dir.run(&[&args[..], &["--report", "p.html", "-q"]].concat()).code(0);
    let removed = dir.read("rem.jsonl").lines().count();
    let page = dir.read("p.html");
    let caption = format!("removals by Jaccard similarity ({removed} in all, ");
    assert!(page.contains(&caption), "no {caption:?} in the page");
    assert!(page.contains("of them matches of the index)"));
    assert!(page.contains("that matched the index are counted in the charts, not shown"));
}

/// `--report-sample N`: N pairs per bucket; the page's buckets count every removal (what
/// `simhash audit` weights by) and the pairs it holds of each; the labelling order is every
/// pair once, the buckets in turn; the run id is the same for a rerun and at any thread
/// count, and differs with the settings.
#[test]
fn report_sample_buckets_order_and_run_id() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(3000, 11));
    let run = |page: &str, extra: &[&str]| {
        let args = ["dedup", "in.jsonl", "-o", "out.jsonl", "--removed", "rem.jsonl", "-q"];
        dir.run(&[&args[..], &["--report", page], extra].concat()).code(0);
        page_data(&dir.read(page))
    };
    let data = run("p.html", &["--report-sample", "3"]);
    let removed = dir.read("rem.jsonl").lines().count() as u64;
    let buckets = data["buckets"].as_array().expect("buckets");
    let total: u64 = buckets.iter().map(|b| b["total"].as_u64().expect("total")).sum();
    assert_eq!(total, removed);
    let pairs = data["pairs"].as_array().expect("pairs");
    for b in buckets {
        let n = pairs.iter().filter(|p| p[4] == b["bucket"]).count() as u64;
        assert_eq!(b["sampled"].as_u64(), Some(n), "{b}");
        assert_eq!(n, b["total"].as_u64().expect("total").min(3), "{b}");
        assert_eq!(b["unsampled"], 0);
    }
    let mut order: Vec<u64> =
        data["order"].as_array().expect("order").iter().map(|i| i.as_u64().expect("i")).collect();
    // The buckets in turn: the first pairs of the order are of distinct buckets.
    let first: BTreeSet<u64> = order
        .iter()
        .take(buckets.len())
        .map(|&i| pairs[i as usize][4].as_u64().expect("bucket"))
        .collect();
    assert_eq!(first.len(), buckets.len());
    order.sort_unstable();
    assert_eq!(order, (0..pairs.len() as u64).collect::<Vec<_>>());
    let id = data["run_id"].as_str().expect("run id");
    assert_eq!(id.len(), 16);
    assert_eq!(run("again.html", &["--report-sample", "3", "-j1"])["run_id"], id);
    assert_ne!(run("other.html", &["--report-sample", "4"])["run_id"], id);
    assert_ne!(run("other.html", &["--report-sample", "3", "--jaccard", "0.5"])["run_id"], id);
    // The default is 30.
    let default = run("default.html", &[]);
    assert!(default["buckets"].as_array().expect("b").iter().any(|b| b["sampled"] == 30));
}

/// `simhash audit`: labels exported from a page give shares per bucket (text and JSON);
/// labels of another run are refused (exit 2, both run ids named); a line that is not a
/// label is reported as FILE:LINE and counted (exit 1); no labels at all is an estimate of
/// nothing, not an error.
#[test]
fn audit_reads_the_labels_of_its_page_only() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(400, 5));
    let args = ["dedup", "in.jsonl", "-o", "out.jsonl", "--report", "p.html", "-q"];
    dir.run(&args).code(0);
    let data = page_data(&dir.read("p.html"));
    let run_id = data["run_id"].as_str().expect("run id").to_string();
    let all = pairs(&data);
    let order = data["order"].as_array().expect("order");
    let mut labels = String::new();
    for (n, i) in order.iter().take(6).enumerate() {
        let (a, b, _) = &all[i.as_u64().expect("index") as usize];
        let label = ["DUP", "TEMPLATE", "DISTINCT"][n % 3];
        labels += &serde_json::json!({"run_id": run_id, "id_a": a, "id_b": b, "label": label})
            .to_string();
        labels.push('\n');
    }
    dir.write("labels.jsonl", &labels);
    let text = dir.run(&["audit", "p.html", "labels.jsonl"]);
    text.code(0);
    assert!(text.stdout.contains(&format!("run {run_id}): 6 labels")), "{}", text.stdout);
    assert!(text.stdout.contains("documents lost as distinct: "), "{}", text.stdout);
    let json = dir.run(&["audit", "p.html", "labels.jsonl", "--json"]);
    json.code(0);
    let estimate: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(estimate["labels_read"], 6);
    assert_eq!(estimate["weighted"]["labelled"], 6);
    let removed: u64 = data["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| b["total"].as_u64().expect("total"))
        .sum();
    assert_eq!(estimate["weighted"]["total"], removed);

    // Another run's labels (the same pairs under another id).
    dir.write("other.jsonl", labels.replace(&run_id, "0123456789abcdef"));
    let refused = dir.run(&["audit", "p.html", "other.jsonl"]);
    refused.code(2);
    assert!(
        refused.stderr.contains(&run_id) && refused.stderr.contains("0123456789abcdef"),
        "{}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty());

    // Bad lines: reported, counted, left out.
    dir.write("bad.jsonl", format!("{labels}not json\n{}", labels.replace("DUP", "MAYBE")));
    let bad = dir.run(&["audit", "p.html", "bad.jsonl", "--json"]);
    bad.code(1);
    assert!(bad.stderr.contains("simhash: bad.jsonl:7: not a label"), "{}", bad.stderr);
    let estimate: serde_json::Value = serde_json::from_str(&bad.stdout).expect("json");
    assert_eq!(estimate["labels_read"], 6);
    // 1 not JSON, 2 unknown labels, 4 labelled already.
    assert_eq!(estimate["bad_lines"].as_array().expect("bad").len(), 7);

    // No labels: every bucket says so; nothing is divided by zero.
    dir.write("none.jsonl", "");
    let none = dir.run(&["audit", "p.html", "none.jsonl"]);
    none.code(0);
    assert!(none.stdout.contains("no labels: each share is unknown, 0–100"), "{}", none.stdout);
    assert!(!none.stdout.contains("NaN"), "{}", none.stdout);

    // Not a page.
    dir.run(&["audit", "in.jsonl", "labels.jsonl"]).code(2);
}

/// Ids longer than the page shows (cut at 200 characters, alike for the first 200) are kept
/// whole in the page's data for labels: two pairs labelled by the ids the page exports are
/// two labels, not one label given twice.
#[test]
fn long_ids_label_their_own_pairs() {
    let dir = Dir::new();
    let long = |n: usize| format!("https://example.com/{}{n:06}", "p".repeat(190));
    let text =
        |t: &str| format!("{t} {}", "shared words of a long enough text to match ".repeat(4));
    let mut input = String::new();
    for (n, t) in [(1, "alpha"), (2, "alpha"), (3, "beta gamma"), (4, "beta gamma")] {
        input += &serde_json::json!({"id": long(n), "text": text(t)}).to_string();
        input.push('\n');
    }
    dir.write("in.jsonl", &input);
    dir.run(&["dedup", "in.jsonl", "-o", "out.jsonl", "--report", "p.html", "-q"]).code(0);
    let data = page_data(&dir.read("p.html"));
    let docs = data["docs"].as_array().expect("docs");
    let full = |i: &serde_json::Value| {
        let doc = &docs[i.as_u64().expect("index") as usize];
        assert!(doc["id"].as_str().expect("id").contains("characters)"), "{doc}");
        doc["full"].as_str().expect("the whole id").to_string()
    };
    let run_id = data["run_id"].as_str().expect("run id");
    let mut labels = String::new();
    for p in data["pairs"].as_array().expect("pairs") {
        let (a, b) = (full(&p[0]), full(&p[1]));
        assert!(a.len() > 200 && b.len() > 200);
        labels += &serde_json::json!({"run_id": run_id, "id_a": a, "id_b": b, "label": "DUP"})
            .to_string();
        labels.push('\n');
    }
    let pairs = labels.lines().count();
    assert!(pairs >= 2, "{pairs} pairs sampled");
    dir.write("labels.jsonl", &labels);
    let json = dir.run(&["audit", "p.html", "labels.jsonl", "--json"]);
    json.code(0);
    let estimate: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(estimate["labels_read"], pairs, "{}", json.stderr);
}
