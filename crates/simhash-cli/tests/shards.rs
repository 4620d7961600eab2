//! Several inputs (shards, directories) give byte for byte what their concatenation gives:
//! every command, both methods, with compressed shards, an empty shard, a shard without a
//! final newline, records without ids, duplicate ids across shards and bad records.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::util::{Dir, Rng, Run, corpus};

/// How a shard is written.
#[derive(Clone, Copy)]
enum Kind {
    Plain,
    /// Without its final newline.
    NoFinalNewline,
    Gzip,
    Zstd,
}

/// Writes `lines` as shards cut at `cuts` (line indexes), shard `i` as `kinds[i]`, named
/// `{stem}{i}.{ext}` plus the compression's extension; returns their names. The
/// concatenation (every shard ending in a newline) is written as `{stem}-all.{ext}`.
fn shards(
    dir: &Dir,
    stem: &str,
    ext: &str,
    header: Option<&str>,
    lines: &[String],
    cuts: &[usize],
    kinds: &[Kind],
) -> Vec<String> {
    assert_eq!(cuts.len() + 1, kinds.len());
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(lines.len());
    let mut names = Vec::new();
    let mut all = header.map(|h| format!("{h}\n")).unwrap_or_default();
    for (i, kind) in kinds.iter().enumerate() {
        let mut text = header.map(|h| format!("{h}\n")).unwrap_or_default();
        for line in &lines[bounds[i]..bounds[i + 1]] {
            text += line;
            text.push('\n');
        }
        all += &text[header.map_or(0, |h| h.len() + 1)..];
        let name = match kind {
            Kind::Plain | Kind::NoFinalNewline => format!("{stem}{i}.{ext}"),
            Kind::Gzip => format!("{stem}{i}.{ext}.gz"),
            Kind::Zstd => format!("{stem}{i}.{ext}.zst"),
        };
        let bytes = match kind {
            Kind::Plain => text.into_bytes(),
            Kind::NoFinalNewline => text.strip_suffix('\n').unwrap_or(&text).as_bytes().to_vec(),
            Kind::Gzip => {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                gz.write_all(text.as_bytes()).unwrap();
                gz.finish().unwrap()
            }
            Kind::Zstd => zstd::encode_all(text.as_bytes(), 1).unwrap(),
        };
        dir.write(&name, bytes);
        names.push(name);
    }
    dir.write(&format!("{stem}-all.{ext}"), all);
    names
}

/// Records with ids: near copies, identical records, tiny and empty texts, bad lines, and
/// an id repeated in a later shard.
fn with_ids() -> Vec<String> {
    let mut lines: Vec<String> = corpus(60, 11).lines().map(str::to_string).collect();
    let same = "the same words in every one of these records, again and again and again";
    for i in 0..6 {
        lines.insert(7 * i + 3, format!(r#"{{"id":"same{i}","text":"{same}"}}"#));
    }
    lines.insert(20, r#"{"id":"tiny","text":"a"}"#.into());
    lines.insert(21, r#"{"id":"empty","text":""}"#.into());
    lines.insert(30, "not json".into());
    lines.insert(31, String::new());
    // d5 is in the first shard; this one is in a later one.
    let at = lines.len() * 2 / 3;
    lines.insert(at, r#"{"id":"d5","text":"a duplicate id from another shard"}"#.into());
    lines.push(r#"{"id":"last","text":"the very last record"}"#.into());
    lines
}

/// The same texts without ids: each record's id is its line number in the concatenation.
fn without_ids() -> Vec<String> {
    corpus(50, 5)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            if i % 17 == 4 {
                String::new()
            } else {
                serde_json::json!({"text": v["text"]}).to_string()
            }
        })
        .collect()
}

const KINDS: [Kind; 5] = [Kind::Plain, Kind::Plain, Kind::Gzip, Kind::NoFinalNewline, Kind::Zstd];

/// The messages of stderr's `FILE:LINE: message` lines, without the place.
fn messages(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| !l.contains(" records read (") && !l.starts_with("simhash: warning:"))
        .map(|l| l.splitn(4, ':').last().unwrap_or(l).to_string())
        .collect()
}

/// Runs `args` (with `IN` standing for the inputs, and `{out}`/`{rm}` for output files) on
/// the shards and on their concatenation, and checks that both give the same exit code,
/// standard output, output files and messages.
fn same(
    dir: &Dir,
    bin: &str,
    args: &[&str],
    inputs: &[String],
    all: &str,
    input_flag: Option<&str>,
) -> (Run, Run) {
    let run = |tag: &str, files: &[&str]| {
        let mut command: Vec<String> = Vec::new();
        for a in args {
            if *a == "IN" {
                for f in files {
                    if let Some(flag) = input_flag {
                        command.push(flag.to_string());
                    }
                    command.push((*f).to_string());
                }
            } else {
                command.push(
                    a.replace("{out}", &format!("{tag}.out")).replace("{rm}", &format!("{tag}.rm")),
                );
            }
        }
        let command: Vec<&str> = command.iter().map(String::as_str).collect();
        let run = dir.run_bin(bin, &command, None);
        let files: Vec<String> = ["out", "rm"]
            .iter()
            .map(|x| std::fs::read_to_string(dir.path(&format!("{tag}.{x}"))).unwrap_or_default())
            .collect();
        (run, files)
    };
    let names: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let (sharded, sharded_files) = run("shards", &names);
    let (whole, whole_files) = run("whole", &[all]);
    let what =
        format!("{args:?}\nshards stderr:\n{}\nwhole stderr:\n{}", sharded.stderr, whole.stderr);
    assert_eq!(sharded.code, whole.code, "{what}");
    assert!(sharded.code <= 1, "{what}");
    assert_eq!(sharded.stdout, whole.stdout, "{what}");
    assert_eq!(sharded_files, whole_files, "{what}");
    assert_eq!(messages(&sharded.stderr), messages(&whole.stderr), "{what}");
    assert!(!sharded.stdout.is_empty() || !sharded_files[0].is_empty(), "{what}");
    (sharded, whole)
}

const TEXT_CASES: &[&[&str]] = &[
    &["fingerprint", "IN"],
    &["fingerprint", "--preset", "fork", "IN"],
    &["pairs", "IN"],
    &["pairs", "--method", "simhash", "IN"],
    &["dedup", "IN", "-o", "{out}", "--removed", "{rm}"],
    &["dedup", "--method", "simhash", "IN", "--removed", "{rm}"],
    &["dedup", "--mode", "components", "--keep", "longest", "IN"],
    &["cluster", "IN"],
    &["cluster", "--method", "minhash", "--singletons", "IN", "-o", "{out}"],
    &["cluster", "--sample", "40", "--seed", "3", "IN"],
];

#[test]
fn shards_give_what_their_concatenation_gives() {
    let dir = Dir::new();
    for (stem, lines) in [("ids", with_ids()), ("noid", without_ids())] {
        let n = lines.len();
        let names =
            shards(&dir, stem, "jsonl", None, &lines, &[n / 4, n / 4, n / 2, 3 * n / 4], &KINDS);
        let all = format!("{stem}-all.jsonl");
        for args in TEXT_CASES {
            same(&dir, "simhash", args, &names, &all, None);
            same(&dir, "simhash", args, &names, &all, Some("-i"));
        }
        // The fork's command line: repeated --input.
        same(&dir, "simhash", &["IN", "-o", "{out}"], &names, &all, Some("--input"));
    }
}

#[test]
fn a_duplicate_id_in_another_shard_names_that_shard_and_its_line() {
    let dir = Dir::new();
    let lines = with_ids();
    let n = lines.len();
    let names =
        shards(&dir, "ids", "jsonl", None, &lines, &[n / 4, n / 4, n / 2, 3 * n / 4], &KINDS);
    let (sharded, whole) = same(&dir, "simhash", &["dedup", "IN"], &names, "ids-all.jsonl", None);
    // The second d5 is in the fourth shard (the second is empty), after n / 2 lines.
    let line = 1 + lines.iter().position(|l| l.contains("from another shard")).unwrap();
    assert!(line > n / 2 && line <= 3 * n / 4);
    let local = line - n / 2;
    assert!(
        sharded.stderr.contains(&format!("{}:{local}: duplicate id \"d5\"", names[3])),
        "{}",
        sharded.stderr
    );
    assert!(
        whole.stderr.contains(&format!("ids-all.jsonl:{line}: duplicate id \"d5\"")),
        "{}",
        whole.stderr
    );
    // The bad line 31 is in the first shard, at its own line.
    assert!(
        sharded.stderr.contains(&format!("{}:31: invalid JSON", names[0])),
        "{}",
        sharded.stderr
    );
}

#[test]
fn hash_and_decimal_shards() {
    let dir = Dir::new();
    let mut rng = Rng(21);
    let mut hashes = Vec::new();
    let mut decimal = Vec::new();
    for i in 0..300u64 {
        let fp = rng.next();
        hashes.push(format!("h{i}\t{fp}"));
        decimal.push(fp.to_string());
        if i % 4 == 0 {
            hashes.push(format!("h{i}k3\t0x{:016x}", fp ^ 0b1011));
            decimal.push((fp ^ 0b111).to_string());
            decimal.push(fp.to_string());
        }
    }
    hashes.push("empty\t".into());
    let n = hashes.len();
    let kinds = [Kind::Gzip, Kind::Plain, Kind::NoFinalNewline, Kind::Plain, Kind::Zstd];
    // Each hash TSV shard has its own header; the concatenation has one.
    let names =
        shards(&dir, "h", "tsv", Some("id\thash"), &hashes, &[n / 3, n / 3, n / 2, n - 1], &kinds);
    for args in
        [&["pairs", "IN"][..], &["cluster", "-k", "4", "IN"], &["dedup", "IN", "--removed", "{rm}"]]
    {
        same(&dir, "simhash", args, &names, "h-all.tsv", None);
    }
    let n = decimal.len();
    let names = shards(&dir, "d", "txt", None, &decimal, &[1, n / 2, n / 2, n - 3], &kinds);
    for bin in ["simhash-find-all", "simhash-find-clusters"] {
        same(&dir, bin, &["IN", "-o", "{out}"], &names, "d-all.txt", Some("-i"));
    }
    same(&dir, "simhash", &["find-all", "IN"], &names, "d-all.txt", None);
    same(&dir, "simhash", &["find-clusters", "IN"], &names, "d-all.txt", Some("-i"));
}

#[test]
fn a_directory_is_its_record_files_in_path_order() {
    let dir = Dir::new();
    let lines = with_ids();
    let n = lines.len();
    let names =
        shards(&dir, "ids", "jsonl", None, &lines, &[n / 4, n / 4, n / 2, 3 * n / 4], &KINDS);
    // Laid out so that path order is the shards' order, with files that are not read.
    for sub in ["tree/a", "tree/b/c", "tree/.git"] {
        std::fs::create_dir_all(dir.path(sub)).unwrap();
    }
    let places = [
        "tree/0.jsonl",
        "tree/a/1.jsonl",
        "tree/a/2.jsonl.gz",
        "tree/b/c/3.jsonl",
        "tree/b/d.jsonl.zst",
    ];
    for (name, place) in names.iter().zip(places) {
        std::fs::copy(dir.path(name), dir.path(place)).unwrap();
    }
    dir.write("tree/README.md", "not records");
    dir.write("tree/.hidden.jsonl", "{\"id\":\"hidden\",\"text\":\"never read\"}\n");
    dir.write("tree/.git/x.jsonl", "{\"id\":\"git\",\"text\":\"never read\"}\n");
    let (sharded, _) = same(
        &dir,
        "simhash",
        &["dedup", "IN", "--removed", "{rm}"],
        &["tree".to_string()],
        "ids-all.jsonl",
        None,
    );
    assert!(
        sharded.stderr.contains("tree/README.md: not read: not a record file by its name"),
        "{}",
        sharded.stderr
    );
    assert!(!sharded.stderr.contains("hidden"), "{}", sharded.stderr);
    // Quiet: no warning.
    let quiet = dir.run(&["dedup", "-q", "tree"]);
    assert_eq!(quiet.code, 1, "{}", quiet.stderr); // the bad records
    assert!(!quiet.stderr.contains("README"), "{}", quiet.stderr);
}

#[test]
fn standard_input_as_one_of_several_inputs() {
    let dir = Dir::new();
    let lines = with_ids();
    let n = lines.len();
    let kinds = [Kind::Plain, Kind::Plain, Kind::Plain];
    let names = shards(&dir, "ids", "jsonl", None, &lines, &[n / 3, 2 * n / 3], &kinds);
    let middle = std::fs::read(dir.path(&names[1])).unwrap();
    for args in [&["dedup", "--removed", "rm.jsonl"][..], &["pairs"]] {
        let mut command = args.to_vec();
        command.extend([names[0].as_str(), "-", names[2].as_str()]);
        let piped = dir.run_stdin(&command, &middle);
        let removed = dir.read("rm.jsonl");
        let mut command = args.to_vec();
        command.push("ids-all.jsonl");
        let whole = dir.run(&command);
        assert_eq!((piped.code, &piped.stdout), (whole.code, &whole.stdout), "{}", piped.stderr);
        assert_eq!(removed, dir.read("rm.jsonl"));
        assert!(piped.stderr.contains("<stdin>:"), "{}", piped.stderr);
    }
}

#[test]
fn an_input_given_twice_is_an_error() {
    let dir = Dir::new();
    dir.write("a.jsonl", "{\"id\":\"a\",\"text\":\"x y z\"}\n");
    std::fs::create_dir(dir.path("d")).unwrap();
    std::fs::copy(dir.path("a.jsonl"), dir.path("d/a.jsonl")).unwrap();
    dir.write("d/notes.txt", "");
    let run = dir.run(&["dedup", "a.jsonl", "./a.jsonl"]);
    run.code(2);
    assert_eq!(
        run.stderr,
        "simhash: ./a.jsonl is the same input as a.jsonl: each input may be given once\n"
    );
    let run = dir.run_stdin(&["pairs", "-", "a.jsonl", "-"], b"");
    run.code(2);
    assert!(run.stderr.contains("<stdin> is the same input as <stdin>"), "{}", run.stderr);
    // A copy is another file: its records are duplicates (by id), reported as such.
    let run = dir.run(&["dedup", "a.jsonl", "d"]);
    run.code(1);
    assert!(run.stderr.contains("d/a.jsonl:1: duplicate id \"a\""), "{}", run.stderr);
    // A directory with nothing to read.
    std::fs::create_dir(dir.path("empty")).unwrap();
    let run = dir.run(&["dedup", "empty"]);
    run.code(2);
    assert!(run.stderr.contains("empty: no input files in this directory"), "{}", run.stderr);
    // Names implying different formats.
    dir.write("h.tsv", "id\thash\nx\t1\n");
    let run = dir.run(&["pairs", "a.jsonl", "h.tsv"]);
    run.code(2);
    assert!(run.stderr.contains("the inputs mix formats"), "{}", run.stderr);
    let mut text = String::new();
    let _ = write!(text, "{}", run.stderr);
    assert!(text.ends_with("give --format\n"), "{text}");
}
