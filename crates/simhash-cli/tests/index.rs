//! `simhash index ...` and `dedup --against`: the persistent index agrees with the
//! commands that read everything at once, survives being killed, and refuses damage.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use crate::util::{Dir, Rng, corpus, rows};

/// Splits JSONL into its first `n` lines and the rest.
fn split(jsonl: &str, n: usize) -> (String, String) {
    let lines: Vec<&str> = jsonl.lines().collect();
    let join = |part: &[&str]| part.iter().flat_map(|l| [*l, "\n"]).collect::<String>();
    (join(&lines[..n]), join(&lines[n..]))
}

/// A corpus with what breaks engines: near copies, a flood of identical records, a
/// templated family, tiny and featureless records. Ids `<prefix><n>`.
pub(crate) fn hard_corpus(prefix: &str, seed: u64) -> String {
    let mut out = String::new();
    let mut n = 0;
    let mut push = |text: &str, out: &mut String| {
        out.push_str(&serde_json::json!({"id": format!("{prefix}{n}"), "text": text}).to_string());
        out.push('\n');
        n += 1;
    };
    for line in corpus(40, seed).lines() {
        let record: serde_json::Value = serde_json::from_str(line).expect("json");
        push(record["text"].as_str().expect("text"), &mut out);
    }
    let flood = "the same announcement is posted again and again on every page of the site";
    let mut rng = Rng(seed | 1);
    for i in 0..25 {
        push(flood, &mut out);
        push(&format!("{flood} number {}", rng.below(5)), &mut out);
        if i % 5 == 0 {
            push("a", &mut out);
            push("...", &mut out);
        }
    }
    out
}

/// The pairs `simhash pairs` lists between records whose ids start with `old` and `new`,
/// as `new<TAB>old<TAB>score` rows.
fn cross_pairs(pairs_tsv: &str, old: &str, new: &str) -> BTreeSet<Vec<String>> {
    rows(pairs_tsv)
        .into_iter()
        .filter_map(|r| {
            let (a, b) = (&r[0], &r[1]);
            if a.starts_with(old) && b.starts_with(new) {
                Some(vec![b.clone(), a.clone(), r[2].clone()])
            } else if a.starts_with(new) && b.starts_with(old) {
                Some(vec![a.clone(), b.clone(), r[2].clone()])
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn query_lists_exactly_the_cross_pairs_of_pairs() {
    for method in [&["--method", "minhash"][..], &["--method", "simhash", "-k", "8"][..]] {
        let dir = Dir::new();
        dir.write("A.jsonl", hard_corpus("a", 3));
        dir.write("B.jsonl", hard_corpus("b", 4) + &split(&hard_corpus("c", 3), 30).0);
        dir.write("AB.jsonl", dir.read("A.jsonl") + &dir.read("B.jsonl"));
        let with = |args: &[&'static str]| [args, method].concat();
        dir.run(&with(&["index", "add", "ix", "A.jsonl", "-q"])).code(0);
        let query = dir.run(&["index", "query", "ix", "B.jsonl", "-q"]);
        query.code(0);
        let pairs = dir.run(&with(&["pairs", "AB.jsonl", "-q"]));
        pairs.code(0);
        // `c` records are copies of `a` records under other ids.
        let mut want = cross_pairs(&pairs.stdout, "a", "b");
        want.extend(cross_pairs(&pairs.stdout, "a", "c"));
        let got: BTreeSet<Vec<String>> = rows(&query.stdout).into_iter().collect();
        assert!(want.len() > 40, "{method:?}: too few pairs to test: {}", want.len());
        assert_eq!(got, want, "{method:?}");
        let measure = if method[1] == "minhash" { "jaccard" } else { "distance" };
        assert_eq!(
            query.stdout.lines().next(),
            Some(format!("id\tindexed_id\t{measure}").as_str())
        );
    }
}

#[test]
fn two_adds_and_a_compaction_answer_as_one_add() {
    let dir = Dir::new();
    let (a, b) = split(&hard_corpus("d", 5), 70);
    dir.write("A.jsonl", &a);
    dir.write("B.jsonl", &b);
    dir.write("AB.jsonl", a + &b);
    dir.write("C.jsonl", hard_corpus("q", 5));
    dir.run(&["index", "add", "two", "A.jsonl", "-q"]).code(0);
    dir.run(&["index", "add", "two", "B.jsonl", "-q"]).code(0);
    dir.run(&["index", "add", "one", "AB.jsonl", "-q"]).code(0);
    let before = dir.run(&["index", "query", "two", "C.jsonl", "-q"]);
    let segments = |ix: &str| {
        let stats = dir.run(&["index", "stats", ix, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&stats.code(0).stdout).expect("json");
        (v["documents"].as_u64().expect("documents"), v["segments"].as_u64().expect("segments"))
    };
    assert_eq!(segments("two").1, 2);
    dir.run(&["index", "compact", "two", "-q"]).code(0);
    assert_eq!(segments("two"), segments("one"));
    assert_eq!(segments("one").1, 1);
    let after = dir.run(&["index", "query", "two", "C.jsonl", "-q"]);
    let once = dir.run(&["index", "query", "one", "C.jsonl", "-q"]);
    assert!(rows(&once.stdout).len() > 20);
    assert_eq!(before.stdout, once.stdout);
    assert_eq!(after.stdout, once.stdout);
    dir.run(&["index", "verify", "two", "-q"]).code(0);
}

#[test]
fn dedup_against_with_update_shard_by_shard_equals_dedup_of_the_whole() {
    for method in [&["--method", "minhash"][..], &["--method", "simhash"][..]] {
        for keep in ["first", "longest"] {
            let dir = Dir::new();
            let all = hard_corpus("d", 7);
            let (a, rest) = split(&all, 60);
            let (b, c) = split(&rest, 40);
            let parts = [a, b, c];
            let mut kept = String::new();
            let mut removed = String::new();
            for (i, part) in parts.iter().enumerate() {
                let (name, out, rem) = (format!("{i}.jsonl"), format!("k{i}"), format!("r{i}"));
                dir.write(&name, part);
                let args = [&name, "--against", "ix", "--update", "-o", &out, "--removed", &rem];
                let run = dir.run(&[&["dedup", "-q", "--keep", keep][..], &args, method].concat());
                run.code(0);
                kept += &dir.read(&out);
                removed += &dir.read(&rem);
            }
            dir.write("all.jsonl", &all);
            let args = ["dedup", "all.jsonl", "-q", "--keep", keep, "-o", "k", "--removed", "r"];
            dir.run(&[&args[..], method].concat()).code(0);
            if keep == "first" {
                // Each shard's records come after the index's: the same walk.
                assert_eq!(kept, dir.read("k"), "{method:?}");
                assert_eq!(removed, dir.read("r"), "{method:?}");
            }
            // Whatever the policy: no kept record matches another, none is lost.
            let kept_ids: BTreeSet<String> = ids(&kept);
            let removed_ids: BTreeSet<String> = ids(&removed);
            assert_eq!(kept_ids.len() + removed_ids.len(), all.lines().count());
            assert!(kept_ids.is_disjoint(&removed_ids));
            for line in removed.lines() {
                let v: serde_json::Value = serde_json::from_str(line).expect("json");
                let of = v["duplicate_of"].as_str().expect("a string id").to_string();
                assert!(kept_ids.contains(&of), "{line}: not a kept record");
            }
            let stats = dir.run(&["index", "stats", "ix", "--json"]);
            let v: serde_json::Value = serde_json::from_str(&stats.code(0).stdout).expect("json");
            assert_eq!(v["documents"].as_u64(), Some(kept_ids.len() as u64));
        }
    }
}

fn ids(jsonl: &str) -> BTreeSet<String> {
    jsonl
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["id"].as_str().expect("id").to_string()
        })
        .collect()
}

#[test]
fn ids_already_indexed_are_reported_and_not_added() {
    let dir = Dir::new();
    dir.write("A.jsonl", corpus(20, 9));
    dir.run(&["index", "add", "ix", "A.jsonl", "-q"]).code(0);
    let docs = dir.read("A.jsonl").lines().count();
    // The same ids with other texts (the same ids and texts are the records themselves,
    // already there: tests/rerun.rs).
    let other: String = dir
        .read("A.jsonl")
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("json");
            v["text"] = serde_json::json!(format!("{} once more", v["text"]));
            v.to_string() + "\n"
        })
        .collect();
    dir.write("B.jsonl", other);
    let again = dir.run(&["index", "add", "ix", "B.jsonl"]);
    again.code(1);
    assert!(
        again.stderr.contains("B.jsonl:1: id \"d0\" is already in the index"),
        "{}",
        again.stderr
    );
    assert_eq!(again.stderr.matches("is already in the index").count(), docs);
    let strict = dir.run(&["index", "add", "ix", "B.jsonl", "--strict"]);
    strict.code(2);
    let stats = dir.run(&["index", "stats", "ix", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats.code(0).stdout).expect("json");
    assert_eq!(v["documents"].as_u64(), Some(docs as u64));
    assert_eq!(v["generation"].as_u64(), Some(2), "the refused add still commits, empty");
}

#[test]
fn other_settings_are_named_and_refused() {
    let dir = Dir::new();
    dir.write("A.jsonl", corpus(10, 2));
    dir.run(&["index", "add", "ix", "A.jsonl", "-q"]).code(0);
    let run = dir.run(&["index", "query", "ix", "A.jsonl", "--jaccard", "0.7"]);
    run.code(2);
    assert!(run.stderr.contains("jaccard"), "{}", run.stderr);
    let run = dir.run(&["index", "add", "ix", "A.jsonl", "--method", "simhash"]);
    run.code(2);
    assert!(run.stderr.contains("minhash"), "{}", run.stderr);
    let run = dir.run(&["dedup", "A.jsonl", "--against", "ix", "--preset", "moz"]);
    run.code(2);
    assert!(run.stderr.contains("preset"), "{}", run.stderr);
    let run = dir.run(&["dedup", "A.jsonl", "--against", "missing"]);
    run.code(2);
    // The same settings given explicitly are fine.
    dir.run(&["index", "query", "ix", "A.jsonl", "-q", "--jaccard", "0.4"]).code(0);
    let run = dir.run(&["dedup", "A.jsonl", "--against", "ix", "--mode", "components"]);
    run.code(2);
}

/// Every index file, damaged at several places (a flipped byte, or cut short): `verify`
/// exits 2 naming the file, and a query either exits 2 naming it or, when the damage is in
/// bytes it does not read, answers exactly as before. Never a wrong answer.
#[test]
fn damaged_index_files_are_named_never_read_as_data() {
    let dir = Dir::new();
    dir.write("A.jsonl", hard_corpus("a", 11));
    dir.write("B.jsonl", hard_corpus("b", 11));
    dir.run(&["index", "add", "ix", "A.jsonl", "-q"]).code(0);
    let reference = dir.run(&["index", "query", "ix", "B.jsonl", "-q"]);
    reference.code(0);
    assert!(rows(&reference.stdout).len() > 20);
    let ix = dir.path("ix");
    let mut files: Vec<_> = std::fs::read_dir(&ix)
        .expect("index dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    let mut rng = Rng(17);
    for file in &files {
        let good = std::fs::read(file).expect("read");
        let name = file.file_name().expect("name").to_string_lossy().into_owned();
        let len = good.len();
        let mut damages: Vec<Vec<u8>> = [0, len / 2, len - 1, rng.below(len as u64) as usize]
            .iter()
            .map(|&at| {
                let mut bad = good.clone();
                bad[at] ^= 0x20;
                bad
            })
            .collect();
        damages.push(good[..len - 1].to_vec());
        damages.push(good[..len / 3].to_vec());
        for bad in damages {
            std::fs::write(file, &bad).expect("damage");
            let verify = dir.run(&["index", "verify", "ix"]);
            verify.code(2);
            assert!(verify.stderr.contains(&name), "{name}: {}", verify.stderr);
            let query = dir.run(&["index", "query", "ix", "B.jsonl", "-q"]);
            if query.code == 2 {
                assert!(query.stderr.contains(&name), "{name}: {}", query.stderr);
            } else {
                query.code(0);
                assert_eq!(query.stdout, reference.stdout, "{name}: a wrong answer");
            }
            let stats = dir.run(&["index", "stats", "ix"]);
            assert!(stats.code == 0 || stats.stderr.contains(&name), "{name}: {}", stats.stderr);
        }
        std::fs::write(file, &good).expect("restore");
        dir.run(&["index", "verify", "ix", "-q"]).code(0);
    }
}

/// The ids of `shard` that `index query` finds identical to an indexed record (every
/// record of the shard with features, once the shard is in the index).
fn found_identical(dir: &Dir, shard: &str) -> BTreeSet<String> {
    let query = dir.run(&["index", "query", "ix", shard, "-q"]);
    query.code(0);
    rows(&query.stdout).into_iter().filter(|r| r[2] == "1.0000").map(|r| r[0].clone()).collect()
}

fn documents(dir: &Dir) -> u64 {
    let stats = dir.run(&["index", "stats", "ix", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats.code(0).stdout).expect("json");
    v["documents"].as_u64().expect("documents")
}

/// `kill -9` at random moments of `index add`, `dedup --update` and `compact`: the index
/// opens at a committed state every time, `verify` passes, and no committed record is lost.
#[test]
fn killed_writers_leave_the_last_commit() {
    let dir = Dir::new();
    let shards: Vec<String> = (0..6).map(|i| format!("{i}.jsonl")).collect();
    for (i, name) in shards.iter().enumerate() {
        dir.write(name, hard_corpus(&format!("s{i}_"), 20 + i as u64));
    }
    // Kills land within the time a run takes here, whatever the machine's speed: half the
    // shorter of two timed runs, and shorter still if a run that ends on its own below is
    // quicker (a busy machine while timing must not make every kill land too late).
    let timed = |args: &[&str]| {
        let start = std::time::Instant::now();
        dir.run(args).code(0);
        start.elapsed().as_millis() as u64
    };
    let add = timed(&["index", "add", "calibrate", "0.jsonl", "-q"]);
    // Its records are in the index already (the same ids and texts): nothing is added.
    let dedup =
        timed(&["dedup", "0.jsonl", "--against", "calibrate", "--update", "-o", "out", "-q"]);
    let mut window_ms = (add.min(dedup) / 2).max(2);
    let _ = std::fs::remove_file(dir.path("out"));
    let mut rng = Rng(99);
    // What the index surely holds: at least this many documents, and these records.
    let mut min_documents = 0;
    let mut held: Vec<(usize, BTreeSet<String>)> = Vec::new();
    let mut kills = 0;
    for round in 0..30 {
        let shard = round % shards.len();
        let name = shards[shard].as_str();
        let args: Vec<&str> = match round % 3 {
            0 => vec!["index", "add", "ix", name, "-q"],
            1 => vec!["dedup", name, "--against", "ix", "--update", "-o", "out", "-q"],
            _ => vec!["index", "compact", "ix", "-q"],
        };
        let mut child = dir
            .cmd("simhash")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        // Every fifth run ends on its own; the others are killed at a random moment.
        let started = std::time::Instant::now();
        if round % 5 != 4 {
            std::thread::sleep(Duration::from_millis(rng.below(window_ms)));
            kills += usize::from(child.try_wait().expect("wait").is_none());
            let _ = child.kill();
        }
        let status = child.wait().expect("wait");
        if round % 5 == 4 && status.success() {
            window_ms = window_ms.min(started.elapsed().as_millis() as u64 / 2).max(2);
        }
        let _ = std::fs::remove_file(dir.path("out"));
        let verify = dir.run(&["index", "verify", "ix"]);
        if verify.stderr.contains("no index here") {
            assert_eq!(min_documents, 0, "round {round}: the index is gone");
            continue;
        }
        assert_eq!(verify.code, 0, "round {round}: {}", verify.stderr);
        let now = documents(&dir);
        assert!(now >= min_documents, "round {round}: {now} documents, {min_documents} before");
        min_documents = now;
        for (shard, ids) in &held {
            let found = found_identical(&dir, &shards[*shard]);
            assert!(ids.is_subset(&found), "round {round}: records of shard {shard} are gone");
        }
        if status.success() && round % 3 == 0 {
            let ids = found_identical(&dir, name);
            assert!(ids.len() > 100, "round {round}: {} records", ids.len());
            held.push((shard, ids));
        }
    }
    assert!(kills > 5, "only {kills} runs were killed: the test did not test");
    assert!(!held.is_empty(), "no add finished: the test did not test");
}

/// `index add` stores every document and the index keeps no `--templates` policy, so the
/// flag would be accepted and do nothing: it is refused before the index is made.
#[test]
fn add_refuses_templates() {
    let dir = Dir::new();
    dir.write("A.jsonl", hard_corpus("a", 3));
    for policy in ["keep", "remove"] {
        let run = dir.run(&["index", "add", "ix", "A.jsonl", "--templates", policy]);
        run.code(2);
        assert!(run.stderr.contains("give --templates to dedup --against"), "{}", run.stderr);
        assert!(!dir.path("ix").exists(), "a refused add made the index");
    }
    dir.run(&["index", "add", "ix", "A.jsonl", "-q"]).code(0);
    let run = dir.run(&["index", "add", "ix", "A.jsonl", "--templates", "keep"]);
    run.code(2);
}

/// `index query` lists every match whatever its relation, so `--templates` would be accepted
/// and do nothing: it is refused, naming where it applies.
#[test]
fn query_refuses_templates() {
    let dir = Dir::new();
    dir.write("A.jsonl", hard_corpus("a", 3));
    dir.run(&["index", "add", "ix", "A.jsonl", "-q"]).code(0);
    let run = dir.run(&["index", "query", "ix", "A.jsonl", "--templates", "keep"]);
    run.code(2);
    assert!(run.stderr.contains("--templates applies to dedup --against"), "{}", run.stderr);
    dir.run(&["index", "query", "ix", "A.jsonl", "-q"]).code(0);
}
