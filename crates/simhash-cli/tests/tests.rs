//! Integration tests of the `simhash` binaries: every command, input format and bad input.

// Test helpers are `pub` for the test modules (not an API), and the digests test prints
// what it pins when asked.
#![allow(unreachable_pub, clippy::print_stdout, clippy::print_stderr)]

use simhash_index::lsh::Relation;

mod decontaminate;
mod digests;
mod explain;
mod floods;
mod index;
mod index_safety;
mod mirror;
mod mixed;
mod parquet;
mod report;
mod rerun;
mod safety;
mod shards;
mod trust;
mod util;
mod writes;

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::io::{Read, Write};

use simhash_core::{Fingerprint, Fingerprinter, Preset};
use util::{Dir, corpus, rows};

const NEWS: &str = include_str!("../../../examples/news.jsonl");

// ---------------------------------------------------------------------------------------
// The fork's and simhash-cpp's command lines
// ---------------------------------------------------------------------------------------

#[test]
fn fork_command_line_json_both_spellings() {
    let dir = Dir::new();
    dir.write("records.jsonl", corpus(60, 1));
    let base = [
        "--input",
        "records.jsonl",
        "--blocks",
        "5",
        "--distance",
        "3",
        "--output",
        "out.tsv",
        "--format",
        "json",
        "--sample=100000",
    ];
    let mut underscore = base.to_vec();
    underscore.extend(["--text_column=text", "--id_column=id", "--window=5"]);
    dir.run(&underscore).code(0);
    let first = dir.read("out.tsv");
    let mut dash = base.to_vec();
    dash.extend(["--text-column=text", "--id-column=id", "--window=5"]);
    dir.run(&dash).code(0);
    assert_eq!(first, dir.read("out.tsv"));

    assert!(first.starts_with("id\thash\tcluster\n"));
    let rows = rows(&first);
    assert!(rows.len() >= 10, "expected clusters in the planted corpus:\n{first}");
    // Hashes are the fork preset's, in decimal.
    let text_of: HashMap<String, String> = dir
        .read("records.jsonl")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), v["text"].as_str().unwrap().to_string())
        })
        .collect();
    let fork = Fingerprinter::builder().preset(Preset::Fork).window(5).build();
    let mut sizes: HashMap<&str, usize> = HashMap::new();
    let mut last_cluster = -1i64;
    for row in &rows {
        let want = fork.fingerprint(&text_of[&row[0]]).unwrap().get().to_string();
        assert_eq!(row[1], want, "hash of {}", row[0]);
        *sizes.entry(&row[2]).or_default() += 1;
        let c: i64 = row[2].parse().unwrap();
        assert!(c == last_cluster || c == last_cluster + 1, "cluster ids dense and in order");
        last_cluster = c;
    }
    assert!(sizes.values().all(|&n| n >= 2), "only clusters of two or more by default");
}

#[test]
fn fork_command_line_hash_format() {
    let dir = Dir::new();
    let a = 0x0123_4567_89ab_cdefu64;
    let tsv = format!(
        "id\thash\nx\t{a}\ny\t{}\nz\t{}\nw\t0x{:x}\nv\t{}\n",
        a ^ 0b111,        // 3 bits from x
        a ^ 0b1111 << 20, // 4 bits from x
        a,                // identical to x
        !a
    );
    dir.write("hashes.tsv", tsv);
    let args = [
        "--input",
        "hashes.tsv",
        "--blocks",
        "5",
        "--distance",
        "3",
        "--output",
        "out.tsv",
        "--format",
        "hash",
    ];
    dir.run(&args).code(0);
    assert_eq!(
        dir.read("out.tsv"),
        format!("id\thash\tcluster\nx\t{a}\t0\ny\t{}\t0\nw\t{a}\t0\n", a ^ 0b111)
    );
    let mut with_singletons = args.to_vec();
    with_singletons.push("--singletons");
    dir.run(&with_singletons).code(0);
    let out = dir.read("out.tsv");
    assert_eq!(rows(&out).len(), 5);
    assert!(out.ends_with(&format!("z\t{}\t1\nv\t{}\t2\n", a ^ 0b1111 << 20, !a)), "{out}");
}

#[test]
fn find_all_and_find_clusters_match_simhash_cpp_io() {
    let dir = Dir::new();
    let a = 1u64 << 40 | 0x3039;
    // Blank lines (and one of spaces) are not records: counted, not reported, exit 0.
    let input = format!("{a}\n{}\n\n{}\n  \n{a}\n99\n\n", a ^ 1, a ^ 0xff);
    for (bin, args) in [
        ("simhash", vec!["find-all", "--blocks", "6", "--distance", "3"]),
        ("simhash-find-all", vec!["--blocks", "6", "--distance", "3"]),
    ] {
        let run = dir.run_bin(bin, &args, Some(input.as_bytes()));
        run.code(0);
        assert_eq!(run.stdout, format!("[{a},{}]\n[{a},{a}]\n[{},{a}]\n", a ^ 1, a ^ 1), "{bin}");
    }
    for (bin, args) in [
        ("simhash", vec!["find-clusters", "--input", "-", "--output", "-", "--distance", "3"]),
        ("simhash-find-clusters", vec!["--distance", "3"]),
    ] {
        let run = dir.run_bin(bin, &args, Some(input.as_bytes()));
        run.code(0);
        assert_eq!(run.stdout, format!("[{a},{},{a}]\n", a ^ 1), "{bin}");
    }
    let bad = dir.run_bin("simhash-find-all", &[], Some(b"12\nnot a hash\n18446744073709551616\n"));
    bad.code(1);
    assert!(bad.stderr.contains("<stdin>:2: bad hash"), "{}", bad.stderr);
    assert!(bad.stderr.contains("<stdin>:3: bad hash: fingerprint out of range"), "{}", bad.stderr);
}

/// `find-all` lists what simhash-cpp's set of hash pairs gives, checked by brute force over
/// every pair of lines: each `[h(a),h(b)]` of lines `a < b` within k bits, once, in order
/// of the first pair of lines that gives it. The input has many repeated hashes, hashes
/// exactly k and k + 1 bits apart, and a repeated hash whose copies come before and after
/// its neighbours (which gives both `[h1,h2]` and `[h2,h1]`).
#[test]
fn find_all_agrees_with_brute_force_on_repeated_hashes() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let bases: Vec<u64> = (0..25).map(|_| next()).collect();
    let mut hashes = Vec::new();
    for _ in 0..1500 {
        let base = bases[(next() % 25) as usize];
        // 0 to 5 bits flipped, among the low 12 bits so that hashes repeat often.
        let mut h = base;
        for _ in 0..next() % 6 {
            h ^= 1 << (next() % 12);
        }
        hashes.push(h);
    }
    let k = 3;
    let mut expected = String::new();
    let mut seen = BTreeSet::new();
    for a in 0..hashes.len() {
        for b in a + 1..hashes.len() {
            let (x, y) = (hashes[a], hashes[b]);
            if (x ^ y).count_ones() <= k && seen.insert((x, y)) {
                writeln!(expected, "[{x},{y}]").unwrap();
            }
        }
    }
    // More lines than find-all formats in one task (1,024), so several are put in order.
    assert!(seen.iter().any(|(x, y)| x == y) && seen.len() > 3000, "{}", seen.len());
    let mut input = String::new();
    for h in &hashes {
        writeln!(input, "{h}").unwrap();
    }
    let dir = Dir::new();
    // 16K is below the hashes (8 bytes each) and their table (16 bytes each): the search
    // goes in passes (12K is refused, below the hashes and one pass).
    for args in [
        &["-d", "3", "-b", "6"][..],
        &["-d", "3", "-j", "3"],
        &["-d", "3", "-j", "1"],
        &["-d", "3", "--memory", "16K"],
    ] {
        let run = dir.run_bin("simhash-find-all", args, Some(input.as_bytes()));
        run.code(0);
        assert!(run.stdout == expected, "{args:?}: the output differs from brute force");
    }
}

// ---------------------------------------------------------------------------------------
// fingerprint, pairs, cluster
// ---------------------------------------------------------------------------------------

#[test]
fn fingerprint_output_reads_back_as_hash_format() {
    let dir = Dir::new();
    dir.write("news.jsonl", NEWS);
    dir.run(&["fingerprint", "news.jsonl", "-o", "fps.tsv"]).code(0);
    let fps = dir.read("fps.tsv");
    assert!(fps.starts_with("id\thash\n"));
    let f = Fingerprinter::new();
    for (line, row) in NEWS.lines().zip(rows(&fps)) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(row[0], v["id"].as_str().unwrap());
        let want = f.fingerprint(v["text"].as_str().unwrap()).map(|x| x.get().to_string());
        assert_eq!(row[1], want.unwrap_or_default(), "{}", row[0]);
    }
    // Reading the fingerprints back gives the same pairs as reading the text.
    let from_text = dir.run(&["pairs", "news.jsonl", "-k", "8"]);
    let from_hashes = dir.run(&["pairs", "fps.tsv", "-k", "8"]);
    from_text.code(0);
    from_hashes.code(0);
    assert_eq!(from_text.stdout, from_hashes.stdout);
    assert!(rows(&from_text.stdout).len() >= 4, "{}", from_text.stdout);
}

/// The pairs command agrees with a brute-force comparison of the fingerprints.
#[test]
fn pairs_agree_with_brute_force() {
    let dir = Dir::new();
    dir.write("c.jsonl", corpus(150, 7));
    let fps = dir.run(&["fingerprint", "c.jsonl"]);
    fps.code(0);
    let docs: Vec<(String, Option<Fingerprint>)> = rows(&fps.stdout)
        .into_iter()
        .map(|r| (r[0].clone(), Fingerprint::from_decimal(&r[1]).ok()))
        .collect();
    for (k, blocks) in [("0", "auto"), ("3", "auto"), ("3", "4"), ("6", "8"), ("10", "auto")] {
        let run = dir.run(&["pairs", "c.jsonl", "-k", k, "--blocks", blocks]);
        run.code(0);
        let got: Vec<Vec<String>> = rows(&run.stdout);
        let k: u32 = k.parse().unwrap();
        let mut want = Vec::new();
        for i in 0..docs.len() {
            for j in i + 1..docs.len() {
                if let (Some(a), Some(b)) = (docs[i].1, docs[j].1)
                    && a.distance(b) <= k
                {
                    want.push(vec![
                        docs[i].0.clone(),
                        docs[j].0.clone(),
                        a.distance(b).to_string(),
                    ]);
                }
            }
        }
        let first = |i: usize| (0..docs.len()).find(|&x| docs[x].1 == docs[i].1).unwrap();
        let got_all = got.clone();
        assert_eq!(
            got,
            listed(want, |id| index_of(&docs, id), first),
            "k = {k}, blocks = {blocks}"
        );
        if k == 0 {
            assert!(!got_all.is_empty(), "no identical fingerprints tested");
        }
    }
}

/// The position of the record with id `id`.
fn index_of(docs: &[(String, Option<Fingerprint>)], id: &str) -> usize {
    docs.iter().position(|d| d.0 == id).unwrap()
}

/// What `pairs` lists out of every matching pair (`[id_a, id_b, score]` in input order):
/// a record identical to an earlier one (`first(i)`: the first record identical to record
/// `i`) is listed once, with that first one; other pairs only between first records.
fn listed(
    all: Vec<Vec<String>>,
    position: impl Fn(&str) -> usize,
    first: impl Fn(usize) -> usize,
) -> Vec<Vec<String>> {
    all.into_iter()
        .filter(|p| {
            let (a, b) = (position(&p[0]), position(&p[1]));
            if first(a) == first(b) { a == first(a) } else { a == first(a) && b == first(b) }
        })
        .collect()
}

#[test]
fn cluster_subcommand_modes_and_policies() {
    let dir = Dir::new();
    // a~b (2 bits), b~c (2 bits), a and c 4 bits apart: components chain them, star does not.
    let a = 0u64;
    let tsv = format!("id\thash\n30\t{a}\n10\t{}\n20\t{}\n", a ^ 0b11, a ^ 0b1111);
    dir.write("h.tsv", tsv);
    let comp = dir.run(&["cluster", "h.tsv", "-k", "2", "--blocks", "3"]);
    comp.code(0);
    assert_eq!(rows(&comp.stdout).len(), 3);
    let star = dir.run(&["cluster", "h.tsv", "-k", "2", "--blocks", "3", "--mode", "star"]);
    star.code(0);
    assert_eq!(star.stdout, format!("id\thash\tcluster\n30\t0\t0\n10\t3\t0\n"));
    // dedup keeps the lowest id with --keep lowest-id.
    let run = dir.run(&["dedup", "h.tsv", "-k", "2", "--blocks", "3", "--keep", "lowest-id"]);
    run.code(0);
    assert_eq!(run.stdout, "id\thash\n10\t3\n");
}

// ---------------------------------------------------------------------------------------
// dedup
// ---------------------------------------------------------------------------------------

#[test]
fn dedup_keeps_records_byte_for_byte_and_explains_removals() {
    let dir = Dir::new();
    // CRLF line endings, odd spacing and an unknown field must survive unchanged.
    let input = concat!(
        "{\"id\": 1, \"text\": \"the cat sat on the mat and looked at the dog\"}\r\n",
        "{\"id\":2,\"text\":\"The cat sat on the mat, and looked at the dog!\",\"x\":[1,2]}\n",
        "{\"id\":\"three\",\"text\":\"something else entirely, about ships and the sea\"}\n",
        "{\"id\":4,\"text\":\"...\"}\n",
        "{\"id\":5,\"text\":\"!!!\"}\n",
        "{\"id\":6,\"text\":\"THE CAT SAT ON THE MAT AND LOOKED AT THE DOG\"}",
    );
    dir.write("in.jsonl", input);
    // The simhash method reports bits apart; minhash (the default), Jaccard similarity.
    // minhash also says what each pair is (the same text here).
    let minhash = "\"jaccard\":1.0000,\"relation\":\"same\"";
    for (method, score) in [("simhash", "\"distance\":0"), ("minhash", minhash)] {
        let run = dir.run(&[
            "dedup",
            "in.jsonl",
            "-o",
            "kept.jsonl",
            "--removed",
            "removed.jsonl",
            "--method",
            method,
        ]);
        run.code(0);
        let lines: Vec<&str> = input.split_inclusive('\n').collect();
        assert_eq!(dir.read("kept.jsonl"), [lines[0], lines[2], lines[3], lines[4]].concat());
        assert_eq!(
            dir.read("removed.jsonl"),
            format!(
                "{{\"id\":2,\"duplicate_of\":1,{score}}}\n{{\"id\":6,\"duplicate_of\":1,{score}}}\n"
            )
        );
    }
    let run = dir.run(&["dedup", "in.jsonl", "-o", "kept.jsonl", "--removed", "removed.jsonl"]);
    run.code(0);
    // Featureless records (4, 5) are kept and never clustered with each other.
    assert!(
        run.stderr.contains("6 records read (0 skipped), 6 documents (2 featureless)"),
        "{}",
        run.stderr
    );
}

#[test]
fn dedup_from_stdin_reads_the_spooled_input_again() {
    let dir = Dir::new();
    let input = corpus(80, 3);
    let from_file = {
        dir.write("c.jsonl", &input);
        dir.run(&["dedup", "c.jsonl", "--removed", "r1.jsonl"])
    };
    from_file.code(0);
    let from_stdin = dir.run_stdin(&["dedup", "-", "--removed", "r2.jsonl"], input.as_bytes());
    from_stdin.code(0);
    assert_eq!(from_file.stdout, from_stdin.stdout);
    assert_eq!(dir.read("r1.jsonl"), dir.read("r2.jsonl"));
    let kept = from_file.stdout.lines().count();
    let removed = dir.read("r1.jsonl").lines().count();
    assert!(removed > 10, "the corpus has planted copies");
    assert_eq!(kept + removed, input.lines().count(), "read = kept + removed");
}

/// A file of a few MiB with lines across the workers' blocks, long lines over the limit
/// (some longer than a block), blank and bad lines, CRLF and no final newline.
fn blocky_input(seed: u64) -> String {
    let mut rng = util::Rng(seed | 1);
    let ids = format!("\"id\":\"{seed}d");
    let docs: Vec<String> =
        corpus(1500, seed).lines().map(|l| l.replace("\"id\":\"d", &ids)).collect();
    let mut out = String::new();
    for (i, doc) in docs.iter().enumerate() {
        match rng.below(40) {
            0 => out.push('\n'),
            1 => out += "{not json\n",
            2 => {
                let words = "long words ".repeat(1 + rng.below(160_000) as usize);
                let _ = writeln!(out, "{{\"id\":\"long{i}\",\"text\":\"{words}\"}}");
            }
            3 => {
                let _ = write!(out, "{doc}\r\n");
            }
            _ => {}
        }
        out += doc;
        out.push('\n');
    }
    out += r#"{"id":"last","text":"the last line has no end"}"#;
    out
}

#[test]
fn files_read_in_blocks_as_streams_are_read() {
    let dir = Dir::new();
    let (a, b) = (blocky_input(7), blocky_input(8));
    assert!(a.len() > 3 << 20, "several blocks of 1 MiB");
    dir.write("a.jsonl", &a);
    dir.write("b.jsonl", &b);
    let args = ["dedup", "--max-record-bytes", "200000", "-j", "2"];
    let run = |inputs: &[&str], stdin: Option<&str>, removed: &str| {
        let mut all = args.to_vec();
        all.extend(["--removed", removed]);
        all.extend(inputs);
        let run = dir.run_bin("simhash", &all, stdin.map(str::as_bytes));
        run.code(1);
        let removed = dir.read(removed);
        (run, removed)
    };
    // Regular files are read by the workers in blocks; standard input is one stream.
    let (files, files_removed) = run(&["a.jsonl", "b.jsonl"], None, "r1.jsonl");
    for (inputs, stdin, name) in
        [(["-", "b.jsonl"], &a, "a.jsonl"), (["a.jsonl", "-"], &b, "b.jsonl")]
    {
        let (stream, stream_removed) = run(&inputs, Some(stdin), "r2.jsonl");
        assert!(files.stdout == stream.stdout, "kept records differ with {name} on stdin");
        assert!(files_removed == stream_removed, "removed records differ with {name} on stdin");
        // The messages, bar the summary's time.
        let messages = |stderr: &str| {
            let lines: Vec<String> = stderr.lines().map(|l| l.replace("<stdin>", name)).collect();
            let (summary, messages) = lines.split_last().expect("a summary");
            (messages.to_vec(), summary.split(" in ").next().map(str::to_string))
        };
        let (want, got) = (messages(&files.stderr), messages(&stream.stderr));
        let first = want.0.iter().zip(&got.0).position(|(a, b)| a != b);
        assert_eq!(first, None, "messages differ with {name} on stdin");
        assert_eq!((want.0.len(), want.1), (got.0.len(), got.1));
    }
    for want in ["a.jsonl:", "b.jsonl:", "invalid JSON", "longer than --max-record-bytes"] {
        assert!(files.stderr.contains(want), "{want}: {}", files.stderr);
    }
    assert!(files_removed.lines().count() > 100, "the corpus has planted copies");
}

#[test]
fn compressed_inputs() {
    let dir = Dir::new();
    let input = corpus(40, 5);
    dir.write("c.jsonl", &input);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(input.as_bytes()).unwrap();
    dir.write("c.jsonl.gz", gz.finish().unwrap());
    dir.write("c.jsonl.zst", zstd::encode_all(input.as_bytes(), 3).unwrap());
    let plain = dir.run(&["dedup", "c.jsonl"]);
    plain.code(0);
    for name in ["c.jsonl.gz", "c.jsonl.zst"] {
        let run = dir.run(&["dedup", name]);
        run.code(0);
        assert_eq!(run.stdout, plain.stdout, "{name}");
    }
}

// ---------------------------------------------------------------------------------------
// Bad input: a clear message, nothing lost
// ---------------------------------------------------------------------------------------

#[test]
fn eval_refuses_an_empty_truth_and_an_id_in_two_true_clusters() {
    let dir = Dir::new();
    dir.write("p.tsv", "a\tb\n");
    dir.write("empty.jsonl", "");
    let run = dir.run(&["eval", "p.tsv", "--truth", "empty.jsonl"]);
    run.code(2);
    assert_eq!(run.stderr, "simhash: empty.jsonl: no labelled records\n");
    assert_eq!(run.stdout, "");
    dir.write(
        "truth.jsonl",
        "{\"id\":\"a\",\"cluster\":\"x\"}\n{\"id\":\"b\",\"cluster\":\"x\"}\n\
         {\"id\":\"a\",\"cluster\":\"y\"}\n",
    );
    let run = dir.run(&["eval", "p.tsv", "--truth", "truth.jsonl"]);
    run.code(2);
    assert_eq!(
        run.stderr,
        "simhash: truth.jsonl:3: id \"a\" is already in cluster \"x\" (line 1)\n"
    );
    dir.write("truth.tsv", "id\tcluster\na\tx\nb\tx\n");
    let run = dir.run(&["eval", "p.tsv", "--truth", "truth.tsv"]);
    run.code(0);
    assert!(run.stdout.contains("pairwise  precision 1.0000  recall 1.0000"), "{}", run.stdout);
}

#[test]
fn bad_records_are_reported_with_file_and_line_and_skipped() {
    let dir = Dir::new();
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":\"ok1\",\"text\":\"a perfectly fine record\"}\n"); // 1
    input.extend_from_slice(b"{\"id\":\"bad-json\",\"text\":\"unterminated}\n"); // 2
    input.extend_from_slice(b"{\"id\":\"no-text\"}\n"); // 3
    input.extend_from_slice(b"{\"id\":\"num-text\",\"text\":42}\n"); // 4
    input.extend_from_slice(b"{\"id\":\"bad-utf8\",\"text\":\"caf\xe9\"}\n"); // 5
    input.extend_from_slice(b"\n"); // 6
    input.extend_from_slice(b"{\"id\":\"ok1\",\"text\":\"a duplicate id\"}\n"); // 7
    input.extend_from_slice(b"{\"id\":\"long\",\"text\":\""); // 8
    input.extend_from_slice("word ".repeat(400).as_bytes());
    input.extend_from_slice(b"\"}\n");
    input.extend_from_slice(b"{\"id\":[1],\"text\":\"array id\"}\r\n"); // 9
    input.extend_from_slice(b"{\"id\":\"ok2\",\"text\":\"no final newline\"}"); // 10
    dir.write("bad.jsonl", &input);
    let run = dir.run(&[
        "fingerprint",
        "bad.jsonl",
        "-o",
        "out.tsv",
        "--max-record-bytes",
        "1000",
        "--stats",
        "stats.json",
    ]);
    run.code(1);
    for want in [
        "bad.jsonl:2: invalid JSON",
        "bad.jsonl:3: missing text field \"text\"",
        "bad.jsonl:4: text field \"text\" is a number, not a string",
        "bad.jsonl:5: invalid UTF-8 at byte 29",
        "bad.jsonl:7: duplicate id \"ok1\"",
        "bad.jsonl:8: record of 2024 bytes is longer than --max-record-bytes 1000",
        "bad.jsonl:9: id field \"id\" is an array",
    ] {
        assert!(run.stderr.contains(want), "missing {want:?} in:\n{}", run.stderr);
    }
    let out = dir.read("out.tsv");
    assert_eq!(rows(&out).iter().map(|r| r[0].as_str()).collect::<Vec<_>>(), ["ok1", "ok2"]);
    let stats: serde_json::Value = serde_json::from_str(&dir.read("stats.json")).unwrap();
    assert!(!run.stderr.contains("bad.jsonl:6"), "a blank line is not a record:\n{}", run.stderr);
    assert_eq!(stats["blank_lines"], 1);
    assert_eq!(stats["records_read"], 9);
    assert_eq!(stats["records_skipped"], 7);
    assert_eq!(stats["written"], 2, "read = written + reported");
    assert_eq!(stats["skipped"]["duplicate_id"], 1);
    assert_eq!(stats["skipped"]["too_long"], 1);
}

/// A key the run reads by (the text, the id, a step of a nested path) twice in one object
/// is a bad record: JSON readers disagree on which value counts. Other keys may repeat.
#[test]
fn repeated_keys_on_the_read_paths_are_bad_records() {
    let dir = Dir::new();
    let lines = [
        r#"{"meta":{"id":"a"},"text":"the first fine record here","x":1,"x":2}"#,
        r#"{"meta":{"id":"b"},"text":5,"text":"the text given twice"}"#,
        r#"{"meta":{"id":"c","id":"d"},"text":"the id given twice"}"#,
        r#"{"meta":{"id":"e"},"meta":{"id":"f"},"text":"the id's object twice"}"#,
        r#"{"meta":{"id":"g","lang":"en","lang":"fr"},"text":"the second fine record"}"#,
        r#"{"meta":{"id":"h"},"text":"the text twice","text":"escaped"}"#,
    ];
    dir.write("d.jsonl", lines.join("\n") + "\n");
    let id = ["--id-column", "meta.id"];
    let run =
        dir.run(&["fingerprint", "d.jsonl", id[0], id[1], "-o", "o.tsv", "--stats", "s.json"]);
    run.code(1);
    for want in [
        "simhash: d.jsonl:2: duplicate key \"text\"\n",
        "simhash: d.jsonl:3: duplicate key \"meta.id\"\n",
        "simhash: d.jsonl:4: duplicate key \"meta\"\n",
        "simhash: d.jsonl:6: duplicate key \"text\"\n",
    ] {
        assert!(run.stderr.contains(want), "missing {want:?} in:\n{}", run.stderr);
    }
    let ids: Vec<String> = rows(&dir.read("o.tsv")).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(ids, ["a", "g"]);
    let stats: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(stats["skipped"]["duplicate_key"], 4);
    assert_eq!(stats["records_skipped"], 4);
    // The same from a stream, and --strict stops at the first.
    let stream = dir.run_stdin(&["fingerprint", "-", id[0], id[1]], dir.read("d.jsonl").as_bytes());
    stream.code(1);
    assert!(stream.stderr.contains("<stdin>:3: duplicate key \"meta.id\""), "{}", stream.stderr);
    let strict = dir.run(&["fingerprint", "d.jsonl", id[0], id[1], "--strict"]);
    strict.code(2);
    assert!(strict.stderr.contains("d.jsonl:2: duplicate key \"text\""), "{}", strict.stderr);
    // The second pass writes only the records the first accepted, annotated or not.
    for annotate in [false, true] {
        let mut args = vec!["dedup", "d.jsonl", id[0], id[1], "-o", "kept.jsonl"];
        if annotate {
            args.push("--annotate");
        }
        dir.run(&args).code(1);
        let kept = dir.read("kept.jsonl");
        let firsts: Vec<&str> = kept.lines().map(|l| &l[..18]).collect();
        assert_eq!(firsts, [&lines[0][..18], &lines[4][..18]], "annotate {annotate}");
    }
}

/// `bin args` run in `dir` through a shell with `redirect` (`<&-`, `>&-`): its exit code
/// and stderr.
fn redirected(dir: &Dir, bin: &str, args: &str, redirect: &str) -> (Option<i32>, String) {
    let exe = dir.cmd(bin).get_program().to_owned();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$0\" {args} {redirect}"))
        .arg(exe)
        .current_dir(dir.path(""))
        .output()
        .expect("run sh");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Standard input closed (`<&-`), as an input, is an error (exit 2), not an empty input:
/// Rust's runtime would otherwise read `/dev/null` in its place.
#[test]
fn a_closed_standard_input_is_refused() {
    let dir = Dir::new();
    dir.write("c.jsonl", "{\"text\":\"a fine record\"}\n");
    let shell = |bin: &str, args: &str, redirect: &str| redirected(&dir, bin, args, redirect);
    let closed = |bin: &str, args: &str| shell(bin, args, "<&-");
    for (bin, args) in [
        ("simhash", "dedup - -o out.jsonl"),
        ("simhash", "fingerprint"),
        ("simhash", "pairs c.jsonl - -o out.tsv"),
        ("simhash-find-all", "-o out.tsv"),
    ] {
        let (code, stderr) = closed(bin, args);
        assert_eq!(code, Some(2), "{bin} {args}: {stderr}");
        assert!(stderr.contains("standard input is closed"), "{bin} {args}: {stderr}");
    }
    assert_eq!(dir.files(), ["c.jsonl"], "nothing written");
    // A run that does not read standard input does not mind.
    let (code, stderr) = closed("simhash", "fingerprint c.jsonl -o out.tsv");
    assert_eq!(code, Some(0), "{stderr}");
    // An empty standard input is read as one.
    let (code, stderr) = shell("simhash", "fingerprint -", "< /dev/null");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("<stdin>: empty input, no records"), "{stderr}");
}

/// A mistyped subcommand is named as one, with the closest subcommand, where the fork's job
/// (no subcommand) read it as an input file that cannot be opened; a file of that name
/// that exists is still an input.
#[test]
fn a_mistyped_subcommand_is_named_as_one() {
    let dir = Dir::new();
    dir.write("c.jsonl", NEWS);
    for (typed, closest) in
        [("dedupe", Some("dedup")), ("fingerprnt", Some("fingerprint")), ("zzz", None)]
    {
        let run = dir.run(&[typed, "c.jsonl"]);
        run.code(2);
        assert!(
            run.stderr.contains(&format!("`{typed}` is not a subcommand")),
            "{typed}: {}",
            run.stderr
        );
        if let Some(closest) = closest {
            assert!(run.stderr.contains(&format!("did you mean `{closest}`?")), "{}", run.stderr);
        }
        assert!(!run.stderr.contains("cannot open"), "{}", run.stderr);
    }
    // A file named like a word is an input of the fork's job, as before.
    dir.write("dedupe", NEWS);
    let run = dir.run(&["dedupe", "-q"]);
    run.code(0);
    assert!(run.stdout.starts_with("id\thash\tcluster"), "{}", run.stdout);
}

/// File names are printed escaped, as ids are: a terminal escape in a name is never sent to
/// the terminal raw (problems, errors).
#[test]
fn file_names_in_messages_are_escaped() {
    let dir = Dir::new();
    let evil = "evil\u{1b}[2Jname.jsonl";
    dir.write(evil, format!("{NEWS}{{\"text\":1}}\n"));
    for args in [vec!["dedup", evil, "-o", "k.jsonl"], vec!["dedup", "no\u{1b}[31mne.jsonl"]] {
        let run = dir.run(&args);
        assert!(!run.stderr.contains('\u{1b}'), "{args:?}: {:?}", run.stderr);
        assert!(run.stderr.contains("\\u{1b}["), "{args:?}: {}", run.stderr);
    }
}

/// Standard output closed when a run starts (`>&-`) is refused where it is an output (Rust
/// would put `/dev/null` there and the run would report success with nothing written): exit
/// 2, naming the flag, nothing created; a run writing only to files does not mind.
#[test]
fn a_closed_standard_output_is_refused() {
    let dir = Dir::new();
    dir.write("c.jsonl", NEWS);
    let shell = |bin: &str, args: &str| redirected(&dir, bin, args, ">&- </dev/null");
    assert_eq!(shell("simhash", "index add ix c.jsonl -q").0, Some(0));
    let before = dir.files();
    for (bin, args, flag) in [
        ("simhash", "dedup c.jsonl -o -", "--output -"),
        ("simhash", "dedup c.jsonl", "--output -"),
        ("simhash", "dedup c.jsonl -o k.jsonl --removed -", "--removed -"),
        ("simhash", "dedup c.jsonl -o k.jsonl --report -", "--report -"),
        ("simhash", "pairs c.jsonl", "--output -"),
        ("simhash", "cluster c.jsonl", "--output -"),
        ("simhash", "fingerprint c.jsonl", "--output -"),
        ("simhash", "dedup c.jsonl -o /dev/stdout", "--output -"),
        ("simhash", "index query ix c.jsonl", "--output -"),
        ("simhash", "explain --input c.jsonl wire-001 blog-101", ""),
        ("simhash-find-all", "c.jsonl", "--output -"),
    ] {
        let (code, stderr) = shell(bin, args);
        assert_eq!(code, Some(2), "{bin} {args}: {stderr}");
        assert!(stderr.contains("standard output is closed"), "{bin} {args}: {stderr}");
        if !flag.is_empty() && !args.contains("/dev/stdout") {
            assert!(stderr.contains(flag), "{bin} {args}: {stderr}");
        }
    }
    assert_eq!(dir.files(), before, "nothing written");
    let (code, stderr) = shell("simhash", "dedup c.jsonl -o k.jsonl -q");
    assert_eq!(code, Some(0), "{stderr}");
}

/// A line longer than a MiB (a block) within the limit is read whole, the same from a
/// file read in blocks, standard input and compressed files; over the limit, it is skipped
/// and the next records are read.
#[test]
fn lines_longer_than_a_block_are_read_the_same_from_every_source() {
    let dir = Dir::new();
    let words = "long line words ".repeat(200_000);
    let input = format!(
        "{{\"id\":\"a\",\"text\":\"first\"}}\n{{\"id\":\"long\",\"text\":\"{words}\"}}\r\n\
         {{\"id\":\"b\",\"text\":\"after\"}}\n"
    );
    assert!(input.len() > 3 << 20);
    dir.write("c.jsonl", &input);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(input.as_bytes()).unwrap();
    dir.write("c.jsonl.gz", gz.finish().unwrap());
    dir.write("c.jsonl.zst", zstd::encode_all(input.as_bytes(), 1).unwrap());
    let long = input.lines().nth(1).unwrap().len() + 2; // with its "\r\n"
    // Fits, fits exactly (the "\r\n" aside), one byte over, far over.
    let limits = [long + 1000, long - 2, long - 3, 1000].map(|n| n.to_string());
    for (limit, code) in limits.iter().map(String::as_str).zip([0, 0, 1, 1]) {
        let plain = dir.run(&["fingerprint", "c.jsonl", "--max-record-bytes", limit]);
        plain.code(code);
        let ids: Vec<String> = rows(&plain.stdout).into_iter().map(|r| r[0].clone()).collect();
        let want: &[&str] = if code == 0 { &["a", "long", "b"] } else { &["a", "b"] };
        assert_eq!(ids, want, "limit {limit}");
        if code == 1 {
            let message = format!("c.jsonl:2: record of {long} bytes is longer");
            assert!(plain.stderr.contains(&message), "{}", plain.stderr);
        }
        let stdin =
            dir.run_stdin(&["fingerprint", "-", "--max-record-bytes", limit], input.as_bytes());
        assert_eq!((stdin.code, &stdin.stdout), (code, &plain.stdout), "stdin, limit {limit}");
        for name in ["c.jsonl.gz", "c.jsonl.zst"] {
            let run = dir.run(&["fingerprint", name, "--max-record-bytes", limit]);
            assert_eq!((run.code, &run.stdout), (code, &plain.stdout), "{name}, limit {limit}");
        }
    }
}

#[test]
fn strict_stops_at_the_first_bad_record_and_writes_nothing() {
    let dir = Dir::new();
    dir.write("out.tsv", "previous contents\n");
    dir.write("bad.jsonl", "{\"text\":\"fine\"}\n{\"text\":\n{\"text\":\"fine too\"}\n");
    let run = dir.run(&["fingerprint", "bad.jsonl", "-o", "out.tsv", "--strict"]);
    run.code(2);
    assert!(run.stderr.contains("bad.jsonl:2: invalid JSON"), "{}", run.stderr);
    assert!(run.stderr.contains("--strict"), "{}", run.stderr);
    assert_eq!(dir.read("out.tsv"), "previous contents\n", "the old output is untouched");
    assert_eq!(dir.files(), ["bad.jsonl", "out.tsv"], "no temporary file left behind");
}

#[test]
fn bad_hashes_in_tsv() {
    let dir = Dir::new();
    dir.write(
        "h.tsv",
        "id\thash\na\t12\nb\tnope\nc\t18446744073709551616\nd\nd2\t1\t2\ne\t0x1f\nf\t\n",
    );
    let run = dir.run(&["fingerprint", "h.tsv", "--format", "hash"]);
    run.code(1);
    for want in [
        "h.tsv:3: bad hash: invalid fingerprint",
        "h.tsv:4: bad hash: fingerprint out of range",
        "h.tsv:5: expected 2 TAB-separated columns (id, hash), found 1",
        "h.tsv:6: expected 2 TAB-separated columns (id, hash), found 3",
    ] {
        assert!(run.stderr.contains(want), "missing {want:?} in:\n{}", run.stderr);
    }
    assert_eq!(run.stdout, "id\thash\na\t12\ne\t31\nf\t\n");
}

#[test]
fn empty_input_is_reported() {
    let dir = Dir::new();
    dir.write("empty.jsonl", "");
    let run = dir.run(&["dedup", "empty.jsonl", "-o", "out.jsonl"]);
    run.code(1);
    assert!(run.stderr.contains("empty.jsonl: empty input, no records"), "{}", run.stderr);
    assert_eq!(dir.read("out.jsonl"), "");
    dir.run(&["dedup", "empty.jsonl", "--strict"]).code(2);
}

#[test]
fn usage_errors_exit_2() {
    let dir = Dir::new();
    dir.write("c.jsonl", "{\"text\":\"x\"}\n");
    let cases: [&[&str]; 5] = [
        &["pairs", "c.jsonl", "--blocks", "3", "-k", "3"],
        &["pairs", "c.jsonl", "-k", "64"],
        &["pairs", "c.jsonl", "--blocks", "lots"],
        &["pairs", "missing.jsonl"],
        &["fingerprint", "c.jsonl", "--preset", "nope"],
    ];
    for args in cases {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains("simhash") || run.stderr.contains("error"), "{}", run.stderr);
    }
    let missing = dir.run(&["pairs", "missing.jsonl"]);
    assert!(missing.stderr.contains("missing.jsonl: cannot open"), "{}", missing.stderr);
    dir.run(&["--help"]).code(0);
    let help = dir.run(&["dedup", "--help"]);
    help.code(0);
    // --method's default said once (clap's own "[default: ...]").
    let method = &help.stdout[help.stdout.find("--method <METHOD>").expect("--method")..];
    let method = &method[..method.find("\n  -").unwrap_or(method.len())];
    assert_eq!(method.matches("default").count(), 1, "{method}");
    dir.run(&["--version"]).code(0);
    // `-d` (find-all's) and `-k` are one flag everywhere, not a clap tip about values.
    let d = dir.run(&["pairs", "c.jsonl", "-d", "5"]);
    d.code(0);
    assert_eq!(d.stdout, dir.run(&["pairs", "c.jsonl", "-k", "5"]).stdout);
    let d = dir.run(&["find-all", "-k", "5"]);
    assert!(!d.stderr.contains("tip:"), "{}", d.stderr);
}

// ---------------------------------------------------------------------------------------
// Behaviour users rely on
// ---------------------------------------------------------------------------------------

#[test]
fn output_does_not_depend_on_thread_count() {
    let dir = Dir::new();
    // More lines than one batch holds, so batches finish out of order.
    dir.write("c.jsonl", corpus(1500, 11));
    for command in ["fingerprint", "pairs", "dedup", "cluster"] {
        let k: &[&str] = if command == "fingerprint" { &[] } else { &["-k", "6"] };
        let one = dir.run(&[&[command, "c.jsonl", "-j1"], k].concat());
        let four = dir.run(&[&[command, "c.jsonl", "-j4"], k].concat());
        one.code(0);
        four.code(0);
        assert_eq!(one.stdout, four.stdout, "{command}");
    }
}

#[test]
fn sample_is_reproducible_with_seed() {
    let dir = Dir::new();
    dir.write("c.jsonl", corpus(200, 2));
    let sample = |seed: &str| {
        let run = dir.run(&["fingerprint", "c.jsonl", "--sample", "50", "--seed", seed]);
        run.code(0);
        rows(&run.stdout).into_iter().map(|r| r[0].clone()).collect::<Vec<_>>()
    };
    let a = sample("1");
    assert_eq!(a.len(), 50);
    assert_eq!(a, sample("1"));
    assert_ne!(a, sample("2"));
    // In input order.
    let all: Vec<String> = rows(&dir.run(&["fingerprint", "c.jsonl"]).stdout)
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let positions: Vec<usize> =
        a.iter().map(|id| all.iter().position(|x| x == id).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    let threads = dir.run(&["fingerprint", "c.jsonl", "--sample", "50", "--seed", "1", "-j3"]);
    assert_eq!(rows(&threads.stdout).into_iter().map(|r| r[0].clone()).collect::<Vec<_>>(), a);
}

#[test]
fn missing_ids_become_line_numbers_and_nested_fields_work() {
    let dir = Dir::new();
    dir.write(
        "n.jsonl",
        "{\"doc\":{\"body\":\"alpha beta gamma\"}}\n{\"doc\":{\"body\":\"delta\"},\"meta\":{\"key\":\"k2\"}}\n{\"doc\":{\"body\":\"epsilon\"}}\n",
    );
    let run = dir.run(&[
        "fingerprint",
        "n.jsonl",
        "--text-column",
        "doc.body",
        "--id-column",
        "meta.key",
    ]);
    // The first record has no id, so records are numbered by line; the second, which has
    // one, is reported (mixing both could give two records one id).
    run.code(1);
    assert!(run.stderr.contains("n.jsonl:2: has an id, but earlier records have none"));
    let ids: Vec<String> = rows(&run.stdout).into_iter().map(|r| r[0].clone()).collect();
    assert_eq!(ids, ["0", "2"]);
}

/// Output closed early (`simhash … | head -1`): exit 0, no message. `dedup` and `cluster
/// --annotate` write the kept records from the application layer (`simhash-jobs`), whose
/// error wraps the closed pipe.
#[test]
fn broken_pipe_exits_quietly() {
    let dir = Dir::new();
    dir.write("c.jsonl", corpus(3000, 4));
    for args in [&["fingerprint"][..], &["dedup"], &["cluster", "--annotate"]] {
        let mut child = dir
            .cmd("simhash")
            .args(args)
            .arg("c.jsonl")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

#[test]
fn stats_file_summarises_the_run() {
    let dir = Dir::new();
    dir.write("news.jsonl", NEWS);
    dir.run(&["dedup", "news.jsonl", "-o", "kept.jsonl", "--stats", "s.json", "-q"]).code(0);
    let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(s["command"], "dedup");
    assert_eq!(s["records_read"], NEWS.lines().count());
    assert_eq!(s["featureless"], 1);
    let removed = s["removed"].as_u64().unwrap();
    assert!(removed >= 3);
    assert_eq!(s["written"].as_u64().unwrap() + removed, NEWS.lines().count() as u64);
    for phase in ["reading", "matching", "clustering", "writing"] {
        assert!(s["seconds"][phase].is_number(), "{phase}: {s}");
    }
}

#[test]
fn featureless_records_never_match_each_other() {
    let dir = Dir::new();
    let mut input = String::new();
    for i in 0..50 {
        writeln!(input, "{{\"id\":{i},\"text\":\"{}\"}}", ".".repeat(i % 6)).unwrap();
    }
    dir.write("f.jsonl", input);
    for preset in ["default", "moz", "fork"] {
        // moz and fork are simhash presets; the default runs minhash.
        let header = if preset == "default" { "jaccard\trelation" } else { "distance" };
        let run = dir.run(&["pairs", "f.jsonl", "--preset", preset]);
        run.code(0);
        assert_eq!(run.stdout, format!("id_a\tid_b\t{header}\n"), "{preset}");
        let run = dir.run(&["pairs", "f.jsonl", "--preset", preset, "--method", "simhash"]);
        assert_eq!(run.stdout, "id_a\tid_b\tdistance\n", "{preset}");
    }
}

#[test]
fn presets_on_the_command_line_match_the_library() {
    let dir = Dir::new();
    dir.write("news.jsonl", NEWS);
    for (preset, window) in
        [(Preset::Moz, 3), (Preset::Fork, 5), (Preset::Fork, 8), (Preset::DefaultV1, 2)]
    {
        let run = dir.run(&[
            "fingerprint",
            "news.jsonl",
            "--preset",
            preset.name(),
            "--window",
            &window.to_string(),
        ]);
        run.code(0);
        let f = Fingerprinter::builder().preset(preset).window(window).build();
        let got: BTreeSet<String> = rows(&run.stdout).into_iter().map(|r| r[1].clone()).collect();
        let want: BTreeSet<String> = NEWS
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                f.fingerprint(v["text"].as_str().unwrap())
                    .map(|x| x.get().to_string())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(got, want, "{preset} window {window}");
    }
}

#[test]
fn find_all_binaries_take_simhash_cpp_short_flags() {
    let dir = Dir::new();
    dir.write("h.txt", "7\n6\n1000000\n4\n");
    for bin in ["simhash-find-all", "simhash-find-clusters"] {
        let run = dir.run_bin(bin, &["-b", "6", "-d", "3", "-i", "h.txt", "-o", "out.txt"], None);
        run.code(0);
        let want = if bin == "simhash-find-all" { "[7,6]\n[7,4]\n[6,4]\n" } else { "[7,6,4]\n" };
        assert_eq!(dir.read("out.txt"), want, "{bin}");
        let help = dir.run_bin(bin, &["--help"], None);
        help.code(0);
        assert!(help.stdout.starts_with("simhash-cpp's"), "{}", help.stdout);
        assert!(help.stdout.contains(&format!("Usage: {bin} [OPTIONS]")), "{}", help.stdout);
    }
}

#[cfg(unix)]
#[test]
fn outputs_to_devices_and_inputs_from_pipes() {
    let dir = Dir::new();
    let input = corpus(60, 9);
    dir.write("c.jsonl", &input);
    // A device is written, never replaced by a file.
    dir.run(&["dedup", "c.jsonl", "-o", "/dev/null", "--removed", "/dev/null"]).code(0);
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file(), "/dev/null must stay a device");
    // dedup reads its input twice: a named pipe is copied on the first pass.
    let fifo = dir.path("fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let writer = {
            let fifo = fifo.clone();
            let input = input.clone();
            std::thread::spawn(move || std::fs::write(fifo, input).unwrap())
        };
        let from_pipe = dir.run(&["dedup", "fifo.jsonl"]);
        writer.join().unwrap();
        from_pipe.code(0);
        assert_eq!(from_pipe.stdout, dir.run(&["dedup", "c.jsonl"]).stdout);
    }
}

#[cfg(unix)]
#[test]
fn replaced_outputs_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    dir.write("news.jsonl", NEWS);
    let out = dir.write("out.tsv", "old\n");
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    dir.run(&["fingerprint", "news.jsonl", "-o", "out.tsv"]).code(0);
    assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o640);
    // A new file is not private to its owner (the umask decides, as for any new file).
    dir.run(&["fingerprint", "news.jsonl", "-o", "new.tsv"]).code(0);
    let mode = std::fs::metadata(dir.path("new.tsv")).unwrap().permissions().mode();
    assert_ne!(mode & 0o777, 0o600, "mode {mode:o}");
}

#[test]
fn ids_keep_their_type_and_generated_ids_do_not_clash() {
    let dir = Dir::new();
    let text = "the same words in the same order make the same fingerprint";
    // A record without an id would be numbered 0, the id of the next one: the first
    // record decides, and the others are reported and skipped (exit 1), never given an id
    // that another record has.
    let input = format!(
        "\u{feff}{{\"text\":\"{text}\"}}\n{{\"id\":0,\"text\":\"{text}\"}}\n{{\"id\":\"42\",\"text\":\"{text}\"}}\n"
    );
    dir.write("ids.jsonl", input);
    let run = dir.run(&["dedup", "ids.jsonl", "--removed", "removed.jsonl"]);
    run.code(1);
    assert!(run.stderr.contains("ids.jsonl:2: has an id, but earlier records have none"));
    assert!(run.stderr.contains("ids.jsonl:3: has an id"), "{}", run.stderr);
    assert_eq!(dir.read("removed.jsonl"), "");
    // The other way round: ids first, then a record without one.
    let input = format!(
        "{{\"id\":1,\"text\":\"{text}\"}}\n{{\"text\":\"{text}\"}}\n{{\"id\":\"1.50\",\"text\":\"{text}\"}}\n"
    );
    dir.write("ids.jsonl", input);
    let run = dir.run(&["dedup", "ids.jsonl", "--removed", "removed.jsonl", "--stats", "s.json"]);
    run.code(1);
    assert!(run.stderr.contains("ids.jsonl:2: no id, but earlier records have one"));
    let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(s["skipped"]["mixed_ids"], 1);
    // Numeric ids are written back exactly as read.
    assert_eq!(
        dir.read("removed.jsonl"),
        "{\"id\":\"1.50\",\"duplicate_of\":1,\"jaccard\":1.0000,\"relation\":\"same\"}\n"
    );
    // Without any ids, records are numbered by line (from 0).
    dir.write("plain.jsonl", format!("{{\"text\":\"{text}\"}}\n{{\"text\":\"{text}\"}}\n"));
    let run = dir.run(&["dedup", "plain.jsonl", "--removed", "removed.jsonl"]);
    run.code(0);
    let want = "{\"id\":1,\"duplicate_of\":0,\"jaccard\":1.0000,\"relation\":\"same\"}\n";
    assert_eq!(dir.read("removed.jsonl"), want);
}

#[test]
fn keep_longest_and_uppercase_extensions() {
    let dir = Dir::new();
    let short = "one two three four five six seven eight nine ten";
    let input = format!(
        "{{\"id\":\"a\",\"text\":\"{short}\"}}\n{{\"id\":\"b\",\"text\":\"{short}!!!!!!\"}}\n"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(input.as_bytes()).unwrap();
    dir.write("IN.JSONL.GZ", gz.finish().unwrap());
    let run = dir.run(&["dedup", "IN.JSONL.GZ", "--keep", "longest"]);
    run.code(0);
    assert_eq!(run.stdout, input.lines().nth(1).unwrap().to_string() + "\n");
}

#[test]
fn bad_settings_fail_before_reading() {
    let dir = Dir::new();
    dir.write("c.jsonl", "{\"text\":\"x\"}\n");
    let run = dir.run(&["pairs", "c.jsonl", "--blocks", "2", "-k", "3", "-o", "out.tsv"]);
    run.code(2);
    assert!(run.stderr.contains("invalid --blocks and -k/--distance"), "{}", run.stderr);
    assert!(!run.stderr.contains("records read"), "nothing was read: {}", run.stderr);
    let run = dir.run(&["dedup", "c.jsonl", "-o", "no/such/dir/out.jsonl"]);
    run.code(2);
    assert!(
        run.stderr.contains("no/such/dir/out.jsonl: cannot create output file"),
        "{}",
        run.stderr
    );
    dir.run(&["fingerprint", "c.jsonl", "--window", "0"]).code(2);
    dir.run(&["fingerprint", "c.jsonl", "--window", "65"]).code(2);
}

// ---------------------------------------------------------------------------------------
// minhash
// ---------------------------------------------------------------------------------------

/// A corpus with near-duplicates at many edit rates, exact copies and featureless records,
/// as JSONL; returns it and its texts.
fn graded_corpus(seed: u64) -> (String, Vec<String>) {
    let vocab: Vec<&str> = include_str!("../../../LICENSE-APACHE").split_whitespace().collect();
    let mut state = seed | 1;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut texts = Vec::new();
    for _ in 0..120 {
        let n = 30 + next(150);
        let words: Vec<&str> = (0..n).map(|_| vocab[next(vocab.len())]).collect();
        texts.push(words.join(" "));
        for _ in 0..next(4) {
            // Replace 0 to 30% of the words: Jaccard from 1 down to about 0.2.
            let mut copy = words.clone();
            for _ in 0..next(n * 3 / 10 + 1) {
                copy[next(n)] = vocab[next(vocab.len())];
            }
            texts.push(copy.join(" "));
        }
    }
    for i in 0..10 {
        texts.push(texts[i * 7].clone());
        texts.push("...".repeat(i % 3));
    }
    let mut jsonl = String::new();
    for (i, t) in texts.iter().enumerate() {
        writeln!(jsonl, "{}", serde_json::json!({"id": format!("d{i}"), "text": t})).unwrap();
    }
    (jsonl, texts)
}

/// The default preset's shingle sets (64-bit hashes), sorted.
fn shingle_sets(texts: &[String]) -> Vec<Vec<u64>> {
    let fp = simhash_core::Fingerprinter::new();
    texts
        .iter()
        .map(|t| {
            let mut s = Vec::new();
            fp.for_each_feature(t, |h, _| s.push(h));
            s.sort_unstable();
            s.dedup();
            s
        })
        .collect()
}

/// For each text, the first text with the same shingle set.
fn first_identical(texts: &[String]) -> Vec<usize> {
    let sets = shingle_sets(texts);
    (0..sets.len()).map(|i| (0..=i).find(|&x| sets[x] == sets[i]).unwrap()).collect()
}

/// Brute-force exact Jaccard of the default preset's shingle sets (64-bit hashes).
fn brute_jaccard(texts: &[String]) -> Vec<(usize, usize, f64)> {
    let sets: Vec<std::collections::HashSet<u64>> =
        shingle_sets(texts).into_iter().map(|s| s.into_iter().collect()).collect();
    let mut out = Vec::new();
    for a in 0..sets.len() {
        for b in a + 1..sets.len() {
            if sets[a].is_empty() || sets[b].is_empty() {
                continue;
            }
            let inter = sets[a].intersection(&sets[b]).count();
            let j = inter as f64 / (sets[a].len() + sets[b].len() - inter) as f64;
            out.push((a, b, j));
        }
    }
    out
}

/// The relation `simhash pairs` gives texts `a` and `b` (the lesser of both directions),
/// from their tokens (the engine's rule).
fn relation_of(b: &str, a: &str) -> Relation {
    let words = |t: &str| {
        let mut out = Vec::new();
        simhash_core::Fingerprinter::new().for_each_shingle_and_token(t, |_| {}, |w| out.push(w));
        out
    };
    simhash_index::lsh::pair_relation(&words(a), &words(b))
}

#[test]
fn minhash_pairs_are_exact_and_agree_with_brute_force() {
    let dir = Dir::new();
    let (jsonl, texts) = graded_corpus(7);
    dir.write("g.jsonl", &jsonl);
    let brute = brute_jaccard(&texts);
    let index = |id: &str| id.trim_start_matches('d').parse::<usize>().unwrap();
    for threshold in ["0.4", "0.7"] {
        let t: f64 = threshold.parse().unwrap();
        let one = dir.run(&["pairs", "g.jsonl", "--jaccard", threshold, "-j", "1", "-q"]);
        one.code(0);
        let four = dir.run(&["pairs", "g.jsonl", "--jaccard", threshold, "-j", "4", "-q"]);
        assert_eq!(one.stdout, four.stdout, "output depends on the thread count");
        let mut lines = one.stdout.lines();
        assert_eq!(lines.next(), Some("id_a\tid_b\tjaccard\trelation"));
        let mut found = std::collections::HashMap::new();
        for line in lines {
            let f: Vec<&str> = line.split('\t').collect();
            let (a, b) = (index(f[0]), index(f[1]));
            assert!(a < b, "{line}");
            // The pair's relation read from their tokens: the lesser of its two directions.
            assert_eq!(f[3], relation_of(&texts[b], &texts[a]).name(), "{line}");
            assert!(found.insert((a, b), f[2].parse::<f64>().unwrap()).is_none(), "twice: {line}");
        }
        // Identical texts are listed once, with the first of them; other pairs between
        // first texts only.
        let first = first_identical(&texts);
        let listed = |a: usize, b: usize| {
            if first[a] == first[b] { a == first[a] } else { a == first[a] && b == first[b] }
        };
        // Pairs of two texts that both have content of their own (overlap) are not listed.
        let acted = |a: usize, b: usize| relation_of(&texts[b], &texts[a]) != Relation::Overlap;
        let truth: std::collections::HashMap<(usize, usize), f64> = brute
            .iter()
            .filter(|p| p.2 >= t - 1e-9 && listed(p.0, p.1) && acted(p.0, p.1))
            .map(|p| ((p.0, p.1), p.2))
            .collect();
        // Precision is exact: every pair reported is a true pair, with its Jaccard.
        for (pair, j) in &found {
            let want = truth.get(pair).unwrap_or_else(|| panic!("{pair:?} ({j}) is not a pair"));
            assert!((want - j).abs() < 1e-3, "{pair:?}: {j} against {want}");
        }
        // Recall: LSH may miss pairs near the threshold; above 0.7 the chance is below 2e-7
        // a pair (37 bands of 3 rows), and this corpus is fixed.
        let clear: Vec<_> = truth.iter().filter(|(_, j)| **j >= t.max(0.7)).collect();
        assert!(clear.len() > 50, "too few pairs to test: {}", clear.len());
        for (pair, j) in clear {
            assert!(found.contains_key(pair), "missed {pair:?} with Jaccard {j}");
        }
        // Near the threshold most pairs are still found.
        assert!(found.len() * 100 >= truth.len() * 95, "{} of {}", found.len(), truth.len());
    }
}

#[test]
fn minhash_clusters_are_the_components_of_its_pairs() {
    fn find(p: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while p[r] != r {
            r = p[r];
        }
        p[x] = r;
        r
    }
    let dir = Dir::new();
    let (jsonl, texts) = graded_corpus(11);
    dir.write("g.jsonl", &jsonl);
    let pairs = dir.run(&["pairs", "g.jsonl", "-q"]);
    pairs.code(0);
    let index = |id: &str| id.trim_start_matches('d').parse::<usize>().unwrap();
    let mut parent: Vec<usize> = (0..texts.len()).collect();
    for line in pairs.stdout.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (a, b) = (find(&mut parent, index(f[0])), find(&mut parent, index(f[1])));
        parent[a.max(b)] = a.min(b);
    }
    let run = dir.run(&["cluster", "g.jsonl", "-q", "--singletons", "-j", "3"]);
    run.code(0);
    let mut label_of = std::collections::HashMap::new();
    for line in run.stdout.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let doc = index(f[0]);
        // The hash column is the document's simhash fingerprint (empty when featureless).
        let want = simhash_core::Fingerprinter::new().fingerprint(&texts[doc]);
        assert_eq!(f[1], want.map(|fp| fp.get().to_string()).unwrap_or_default(), "{line}");
        label_of.insert(doc, f[2].to_string());
    }
    assert_eq!(label_of.len(), texts.len());
    for a in 0..texts.len() {
        for b in a + 1..texts.len() {
            let same = find(&mut parent, a) == find(&mut parent, b);
            assert_eq!(same, label_of[&a] == label_of[&b], "d{a} d{b}");
        }
    }
    // dedup keeps a record of each cluster and explains the others with their Jaccard: one
    // each, but where a record has content of its own against the one kept before it (its
    // cluster joins them, the shorter being contained in it).
    let dedup = dir.run(&["dedup", "g.jsonl", "-q", "-o", "kept.jsonl", "--removed", "r.jsonl"]);
    dedup.code(0);
    let clusters: std::collections::HashSet<&String> = label_of.values().collect();
    let kept: Vec<usize> = dir
        .read("kept.jsonl")
        .lines()
        .map(|l| {
            index(serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_str().unwrap())
        })
        .collect();
    assert!(kept.len() >= clusters.len(), "{} kept", kept.len());
    // A second kept record of a cluster has content of its own against the first, or does
    // not verify against it.
    let words = |t: &str| {
        let mut out = Vec::new();
        simhash_core::Fingerprinter::new().for_each_shingle_and_token(t, |_| {}, |w| out.push(w));
        out
    };
    let jaccard = |a: usize, b: usize| {
        brute_jaccard(&[texts[a].clone(), texts[b].clone()]).first().map_or(0.0, |p| p.2)
    };
    let mut first_kept = std::collections::HashMap::new();
    for &d in &kept {
        let first = *first_kept.entry(&label_of[&d]).or_insert(d);
        if first != d {
            let r = simhash_index::lsh::relation(&words(&texts[d]), &words(&texts[first]));
            assert!(r == Relation::Overlap || jaccard(first, d) < 0.4, "d{d} kept beside d{first}");
        }
    }
    for line in dir.read("r.jsonl").lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let j = v["jaccard"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&j), "{line}");
        let (a, b) = (index(v["id"].as_str().unwrap()), index(v["duplicate_of"].as_str().unwrap()));
        assert_eq!(label_of[&a], label_of[&b], "{line}");
    }
}

#[test]
fn method_flags_are_checked_before_reading() {
    let dir = Dir::new();
    dir.write("news.jsonl", NEWS);
    dir.write("h.tsv", "id\thash\n1\t7\n");
    let cases: [(&[&str], &str); 6] = [
        (&["pairs", "h.tsv", "--method", "minhash"], "--method minhash needs the text"),
        (&["pairs", "news.jsonl", "--method", "minhash", "-k", "3"], "apply to --method simhash"),
        (
            &["pairs", "news.jsonl", "--method", "simhash", "--jaccard", "0.5"],
            "apply to --method minhash",
        ),
        (&["pairs", "news.jsonl", "--jaccard", "1.5"], "--jaccard must be"),
        (&["pairs", "news.jsonl", "--lsh-threshold", "1"], "--lsh-threshold must be below 1"),
        (&["pairs", "news.jsonl", "--num-perm", "0"], "--num-perm must be"),
    ];
    for (args, want) in cases {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains(want), "{args:?}: {}", run.stderr);
    }
    // Simhash-only settings, fingerprint input and the moz and fork presets choose simhash.
    for args in [
        &["pairs", "news.jsonl", "-k", "3"][..],
        &["pairs", "news.jsonl", "--blocks", "4"],
        &["pairs", "news.jsonl", "--preset", "moz"],
        &["pairs", "h.tsv"],
    ] {
        let run = dir.run(args);
        run.code(0);
        assert!(run.stdout.starts_with("id_a\tid_b\tdistance\n"), "{args:?}: {}", run.stdout);
    }
    // The fork-style top level stays simhash with the fork's fingerprints.
    let run = dir.run(&["-i", "news.jsonl", "--stats", "s.json", "-q"]);
    run.code(0);
    let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(s["method"], "simhash");
}

#[test]
fn minhash_duplicate_groups_are_listed_once_with_their_first() {
    let dir = Dir::new();
    let base: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    let mut near = base.clone();
    near[30] = "changed".into();
    let (a, b) = (base.join(" "), near.join(" "));
    // Three copies of a, two of b (a near-duplicate of a), and an unrelated text; the copies
    // differ in case and punctuation only, so their shingle sets are equal.
    let texts = [
        a.clone(),
        b.clone(),
        a.to_uppercase(),
        "something else entirely about ships and the sea and the harbour".to_string(),
        format!("{a}!"),
        format!("{b}."),
    ];
    let mut jsonl = String::new();
    for (i, t) in texts.iter().enumerate() {
        writeln!(jsonl, "{}", serde_json::json!({"id": format!("d{i}"), "text": t})).unwrap();
    }
    dir.write("g.jsonl", &jsonl);
    let brute = brute_jaccard(&texts.iter().map(ToString::to_string).collect::<Vec<_>>());
    // d2 and d4 are copies of d0, d5 of d1: each is listed with its first, and the one
    // near-duplicate pair between the groups once, between their first members (every
    // other pair is implied: `simhash eval` and `cluster` close them transitively).
    assert_eq!(brute.iter().filter(|p| p.2 >= 0.4).count(), 10);
    let want = "id_a\tid_b\tjaccard\trelation\nd0\td1\t0.9016\ttemplate\nd0\td2\t1.0000\tsame\n\
                d0\td4\t1.0000\tsame\nd1\td5\t1.0000\tsame\n";
    let run = dir.run(&["pairs", "g.jsonl", "-q", "--stats", "s.json"]);
    run.code(0);
    assert_eq!(run.stdout, want);
    let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
    assert_eq!(s["exact_duplicates"], 3);
    assert_eq!(s["pairs"], 4);
}

#[test]
fn minhash_star_and_sample_are_deterministic_and_exact() {
    let dir = Dir::new();
    let (jsonl, texts) = graded_corpus(5);
    dir.write("g.jsonl", &jsonl);
    let brute = brute_jaccard(&texts);
    let sim: HashMap<(usize, usize), f64> = brute.iter().map(|p| ((p.0, p.1), p.2)).collect();
    let index = |id: &str| id.trim_start_matches('d').parse::<usize>().unwrap();
    // Star clusters: every member matches its kept record directly.
    let one =
        dir.run(&["cluster", "g.jsonl", "-q", "--mode", "star", "--keep", "longest", "-j", "1"]);
    one.code(0);
    let three =
        dir.run(&["cluster", "g.jsonl", "-q", "--mode", "star", "--keep", "longest", "-j", "3"]);
    assert_eq!(one.stdout, three.stdout);
    let mut members: HashMap<String, Vec<usize>> = HashMap::new();
    for line in one.stdout.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        members.entry(f[2].to_string()).or_default().push(index(f[0]));
    }
    assert!(members.len() > 20, "too few clusters to test: {}", members.len());
    for docs in members.values() {
        let center = *docs.iter().max_by_key(|&&d| (texts[d].len(), std::cmp::Reverse(d))).unwrap();
        for &d in docs.iter().filter(|&&d| d != center) {
            let j = sim[&(d.min(center), d.max(center))];
            assert!(j >= 0.4, "d{d} joined d{center} at Jaccard {j}");
        }
    }
    // A sample's pairs are true pairs of the sampled records, with their exact Jaccard.
    let sample = dir.run(&["pairs", "g.jsonl", "-q", "--sample", "150", "--seed", "3", "-j", "1"]);
    let again = dir.run(&["pairs", "g.jsonl", "-q", "--sample", "150", "--seed", "3", "-j", "4"]);
    assert_eq!(sample.stdout, again.stdout);
    assert!(sample.stdout.lines().count() > 10);
    for line in sample.stdout.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (a, b) = (index(f[0]), index(f[1]));
        let j = sim[&(a.min(b), a.max(b))];
        assert!(j >= 0.4 && format!("{j:.4}") == f[2], "{line}: {j}");
    }
}

/// `--memory`: all pairs within k bits found in several passes per table are the pairs
/// found in one, in the same order; a budget too small is refused before any work.
#[test]
fn a_memory_budget_gives_the_same_pairs() {
    let dir = Dir::new();
    let mut rng = util::Rng(41);
    let mut hashes = String::new();
    for i in 0..60_000u64 {
        let x = rng.next();
        let _ = writeln!(hashes, "{x}");
        if i % 7 == 0 {
            let near = x ^ (1 << rng.below(64)) ^ (1 << rng.below(64)) ^ (1 << rng.below(64));
            let _ = writeln!(hashes, "{near}");
        }
    }
    dir.write("h.txt", &hashes);
    let whole = dir.run(&["find-all", "-i", "h.txt", "-q"]);
    whole.code(0);
    assert!(whole.stdout.lines().count() > 8_000);
    // 69k hashes: 0.55 MB of input; 1 MiB forces several passes per table.
    let budget = dir.run(&["find-all", "-i", "h.txt", "-q", "--memory", "1M"]);
    budget.code(0);
    assert_eq!(budget.stdout, whole.stdout);
    let small = dir.run(&["find-all", "-i", "h.txt", "-q", "--memory", "16K"]);
    small.code(2);
    assert!(small.stderr.contains("too small"), "{}", small.stderr);
    dir.write("docs.jsonl", corpus(80, 3));
    let args = ["pairs", "docs.jsonl", "-q", "--method", "simhash", "-k", "6"];
    let one = dir.run(&args);
    let passes = dir.run(&[&args[..], &["--memory", "16K"]].concat());
    assert_eq!(passes.code(0).stdout, one.code(0).stdout);
    let minhash = dir.run(&["pairs", "docs.jsonl", "--memory", "1G"]);
    minhash.code(2);
    assert!(minhash.stderr.contains("--memory applies to --method simhash"), "{}", minhash.stderr);
}

/// Hash input is read in blocks of about 1 MiB cut at line ends: bad lines, CRLF and blank
/// lines on both sides of the cuts are reported at their own line numbers, every good line
/// is read, and the output is the same as for the input as one file or split in three.
#[test]
fn hash_input_across_block_boundaries() {
    let dir = Dir::new();
    let (mut input, mut tsv) = (String::new(), String::from("id\thash\n"));
    let mut bad = Vec::new();
    let mut x: u64 = 7;
    let mut kept: Vec<u64> = Vec::new();
    for line in 1..=80_000u64 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let end = if line % 7 == 0 { "\r\n" } else { "\n" };
        if line % 4_999 == 0 || (52_000..52_100).contains(&line) && line % 3 == 0 {
            bad.push(line);
            let _ = write!(input, "{}x{end}", x >> 1);
            let _ = write!(tsv, "d{line}\t{}x{end}", x >> 1);
        } else {
            // A near copy of the previous hash now and then, so that there are pairs.
            let v = if line % 11 == 0 { kept[kept.len() - 1] ^ 0b101 } else { x };
            kept.push(v);
            let _ = write!(input, "{v}{end}");
            let _ = write!(tsv, "d{line}\t{v}{end}");
        }
    }
    input.pop();
    tsv.pop();
    dir.write("h.txt", &input);
    dir.write("h.tsv", &tsv);
    let run = dir.run(&["find-all", "h.txt", "--stats", "s.json"]);
    run.code(1);
    let reported: Vec<u64> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("simhash: h.txt:"))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(reported, bad);
    let stats = dir.read("s.json");
    assert!(stats.contains(&format!("\"documents\": {}", kept.len())), "{stats}");
    assert!(run.stdout.lines().count() >= 80_000 / 11 - bad.len());
    // Split in three files at arbitrary line ends: the same pairs.
    let lines: Vec<&str> = input.split_inclusive('\n').collect();
    dir.write("a.txt", lines[..30_001].concat());
    dir.write("b.txt", lines[30_001..30_002].concat());
    dir.write("c.txt", lines[30_002..].concat());
    let split = dir.run(&["find-all", "a.txt", "b.txt", "c.txt", "-q"]);
    assert_eq!(split.stdout, run.stdout);
    // Hash TSV: the same lines reported (the header is line 1).
    let run = dir.run(&["pairs", "--format", "hash", "h.tsv", "-k", "3"]);
    run.code(1);
    let reported: Vec<u64> = run
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("simhash: h.tsv:"))
        .map(|l| l.split(':').next().unwrap().parse::<u64>().unwrap() - 1)
        .collect();
    assert_eq!(reported, bad);
    assert!(run.stdout.lines().count() > 1_000);
}

/// `--band-key-bits 32` and `64` write the same bytes for every MinHash command (candidates
/// are verified exactly; only their number may differ), at one and two threads, and
/// `--stats` records the width (auto: 32 at this size).
#[test]
fn minhash_band_key_widths_write_the_same_output() {
    let dir = Dir::new();
    dir.write("c.jsonl", corpus(60, 11));
    let commands: [&[&str]; 4] = [
        &["pairs", "c.jsonl"],
        &["cluster", "c.jsonl", "--singletons"],
        &["dedup", "c.jsonl"],
        &["dedup", "c.jsonl", "--keep", "longest", "--jaccard", "0.6"],
    ];
    for command in commands {
        let mut outputs = Vec::new();
        for bits in ["auto", "32", "64"] {
            for threads in ["1", "2"] {
                let mut args = command.to_vec();
                args.extend(["-q", "-j", threads, "--band-key-bits", bits, "--stats", "s.json"]);
                let run = dir.run(&args);
                run.code(0);
                outputs.push(run.stdout);
                let s: serde_json::Value = serde_json::from_str(&dir.read("s.json")).unwrap();
                let want = if bits == "64" { 64 } else { 32 };
                assert_eq!(s["band_key_bits"], want, "{command:?} {bits}");
            }
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]), "{command:?}");
        assert!(outputs[0].lines().count() > 1, "{command:?}: the corpus must match");
    }
    let bad = dir.run(&["pairs", "c.jsonl", "--band-key-bits", "48"]);
    bad.code(2);
    let simhash = dir.run(&["pairs", "c.jsonl", "--method", "simhash", "--band-key-bits", "64"]);
    simhash.code(2);
}

/// `n` as a word of letters (`ba`, `bb`, ...).
fn letters(mut n: usize) -> String {
    let mut out = vec![b'b'];
    loop {
        out.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            return String::from_utf8(out).unwrap();
        }
    }
}

/// A package family's boilerplate, which records extend with content of their own.
const BOILER: &str = "libosmocore is a library with various utility functions that were \
    originally developed as part of the OpenBSC project but which are of a more generic nature \
    and thus useful to other programs in the sphere of mobile communications.";

/// `--mode components` keeps one record of each component of pairs either record could go
/// for: a record with a paragraph of its own, joined to the boilerplate it extends, is
/// removed there, and its `--removed` line and the report say `overlap`; star mode keeps it.
#[test]
fn components_mode_says_overlap_where_it_removes_own_content() {
    let dir = Dir::new();
    let boiler = BOILER;
    // A paragraph of 24 words: from 20 on, own content whatever the kept record has (a
    // shorter sentence added to the whole of it would be a variant's).
    let own = (0..24).map(letters).collect::<Vec<_>>().join(" ");
    let jsonl = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "boiler", "text": boiler}),
        serde_json::json!({"id": "own", "text": format!("{boiler} {own}")})
    );
    dir.write("c.jsonl", &jsonl);
    let base = ["dedup", "c.jsonl", "-q", "-o", "k.jsonl", "--removed", "rm.jsonl"];
    dir.run(&[&base[..], &["--mode", "components", "--report", "r.html"]].concat()).code(0);
    let removed = dir.read("rm.jsonl");
    assert!(
        removed.contains("\"id\":\"own\"") && removed.contains("\"relation\":\"overlap\""),
        "{removed}"
    );
    let page = dir.read("r.html");
    assert!(page.contains("content of its own joined through a component"), "no overlap title");
    dir.run(&base).code(0);
    assert_eq!(dir.read("rm.jsonl"), "", "star mode removed a record with content of its own");
    let page = {
        dir.run(&[&base[..], &["--report", "r2.html"]].concat()).code(0);
        dir.read("r2.html")
    };
    assert!(!page.contains("joined through a component"), "the overlap title without overlap");
}

/// Every removal says what it is, the same at any thread count; a record that shares only
/// boilerplate with a kept one stays; `--templates keep` removes only the same text.
#[test]
fn relations_are_written_and_decide_alike_at_any_thread_count() {
    let dir = Dir::new();
    let boiler = BOILER;
    // First the boilerplate alone: contained in the records after it, which are kept for
    // their own content (a rerun against an index holding those must not remove it).
    let mut jsonl = format!("{}\n", serde_json::json!({"id": "b", "text": boiler}));
    for i in 0..30 {
        let texts = [
            format!(
                "Rust bindings for the crate{i} library feature v3_{i}. This metapackage \
                 enables feature v3_{i} for the Rust crate{i} crate, by pulling in any \
                 additional dependencies needed by that feature."
            ),
            // A paragraph of its own: 24 words (of letters) no other record has.
            format!(
                "{boiler} {}",
                (0..24).map(|k| letters(i * 24 + k)).collect::<Vec<_>>().join(" ")
            ),
            format!("{boiler} This package holds the documentation of the library."),
        ];
        for (k, t) in texts.iter().enumerate() {
            writeln!(jsonl, "{}", serde_json::json!({"id": format!("d{i}-{k}"), "text": t}))
                .unwrap();
        }
    }
    dir.write("r.jsonl", &jsonl);
    let mut outputs = Vec::new();
    for j in ["1", "2", "4"] {
        let args = ["dedup", "r.jsonl", "-q", "-j", j, "-o", "k.jsonl", "--removed", "rm.jsonl"];
        dir.run(&args).code(0);
        outputs.push((dir.read("k.jsonl"), dir.read("rm.jsonl")));
    }
    assert!(outputs.iter().all(|o| *o == outputs[0]), "the output depends on the thread count");
    let removed = &outputs[0].1;
    for line in removed.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let relation = v["relation"].as_str().unwrap_or_else(|| panic!("no relation: {line}"));
        assert!(["same", "template"].contains(&relation), "{line}");
        // A record with a paragraph of its own (d*-1) is never removed.
        assert!(!v["id"].as_str().unwrap().ends_with("-1"), "{line}");
    }
    assert!(removed.contains("\"relation\":\"template\""), "{removed}");
    // The metapackages are siblings: kept with --templates keep.
    let args = ["dedup", "r.jsonl", "-q", "--templates", "keep", "-o", "k2.jsonl"];
    dir.run(&[&args[..], &["--removed", "rm2.jsonl"]].concat()).code(0);
    let kept_siblings = dir.read("k2.jsonl").lines().filter(|l| l.contains("metapackage")).count();
    assert_eq!(kept_siblings, 30, "{}", dir.read("rm2.jsonl"));
    // Against an index: the first run writes what dedup alone writes, and a rerun (whose
    // records the index now holds, each with its tokens) writes it again.
    let mut runs = Vec::new();
    for _ in 0..2 {
        let args = ["dedup", "r.jsonl", "-q", "--against", "ix", "--update", "-o", "k3.jsonl"];
        dir.run(&[&args[..], &["--removed", "rm3.jsonl"]].concat()).code(0);
        runs.push((dir.read("k3.jsonl"), dir.read("rm3.jsonl")));
    }
    assert_eq!(runs[0], outputs[0], "dedup --against an empty index");
    assert_eq!(runs[1], runs[0], "the rerun");
    // --templates is MinHash's: refused with simhash.
    let run = dir.run(&["dedup", "r.jsonl", "-q", "--method", "simhash", "--templates", "keep"]);
    run.code(2);
    assert!(run.stderr.contains("--templates apply to --method minhash"), "{}", run.stderr);
}
