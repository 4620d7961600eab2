//! Incremental dedup against a persistent index is idempotent: rerunning a committed
//! `--update` writes the first run's outputs, records without ids stay apart across the
//! inputs added one by one, and a signal at any moment leaves a state whose rerun writes
//! the outputs of an uninterrupted run, with an exit code that says what was committed.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::index::hard_corpus;
use crate::util::{Dir, Rng};

fn stats(dir: &Dir, name: &str) -> serde_json::Value {
    serde_json::from_str(&dir.read(name)).expect("stats json")
}

fn documents(dir: &Dir, index: &str) -> u64 {
    let stats = dir.run(&["index", "stats", index, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats.code(0).stdout).expect("json");
    v["documents"].as_u64().expect("documents")
}

/// Writes the first `1/parts` of `all`'s lines to `old.jsonl`, the others to `new.jsonl`.
fn write_old_and_new(dir: &Dir, all: &str, parts: usize) {
    let lines: Vec<&str> = all.lines().collect();
    let cut = lines.len() / parts;
    dir.write("old.jsonl", lines[..cut].join("\n") + "\n");
    dir.write("new.jsonl", lines[cut..].join("\n") + "\n");
}

/// The same `dedup --against ix --update` run twice (and a third time): the same kept and
/// removed records each time, nothing added after the first, and the rerun's records
/// counted as already indexed. On both methods, with `--keep first` and `longest` (whose
/// walk order is not the input's), string and numeric ids.
#[test]
fn rerunning_a_committed_update_writes_the_first_runs_outputs() {
    for method in ["minhash", "simhash"] {
        for keep in ["first", "longest"] {
            for numeric in [false, true] {
                let dir = Dir::new();
                let all = hard_corpus("d", 5);
                let all: String = if numeric {
                    all.lines()
                        .enumerate()
                        .map(|(i, l)| {
                            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
                            v["id"] = serde_json::json!(i * 3);
                            v.to_string() + "\n"
                        })
                        .collect()
                } else {
                    all
                };
                write_old_and_new(&dir, &all, 2);
                let common = ["--method", method, "--keep", keep, "-q"];
                dir.run(
                    &[
                        &["dedup", "old.jsonl", "--against", "ix", "--update", "-o", "first"][..],
                        &common,
                    ]
                    .concat(),
                )
                .code(0);
                let before = documents(&dir, "ix");
                let mut outputs = Vec::new();
                for round in 0..3 {
                    let (k, r, s) = (format!("k{round}"), format!("r{round}"), format!("s{round}"));
                    let args = ["dedup", "new.jsonl", "--against", "ix", "--update", "-o", &k];
                    let more = ["--removed", &r, "--stats", &s];
                    let run = dir.run(&[&args[..], &more, &common].concat());
                    run.code(0);
                    outputs.push((dir.read(&k), dir.read(&r)));
                    let v = stats(&dir, &s);
                    if round > 0 {
                        assert_eq!(v["index_added"], 0, "{method} {keep} round {round}");
                        let kept = dir.read(&k).lines().count() as u64;
                        assert_eq!(v["index_already"], kept, "{method} {keep} round {round}");
                    }
                }
                let what = format!("{method} --keep {keep} numeric ids {numeric}");
                assert!(!outputs[0].1.is_empty() && !outputs[0].0.is_empty(), "{what}: no test");
                assert_eq!(outputs[1], outputs[0], "{what}: the rerun's outputs differ");
                assert_eq!(outputs[2], outputs[0], "{what}: the third run's outputs differ");
                let added = outputs[0].0.lines().count() as u64;
                assert_eq!(documents(&dir, "ix"), before + added, "{what}");
                // A rerun of the first input too, read with the second: the same outputs
                // as each run gave.
                let args = ["dedup", "old.jsonl", "new.jsonl", "--against", "ix", "-o", "both"];
                dir.run(&[&args[..], &["--removed", "rboth"], &common].concat()).code(0);
                assert!(dir.read("both") == dir.read("first") + &outputs[0].0, "{what}");
                dir.run(&["index", "verify", "ix", "-q"]).code(0);
            }
        }
    }
}

/// A record whose id the index holds with other content is still reported and not added
/// (exit 1); with the same content it is the record itself, already there (exit 0).
#[test]
fn an_indexed_id_with_other_content_is_reported_the_same_content_is_already_there() {
    let dir = Dir::new();
    dir.write("a.jsonl", hard_corpus("d", 9));
    dir.run(&["index", "add", "ix", "a.jsonl", "-q"]).code(0);
    let docs = documents(&dir, "ix");
    let again = dir.run(&["index", "add", "ix", "a.jsonl", "--stats", "s.json"]);
    again.code(0);
    assert!(!again.stderr.contains("already in the index"), "{}", again.stderr);
    let v = stats(&dir, "s.json");
    assert_eq!((v["index_added"].as_u64(), v["index_already"].as_u64()), (Some(0), Some(docs)));
    // The same ids, other texts.
    let changed: String = dir
        .read("a.jsonl")
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["text"] =
                serde_json::json!(format!("{} and then something else entirely", v["text"]));
            v.to_string() + "\n"
        })
        .collect();
    dir.write("b.jsonl", &changed);
    let other = dir.run(&["index", "add", "ix", "b.jsonl", "--stats", "sb.json"]);
    other.code(1);
    // Reported and counted apart: documents, not skipped records.
    let v = stats(&dir, "sb.json");
    let read = v["records_read"].as_u64();
    assert_eq!((v["records_skipped"].as_u64(), v["documents"].as_u64()), (Some(0), read));
    assert_eq!(v["index_ids_taken"].as_u64(), read);
    assert_eq!(v["index_added"].as_u64(), Some(0));
    assert!(
        other.stderr.contains(
            "b.jsonl:1: id \"d0\" is already in the index (its document 0) with other content"
        ),
        "{}",
        other.stderr
    );
    assert_eq!(documents(&dir, "ix"), docs);
    // In a dedup, the record with the same id and other content is matched as any other,
    // and reported (see `an_indexed_id_with_other_content_is_reported_when_it_is_removed`).
    let run = dir.run(&["dedup", "b.jsonl", "--against", "ix", "-o", "k", "--removed", "r", "-q"]);
    run.code(1);
    assert!(dir.read("r").contains("\"id\":\"d0\",\"duplicate_of\":\"d0\""), "{}", dir.read("r"));
}

/// Records without ids: crawls deduplicated one by one against an index keep what one
/// dedup of all of them keeps, and each crawl's records stay in the index apart from the
/// others' (line numbers alone restart at 0 in every run and collided).
#[test]
fn crawls_without_ids_added_one_by_one_equal_one_dedup_of_all() {
    for method in ["minhash", "simhash"] {
        let dir = Dir::new();
        let mut all = String::new();
        for i in 0..3 {
            let crawl: String = hard_corpus("x", 30 + 10 * i)
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).expect("json");
                    serde_json::json!({"text": v["text"]}).to_string() + "\n"
                })
                .collect();
            dir.write(&format!("c{i}.jsonl"), &crawl);
            all += &crawl;
        }
        dir.write("all.jsonl", &all);
        let mut kept = String::new();
        let mut added = 0;
        for i in 0..3 {
            let (name, out, s) = (format!("c{i}.jsonl"), format!("k{i}"), format!("s{i}"));
            let args = ["dedup", &name, "--against", "ix", "--update", "-o", &out, "--stats", &s];
            dir.run(&[&args[..], &["--method", method, "-q"]].concat()).code(0);
            kept += &dir.read(&out);
            added += stats(&dir, &s)["index_added"].as_u64().expect("added");
        }
        dir.run(&["dedup", "all.jsonl", "-o", "k", "-q", "--method", method]).code(0);
        assert_eq!(kept, dir.read("k"), "{method}");
        assert_eq!(documents(&dir, "ix"), added, "{method}");
        assert_eq!(added, kept.lines().count() as u64, "{method}: every kept record is indexed");
        // The same crawl again: already there, nothing added, the same output.
        let args =
            ["dedup", "c1.jsonl", "--against", "ix", "--update", "-o", "again", "--stats", "s"];
        dir.run(&[&args[..], &["--method", method, "-q"]].concat()).code(0);
        assert_eq!(dir.read("again"), dir.read("k1"), "{method}");
        let v = stats(&dir, "s");
        assert_eq!(v["index_added"], 0, "{method}");
        assert_eq!(v["index_already"].as_u64(), Some(dir.read("k1").lines().count() as u64));
        assert_eq!(documents(&dir, "ix"), added, "{method}");
        // `index add` of crawls without ids, twice: the second adds nothing.
        for round in 0..2 {
            let args = ["index", "add", "ix2", "c0.jsonl", "c2.jsonl", "--stats", "s", "-q"];
            dir.run(&[&args[..], &["--method", method]].concat()).code(0);
            let v = stats(&dir, "s");
            let lines = (dir.read("c0.jsonl") + &dir.read("c2.jsonl")).lines().count() as u64;
            if round == 0 {
                assert_eq!(v["index_added"].as_u64(), Some(lines), "{method}");
            } else {
                assert_eq!(v["index_added"], 0, "{method}");
                assert_eq!(v["index_already"].as_u64(), Some(lines), "{method}");
            }
        }
        // A crawl with the same lines as another, under another name, is another input:
        // its records are duplicates of the first's (a rerun reads the same files).
        std::fs::copy(dir.path("c0.jsonl"), dir.path("copy.jsonl")).expect("copy");
        let args =
            ["dedup", "copy.jsonl", "--against", "ix", "--update", "-o", "k", "--stats", "s"];
        dir.run(&[&args[..], &["--method", method, "-q"]].concat()).code(0);
        let copied = stats(&dir, "s");
        // Only its featureless records, which match nothing, are kept (and added).
        let featureless = copied["featureless"].as_u64().expect("featureless");
        assert!(featureless > 0);
        assert_eq!(copied["index_added"].as_u64(), Some(featureless), "{method}");
        assert_eq!(copied["index_already"], 0, "{method}");
        assert_eq!(dir.read("k").lines().count() as u64, featureless, "{method}");
        // Its removed records name the indexed ones by their tagged ids.
        let run = dir.run(&["dedup", "c2.jsonl", "--against", "ix", "-o", "k", "--removed", "r"]);
        run.code(0);
        for line in dir.read("r").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json");
            let id = v["id"].as_str().expect("a string id");
            let (tag, number) = id.split_once(':').expect("TAG:LINE");
            assert_eq!(tag.len(), 16, "{id}");
            number.parse::<u64>().expect("a line number");
        }
    }
}

/// The committed state of an index: its manifest (which lists every segment with its
/// checksum). Files no manifest lists, which a writer stopped by a signal leaves, are never
/// read and the next writer removes them.
fn snapshot(dir: &std::path::Path) -> Vec<u8> {
    std::fs::read(dir.join("MANIFEST")).expect("read the manifest")
}

fn copy_index(from: &std::path::Path, to: &std::path::Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let path = entry.expect("entry").path();
        std::fs::copy(&path, to.join(path.file_name().expect("name"))).expect("copy");
    }
}

fn read_opt(path: &std::path::Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// SIGINT, SIGTERM and `kill -9` at random moments of `dedup --against ix --update`,
/// `index add` and `index compact`. Every time: `verify` passes; exit 128 + the signal
/// means nothing was committed (no output, the index as it was); exit 0 means everything
/// was (the outputs and the index's additions); killed, the index holds the additions only
/// if the outputs are in place; and the rerun writes the outputs of an uninterrupted run
/// and leaves the index as one.
#[test]
fn interrupted_updates_commit_all_or_nothing_and_reruns_agree() {
    let dir = Dir::new();
    write_old_and_new(&dir, &hard_corpus("d", 21), 3);
    dir.run(&["index", "add", "base", "old.jsonl", "-q"]).code(0);
    let (base, reference) = (dir.path("base"), dir.path("reference"));
    let base_docs = documents(&dir, "base");
    // The uninterrupted runs, timed: signals land within their time.
    copy_index(&base, &reference);
    let update = |index: &'static str| -> Vec<&'static str> {
        vec!["dedup", "new.jsonl", "--against", index, "--update", "-o", "k", "--removed", "r"]
    };
    let start = Instant::now();
    dir.run(&update("reference")).code(0);
    // Where in a run the signal falls: uniform up to the window, which follows the runs (a
    // run that finished before its signal shrinks it, one interrupted grows it), so that both
    // outcomes stay frequent however fast this machine runs them from one round to the next.
    let mut window_ms = (start.elapsed().as_millis() as u64 * 5 / 4).max(5);
    let (kept, removed) = (dir.read("k"), dir.read("r"));
    assert!(!kept.is_empty() && !removed.is_empty());
    let updated_docs = documents(&dir, "reference");
    assert!(updated_docs > base_docs);
    copy_index(&base, &reference);
    dir.run(&["index", "add", "reference", "new.jsonl", "-q"]).code(0);
    let added_docs = documents(&dir, "reference");

    let ix = dir.path("ix");
    let (k, r) = (dir.path("k"), dir.path("r"));
    let mut rng = Rng(2027);
    let mut seen = BTreeMap::<String, usize>::new();
    for round in 0..48 {
        copy_index(&base, &ix);
        if round % 6 == 5 {
            // A second segment, for compact to merge.
            dir.run(&["index", "add", "ix", "new.jsonl", "-q"]).code(0);
        }
        let before = snapshot(&ix);
        let _ = std::fs::remove_file(&k);
        let _ = std::fs::remove_file(&r);
        let (args, what) = match round % 6 {
            0..=3 => (update("ix"), "update"),
            4 => (vec!["index", "add", "ix", "new.jsonl", "-q"], "add"),
            _ => (vec!["index", "compact", "ix", "-q"], "compact"),
        };
        let signal = ["INT", "TERM", "KILL"][round % 3];
        let child = dir
            .cmd("simhash")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_millis(rng.below(window_ms)));
        let _ = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .stderr(Stdio::null())
            .status();
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code();
        let outcome = match code {
            Some(0) => "finished",
            Some(130 | 143) => "interrupted",
            None => "killed",
            Some(other) => panic!("round {round} ({what}, SIG{signal}): exit {other}: {stderr}"),
        };
        *seen.entry(format!("{what} {outcome}")).or_default() += 1;
        window_ms =
            if outcome == "finished" { (window_ms * 3 / 4).max(2) } else { window_ms * 5 / 4 + 1 };
        let context = format!("round {round} ({what}, SIG{signal}, {outcome}): {stderr}");
        let verify = dir.run(&["index", "verify", "ix"]);
        assert_eq!(verify.code, 0, "{context}: verify: {}", verify.stderr);
        let docs = documents(&dir, "ix");
        let (now_k, now_r) = (read_opt(&k), read_opt(&r));
        match (what, outcome) {
            (_, "interrupted") => {
                assert_eq!(snapshot(&ix), before, "{context}: the index changed");
                assert_eq!((now_k, now_r), (None, None), "{context}: an output was written");
            }
            ("update", "finished") => {
                assert_eq!(docs, updated_docs, "{context}");
                assert_eq!((now_k.as_deref(), now_r.as_deref()), (Some(&*kept), Some(&*removed)));
            }
            ("update", _) => {
                assert!(docs == base_docs || docs == updated_docs, "{context}: {docs} documents");
                if docs == updated_docs {
                    assert_eq!(now_k.as_deref(), Some(&*kept), "{context}: index without output");
                }
                if let Some(now) = &now_k {
                    assert_eq!(now, &kept, "{context}: a partial output");
                }
            }
            ("add", "finished") => assert_eq!(docs, added_docs, "{context}"),
            ("add", _) => assert!(docs == base_docs || docs == added_docs, "{context}"),
            _ => {
                let expected = base_docs + if round % 6 == 5 { added_docs - base_docs } else { 0 };
                assert_eq!(docs, expected, "{context}");
            }
        }
        // The rerun: what an uninterrupted run writes and leaves.
        let _ = std::fs::remove_file(&k);
        let _ = std::fs::remove_file(&r);
        match what {
            "update" => {
                dir.run(&update("ix")).code(0);
                assert_eq!(dir.read("k"), kept, "{context}: the rerun's kept records");
                assert_eq!(dir.read("r"), removed, "{context}: the rerun's removed records");
                assert_eq!(documents(&dir, "ix"), updated_docs, "{context}");
            }
            "add" => {
                dir.run(&["index", "add", "ix", "new.jsonl", "-q"]).code(0);
                assert_eq!(documents(&dir, "ix"), added_docs, "{context}");
            }
            _ => {
                dir.run(&["index", "compact", "ix", "-q"]).code(0);
                let stats = dir.run(&["index", "stats", "ix", "--json"]);
                let v: serde_json::Value = serde_json::from_str(&stats.stdout).expect("json");
                assert_eq!(v["segments"].as_u64(), Some(1), "{context}");
            }
        }
        dir.run(&["index", "verify", "ix", "-q"]).code(0);
    }
    eprintln!("outcomes: {seen:?}");
    let interrupted: usize =
        seen.iter().filter(|(k, _)| !k.ends_with("finished")).map(|(_, n)| n).sum();
    assert!(interrupted >= 8, "too few runs were interrupted: {seen:?}");
    assert!(seen.keys().any(|k| k == "update finished"), "no update finished: {seen:?}");
}

/// A record the index already holds (its id, its content) counts as kept before any record
/// of the input, as every indexed document does: a new record that adds a paragraph of its
/// own to it, read first, is kept for that paragraph and does not remove it (the held
/// record is `same` to the longer one: relations are directed), and the held record is
/// counted as already in the index. Both methods.
#[test]
fn a_record_the_index_holds_is_kept_before_the_new_records() {
    let base = "The quick brown fox jumps over the lazy dog near the river bank while the \
                farmer watches from the old wooden barn and the children play in the green \
                meadow beyond the hills where the sheep graze quietly all day long";
    let own = "Furthermore the maintainers added extensive documentation describing every \
               configuration option, the migration steps from older releases, and a long \
               list of known problems with their workarounds";
    let line = |id: &str, text: &str| serde_json::json!({"id": id, "text": text}).to_string();
    for method in ["minhash", "simhash"] {
        let dir = Dir::new();
        dir.write("a.jsonl", line("x", base) + "\n");
        let longer = format!("{base} {own}");
        dir.write("b.jsonl", [line("y", &longer), line("x", base)].join("\n") + "\n");
        let common = ["--method", method, "-q"];
        let first = ["dedup", "a.jsonl", "--against", "ix", "--update", "-o", "k1"];
        dir.run(&[&first[..], &common].concat()).code(0);
        let args = ["dedup", "b.jsonl", "--against", "ix", "--update", "-o", "k2"];
        let more = ["--removed", "r2", "--stats", "s2"];
        dir.run(&[&args[..], &more, &common].concat()).code(0);
        let removed = dir.read("r2");
        let v = stats(&dir, "s2");
        if method == "minhash" {
            // y has content of its own: both stay.
            assert_eq!(removed, "", "{method}");
            assert_eq!(dir.read("k2").lines().count(), 2, "{method}");
            assert_eq!(
                (v["index_added"].as_u64(), v["index_already"].as_u64()),
                (Some(1), Some(1))
            );
        } else {
            // simhash has no relations: y is near x, held in the index, and goes for it.
            assert!(!removed.contains("\"id\":\"x\""), "{method}: {removed}");
            assert_eq!(v["index_already"].as_u64(), Some(1), "{method}");
        }
        assert_eq!(documents(&dir, "ix"), 1 + v["index_added"].as_u64().expect("added"));
    }
}

/// A record whose id the index holds with other content is reported (exit 1) whether it is
/// kept or goes for an indexed document (here its own earlier version), and `--strict`
/// stops the run before anything is committed; without `--update` too.
#[test]
fn an_indexed_id_with_other_content_is_reported_when_it_is_removed() {
    let text = "The quick brown fox jumps over the lazy dog near the river bank while the \
                farmer watches from the old wooden barn";
    let line = |id: &str, text: &str| serde_json::json!({"id": id, "text": text}).to_string();
    let dir = Dir::new();
    dir.write("old.jsonl", line("a", text) + "\n");
    dir.run(&["dedup", "old.jsonl", "--against", "ix", "--update", "-o", "k1", "-q"]).code(0);
    dir.write("new.jsonl", line("a", &format!("{text} indeed")) + "\n");
    let want = "new.jsonl:1: id \"a\" is already in the index (its document 0) with other content";
    for update in [true, false] {
        let mut args = vec!["dedup", "new.jsonl", "--against", "ix"];
        if update {
            args.push("--update");
        }
        let run = dir.run(&[&args[..], &["-o", "k2", "--removed", "r2", "--stats", "s2"]].concat());
        run.code(1);
        let v = stats(&dir, "s2");
        assert_eq!((v["records_skipped"].as_u64(), v["removed"].as_u64()), (Some(0), Some(1)));
        assert_eq!(v["index_ids_taken"].as_u64(), Some(1), "update {update}");
        assert!(run.stderr.contains(want), "update {update}: {}", run.stderr);
        assert_eq!(run.stderr.matches(want).count(), 1, "update {update}: {}", run.stderr);
        assert!(dir.read("r2").contains("\"id\":\"a\",\"duplicate_of\":\"a\""), "update {update}");
        assert_eq!(documents(&dir, "ix"), 1, "update {update}");
        let strict = dir.run(&[&args[..], &["--strict", "-o", "k3", "--removed", "r3"]].concat());
        strict.code(2);
        assert!(strict.stderr.contains(want), "update {update}: {}", strict.stderr);
        let files = dir.files();
        assert!(!files.iter().any(|f| f == "k3" || f == "r3"), "update {update}: {files:?}");
    }
}

/// `--stats`'s `removed_by_relation` counts the records removed for an indexed document
/// whether or not `--removed` is written.
#[test]
fn removals_by_relation_count_the_index_matches_without_removed() {
    let dir = Dir::new();
    write_old_and_new(&dir, &hard_corpus("d", 5), 2);
    dir.run(&["dedup", "old.jsonl", "--against", "ix", "--update", "-o", "k1", "-q"]).code(0);
    let args = ["dedup", "new.jsonl", "--against", "ix", "-q"];
    dir.run(&[&args[..], &["-o", "ka", "--stats", "sa"]].concat()).code(0);
    dir.run(&[&args[..], &["-o", "kb", "--stats", "sb", "--removed", "rb"]].concat()).code(0);
    let (a, b) = (stats(&dir, "sa"), stats(&dir, "sb"));
    assert!(b["index_matched"].as_u64().unwrap_or(0) > 0, "no test: nothing matched the index");
    let total: u64 = b["removed_by_relation"]
        .as_object()
        .expect("counts")
        .values()
        .map(|n| n.as_u64().expect("count"))
        .sum();
    assert_eq!(total, b["removed"].as_u64().expect("removed"));
    assert_eq!(a["removed_by_relation"], b["removed_by_relation"]);
}
