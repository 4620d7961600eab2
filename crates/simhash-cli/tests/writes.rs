//! No output may land on an input, on another output, or in an index: `--output-dir`
//! entries that are symlinks into the input tree (files, directories, `.zst` shards),
//! `--removed` or `--stats` on an `--output-dir` entry, and `-o`, `--removed` or `--stats`
//! on an index's files are refused before anything is read (exit 2, naming both paths),
//! leaving the inputs and the index byte for byte as they were and creating no output.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::util::{Dir, corpus};

/// Every file under `root` (symlinks not followed), by relative path, with its bytes, or
/// where it points for a symlink.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let to = std::fs::read_link(&path).unwrap();
                files.push((name, format!("-> {}", to.display()).into_bytes()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                files.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Shards under `in/`: `a.jsonl`, `sub/b.jsonl` and `c.jsonl.zst`, with near-duplicates
/// within and across them (a dedup that ran would shrink them).
fn shards(dir: &Dir) {
    let text = corpus(40, 7);
    let lines: Vec<&str> = text.lines().collect();
    let third = lines.len() / 3;
    std::fs::create_dir_all(dir.path("in/sub")).unwrap();
    dir.write("in/a.jsonl", lines[..third].join("\n") + "\n");
    dir.write("in/sub/b.jsonl", lines[third..2 * third].join("\n") + "\n");
    let c = lines[2 * third..].join("\n") + "\n";
    dir.write("in/c.jsonl.zst", zstd::encode_all(c.as_bytes(), 1).unwrap());
}

/// Runs `args`, which must be refused with a message naming each of `names`, leaving `in/`
/// and (if any) `IDX/` as they were and `od/` with only what it had.
/// A corpus for the index, its ids apart from the inputs' (an indexed id with other content
/// is reported, exit 1).
fn other_corpus() -> String {
    corpus(10, 3)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["id"] = serde_json::json!(format!("other-{}", v["id"].as_str().expect("id")));
            v.to_string() + "\n"
        })
        .collect()
}

fn refused(dir: &Dir, args: &[&str], names: &[&str]) {
    let before: Vec<_> = ["in", "IDX", "od"]
        .iter()
        .map(|d| dir.path(d).exists().then(|| tree(&dir.path(d))))
        .collect();
    let run = dir.run(args);
    run.code(2);
    assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
    for name in names {
        assert!(run.stderr.contains(name), "{args:?}: {name:?} not named in {}", run.stderr);
    }
    let after: Vec<_> = ["in", "IDX", "od"]
        .iter()
        .map(|d| dir.path(d).exists().then(|| tree(&dir.path(d))))
        .collect();
    assert!(before == after, "{args:?} changed the files: {}", run.stderr);
    for name in ["removed.tsv", "out.jsonl", "stats.json"] {
        assert!(!dir.path(name).exists(), "{args:?} created {name}");
    }
}

#[test]
fn output_dir_entries_that_are_symlinks_into_the_input_are_refused() {
    let dir = Dir::new();
    shards(&dir);
    std::fs::create_dir(dir.path("od")).unwrap();
    // A file symlink: the entry for in/a.jsonl is in/a.jsonl.
    symlink("../in/a.jsonl", dir.path("od/a.jsonl")).unwrap();
    refused(&dir, &["dedup", "in", "--output-dir", "od", "-q"], &["od/a.jsonl", "in/a.jsonl"]);
    std::fs::remove_file(dir.path("od/a.jsonl")).unwrap();
    // A directory symlink: od/sub/b.jsonl is in/sub/b.jsonl.
    symlink("../in/sub", dir.path("od/sub")).unwrap();
    refused(
        &dir,
        &["dedup", "in", "--output-dir", "od", "-q"],
        &["od/sub/b.jsonl", "in/sub/b.jsonl"],
    );
    std::fs::remove_file(dir.path("od/sub")).unwrap();
    // A compressed shard through a symlink.
    symlink("../in/c.jsonl.zst", dir.path("od/c.jsonl.zst")).unwrap();
    refused(
        &dir,
        &["dedup", "in", "--output-dir", "od", "-q"],
        &["od/c.jsonl.zst", "in/c.jsonl.zst"],
    );
    std::fs::remove_file(dir.path("od/c.jsonl.zst")).unwrap();
    // A directory symlink to the input directory itself: od/sub/b.jsonl would be a new
    // file inside it.
    symlink("../in", dir.path("od/sub")).unwrap();
    refused(&dir, &["dedup", "in", "--output-dir", "od", "-q"], &["od/sub/b.jsonl", "in"]);
    std::fs::remove_file(dir.path("od/sub")).unwrap();
    // Without the links the same run writes the shards.
    dir.run(&["dedup", "in", "--output-dir", "od", "-q"]).code(0);
    assert!(dir.path("od/sub/b.jsonl").is_file() && dir.path("od/c.jsonl.zst").is_file());
}

#[test]
fn removed_and_stats_may_not_be_an_output_dir_entry() {
    let dir = Dir::new();
    shards(&dir);
    std::fs::create_dir(dir.path("od")).unwrap();
    for flag in ["--removed", "--stats"] {
        refused(
            &dir,
            &["dedup", "in", "--output-dir", "od", flag, "od/a.jsonl", "-q"],
            &[&format!("{flag} od/a.jsonl"), "--output-dir entry od/a.jsonl (for in/a.jsonl)"],
        );
        // Spelled another way, through a symlinked directory.
        symlink("od", dir.path("link")).unwrap();
        refused(
            &dir,
            &["dedup", "in", "--output-dir", "od", flag, "link/sub/b.jsonl", "-q"],
            &[&format!("{flag} link/sub/b.jsonl"), "od/sub/b.jsonl"],
        );
        std::fs::remove_file(dir.path("link")).unwrap();
    }
    assert!(tree(&dir.path("od")).is_empty());
}

#[test]
fn no_output_may_be_in_the_index() {
    let dir = Dir::new();
    shards(&dir);
    dir.write("other.jsonl", other_corpus());
    dir.run(&["index", "add", "IDX", "other.jsonl", "-q"]).code(0);
    let segment = tree(&dir.path("IDX"))
        .into_iter()
        .map(|(name, _)| name)
        .find(|name| Path::new(name).extension().is_some_and(|e| e == "seg"))
        .expect("a segment");
    let segment = format!("IDX/{segment}");
    let named_segment = format!("--output {segment}");
    let against = ["dedup", "in", "--against", "IDX", "-q"];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        ([&against[..], &["-o", "IDX/MANIFEST"]].concat(), vec!["--output IDX/MANIFEST", "index"]),
        ([&against[..], &["--update", "-o", &segment]].concat(), vec![&named_segment, "index"]),
        (
            [&against[..], &["-o", "out.jsonl", "--removed", "IDX/LOCK"]].concat(),
            vec!["--removed IDX/LOCK", "index"],
        ),
        (
            [&against[..], &["-o", "out.jsonl", "--stats", "IDX/new.json"]].concat(),
            vec!["--stats IDX/new.json", "the index IDX"],
        ),
        (
            vec!["index", "add", "IDX", "in", "-q", "--stats", "IDX/MANIFEST"],
            vec!["--stats IDX/MANIFEST", "index"],
        ),
        (
            vec!["index", "query", "IDX", "in", "-q", "-o", "IDX/LOCK"],
            vec!["--output IDX/LOCK", "index"],
        ),
        (
            vec!["index", "stats", "IDX", "-o", "IDX/MANIFEST"],
            vec!["--output IDX/MANIFEST", "index"],
        ),
    ];
    for (args, names) in &cases {
        refused(&dir, args, names);
    }
    // A hard link to the manifest elsewhere is the manifest.
    std::fs::hard_link(dir.path("IDX/MANIFEST"), dir.path("hard")).unwrap();
    refused(&dir, &["index", "stats", "IDX", "-o", "hard"], &["--output hard", "IDX/MANIFEST"]);
    // The index still answers, and an output beside it is written.
    dir.run(&["index", "verify", "IDX", "-q"]).code(0);
    dir.run(&["dedup", "in", "--against", "IDX", "-q", "-o", "out.jsonl"]).code(0);
}

/// A run that writes an index reads nothing from inside it (a segment or the manifest, by
/// its name or another): compaction would remove what it reads.
#[test]
fn no_input_may_be_in_an_index_the_run_writes() {
    let dir = Dir::new();
    shards(&dir);
    dir.write("other.jsonl", other_corpus());
    dir.run(&["index", "add", "IDX", "other.jsonl", "-q"]).code(0);
    dir.write("IDX/stray.jsonl", corpus(5, 4));
    std::fs::hard_link(dir.path("IDX/MANIFEST"), dir.path("manifest-link")).unwrap();
    let update = ["dedup", "--against", "IDX", "--update", "-q", "-o", "out.jsonl"];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["index", "add", "IDX", "IDX/stray.jsonl", "-q"], vec!["IDX/stray.jsonl", "index"]),
        (vec!["index", "add", "IDX", "manifest-link", "-q"], vec!["manifest-link", "index"]),
        ([&update[..], &["IDX/stray.jsonl"]].concat(), vec!["IDX/stray.jsonl", "index"]),
    ];
    for (args, names) in &cases {
        refused(&dir, args, names);
    }
    // Without --update the index is only read: an input beside its files may be read.
    dir.run(&["dedup", "IDX/stray.jsonl", "--against", "IDX", "-q", "-o", "out.jsonl"]).code(0);
}

/// An output named as compressed is refused before anything is read or written (exit 2),
/// by every flag that names a file; `--output-dir` entries are compressed as named.
#[test]
fn an_output_named_as_compressed_is_refused() {
    let dir = Dir::new();
    dir.write("in.jsonl", corpus(10, 3));
    for (args, flag) in [
        (vec!["dedup", "in.jsonl", "-o", "kept.jsonl.gz"], "--output kept.jsonl.gz"),
        (vec!["dedup", "in.jsonl", "-o", "k", "--removed", "r.jsonl.zst"], "--removed r.jsonl.zst"),
        (vec!["pairs", "in.jsonl", "-o", "pairs.tsv.GZ"], "--output pairs.tsv.GZ"),
        (vec!["dedup", "in.jsonl", "-o", "k", "--stats", "s.json.gz"], "--stats s.json.gz"),
    ] {
        let run = dir.run(&args);
        run.code(2);
        assert!(run.stderr.contains(&format!("{flag}: named as compressed")), "{}", run.stderr);
        assert_eq!(dir.files(), ["in.jsonl"], "{args:?}");
    }
    std::fs::create_dir(dir.path("in")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, corpus(10, 3).as_bytes()).unwrap();
    dir.write("in/a.jsonl.gz", gz.finish().unwrap());
    dir.run(&["dedup", "in", "--output-dir", "od", "-q"]).code(0);
    dir.run(&["dedup", "od/a.jsonl.gz", "-o", "again.jsonl", "-q"]).code(0);
}
