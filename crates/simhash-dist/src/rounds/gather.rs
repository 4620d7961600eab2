//! Round `figures`: each worker's matching figures to every worker (for the summary),
//! after the output's own rounds ([`crate::rounds::parts`]), so that the bytes each worker
//! sent count every round but this one; and the types the output's rounds share.
//!
//! Every command writes its output through the parts of [`crate::rounds::parts`]: with
//! `--output-dir` as files, with `-o` into a temporary file per worker that worker 0
//! receives a window at a time ([`crate::rounds::stream`]). No worker gathers the output.

use serde::{Deserialize, Serialize};
use timely::worker::Worker;

use super::tables::Links;
use super::{all_gather, sent_bytes};

/// Each worker's matching figures.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub(crate) struct MatchStats {
    /// Record pairs found (representative pairs times multiplicities, and pairs of copies).
    pub(crate) record_pairs: u64,
    /// The largest prefix group reduced, in representatives.
    pub(crate) largest_group: u64,
    /// Table records received (the shuffle).
    pub(crate) received: u64,
    /// Distinct fingerprints, or distinct shingle sets.
    pub(crate) representatives: u64,
    /// minhash: distinct candidate pairs whose set lengths allow the threshold (and, for
    /// `pairs`, those of the search of the flooded band groups).
    pub(crate) candidates: u64,
    /// minhash: candidates whose exact Jaccard similarity was computed.
    pub(crate) verified: u64,
    /// minhash `pairs`: records of the band groups too large to list, searched whole
    /// ([`crate::rounds::floods`]), over the workers that searched them.
    pub(crate) flooded: u64,
    /// Bytes sent to other workers (every round up to the figures' own): the sum, and in
    /// [`total`] the largest worker's in `max_sent`.
    pub(crate) sent: u64,
    /// In [`total`]: the most bytes one worker sent.
    pub(crate) max_sent: u64,
    /// Peak resident memory of the worker's process, in MiB: in [`total`], the largest.
    pub(crate) peak_mib: u64,
}

/// What the matching leaves on a worker, whatever the method.
#[derive(Debug)]
pub(crate) struct Matched {
    /// The pairs found (`pairs`) or the spanning forest of the matches (`cluster`, `dedup`).
    pub(crate) links: Links,
    /// `(representative, member)` for each record collapsed onto its representative
    /// (identical fingerprints, or identical shingle sets), for `pairs` (`cluster` has
    /// them in its forest already).
    pub(crate) copies: Vec<(u64, u64)>,
    /// The score code of a copy with its representative: distance 0, or Jaccard 1.
    pub(crate) copy_code: u32,
    /// This worker's figures.
    pub(crate) stats: MatchStats,
}

/// A record worker 0 prints: its position, id (as `simhash` writes it) and fingerprint.
pub(crate) type Record = (u64, String, Option<u64>);

/// This worker's figures, with the bytes it sent so far and its process's
/// peak memory, to every worker; returns the job's.
pub(crate) fn figures(worker: &mut Worker, mut stats: MatchStats) -> MatchStats {
    stats.sent = sent_bytes();
    stats.peak_mib = crate::peak_memory_mib();
    total(&all_gather(worker, &stats))
}

/// The job's figures from every worker's.
fn total(stats: &[MatchStats]) -> MatchStats {
    MatchStats {
        record_pairs: stats.iter().map(|s| s.record_pairs).sum(),
        largest_group: stats.iter().map(|s| s.largest_group).max().unwrap_or(0),
        received: stats.iter().map(|s| s.received).sum(),
        representatives: stats.iter().map(|s| s.representatives).sum(),
        candidates: stats.iter().map(|s| s.candidates).sum(),
        verified: stats.iter().map(|s| s.verified).sum(),
        flooded: stats.iter().map(|s| s.flooded).sum(),
        sent: stats.iter().map(|s| s.sent).sum(),
        max_sent: stats.iter().map(|s| s.sent).max().unwrap_or(0),
        peak_mib: stats.iter().map(|s| s.peak_mib).max().unwrap_or(0),
    }
}
