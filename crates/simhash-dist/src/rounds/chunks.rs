//! Round `chunks`: every worker learns what every other worker read, or why it could not.
//!
//! Crosses the network: from each worker to all, its input digest, the line and record
//! counts of each piece it read ([`Chunk`]), and its read error if any. With them every
//! worker can number its lines (in the file, for `FILE:LINE` messages, and in the
//! concatenation of the files, for the ids of records without one, as `simhash` numbers
//! the concatenated input), and all workers stop together when one failed or when the
//! processes disagree on the input.

use serde::{Deserialize, Serialize};
use timely::worker::Worker;

use super::all_gather;
use crate::share::{Chunk, InputPlan, Share};

/// What each worker read, or why it could not.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ChunkReport {
    digest: u64,
    chunks: Vec<Chunk>,
    error: Option<String>,
}

/// Gathers every worker's chunks (or errors) and resolves `share`'s line numbers. Returns
/// the chunks of all workers, in worker order, or the messages the job fails with.
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    share: &mut Share,
    error: Option<String>,
) -> Result<Vec<Chunk>, Vec<String>> {
    let report = ChunkReport { digest: plan.digest(), chunks: share.chunks.clone(), error };
    let reports = all_gather(worker, &report);
    let mut errors: Vec<String> = reports.iter().filter_map(|r| r.error.clone()).collect();
    if reports.iter().any(|r| r.digest != reports[0].digest) {
        errors.push(
            "the processes disagree on the input (file names, sizes, kinds) or the number of \
             workers: every process must see the same files and run the same simhash-dist \
             build (the same version, on every host)"
                .to_string(),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let all_chunks: Vec<Chunk> = reports.into_iter().flat_map(|r| r.chunks).collect();
    let lines_before = chunk_lines(&share.chunks, &all_chunks);
    share.docs.resolve_lines(&lines_before);
    for bad in &mut share.bad {
        bad.line += lines_before[bad.chunk as usize].0;
    }
    Ok(all_chunks)
}

/// For each of `mine`: the lines of its file before it (so messages name `FILE:LINE` in the
/// file), and the lines of all the earlier files (so a record without an id gets its line
/// number in the concatenation of the files, as `simhash` numbers the concatenated input).
fn chunk_lines(mine: &[Chunk], all: &[Chunk]) -> Vec<(u64, u64)> {
    mine.iter()
        .map(|c| {
            let in_file = all.iter().filter(|o| o.file == c.file && o.lo < c.lo).map(|o| o.lines);
            let earlier = all.iter().filter(|o| o.file < c.file).map(|o| o.lines);
            (in_file.sum(), earlier.sum())
        })
        .collect()
}
