//! Parquet inputs, written by the tests with the Rust crates: the same records and decisions
//! as the same records in JSONL, nested columns, integer ids, null texts, bad shards, and
//! dedup's Parquet output with the input's schema and compression, dictionary-encoded
//! columns.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type};
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::WriterProperties;

use crate::util::{Dir, corpus};

/// The `(id, text)` of JSONL records.
pub(crate) fn records(jsonl: &str) -> Vec<(String, String)> {
    jsonl
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string())
        })
        .collect()
}

pub(crate) fn write_parquet(dir: &Dir, name: &str, batch: &RecordBatch, compression: Compression) {
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(7))
        .build();
    let file = std::fs::File::create(dir.path(name)).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

/// A batch with an extra column (kept by dedup), the id and the text.
pub(crate) fn batch(rows: &[(String, String)]) -> RecordBatch {
    let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let texts: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let lens: Vec<i64> = rows.iter().map(|r| i64::try_from(r.1.len()).unwrap()).collect();
    RecordBatch::try_from_iter([
        ("url_len", Arc::new(Int64Array::from(lens)) as ArrayRef),
        ("id", Arc::new(StringArray::from(ids)) as ArrayRef),
        ("text", Arc::new(StringArray::from(texts)) as ArrayRef),
    ])
    .unwrap()
}

/// Reads a Parquet file back: its batches, schema and first column's compression.
pub(crate) fn read_back(
    dir: &Dir,
    name: &str,
) -> (Vec<RecordBatch>, Arc<arrow_schema::Schema>, Compression) {
    let file = std::fs::File::open(dir.path(name)).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let schema = builder.schema().clone();
    let compression = builder
        .metadata()
        .row_groups()
        .first()
        .map_or(Compression::UNCOMPRESSED, |g| g.column(0).compression());
    let batches = builder.build().unwrap().collect::<Result<Vec<_>, _>>().unwrap();
    (batches, schema, compression)
}

pub(crate) fn column_strings(batches: &[RecordBatch], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in batches {
        let a = b.column_by_name(name).unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        out.extend((0..a.len()).map(|i| a.value(i).to_string()));
    }
    out
}

/// Three Parquet shards (zstd, snappy, uncompressed; row groups of 7) and the same records
/// as one JSONL file.
fn shards(dir: &Dir) -> Vec<String> {
    let jsonl = corpus(40, 9);
    dir.write("all.jsonl", &jsonl);
    let rows = records(&jsonl);
    let n = rows.len();
    let cuts = [0, n / 3, 2 * n / 3, n];
    let codecs =
        [Compression::ZSTD(ZstdLevel::default()), Compression::SNAPPY, Compression::UNCOMPRESSED];
    let mut names = Vec::new();
    for (i, codec) in codecs.into_iter().enumerate() {
        let name = format!("part-{i}.parquet");
        write_parquet(dir, &name, &batch(&rows[cuts[i]..cuts[i + 1]]), codec);
        names.push(name);
    }
    names
}

#[test]
fn parquet_shards_give_the_records_and_decisions_of_jsonl() {
    let dir = Dir::new();
    let names = shards(&dir);
    for args in [
        &["fingerprint"][..],
        &["pairs"],
        &["pairs", "--method", "simhash"],
        &["cluster"],
        &["cluster", "--method", "minhash", "--singletons"],
    ] {
        let mut with_parquet: Vec<&str> = args.to_vec();
        with_parquet.extend(names.iter().map(String::as_str));
        let parquet = dir.run(&with_parquet);
        let mut with_jsonl = args.to_vec();
        with_jsonl.push("all.jsonl");
        let jsonl = dir.run(&with_jsonl);
        parquet.code(0);
        assert_eq!(parquet.stdout, jsonl.stdout, "{args:?}");
        assert!(!parquet.stdout.is_empty());
    }
    // A directory of Parquet files: the same.
    std::fs::create_dir(dir.path("d")).unwrap();
    for name in &names {
        std::fs::copy(dir.path(name), dir.path(&format!("d/{name}"))).unwrap();
    }
    let parquet = dir.run(&["pairs", "d"]);
    assert_eq!(parquet.stdout, dir.run(&["pairs", "all.jsonl"]).stdout);
}

#[test]
fn dedup_writes_the_kept_rows_with_the_inputs_schema_and_compression() {
    let dir = Dir::new();
    let names = shards(&dir);
    let mut args = vec!["dedup", "-o", "kept.parquet", "--removed", "removed.jsonl"];
    args.extend(names.iter().map(String::as_str));
    dir.run(&args).code(0);
    let removed = dir.read("removed.jsonl");
    dir.run(&["dedup", "all.jsonl", "-o", "kept.jsonl", "--removed", "removed-jsonl.jsonl"])
        .code(0);
    assert_eq!(removed, dir.read("removed-jsonl.jsonl"));
    assert!(!removed.is_empty());
    let kept_jsonl = records(&dir.read("kept.jsonl"));
    let (batches, schema, compression) = read_back(&dir, "kept.parquet");
    let (_, input_schema, input_compression) = read_back(&dir, &names[0]);
    assert_eq!(schema.fields(), input_schema.fields());
    assert_eq!(compression, input_compression);
    assert!(matches!(compression, Compression::ZSTD(_)), "{compression:?}");
    let ids = column_strings(&batches, "id");
    let texts = column_strings(&batches, "text");
    let want: Vec<String> = kept_jsonl.iter().map(|r| r.0.clone()).collect();
    assert_eq!(ids, want);
    assert_eq!(texts, kept_jsonl.iter().map(|r| r.1.clone()).collect::<Vec<_>>());
    // The extra column comes along, row for row.
    let lens: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let a =
                b.column_by_name("url_len").unwrap().as_any().downcast_ref::<Int64Array>().unwrap();
            a.values().to_vec()
        })
        .collect();
    assert_eq!(lens, texts.iter().map(|t| i64::try_from(t.len()).unwrap()).collect::<Vec<_>>());
    // Parquet and JSONL inputs cannot make one output.
    let run = dir.run(&["dedup", &names[0], "all.jsonl"]);
    run.code(2);
    assert!(run.stderr.contains("are not both Parquet"), "{}", run.stderr);
}

/// The codec of every column chunk of a Parquet file, row group by row group.
fn codecs(dir: &Dir, name: &str) -> Vec<Compression> {
    let file = std::fs::File::open(dir.path(name)).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let groups = builder.metadata().row_groups();
    assert!(!groups.is_empty(), "{name}: no row groups");
    groups.iter().flat_map(|g| g.columns().iter().map(ColumnChunkMetaData::compression)).collect()
}

#[test]
fn parquet_compression_sets_the_outputs_codec_and_nothing_else() {
    let dir = Dir::new();
    let names = shards(&dir);
    let run = |extra: &[&str]| {
        let mut args = vec!["dedup", "-q"];
        args.extend(extra);
        args.extend(names.iter().map(String::as_str));
        dir.run(&args).code(0);
    };
    run(&["-o", "kept.parquet"]);
    let (mirrored, schema, _) = read_back(&dir, "kept.parquet");
    // One output: the first input's codec (zstd), unless told otherwise.
    let zstd = Compression::ZSTD(ZstdLevel::try_new(1).unwrap());
    for (value, codec) in [
        ("mirror", zstd),
        ("zstd", zstd),
        ("snappy", Compression::SNAPPY),
        ("lz4", Compression::LZ4_RAW),
        ("none", Compression::UNCOMPRESSED),
    ] {
        let out = format!("{value}.parquet");
        run(&["--parquet-compression", value, "-o", &out]);
        assert!(
            codecs(&dir, &out).iter().all(|&c| c == codec),
            "{value}: {:?}",
            codecs(&dir, &out)
        );
        let (batches, out_schema, _) = read_back(&dir, &out);
        assert_eq!(out_schema, schema, "{value}");
        assert_eq!(batches, mirrored, "{value}");
    }
    // --output-dir: mirror keeps each input's codec; another is every output's.
    run(&["--output-dir", "mirror"]);
    run(&["--output-dir", "lz4", "--parquet-compression", "lz4"]);
    let inputs = [zstd, Compression::SNAPPY, Compression::UNCOMPRESSED];
    for (name, codec) in names.iter().zip(inputs) {
        let (mirror, lz4) = (format!("mirror/{name}"), format!("lz4/{name}"));
        assert!(codecs(&dir, &mirror).iter().all(|&c| c == codec), "{mirror}");
        assert!(codecs(&dir, &lz4).iter().all(|&c| c == Compression::LZ4_RAW), "{lz4}");
        assert_eq!(read_back(&dir, &lz4).0, read_back(&dir, &mirror).0, "{name}");
    }
    // cluster --annotate writes Parquet too, its added column included.
    for (value, out) in [("mirror", "cluster-mirror.parquet"), ("snappy", "cluster.parquet")] {
        let mut args = vec!["cluster", "-q", "--annotate", "--parquet-compression", value];
        args.extend(["-o", out, names[0].as_str()]);
        dir.run(&args).code(0);
    }
    let mirror = codecs(&dir, "cluster-mirror.parquet");
    assert!(mirror.iter().all(|c| matches!(c, Compression::ZSTD(_))), "{mirror:?}");
    assert!(codecs(&dir, "cluster.parquet").iter().all(|&c| c == Compression::SNAPPY));
    assert_eq!(read_back(&dir, "cluster.parquet").0, read_back(&dir, "cluster-mirror.parquet").0);
}

#[test]
fn parquet_compression_is_refused_without_a_parquet_output() {
    let dir = Dir::new();
    let names = shards(&dir);
    for (args, why) in [
        (
            &["dedup", "all.jsonl", "--parquet-compression", "zstd", "-o", "out"][..],
            "no input is Parquet",
        ),
        (&["dedup", "all.jsonl", "--parquet-compression", "mirror", "-o", "out"], "no input"),
        (
            &["cluster", "all.jsonl", "--annotate", "--parquet-compression", "none", "-o", "out"],
            "no input is Parquet",
        ),
        (
            &["cluster", &names[0], "--parquet-compression", "snappy", "-o", "out"],
            "cluster writes a TSV",
        ),
        (&["dedup", &names[0], "--parquet-compression", "gzip", "-o", "out"], "expected one of"),
    ] {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains("--parquet-compression"), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{args:?}: {}", run.stderr);
        assert!(!dir.path("out").exists(), "{args:?}");
    }
}

#[test]
fn nested_text_integer_ids_and_null_texts() {
    let dir = Dir::new();
    let body = StringArray::from(vec![
        Some("one two three four five six seven"),
        None,
        Some("one two three four five six seven"),
        Some("something else entirely here"),
    ]);
    let lang = StringArray::from(vec!["en", "en", "fr", "de"]);
    let meta = StructArray::from(vec![
        (Arc::new(Field::new("body", DataType::Utf8, true)), Arc::new(body) as ArrayRef),
        (Arc::new(Field::new("lang", DataType::Utf8, false)), Arc::new(lang) as ArrayRef),
    ]);
    let batch = RecordBatch::try_from_iter([
        ("doc_id", Arc::new(Int64Array::from(vec![10, 11, 12, 13])) as ArrayRef),
        ("meta", Arc::new(meta) as ArrayRef),
    ])
    .unwrap();
    write_parquet(&dir, "nested.parquet", &batch, Compression::SNAPPY);
    let run = dir.run(&[
        "pairs",
        "--text-column",
        "meta.body",
        "--id-column",
        "doc_id",
        "nested.parquet",
    ]);
    run.code(1);
    assert_eq!(run.stdout, "id_a\tid_b\tjaccard\trelation\n10\t12\t1.0000\tsame\n");
    assert!(
        run.stderr.contains("nested.parquet:2: text column \"meta.body\" is null, not a string"),
        "{}",
        run.stderr
    );
    // Without the id column: row numbers, as lines.
    let run = dir.run(&["pairs", "--text-column", "meta.body", "nested.parquet"]);
    assert_eq!(run.stdout, "id_a\tid_b\tjaccard\trelation\n0\t2\t1.0000\tsame\n");
}

#[test]
fn bad_shards_are_reported_and_the_run_goes_on_or_stops() {
    let dir = Dir::new();
    let names = shards(&dir);
    // Truncated: the footer is gone.
    let bytes = std::fs::read(dir.path(&names[1])).unwrap();
    dir.write("truncated.parquet", &bytes[..bytes.len() / 2]);
    // A text column of the wrong type.
    let wrong = RecordBatch::try_from_iter([
        ("id", Arc::new(StringArray::from(vec!["w"])) as ArrayRef),
        ("text", Arc::new(Int64Array::from(vec![5])) as ArrayRef),
    ])
    .unwrap();
    write_parquet(&dir, "wrong.parquet", &wrong, Compression::UNCOMPRESSED);
    let run = dir.run(&[
        "pairs",
        &names[0],
        "truncated.parquet",
        "wrong.parquet",
        &names[2],
        "--stats",
        "s.json",
    ]);
    run.code(1);
    assert!(
        run.stderr.contains("simhash: truncated.parquet: not a readable Parquet file"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("simhash: wrong.parquet: column \"text\" is Int64, not a string"),
        "{}",
        run.stderr
    );
    let stats: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(stats["skipped"]["bad_file"], 2);
    // The other shards were read.
    let good = dir.run(&["pairs", &names[0], &names[2]]);
    assert_eq!(run.stdout, good.stdout);
    let strict = dir.run(&["pairs", "--strict", &names[0], "truncated.parquet", &names[2]]);
    strict.code(2);
    assert!(
        strict.stderr.contains("truncated.parquet: not a readable Parquet file"),
        "{}",
        strict.stderr
    );
    // A missing column names the file and the columns it has.
    let run = dir.run(&["pairs", "--text-column", "body", &names[0]]);
    run.code(1);
    assert!(
        run.stderr.contains("part-0.parquet: no column \"body\" (columns: url_len, id, text)"),
        "{}",
        run.stderr
    );
}

/// A file with two `text` (or two `id`) columns is refused, naming the file and the column,
/// as a duplicate JSON key is: reading the first silently decided which text was meant.
#[test]
fn a_column_name_given_twice_is_refused() {
    let dir = Dir::new();
    let texts: Vec<String> =
        (0..20).map(|i| format!("record {i} says something of its own")).collect();
    let same = vec!["one text for every row of the file"; 20];
    let ids: Vec<String> = (0..20).map(|i| format!("r{i}")).collect();
    for (name, columns) in
        [("two-texts.parquet", ["id", "text", "text"]), ("two-ids.parquet", ["id", "id", "text"])]
    {
        let schema = arrow_schema::Schema::new(
            columns.iter().map(|c| Field::new(*c, DataType::Utf8, false)).collect::<Vec<_>>(),
        );
        let arrays: Vec<ArrayRef> = if columns[1] == "text" {
            vec![
                Arc::new(StringArray::from(ids.clone())),
                Arc::new(StringArray::from(same.clone())),
                Arc::new(StringArray::from(texts.clone())),
            ]
        } else {
            vec![
                Arc::new(StringArray::from(ids.clone())),
                Arc::new(StringArray::from(vec!["x"; 20])),
                Arc::new(StringArray::from(texts.clone())),
            ]
        };
        let batch = RecordBatch::try_new(Arc::new(schema), arrays).unwrap();
        write_parquet(&dir, name, &batch, Compression::UNCOMPRESSED);
        let column = if name == "two-texts.parquet" { "text" } else { "id" };
        let run = dir.run(&["dedup", name, "-o", "kept.parquet", "--strict"]);
        run.code(2);
        let want = format!("{name}: column \"{column}\" appears 2 times");
        assert!(run.stderr.contains(&want), "{}", run.stderr);
        assert!(!dir.path("kept.parquet").exists());
    }
}

/// dedup's output is written in the inputs' format: a name that says the other one is
/// refused (exit 2, nothing written), where Parquet went into a `.jsonl` name.
#[test]
fn an_output_named_for_another_format_is_refused() {
    let dir = Dir::new();
    let names = shards(&dir);
    dir.write("c.jsonl", corpus(30, 2));
    for (input, output, says) in [
        (names[0].as_str(), "kept.jsonl", "the inputs are Parquet"),
        (names[0].as_str(), "kept.tsv", "the inputs are Parquet"),
        ("c.jsonl", "kept.parquet", "the inputs are lines"),
    ] {
        let run = dir.run(&["dedup", input, "-o", output]);
        run.code(2);
        assert!(run.stderr.contains(&format!("--output {output}: {says}")), "{}", run.stderr);
        assert!(!dir.path(output).exists(), "{output}");
    }
    dir.run(&["dedup", &names[0], "-o", "kept.parquet", "-q"]).code(0);
    dir.run(&["dedup", "c.jsonl", "-o", "kept.out", "-q"]).code(0);
}

/// The strings of a column, through a dictionary if it is one (`None`: null).
/// The only input, unreadable: reported once as a bad file (exit 1, as the docs say), and
/// `dedup` writes no Parquet output, having no schema to give it.
#[test]
fn a_lone_bad_shard_is_reported_once() {
    let dir = Dir::new();
    dir.write("bad.parquet", "not parquet at all\n");
    let message = "simhash: bad.parquet: not a readable Parquet file";
    for args in [
        &["dedup", "bad.parquet", "-o", "out.parquet", "--removed", "r.jsonl"][..],
        &["dedup", "bad.parquet", "--output-dir", "out"],
        &["cluster", "bad.parquet", "--annotate", "-o", "out.parquet"],
        &["fingerprint", "bad.parquet", "-o", "out.tsv"],
    ] {
        let run = dir.run(args);
        run.code(1);
        assert_eq!(run.stderr.matches(message).count(), 1, "{args:?}: {}", run.stderr);
        assert!(!dir.path("out.parquet").exists(), "{args:?}");
    }
    assert_eq!(dir.read("r.jsonl"), "");
    let strict = dir.run(&["dedup", "bad.parquet", "-o", "out.parquet", "--strict"]);
    strict.code(2);
    assert_eq!(strict.stderr.matches(message).count(), 1, "{}", strict.stderr);
}

fn dictionary_strings(batches: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for b in batches {
        let column = b.column_by_name(name).unwrap();
        let dict = column.as_any_dictionary_opt().expect("a dictionary column");
        let values = dict.values().as_any().downcast_ref::<StringArray>().unwrap();
        let keys = dict.normalized_keys();
        out.extend(
            (0..column.len()).map(|i| column.is_valid(i).then(|| values.value(keys[i]).into())),
        );
    }
    out
}

#[test]
fn dictionary_encoded_text_and_id_columns() {
    let dir = Dir::new();
    let jsonl = corpus(40, 9);
    dir.write("all.jsonl", &jsonl);
    let rows = records(&jsonl);
    let ids: DictionaryArray<Int32Type> = rows.iter().map(|r| r.0.as_str()).collect();
    let texts: DictionaryArray<Int16Type> = rows.iter().map(|r| r.1.as_str()).collect();
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(ids) as ArrayRef),
        ("text", Arc::new(texts) as ArrayRef),
    ])
    .unwrap();
    write_parquet(&dir, "dict.parquet", &batch, Compression::SNAPPY);
    let (_, input_schema, _) = read_back(&dir, "dict.parquet");
    for name in ["id", "text"] {
        let t = input_schema.field_with_name(name).unwrap().data_type();
        assert!(matches!(t, DataType::Dictionary(..)), "{name} reads back as {t}");
    }
    for args in [&["pairs"][..], &["cluster", "--method", "simhash"], &["fingerprint"]] {
        let parquet = dir.run(&[args, &["dict.parquet"]].concat());
        parquet.code(0);
        let jsonl = dir.run(&[args, &["all.jsonl"]].concat());
        assert_eq!(parquet.stdout, jsonl.stdout, "{args:?}");
        assert!(!parquet.stdout.is_empty());
    }
    // dedup keeps the dictionary columns and writes the rows JSONL keeps.
    dir.run(&["dedup", "dict.parquet", "-o", "kept.parquet", "--removed", "rm.jsonl"]).code(0);
    dir.run(&["dedup", "all.jsonl", "-o", "kept.jsonl", "--removed", "rm-jsonl.jsonl"]).code(0);
    assert_eq!(dir.read("rm.jsonl"), dir.read("rm-jsonl.jsonl"));
    assert!(!dir.read("rm.jsonl").is_empty());
    let (batches, schema, _) = read_back(&dir, "kept.parquet");
    assert_eq!(schema.fields(), input_schema.fields());
    let kept = records(&dir.read("kept.jsonl"));
    let want = |f: fn(&(String, String)) -> &String| -> Vec<Option<String>> {
        kept.iter().map(|r| Some(f(r).clone())).collect()
    };
    assert_eq!(dictionary_strings(&batches, "id"), want(|r| &r.0));
    assert_eq!(dictionary_strings(&batches, "text"), want(|r| &r.1));

    // A null in a dictionary text column is reported with its row, like a plain null.
    let texts: DictionaryArray<Int32Type> =
        [Some("one two three four five"), None, Some("one two three four five")]
            .into_iter()
            .collect();
    let batch = RecordBatch::try_from_iter([("text", Arc::new(texts) as ArrayRef)]).unwrap();
    write_parquet(&dir, "null.parquet", &batch, Compression::UNCOMPRESSED);
    let run = dir.run(&["pairs", "null.parquet"]);
    run.code(1);
    assert_eq!(run.stdout, "id_a\tid_b\tjaccard\trelation\n0\t2\t1.0000\tsame\n");
    assert!(
        run.stderr.contains("null.parquet:2: text column \"text\" is null, not a string"),
        "{}",
        run.stderr
    );
    // A dictionary of another type than strings is refused, naming its type.
    let floats: DictionaryArray<Int32Type> = DictionaryArray::new(
        arrow_array::Int32Array::from(vec![0, 0]),
        Arc::new(arrow_array::Float64Array::from(vec![1.5])),
    );
    let batch = RecordBatch::try_from_iter([("text", Arc::new(floats) as ArrayRef)]).unwrap();
    write_parquet(&dir, "floats.parquet", &batch, Compression::UNCOMPRESSED);
    let run = dir.run(&["pairs", "floats.parquet"]);
    assert!(
        run.code(1).stderr.contains("is Dictionary(Int32, Float64), not a string"),
        "{}",
        run.stderr
    );
}

#[test]
fn dedup_parquet_output_is_the_same_at_any_thread_count() {
    let dir = Dir::new();
    // Two shards of more rows than a batch (4,096), so that several batches of each go
    // from the decoding thread to the encoding one.
    let jsonl = corpus(4500, 11);
    dir.write("all.jsonl", &jsonl);
    let rows = records(&jsonl);
    let half = rows.len() / 2;
    assert!(half > 4096, "{half} rows a shard");
    for (name, part) in [("a.parquet", &rows[..half]), ("b.parquet", &rows[half..])] {
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(1000))
            .build();
        let batch = batch(part);
        let file = std::fs::File::create(dir.path(name)).unwrap();
        let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }
    dir.run(&["dedup", "all.jsonl", "-o", "kept.jsonl", "-q"]).code(0);
    let kept: Vec<String> = records(&dir.read("kept.jsonl")).into_iter().map(|r| r.0).collect();
    assert!(kept.len() < rows.len() && kept.len() > half);
    for annotate in [&[][..], &["--annotate"]] {
        let mut outputs = Vec::new();
        for threads in ["1", "2", "3"] {
            let out = format!("out-{threads}.parquet");
            let args = ["dedup", "a.parquet", "b.parquet", "-q", "-j", threads, "-o", &out];
            dir.run(&[&args[..], annotate].concat()).code(0);
            outputs.push(std::fs::read(dir.path(&out)).unwrap());
        }
        assert!(outputs.iter().all(|o| *o == outputs[0]), "{annotate:?}: -j1, -j2, -j3 differ");
        let (batches, _, _) = read_back(&dir, "out-2.parquet");
        let ids = column_strings(&batches, "id");
        if annotate.is_empty() {
            assert_eq!(ids, kept);
        } else {
            assert_eq!(ids, rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>());
        }
    }
}

#[test]
fn dedup_parquet_output_mirrors_how_the_input_was_written() {
    use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
    use parquet::file::properties::EnabledStatistics;
    use parquet::schema::types::ColumnPath;
    let dir = Dir::new();
    let jsonl = corpus(40, 9);
    dir.write("all.jsonl", &jsonl);
    let rows = records(&jsonl);
    // The text without a dictionary or statistics, the id with a bloom filter, row groups
    // of 5; the crate's defaults would be a dictionary tried on every column, page
    // statistics everywhere, no bloom filter and row groups of a million rows.
    let text = ColumnPath::from("text");
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(5))
        .set_column_dictionary_enabled(text.clone(), false)
        .set_column_statistics_enabled(text.clone(), EnabledStatistics::None)
        .set_column_bloom_filter_enabled(ColumnPath::from("id"), true)
        .build();
    let input = batch(&rows);
    let file = std::fs::File::create(dir.path("in.parquet")).unwrap();
    let mut writer = ArrowWriter::try_new(file, input.schema(), Some(props)).unwrap();
    writer.write(&input).unwrap();
    writer.close().unwrap();
    dir.run(&["dedup", "in.parquet", "-q", "-o", "kept.parquet"]).code(0);
    dir.run(&["dedup", "all.jsonl", "-q", "-o", "kept.jsonl"]).code(0);
    let kept = records(&dir.read("kept.jsonl"));
    assert!(kept.len() < rows.len() && kept.len() > 5, "{} of {}", kept.len(), rows.len());

    let meta = |name: &str| -> Arc<ParquetMetaData> {
        let file = std::fs::File::open(dir.path(name)).unwrap();
        ParquetRecordBatchReaderBuilder::try_new(file).unwrap().metadata().clone()
    };
    let out = meta("kept.parquet");
    let groups = out.row_groups();
    let sizes: Vec<i64> = groups.iter().map(RowGroupMetaData::num_rows).collect();
    assert!(sizes[..sizes.len() - 1].iter().all(|&n| n == 5), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<i64>(), i64::try_from(kept.len()).unwrap());
    let column = |i: usize| groups.iter().map(move |g| g.column(i));
    // url_len and id as the crate writes them by default; text as written.
    for (i, name) in ["url_len", "id", "text"].into_iter().enumerate() {
        let dictionary = name != "text";
        assert!(column(i).all(|c| c.dictionary_page_offset().is_some() == dictionary), "{name}");
        assert!(column(i).all(|c| c.statistics().is_some() == dictionary), "{name}");
        assert!(column(i).all(|c| c.column_index_offset().is_some() == dictionary), "{name}");
        assert!(column(i).all(|c| c.offset_index_offset().is_some()), "{name}");
        assert!(column(i).all(|c| c.bloom_filter_offset().is_some() == (name == "id")), "{name}");
        assert!(column(i).all(|c| c.compression() == Compression::SNAPPY), "{name}");
    }
    // The values and schema are the input's.
    let (batches, schema, _) = read_back(&dir, "kept.parquet");
    assert_eq!(schema.fields(), input.schema().fields());
    assert_eq!(
        column_strings(&batches, "id"),
        kept.iter().map(|r| r.0.clone()).collect::<Vec<_>>()
    );
    assert_eq!(
        column_strings(&batches, "text"),
        kept.iter().map(|r| r.1.clone()).collect::<Vec<_>>()
    );
}
