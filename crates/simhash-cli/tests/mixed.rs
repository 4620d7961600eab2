//! `dedup DIR --output-dir OUT` over a directory that mixes JSONL (plain, `.gz`, `.zst`)
//! and Parquet shards: one dedup across all of them, each output in its input's format.

use std::collections::HashSet;
use std::io::Write;

use parquet::basic::Compression;

use crate::parquet::{batch, column_strings, read_back, records, write_parquet};
use crate::util::{Dir, corpus};

/// The records of `lines` (JSONL lines) whose ids are in `kept`, byte for byte.
fn kept_lines(lines: &[&str], kept: &HashSet<String>) -> String {
    let mut out = String::new();
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if kept.contains(v["id"].as_str().unwrap()) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn gzip(text: &str) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> String {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(bytes), &mut text).unwrap();
    text
}

/// Writes the records of `lines` in four shards under `dir/name`: `a.jsonl`,
/// `b.jsonl.gz`, `c.jsonl.zst` and `d.parquet` (the last `parquet` records); returns the
/// lines of each.
fn mixed_dir<'a>(dir: &Dir, name: &str, lines: &[&'a str], parquet: usize) -> Vec<Vec<&'a str>> {
    std::fs::create_dir_all(dir.path(name)).unwrap();
    let rest = lines.len() - parquet;
    let cuts = [0, rest / 3, 2 * rest / 3, rest, lines.len()];
    let parts: Vec<Vec<&str>> = (0..4).map(|i| lines[cuts[i]..cuts[i + 1]].to_vec()).collect();
    let text = |part: &[&str]| {
        let mut text = String::new();
        for line in part {
            text.push_str(line);
            text.push('\n');
        }
        text
    };
    dir.write(&format!("{name}/a.jsonl"), text(&parts[0]));
    dir.write(&format!("{name}/b.jsonl.gz"), gzip(&text(&parts[1])));
    dir.write(
        &format!("{name}/c.jsonl.zst"),
        zstd::encode_all(text(&parts[2]).as_bytes(), 3).unwrap(),
    );
    let rows = records(&text(&parts[3]));
    write_parquet(dir, &format!("{name}/d.parquet"), &batch(&rows), Compression::SNAPPY);
    parts
}

/// The ids `dedup` keeps of `file` (one JSONL file of every record).
fn kept_ids(dir: &Dir, file: &str, extra: &[&str]) -> HashSet<String> {
    let mut args = vec!["dedup", "-q", file];
    args.extend(extra);
    let run = dir.run(&args);
    run.code(0);
    run.stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_mixed_directory_is_deduplicated_as_one_and_mirrored_file_by_file() {
    let dir = Dir::new();
    let jsonl = corpus(60, 5);
    dir.write("all.jsonl", &jsonl);
    let lines: Vec<&str> = jsonl.lines().collect();
    let parts = mixed_dir(&dir, "in", &lines, lines.len() / 4);
    for extra in [&[][..], &["--method", "simhash", "-k", "6"], &["--keep", "longest"]] {
        let kept = kept_ids(&dir, "all.jsonl", extra);
        let mut args = vec!["dedup", "-q", "in", "--output-dir", "out", "--removed", "r.jsonl"];
        args.extend(extra);
        for threads in ["1", "3"] {
            let _ = std::fs::remove_dir_all(dir.path("out"));
            let mut args = args.clone();
            args.extend(["-j", threads]);
            dir.run(&args).code(0);
            assert_eq!(dir.read("out/a.jsonl"), kept_lines(&parts[0], &kept), "{extra:?}");
            let gz = std::fs::read(dir.path("out/b.jsonl.gz")).unwrap();
            assert_eq!(gunzip(&gz), kept_lines(&parts[1], &kept), "{extra:?}");
            let zst = zstd::decode_all(&std::fs::read(dir.path("out/c.jsonl.zst")).unwrap()[..]);
            let zst = String::from_utf8(zst.unwrap()).unwrap();
            assert_eq!(zst, kept_lines(&parts[2], &kept), "{extra:?}");
            let (batches, schema, codec) = read_back(&dir, "out/d.parquet");
            assert_eq!(codec, Compression::SNAPPY);
            assert_eq!(schema, read_back(&dir, "in/d.parquet").1);
            let want: Vec<String> = kept_lines(&parts[3], &kept)
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
                .map(|id| id.trim_matches('"').to_string())
                .collect();
            assert_eq!(column_strings(&batches, "id"), want, "{extra:?}");
        }
        // Removals across formats were found: a Parquet row removed as a duplicate of a
        // JSONL record, or the other way round.
        let in_parquet: HashSet<String> =
            records(&parts[3].join("\n")).into_iter().map(|r| r.0).collect();
        let cross = dir.read("r.jsonl").lines().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let (a, b) = (v["id"].as_str().unwrap(), v["duplicate_of"].as_str().unwrap());
            in_parquet.contains(a) != in_parquet.contains(b)
        });
        assert!(cross, "{extra:?}: no removal across formats in this corpus");
    }
}

/// Without duplicates across formats, the JSONL outputs are byte for byte those of a run
/// over the JSONL files alone.
#[test]
fn jsonl_outputs_of_a_mixed_directory_are_those_of_the_jsonl_alone() {
    let dir = Dir::new();
    let jsonl = corpus(40, 21);
    // Parquet rows that match nothing: texts of their own.
    let other: Vec<String> = (0..15)
        .map(|i| {
            let text = format!("parquet only record number {i} about {} things", i * 7919);
            serde_json::json!({"id": format!("p{i}"), "text": text}).to_string()
        })
        .collect();
    let mut lines: Vec<&str> = jsonl.lines().collect();
    lines.extend(other.iter().map(String::as_str));
    mixed_dir(&dir, "mixed", &lines, other.len());
    std::fs::create_dir(dir.path("jsonl")).unwrap();
    for name in ["a.jsonl", "b.jsonl.gz", "c.jsonl.zst"] {
        std::fs::copy(dir.path(&format!("mixed/{name}")), dir.path(&format!("jsonl/{name}")))
            .unwrap();
    }
    dir.run(&["dedup", "-q", "mixed", "--output-dir", "out-mixed"]).code(0);
    dir.run(&["dedup", "-q", "jsonl", "--output-dir", "out-jsonl"]).code(0);
    for name in ["a.jsonl", "b.jsonl.gz", "c.jsonl.zst"] {
        let mixed = std::fs::read(dir.path(&format!("out-mixed/{name}"))).unwrap();
        let alone = std::fs::read(dir.path(&format!("out-jsonl/{name}"))).unwrap();
        assert!(mixed == alone, "{name} differs");
    }
    let (batches, ..) = read_back(&dir, "out-mixed/d.parquet");
    assert_eq!(column_strings(&batches, "id").len(), other.len());
}

#[test]
fn mixed_formats_need_output_dir_and_keep_the_no_data_loss_rules() {
    let dir = Dir::new();
    let jsonl = corpus(20, 3);
    let lines: Vec<&str> = jsonl.lines().collect();
    mixed_dir(&dir, "in", &lines, 10);
    // One output has one format.
    for args in [&["dedup", "in"][..], &["dedup", "in", "-o", "out.jsonl"]] {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains("--output-dir"), "{}", run.stderr);
        assert!(run.stderr.contains("not both Parquet"), "{}", run.stderr);
    }
    assert!(!dir.path("out.jsonl").exists());
    // Never over an input.
    let run = dir.run(&["dedup", "in", "--output-dir", "in/sub"]);
    run.code(2);
    assert!(run.stderr.contains("is inside the input"), "{}", run.stderr);
    // Whole or not at all: a damaged Parquet shard stops a strict run before any output
    // is in place, the JSONL ones included.
    dir.write("in/e.parquet", b"PAR1 not really");
    let run = dir.run(&["dedup", "in", "--strict", "--output-dir", "out"]);
    run.code(2);
    assert!(
        !dir.path("out").exists(),
        "{:?}",
        std::fs::read_dir(dir.path("out")).map(Iterator::count)
    );
}

/// `explain --input` finds its two records in any of the shards, Parquet included, and
/// decides as dedup over the two alone.
#[test]
fn explain_reads_ids_from_a_mixed_directory() {
    let dir = Dir::new();
    let jsonl = corpus(20, 3);
    let lines: Vec<&str> = jsonl.lines().collect();
    mixed_dir(&dir, "in", &lines, 10);
    let id = |line: &str| {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v["id"].as_str().unwrap().to_string()
    };
    let (first, last) = (id(lines[0]), id(lines[lines.len() - 1]));
    let run = dir.run(&["explain", "--json", "-i", "in", &first, &last]);
    run.code(0);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["a"]["place"], "in/a.jsonl:1");
    assert_eq!(report["b"]["place"], "in/d.parquet: row 10");
    dir.write("pair.jsonl", format!("{}\n{}\n", lines[0], lines[lines.len() - 1]));
    let dedup = dir.run(&["dedup", "-q", "pair.jsonl"]);
    let kept = dedup.code(0).stdout.lines().count();
    assert_eq!(report["decision"]["kept"].as_array().unwrap().len(), kept);
}

/// `--annotate` over a mixed directory: every record of each file, marked, in its format.
#[test]
fn annotate_marks_each_file_of_a_mixed_directory_in_its_format() {
    let dir = Dir::new();
    let jsonl = corpus(30, 8);
    let lines: Vec<&str> = jsonl.lines().collect();
    let parts = mixed_dir(&dir, "in", &lines, 12);
    dir.run(&["dedup", "-q", "in", "--output-dir", "out", "--annotate", "--removed", "r.jsonl"])
        .code(0);
    let removed: HashSet<String> = dir
        .read("r.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect();
    let marked = |line: &str| {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        (v["id"].to_string(), !v["duplicate_of"].is_null())
    };
    let out = dir.read("out/a.jsonl");
    assert_eq!(out.lines().count(), parts[0].len());
    let (batches, schema, _) = read_back(&dir, "out/d.parquet");
    assert!(schema.field_with_name("duplicate_of").is_ok(), "{schema:?}");
    let ids = column_strings(&batches, "id");
    assert_eq!(ids.len(), parts[3].len());
    let mut seen = 0;
    for (id, dup) in out.lines().map(marked) {
        assert_eq!(dup, removed.contains(&id), "{id}");
        seen += usize::from(dup);
    }
    let duplicate_of = batches
        .iter()
        .flat_map(|b| {
            let c = b.column_by_name("duplicate_of").unwrap();
            (0..c.len()).map(|i| !arrow_array::Array::is_null(c, i)).collect::<Vec<_>>()
        })
        .collect::<Vec<_>>();
    for (id, dup) in ids.iter().zip(duplicate_of) {
        assert_eq!(dup, removed.contains(&format!("\"{id}\"")), "{id}");
        seen += usize::from(dup);
    }
    assert!(seen > 0, "nothing marked in a.jsonl and d.parquet");
}
