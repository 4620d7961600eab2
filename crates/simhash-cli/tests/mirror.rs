//! `dedup --output-dir` and `--annotate`: outputs that mirror the input shards (nested
//! directories; plain, .gz and .zst JSONL; Parquet with each input's schema and codec) hold
//! byte for byte the records of the single output, in input order; annotated outputs are
//! the input plus the annotation, naming the records `--removed` names; a failed run
//! leaves nothing; `--output-dir` with `--against --update`; a Parquet column already
//! named as an annotation is refused.

#![allow(clippy::case_sensitive_file_extension_comparisons, clippy::cast_possible_wrap)]

use std::io::{Read as _, Write as _};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::util::{Dir, corpus};

/// The JSONL shards, in the order a directory is read, and how each is compressed.
const JSONL: [&str; 4] = ["a.jsonl", "b/c.jsonl.gz", "b/d/e.jsonl.zst", "b/empty.jsonl"];

fn decompressed(path: &std::path::Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.to_string_lossy();
    if name.ends_with(".gz") {
        assert_eq!(bytes[..2], [0x1f, 0x8b], "{name} is gzip");
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut out).unwrap();
        out
    } else if name.ends_with(".zst") {
        assert_eq!(bytes[..4], [0x28, 0xb5, 0x2f, 0xfd], "{name} is zstd");
        zstd::decode_all(&bytes[..]).unwrap()
    } else {
        bytes
    }
}

fn compressed(name: &str, text: &[u8]) -> Vec<u8> {
    if name.ends_with(".gz") {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        gz.finish().unwrap()
    } else if name.ends_with(".zst") {
        zstd::encode_all(text, 1).unwrap()
    } else {
        text.to_vec()
    }
}

/// Shards under `in/`: a corpus cut in three, with CRLF, white space after the `}`, a
/// numeric id and escapes; the last shard holds only exact copies of earlier records
/// (nothing kept: an empty output).
fn jsonl_shards(dir: &Dir) -> Vec<String> {
    let mut lines: Vec<String> = corpus(50, 5).lines().map(str::to_string).collect();
    lines[3] = format!("{}\r", lines[3]);
    lines[5] = format!("{}  ", lines[5]);
    lines.insert(
        8,
        r#"{"id":42,"text":"caf\u00e9 \"quoted\" words that are unlike the rest"}"#.into(),
    );
    let n = lines.len();
    let cuts = [0, n / 3, 2 * n / 3, n];
    std::fs::create_dir_all(dir.path("in/b/d")).unwrap();
    let mut texts = Vec::new();
    for (i, name) in JSONL.iter().enumerate() {
        let shard: Vec<String> = if i < 3 {
            lines[cuts[i]..cuts[i + 1]].to_vec()
        } else {
            lines[..4].iter().map(|l| l.replace("\"id\":\"d", "\"id\":\"copy")).collect()
        };
        let text = shard.join("\n") + "\n";
        dir.write(&format!("in/{name}"), compressed(name, text.as_bytes()));
        texts.push(text);
    }
    texts
}

/// Splits an annotated line into the record without the annotation and the annotation as
/// a JSON object.
fn split_annotation(line: &str) -> (String, serde_json::Value) {
    let at = line.rfind(",\"duplicate_of\":").expect("annotated");
    let end = line.rfind('}').unwrap();
    let fields = format!("{{{}}}", &line[at + 1..end]);
    (format!("{}{}", &line[..at], &line[end..]), serde_json::from_str(&fields).unwrap())
}

/// The `(id, duplicate_of, score)` of each `--removed` line.
fn removed(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let score = v.get("jaccard").or(v.get("distance")).unwrap();
            (v["id"].to_string(), v["duplicate_of"].to_string(), score.to_string())
        })
        .collect()
}

#[test]
fn jsonl_shards_mirrored_and_annotated() {
    let dir = Dir::new();
    let inputs = jsonl_shards(&dir);
    for method in ["minhash", "simhash"] {
        let m = ["--method", method, "-q"];
        dir.run(&[&["dedup", "in", "-o", "one.jsonl", "--removed", "rm1.jsonl"], &m[..]].concat())
            .code(0);
        for threads in ["1", "2"] {
            let args = ["dedup", "in", "--output-dir", "out", "--removed", "rm2.jsonl", "-j"];
            dir.run(&[&args[..], &[threads], &m[..]].concat()).code(0);
            let mut joined = Vec::new();
            for name in JSONL {
                joined.extend(decompressed(&dir.path(&format!("out/{name}"))));
            }
            assert_eq!(String::from_utf8(joined).unwrap(), dir.read("one.jsonl"), "{method}");
            assert_eq!(dir.read("rm1.jsonl"), dir.read("rm2.jsonl"));
            assert!(decompressed(&dir.path("out/b/empty.jsonl")).is_empty());
            std::fs::remove_dir_all(dir.path("out")).unwrap();
        }
        let args = ["dedup", "in", "--output-dir", "ann", "--annotate", "--removed", "rm3.jsonl"];
        dir.run(&[&args[..], &m[..]].concat()).code(0);
        assert_eq!(dir.read("rm1.jsonl"), dir.read("rm3.jsonl"));
        let mut annotated = Vec::new();
        for (name, input) in JSONL.iter().zip(&inputs) {
            let text = String::from_utf8(decompressed(&dir.path(&format!("ann/{name}")))).unwrap();
            let mut stripped = String::new();
            for line in text.split_inclusive('\n') {
                let (record, fields) = split_annotation(line);
                stripped += &record;
                if fields["duplicate_of"].is_null() {
                    assert!(fields["similarity"].is_null(), "{line}");
                } else {
                    let v: serde_json::Value = serde_json::from_str(record.trim_end()).unwrap();
                    let score = fields["similarity"].to_string();
                    annotated.push((
                        v["id"].to_string(),
                        fields["duplicate_of"].to_string(),
                        score,
                    ));
                }
            }
            assert_eq!(&stripped, input, "{name}: the records byte for byte");
        }
        // Jaccard printed with 4 decimals in both (serde_json prints 1.0000 as 1.0).
        let norm = |v: Vec<(String, String, String)>| {
            v.into_iter()
                .map(|(a, b, s)| (a, b, s.parse::<f64>().unwrap().to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(norm(annotated), norm(removed(&dir.read("rm1.jsonl"))), "{method}");
        std::fs::remove_dir_all(dir.path("ann")).unwrap();
    }
}

#[test]
fn annotate_to_one_output_and_cluster() {
    let dir = Dir::new();
    let inputs = jsonl_shards(&dir);
    dir.run(&["dedup", "in", "-o", "ann.jsonl", "--annotate", "-q"]).code(0);
    let text = dir.read("ann.jsonl");
    let stripped: String = text.split_inclusive('\n').map(|l| split_annotation(l).0).collect();
    assert_eq!(stripped, inputs.concat());
    // cluster --annotate: the cluster number the TSV shows, null for singletons.
    dir.run(&["cluster", "in", "-o", "c.tsv", "-q"]).code(0);
    dir.run(&["cluster", "in", "-o", "c.jsonl", "--annotate", "-q"]).code(0);
    let tsv = dir.read("c.tsv");
    let mut want: Vec<(String, String)> = tsv
        .lines()
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols[0].to_string(), cols[2].to_string())
        })
        .collect();
    let mut got = Vec::new();
    for line in dir.read("c.jsonl").lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().map_or_else(|| v["id"].to_string(), str::to_string);
        if !v["cluster"].is_null() {
            got.push((id, v["cluster"].to_string()));
        }
    }
    want.sort();
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn refusals() {
    let dir = Dir::new();
    jsonl_shards(&dir);
    let run = dir.run(&["dedup", "in", "--output-dir", "in/b/out"]);
    run.code(2);
    assert!(run.stderr.contains("is inside the input"), "{}", run.stderr);
    let run = dir.run(&["dedup", "in/a.jsonl", "--output-dir", "."]);
    assert!(run.code(2).stderr.contains("contains the input"), "{}", run.stderr);
    dir.write("other.jsonl", "{\"id\":\"o\",\"text\":\"x y z\"}\n");
    std::fs::create_dir_all(dir.path("x")).unwrap();
    dir.write("x/other.jsonl", "{\"id\":\"p\",\"text\":\"x y z\"}\n");
    let run = dir.run(&["dedup", "other.jsonl", "x/other.jsonl", "--output-dir", "o"]);
    assert!(run.code(2).stderr.contains("two inputs would be written to"), "{}", run.stderr);
    let run = dir.run_stdin(&["dedup", "--output-dir", "o"], b"{\"text\":\"a\"}\n");
    assert!(run.code(2).stderr.contains("standard input"), "{}", run.stderr);
    dir.run(&["dedup", "in", "--output-dir", "o", "-o", "x.jsonl"]).code(2);
    let run = dir.run_stdin(
        &["dedup", "--annotate"],
        b"{\"text\":\"a b\",\"cluster\":1,\"similarity\":2}\n",
    );
    assert!(run.code(2).stderr.contains("already has a field \"similarity\""), "{}", run.stderr);
    assert!(!dir.path("o").exists());
}

#[cfg(unix)]
#[test]
fn a_failed_run_leaves_nothing() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let dir = Dir::new();
    jsonl_shards(&dir);
    let run = dir.run(&["dedup", "in", "--output-dir", "new/out", "--stats", "/dev/full", "-q"]);
    run.code(2);
    assert!(!dir.path("new").exists(), "created directories are removed: {}", run.stderr);
    // An output directory that existed keeps what it had, and gets nothing.
    std::fs::create_dir_all(dir.path("old/b")).unwrap();
    dir.write("old/a.jsonl", "before\n");
    dir.run(&["dedup", "in", "--output-dir", "old", "--stats", "/dev/full", "-q"]).code(2);
    assert_eq!(dir.read("old/a.jsonl"), "before\n");
    let mut left: Vec<_> = walk(&dir.path("old"));
    left.sort();
    assert_eq!(left, ["a.jsonl"]);
}

fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(
                walk(&path)
                    .into_iter()
                    .map(|p| format!("{}/{p}", path.file_name().unwrap().to_string_lossy())),
            );
        } else {
            out.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    out
}

/// Parquet shards in nested directories, each with its own codec.
fn parquet_names() -> [(&'static str, Compression); 3] {
    [
        ("pq/x/part-0.parquet", Compression::ZSTD(ZstdLevel::default())),
        ("pq/x/y/part-1.parquet", Compression::SNAPPY),
        ("pq/z.parquet", Compression::UNCOMPRESSED),
    ]
}

/// The records of `corpus(bases, seed)` as (id, text) rows.
fn corpus_rows(bases: usize, seed: u64) -> Vec<(String, String)> {
    corpus(bases, seed)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string())
        })
        .collect()
}

fn parquet_shards(dir: &Dir) -> Vec<RecordBatch> {
    let rows = corpus_rows(40, 9);
    std::fs::create_dir_all(dir.path("pq/x/y")).unwrap();
    let n = rows.len();
    let cuts = [0, n / 3, 2 * n / 3, n];
    let mut batches = Vec::new();
    for (i, (name, codec)) in parquet_names().iter().enumerate() {
        let part = &rows[cuts[i]..cuts[i + 1]];
        let batch = RecordBatch::try_from_iter([
            (
                "n",
                Arc::new(Int64Array::from_iter_values((cuts[i] as i64)..(cuts[i + 1] as i64)))
                    as ArrayRef,
            ),
            ("id", Arc::new(StringArray::from_iter_values(part.iter().map(|r| &r.0))) as ArrayRef),
            (
                "text",
                Arc::new(StringArray::from_iter_values(part.iter().map(|r| &r.1))) as ArrayRef,
            ),
        ])
        .unwrap();
        let props = WriterProperties::builder().set_compression(*codec).build();
        let file = std::fs::File::create(dir.path(name)).unwrap();
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        batches.push(batch);
    }
    batches
}

/// A Parquet file read back whole: one batch, its schema, and its first column's codec.
fn read_parquet(path: &std::path::Path) -> (RecordBatch, Compression) {
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
    let codec = builder
        .metadata()
        .row_groups()
        .first()
        .map_or(Compression::UNCOMPRESSED, |g| g.column(0).compression());
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().collect::<Result<_, _>>().unwrap();
    (arrow_select_concat(&schema, &batches), codec)
}

fn arrow_select_concat(schema: &Arc<arrow_schema::Schema>, batches: &[RecordBatch]) -> RecordBatch {
    if batches.is_empty() {
        return RecordBatch::new_empty(schema.clone());
    }
    let columns = (0..schema.fields().len())
        .map(|c| {
            let arrays: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            arrow_select::concat::concat(&arrays).unwrap()
        })
        .collect();
    RecordBatch::try_new(schema.clone(), columns).unwrap()
}

#[test]
fn parquet_shards_mirrored_and_annotated() {
    let dir = Dir::new();
    let inputs = parquet_shards(&dir);
    dir.run(&["dedup", "pq", "-o", "one.parquet", "--removed", "rm.jsonl", "-q"]).code(0);
    dir.run(&["dedup", "pq", "--output-dir", "out", "-q"]).code(0);
    let (one, _) = read_parquet(&dir.path("one.parquet"));
    let mut parts = Vec::new();
    for ((name, codec), input) in parquet_names().iter().zip(&inputs) {
        let (part, got) = read_parquet(&dir.path(&name.replacen("pq/", "out/", 1)));
        assert_eq!(part.schema(), input.schema(), "{name}: the input's schema");
        assert_eq!(got, *codec, "{name}: the input's codec");
        parts.push(part);
    }
    assert_eq!(arrow_select_concat(&one.schema(), &parts), one, "the single output's rows");

    dir.run(&["dedup", "pq", "--output-dir", "ann", "--annotate", "-q"]).code(0);
    let mut annotated = Vec::new();
    for ((name, _), input) in parquet_names().iter().zip(&inputs) {
        let (part, _) = read_parquet(&dir.path(&name.replacen("pq/", "ann/", 1)));
        let width = input.num_columns();
        assert_eq!(part.num_columns(), width + 2);
        assert_eq!(part.project(&(0..width).collect::<Vec<_>>()).unwrap(), *input, "{name}");
        let of = part.column(width).as_any().downcast_ref::<StringArray>().unwrap();
        let sim = part.column(width + 1).as_any().downcast_ref::<Float64Array>().unwrap();
        let ids = part.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..part.num_rows() {
            assert_eq!(of.is_null(i), sim.is_null(i));
            if !of.is_null(i) {
                annotated.push((
                    ids.value(i).to_string(),
                    of.value(i).to_string(),
                    format!("{:.4}", sim.value(i)),
                ));
            }
        }
    }
    let want: Vec<(String, String, String)> = dir
        .read("rm.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let j = format!("{:.4}", v["jaccard"].as_f64().unwrap());
            (v["id"].as_str().unwrap().into(), v["duplicate_of"].as_str().unwrap().into(), j)
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(annotated, want);
}

#[test]
fn annotate_against_an_index_names_the_indexed_record() {
    let dir = Dir::new();
    jsonl_shards(&dir);
    dir.run(&["index", "add", "idx", "in/a.jsonl", "-q"]).code(0);
    let args = ["dedup", "in/b", "--against", "idx", "--annotate", "--removed", "rm.jsonl"];
    dir.run(&[&args[..], &["-o", "ann.jsonl", "-q"]].concat()).code(0);
    let mut annotated = Vec::new();
    for line in dir.read("ann.jsonl").split_inclusive('\n') {
        let (record, fields) = split_annotation(line);
        if !fields["duplicate_of"].is_null() {
            let v: serde_json::Value = serde_json::from_str(record.trim_end()).unwrap();
            let score = fields["similarity"].as_f64().unwrap().to_string();
            annotated.push((v["id"].to_string(), fields["duplicate_of"].to_string(), score));
        }
    }
    let want: Vec<_> = removed(&dir.read("rm.jsonl"))
        .into_iter()
        .map(|(a, b, s)| (a, b, s.parse::<f64>().unwrap().to_string()))
        .collect();
    // The empty shard's records are exact copies of indexed ones.
    assert!(annotated.iter().any(|(id, of, _)| id.contains("copy0") && of == "\"d0\""));
    assert_eq!(annotated, want);
}

#[cfg(unix)]
#[test]
fn output_dir_against_an_index_with_update() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let dir = Dir::new();
    jsonl_shards(&dir);
    for ix in ["plain", "updated"] {
        dir.run(&["index", "add", ix, "in/a.jsonl", "-q"]).code(0);
    }
    let documents = |ix: &str| {
        let stats = dir.run(&["index", "stats", ix, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&stats.code(0).stdout).unwrap();
        v["documents"].as_u64().unwrap()
    };
    let indexed = documents("plain");
    let args = ["dedup", "in/b", "--against", "plain", "-o", "one.jsonl", "--removed", "rm1.jsonl"];
    dir.run(&[&args[..], &["-q"]].concat()).code(0);
    // A failed run with --update leaves the index as it was, and no output.
    let args = ["dedup", "in/b", "--against", "updated", "--update", "--output-dir", "out"];
    dir.run(&[&args[..], &["--stats", "/dev/full", "-q"]].concat()).code(2);
    assert!(!dir.path("out").exists());
    assert_eq!(documents("updated"), indexed);
    dir.run(&[&args[..], &["--removed", "rm2.jsonl", "-q"]].concat()).code(0);
    // Each shard's output holds its part of the single output, in order.
    let mut joined = Vec::new();
    for name in ["c.jsonl.gz", "d/e.jsonl.zst", "empty.jsonl"] {
        joined.extend(decompressed(&dir.path(&format!("out/{name}"))));
    }
    let one = dir.read("one.jsonl");
    assert_eq!(String::from_utf8(joined).unwrap(), one);
    assert_eq!(dir.read("rm1.jsonl"), dir.read("rm2.jsonl"));
    assert!(!dir.read("rm1.jsonl").is_empty());
    // The kept records went into the index: a second run finds them there, as themselves
    // (the same ids and texts), and writes what the first wrote.
    assert_eq!(documents("updated"), indexed + one.lines().count() as u64);
    assert_eq!(documents("plain"), indexed);
    let args = ["dedup", "in/b", "--against", "updated", "--output-dir", "again", "-q"];
    dir.run(&[&args[..], &["--removed", "rm3.jsonl"]].concat()).code(0);
    for name in ["c.jsonl.gz", "d/e.jsonl.zst", "empty.jsonl"] {
        let (first, again) = (format!("out/{name}"), format!("again/{name}"));
        assert_eq!(decompressed(&dir.path(&again)), decompressed(&dir.path(&first)), "{name}");
    }
    assert_eq!(dir.read("rm3.jsonl"), dir.read("rm1.jsonl"));
}

#[test]
fn parquet_with_an_annotation_column_is_refused_by_annotate() {
    let dir = Dir::new();
    let rows = corpus(20, 4);
    let rows: Vec<(String, String)> = rows
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string())
        })
        .collect();
    std::fs::create_dir_all(dir.path("pq")).unwrap();
    for (column, path) in [("similarity", "pq/s.parquet"), ("cluster", "pq/c.parquet")] {
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.0))) as ArrayRef),
            (
                "text",
                Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.1))) as ArrayRef,
            ),
            (column, Arc::new(Int64Array::from_iter_values(0..rows.len() as i64)) as ArrayRef),
        ])
        .unwrap();
        let file = std::fs::File::create(dir.path(path)).unwrap();
        let mut writer = ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }
    for (args, file, column) in [
        (&["dedup", "pq/s.parquet", "--annotate", "-o", "x.parquet"][..], "s", "similarity"),
        (&["dedup", "pq/s.parquet", "--annotate", "--output-dir", "x"], "s", "similarity"),
        (&["cluster", "pq/c.parquet", "--annotate", "-o", "x.parquet"], "c", "cluster"),
    ] {
        let run = dir.run(args);
        run.code(2);
        let want = format!("pq/{file}.parquet: already has a column \"{column}\"");
        assert!(run.stderr.contains(&want), "{args:?}: {}", run.stderr);
        assert!(!dir.path("x.parquet").exists() && !dir.path("x").exists(), "{args:?}");
    }
    // Without --annotate the column is one more column, copied.
    dir.run(&["dedup", "pq/s.parquet", "-o", "kept.parquet", "-q"]).code(0);
    let (kept, _) = read_parquet(&dir.path("kept.parquet"));
    assert_eq!(kept.schema().field(2).name(), "similarity");
    assert!(kept.num_rows() > 0);
}

/// Every file under `root`, by relative path, with its bytes (compressed as written).
fn tree(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walk(root)
        .into_iter()
        .map(|name| (name.clone(), std::fs::read(root.join(&name)).unwrap()))
        .collect();
    files.sort();
    files
}

/// Thirteen small JSONL shards, plain, .gz and .zst in turn, the last of exact copies only
/// (nothing kept); returns their names in the order a directory is read.
fn many_jsonl_shards(dir: &Dir) -> Vec<String> {
    let lines: Vec<String> = corpus(120, 21).lines().map(str::to_string).collect();
    std::fs::create_dir_all(dir.path("in")).unwrap();
    let mut names = Vec::new();
    let count = 12;
    for i in 0..=count {
        let name = format!("s{i:02}.jsonl{}", ["", ".gz", ".zst"][i % 3]);
        let shard: Vec<String> = if i < count {
            lines[i * lines.len() / count..(i + 1) * lines.len() / count].to_vec()
        } else {
            lines[..5].iter().map(|l| l.replace("\"id\":\"d", "\"id\":\"copy")).collect()
        };
        let text = shard.join("\n") + "\n";
        dir.write(&format!("in/{name}"), compressed(&name, text.as_bytes()));
        names.push(name);
    }
    names
}

#[test]
fn many_jsonl_shards_the_same_at_any_thread_count() {
    let dir = Dir::new();
    let names = many_jsonl_shards(&dir);
    dir.run(&["index", "add", "idx", "in/s00.jsonl", "-q"]).code(0);
    let cases: [&[&str]; 3] = [&[], &["--annotate"], &["--against", "idx"]];
    for extra in cases {
        let one = [&["dedup", "in", "-o", "one.jsonl", "-q"][..], extra].concat();
        dir.run(&one).code(0);
        let mut trees = Vec::new();
        for threads in ["1", "2", "3", "5"] {
            let args = ["dedup", "in", "--output-dir", "out", "-q", "-j", threads];
            dir.run(&[&args[..], extra].concat()).code(0);
            let mut joined = Vec::new();
            for name in &names {
                joined.extend(decompressed(&dir.path(&format!("out/{name}"))));
            }
            assert_eq!(String::from_utf8(joined).unwrap(), dir.read("one.jsonl"), "{extra:?}");
            trees.push(tree(&dir.path("out")));
            std::fs::remove_dir_all(dir.path("out")).unwrap();
        }
        assert_eq!(trees[0].len(), names.len());
        assert!(trees.iter().all(|t| *t == trees[0]), "{extra:?}: -j1, -j2, -j3, -j5 differ");
    }
}

#[test]
fn many_parquet_shards_the_same_at_any_thread_count() {
    let dir = Dir::new();
    let rows = corpus_rows(90, 23);
    std::fs::create_dir_all(dir.path("pq")).unwrap();
    let count = 11;
    for i in 0..count {
        let part = &rows[i * rows.len() / count..(i + 1) * rows.len() / count];
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(StringArray::from_iter_values(part.iter().map(|r| &r.0))) as ArrayRef),
            (
                "text",
                Arc::new(StringArray::from_iter_values(part.iter().map(|r| &r.1))) as ArrayRef,
            ),
        ])
        .unwrap();
        let codec =
            if i % 4 == 3 { Compression::ZSTD(ZstdLevel::default()) } else { Compression::SNAPPY };
        let props = WriterProperties::builder()
            .set_compression(codec)
            .set_max_row_group_row_count(Some(7))
            .build();
        let file = std::fs::File::create(dir.path(&format!("pq/p{i:02}.parquet"))).unwrap();
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }
    for extra in [&[][..], &["--annotate"]] {
        dir.run(&[&["dedup", "pq", "-o", "one.parquet", "-q"][..], extra].concat()).code(0);
        let (one, _) = read_parquet(&dir.path("one.parquet"));
        assert!(one.num_rows() > 0 && (one.num_rows() < rows.len()) == extra.is_empty());
        let mut trees = Vec::new();
        for threads in ["1", "2", "3", "5"] {
            let args = ["dedup", "pq", "--output-dir", "out", "-q", "-j", threads];
            dir.run(&[&args[..], extra].concat()).code(0);
            let parts: Vec<RecordBatch> = (0..count)
                .map(|i| read_parquet(&dir.path(&format!("out/p{i:02}.parquet"))).0)
                .collect();
            assert_eq!(arrow_select_concat(&one.schema(), &parts), one, "{extra:?}");
            trees.push(tree(&dir.path("out")));
            std::fs::remove_dir_all(dir.path("out")).unwrap();
        }
        assert_eq!(trees[0].len(), count);
        assert!(trees.iter().all(|t| *t == trees[0]), "{extra:?}: -j1, -j2, -j3, -j5 differ");
    }
}

/// Two shards changed between the passes: the first of them in input order is the error
/// reported at any thread count, though the later one fails first (it is small and changed
/// at its first line, the first is large and changed at its last), and nothing is written.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "needs the debug build's SIMHASH_TEST_BETWEEN_PASSES hook"
)]
fn output_dir_reports_the_first_changed_shard_at_any_thread_count() {
    use std::fmt::Write as _;
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path("in")).unwrap();
    let shard = |from: usize, to: usize| {
        let mut text = String::new();
        for i in from..to {
            let record = serde_json::json!({"id": i, "text": format!("alpha{i} beta{i} gamma{i}")});
            writeln!(text, "{record}").unwrap();
        }
        text
    };
    let shards =
        [shard(0, 20_000), shard(20_000, 20_010), shard(20_010, 20_020), shard(20_020, 20_030)];
    let mut stderrs = Vec::new();
    for threads in ["1", "2", "3"] {
        for (i, text) in shards.iter().enumerate() {
            dir.write(&format!("in/s{i}.jsonl"), text);
        }
        let (child, marker) =
            dir.spawn_paused(&["dedup", "in", "--output-dir", "out", "-q", "-j", threads]);
        // The same sizes, one byte changed in a kept record of each.
        dir.write("in/s0.jsonl", shards[0].replacen("alpha19999 ", "alpha19998 ", 1));
        dir.write("in/s2.jsonl", shards[2].replacen("alpha20010 ", "alpha20011 ", 1));
        std::fs::remove_file(&marker).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "-j{threads}: {stderr}");
        assert!(stderr.contains("s0.jsonl:20000: the input changed while it was read"), "{stderr}");
        assert!(!dir.path("out").exists(), "-j{threads}: nothing is left");
        stderrs.push(stderr);
    }
    assert!(stderrs.iter().all(|s| *s == stderrs[0]), "{stderrs:?}");
}
