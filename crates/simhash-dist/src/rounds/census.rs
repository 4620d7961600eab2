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
    /// Bad records, each reported.
    pub(crate) skipped: u64,
    /// Whether every input file is empty (no record at all), reported as `simhash` reports
    /// it; one empty file among others is not a problem.
    pub(crate) empty: bool,
}

impl Census {
    /// Whether the job exits 1: bad records, or an empty input.
    pub(crate) fn exits_1(&self) -> bool {
        self.skipped > 0 || self.empty
    }
}

/// Counts the records, and has worker 0 report the bad ones and an input whose every file
/// is empty. With `strict`, a bad record or an empty input fails the job: worker 0 returns
/// the message, the others no message.
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
    // Every file empty: the input named as `simhash` names it.
    let empty = all_chunks.iter().all(|c| c.records == 0).then(|| {
        let names: Vec<&str> = plan.files.iter().map(|f| f.name.as_str()).collect();
        format!("{}: empty input, no records", simhash_jobs::inputs_label_of(&names))
    });
    if strict && (total.bad > 0 || empty.is_some()) {
        if me != 0 {
            return Err(Vec::new());
        }
        let message = match bad.first() {
            Some((pos, line, message)) => {
                format!("{} (stopped by --strict)", located(plan, *pos, *line, message))
            }
            None => format!("{} (stopped by --strict)", empty.unwrap_or_default()),
        };
        return Err(vec![message]);
    }
    if me == 0 {
        let mut err = std::io::stderr().lock();
        for (pos, line, message) in &bad {
            let message = located(plan, *pos, *line, message);
            let _ = writeln!(err, "simhash-dist: {}", simhash_io::printable(&message));
        }
        if let Some(message) = &empty {
            let _ = writeln!(err, "simhash-dist: {}", simhash_io::printable(message));
        }
    }
    Ok(Census {
        documents: total.documents,
        featureless: total.featureless,
        skipped: total.bad,
        empty: empty.is_some(),
    })
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
