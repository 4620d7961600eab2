//! Faults: every flipped byte and every truncation of every file of an index is found (by
//! `open` or `verify`, naming the file) and never read as data; and a writer killed with
//! SIGKILL at random moments of adds, commits and compactions leaves the last committed
//! state, complete and verified.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use simhash_core::Fingerprint;

use super::tests::{Rng, add_commits, minhash_docs, minhash_settings, simhash_settings, sketcher};
use super::*;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.retain(|p| p.file_name().is_some_and(|n| n != "LOCK"));
    v.sort();
    v
}

/// Opens, queries and verifies the index in `dir`: the answers, or the first error.
fn read_all(dir: &Path, queries: &[Option<lsh::DocSketch>]) -> Result<Vec<String>, DiskError> {
    let index = DiskIndex::open(dir)?;
    let mut out = Vec::new();
    for hits in index.query_sketches(queries)? {
        for h in hits {
            out.push(format!("{} {} {}", index.id(h.id)?, h.id, h.jaccard));
        }
    }
    for d in 0..index.len() {
        out.push(index.id(d)?.to_string());
        assert_eq!(index.find_id(index.id(d)?)?, Some(d));
    }
    let verified = index.verify();
    verified.map(|()| out)
}

use crate::lsh;

/// Flips every byte (a sample of them in the larger segment files) and truncates every
/// file at many lengths: each time, opening or verifying fails with an error naming the
/// file, and nothing read before that differs from the intact index's answers.
#[test]
fn every_flipped_or_truncated_byte_is_found() {
    let mut rng = Rng(11);
    let sk = sketcher(4, 2);
    let settings = minhash_settings(4, 2, 0.5);
    let mut docs = minhash_docs(&mut rng, 100, &sk);
    let queries = docs.split_off(80);
    let docs: Vec<(String, Option<lsh::DocSketch>)> =
        docs.into_iter().enumerate().map(|(i, d)| (format!("doc-{i}"), d)).collect();
    let dir = tempfile::tempdir().unwrap();
    add_commits(dir.path(), &settings, &docs, &[50, 30], 2500, |w, id, s| {
        w.add_sketch(id, s.as_ref())
    });
    let intact = read_all(dir.path(), &queries).unwrap();
    assert!(intact.iter().any(|l| l.contains(' ')), "the queries have answers");
    let mut checked = 0;
    for path in files(dir.path()) {
        let bytes = fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let step = (bytes.len() / 400).max(1);
        let check = |what: &str| match read_all(dir.path(), &queries) {
            Ok(out) => panic!("{what} of {name} not found (answers equal: {})", out == intact),
            Err(e) => {
                assert!(e.to_string().contains(&name), "{what} of {name}: {e}");
                assert_eq!(e.kind(), DiskErrorKind::Corrupt, "{what} of {name}: {e}");
            }
        };
        for at in (0..bytes.len()).step_by(step) {
            let mut bad = bytes.clone();
            bad[at] ^= 1 << (at % 8);
            fs::write(&path, &bad).unwrap();
            check(&format!("a flipped bit at {at}"));
            checked += 1;
        }
        for len in (0..bytes.len()).step_by((bytes.len() / 60).max(1)) {
            fs::write(&path, &bytes[..len]).unwrap();
            check(&format!("a truncation to {len} bytes"));
            checked += 1;
        }
        fs::write(&path, &bytes).unwrap();
        assert_eq!(read_all(dir.path(), &queries).unwrap(), intact);
    }
    assert!(checked > 600, "{checked}");
}

/// Every answer read from a damaged index is an answer of the intact one: a damaged
/// block is an error when it is read, never data.
#[test]
fn damaged_blocks_are_errors_when_read() {
    let mut rng = Rng(12);
    let sk = sketcher(4, 2);
    let settings = minhash_settings(4, 2, 0.5);
    let mut docs = minhash_docs(&mut rng, 2600, &sk);
    let queries = docs.split_off(2500);
    let docs: Vec<(String, Option<lsh::DocSketch>)> =
        docs.into_iter().enumerate().map(|(i, d)| (format!("doc-{i}"), d)).collect();
    let dir = tempfile::tempdir().unwrap();
    add_commits(dir.path(), &settings, &docs, &[2500], usize::MAX, |w, id, s| {
        w.add_sketch(id, s.as_ref())
    });
    let seg =
        files(dir.path()).into_iter().find(|p| p.extension().is_some_and(|e| e == "seg")).unwrap();
    let bytes = fs::read(&seg).unwrap();
    assert!(bytes.len() > 2 * file::BLOCK, "several blocks: {}", bytes.len());
    let intact = DiskIndex::open(dir.path()).unwrap().query_sketches(&queries).unwrap();
    let mut errors = 0;
    for at in (100..bytes.len() - 200).step_by(bytes.len() / 16) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        fs::write(&seg, &bad).unwrap();
        let index = DiskIndex::open(dir.path()).unwrap();
        for (q, want) in queries.iter().zip(&intact) {
            match q.as_ref().map(|s| index.query_sketch(s)) {
                Some(Ok(hits)) => assert_eq!(&hits, want),
                Some(Err(e)) => {
                    assert_eq!(e.kind(), DiskErrorKind::Corrupt);
                    errors += 1;
                }
                None => {}
            }
        }
        assert_eq!(index.verify().unwrap_err().kind(), DiskErrorKind::Corrupt);
    }
    fs::write(&seg, &bytes).unwrap();
    assert!(errors > 0, "some queries read a damaged block");
}

/// The environment variable that makes `crash_child` a writer in a loop.
const CHILD_DIR: &str = "SIMHASH_DISK_CRASH_CHILD_DIR";

/// How `killed_writers_leave_the_last_commit` runs `crash_child` in a child process.
const CHILD_ARGS: [&str; 5] =
    ["--ignored", "--exact", "disk::fault_tests::crash_child", "--test-threads=1", "--nocapture"];

fn crash_fp(d: u64) -> Fingerprint {
    Fingerprint(d.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The child of `killed_writers_leave_the_last_commit`, not a test of its own: adds
/// documents `d{n}` (fingerprint `crash_fp(n)`) in transactions that commit, compact or roll
/// back, forever, logging each committed count, until the parent kills it. Ignored, so that
/// a test run does not count it as a test that passed; the parent runs it with `--ignored`
/// and `CHILD_DIR` set, and run by hand without that variable it fails.
#[test]
#[ignore = "the child process of killed_writers_leave_the_last_commit, which runs it"]
fn crash_child() {
    let dir = std::env::var_os(CHILD_DIR).unwrap_or_else(|| {
        panic!("{CHILD_DIR} is not set: run killed_writers_leave_the_last_commit, which runs this")
    });
    let dir = PathBuf::from(dir);
    let settings = simhash_settings(3, 6);
    let mut rng = Rng(std::process::id().into());
    let mut log =
        fs::OpenOptions::new().create(true).append(true).open(dir.join("committed.log")).unwrap();
    let index_dir = dir.join("index");
    loop {
        let mut w = Writer::builder().flush_bytes(3000).open(&index_dir, &settings).unwrap();
        let start = w.documents();
        for n in start..start + 1 + rng.below(120) {
            w.add_fingerprint(&format!("d{n}"), Some(crash_fp(n))).unwrap();
        }
        let commit = match rng.below(4) {
            0 => w.compact().unwrap(),
            1 => {
                drop(w);
                continue;
            }
            _ => w.commit().unwrap(),
        };
        writeln!(log, "{}", commit.documents).unwrap();
    }
}

/// Kills the child writer with SIGKILL at random moments, 50 times; after each kill the
/// index opens at a committed state that holds every document the child saw committed,
/// verifies, and a new writer removes what the killed one left.
#[test]
fn killed_writers_leave_the_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng(5);
    let mut last_len = 0;
    for round in 0..50 {
        let mut child = Command::new(&exe)
            .args(CHILD_ARGS)
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(10 + rng.below(90)));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        // The child was still writing when it was killed: it did not end on its own (a
        // failed writer, or no test of that name run).
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "round {round}: the child ended on its own ({status}), not by SIGKILL"
        );
        assert!(!status.success(), "round {round}: the child ended on its own ({status})");
        let log = fs::read_to_string(dir.path().join("committed.log")).unwrap_or_default();
        let logged: u64 = log.lines().last().map_or(0, |l| l.parse().unwrap());
        let index_dir = dir.path().join("index");
        let index = match DiskIndex::open(&index_dir) {
            Ok(index) => index,
            Err(e) if e.kind() == DiskErrorKind::NotFound && logged == 0 => continue,
            Err(e) => panic!("round {round}: {e}"),
        };
        index.verify().unwrap();
        let len = index.len();
        assert!(
            len >= logged && len >= last_len,
            "round {round}: {len} documents, {logged} logged"
        );
        for d in 0..len {
            assert_eq!(index.id(d).unwrap(), format!("d{d}"), "round {round}");
            if d % 7 != round % 7 {
                continue; // a sample of the queries
            }
            let hits = index.query_fingerprint(crash_fp(d)).unwrap();
            assert!(hits.iter().any(|h| h.id == d && h.distance == 0), "round {round}: doc {d}");
        }
        last_len = len;
        drop(index);
        // The next writer removes what the killed one left; only listed files remain.
        drop(Writer::open(&index_dir, &simhash_settings(3, 6)).unwrap());
        let index = DiskIndex::open(&index_dir).unwrap();
        let left: Vec<String> = fs::read_dir(&index_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != "LOCK" && n != "MANIFEST")
            .collect();
        assert_eq!(left.len(), index.stats().segments, "round {round}: {left:?}");
    }
    assert!(last_len > 0, "the child committed something");
}
