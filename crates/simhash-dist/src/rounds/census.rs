//! Round `census`: the job's counts, and the report of its bad records.
//!
//! Crosses the network: each worker's counts (bad records, documents, featureless ones)
//! to every worker, so that every worker knows the totals (the planner's input size, the
//! exit code); and every bad record (position, line, message) to worker 0, which reports
//! them in input order, as `simhash` does, or stops the job with `--strict`.

use std::io::Write;

use serde::{Deserialize, Serialize};
use timely::worker::Worker;

use super::{all_gather, exchange};
use crate::share::{Chunk, InputPlan, OFFSET_BITS, Share};

/// One worker's counts after reading and removing duplicate ids.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Counts {
    bad: u64,
    documents: u64,
    featureless: u64,
}

/// The job's totals, the same on every worker.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Census {
    /// Records that are matched (not skipped), featureless ones included.
    pub(crate) documents: u64,
    /// Documents without a fingerprint.
    pub(crate) featureless: u64,
    /// Bad records and empty input files, each reported: the job exits 1 when there are any.
    pub(crate) skipped: u64,
}

/// Counts the records, and has worker 0 report the bad ones and the empty input files.
/// With `strict`, a bad record or an empty file fails the job: worker 0 returns the
/// message, the others no message.
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    share: &Share,
    all_chunks: &[Chunk],
    strict: bool,
) -> Result<Census, Vec<String>> {
    let me = worker.index();
    let docs = &share.docs;
    let live = |d: &usize| !docs.removed[*d];
    let counts = Counts {
        bad: share.bad.len() as u64,
        documents: (0..docs.len()).filter(live).count() as u64,
        featureless: (0..docs.len()).filter(live).filter(|&d| docs.featureless(d)).count() as u64,
    };
    let counts = all_gather(worker, &counts);
    let mut bad =
        exchange(worker, share.bad.iter().map(|b| (0, (b.pos, b.line, b.problem.message.clone()))));
    bad.sort_unstable();
    let total = counts.iter().fold(Counts::default(), |acc, c| Counts {
        bad: acc.bad + c.bad,
        documents: acc.documents + c.documents,
        featureless: acc.featureless + c.featureless,
    });
    let empty = empty_files(plan, all_chunks);
    if strict && (total.bad > 0 || !empty.is_empty()) {
        if me != 0 {
            return Err(Vec::new());
        }
        let message = match bad.first() {
            Some((pos, line, message)) => {
                format!("{} (stopped by --strict)", located(plan, *pos, *line, message))
            }
            None => format!("{}: empty input, no records (stopped by --strict)", empty[0]),
        };
        return Err(vec![message]);
    }
    if me == 0 {
        let mut err = std::io::stderr().lock();
        for (pos, line, message) in &bad {
            let message = located(plan, *pos, *line, message);
            let _ = writeln!(err, "simhash-dist: {}", simhash_io::printable(&message));
        }
        for name in &empty {
            let message = format!("{name}: empty input, no records");
            let _ = writeln!(err, "simhash-dist: {}", simhash_io::printable(&message));
        }
    }
    Ok(Census {
        documents: total.documents,
        featureless: total.featureless,
        skipped: total.bad + empty.len() as u64,
    })
}

/// The names of the input files without a record, in input order.
fn empty_files<'p>(plan: &'p InputPlan, all_chunks: &[Chunk]) -> Vec<&'p str> {
    let mut per_file = vec![0u64; plan.files.len()];
    for c in all_chunks {
        per_file[c.file] += c.records;
    }
    per_file
        .iter()
        .zip(&plan.files)
        .filter(|(n, _)| **n == 0)
        .map(|(_, f)| f.name.as_str())
        .collect()
}

/// A bad record's message, `FILE:LINE: what`; a bad file's (line 0: a Parquet file that
/// cannot be read) names the file itself.
fn located(plan: &InputPlan, pos: u64, line: u64, message: &str) -> String {
    if line == 0 {
        return message.to_string();
    }
    format!("{}:{line}: {message}", file_name(plan, pos))
}

/// The name of the file holding the record at `pos`, as messages show it.
fn file_name(plan: &InputPlan, pos: u64) -> &str {
    plan.files.get((pos >> OFFSET_BITS) as usize).map_or("?", |f| f.name.as_str())
}
