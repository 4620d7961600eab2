//! Round `gather`: worker 0 gets what it must print.
//!
//! Crosses the network, in four exchanges:
//! 1. to worker 0, the representative pairs and the copies (`pairs`), or the spanning-forest
//!    edges (`cluster`), found on each worker;
//! 2. from worker 0 to the worker that read each record (its [`InputPlan::owner`]), the
//!    positions of the records worker 0 will print (skipped for `cluster --singletons`,
//!    which prints every record);
//! 3. back to worker 0, each of those records' position, id and fingerprint;
//! 4. each worker's matching figures to every worker (for the summary), last, so that the
//!    bytes each worker sent count every round but this one.
//!
//! Only worker 0 holds the ids it prints: the others never send the rest.

use serde::{Deserialize, Serialize};
use timely::worker::Worker;

use super::tables::Links;
use super::{all_gather, exchange, sent_bytes};
use crate::job::Mode;
use crate::share::{Docs, InputPlan};

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
    /// minhash: candidate pairs (owned by their first common band).
    pub(crate) candidates: u64,
    /// minhash: candidates whose exact Jaccard similarity was computed.
    pub(crate) verified: u64,
    /// Bytes sent to other workers (every round up to the figures' own): the sum, and in
    /// [`total`] the largest worker's in `max_sent`.
    pub(crate) sent: u64,
    pub(crate) max_sent: u64,
    /// Peak resident memory of the worker's process, in MiB: in [`total`], the largest.
    pub(crate) peak_mib: u64,
}

/// What the matching leaves on a worker, whatever the method.
#[derive(Debug)]
pub(crate) struct Matched {
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

/// What worker 0 prints (empty on the other workers, but for the figures).
#[derive(Debug)]
pub(crate) struct Gathered {
    /// All workers' figures: sums, and the largest group's maximum.
    pub(crate) stats: MatchStats,
    /// `pairs`: every record pair, sorted as `simhash pairs` writes them. `cluster`: the
    /// edges of a spanning forest of the near-duplicate graph (distance 0, unused).
    pub(crate) links: Vec<(u64, u64, u32)>,
    /// The records the links name (every record for `cluster --singletons`), by position.
    pub(crate) records: Vec<Record>,
}

/// Gathers the links found by every worker, and the records they name, on worker 0.
pub(crate) fn run(
    worker: &mut Worker,
    mode: Mode,
    plan: &InputPlan,
    docs: &Docs,
    matched: Matched,
) -> Gathered {
    let Matched { links, copies, copy_code, stats } = matched;
    let links = match links {
        Links::Pairs(rep_pairs) => {
            let rep_pairs = exchange(worker, rep_pairs.into_iter().map(|p| (0, p)));
            let copies = exchange(worker, copies.into_iter().map(|c| (0, c)));
            expand(&rep_pairs, copies, copy_code)
        }
        Links::Forest(forest) => {
            exchange(worker, forest.edges.into_iter().map(|(a, b)| (0, (a, b, 0))))
        }
    };
    let mut needed: Vec<u64> = links.iter().flat_map(|&(a, b, _)| [a, b]).collect();
    needed.sort_unstable();
    needed.dedup();
    let answers = if mode == (Mode::Cluster { singletons: true }) {
        (0..docs.len()).filter(|&d| !docs.removed[d]).collect::<Vec<_>>()
    } else {
        let requests = exchange(worker, needed.iter().map(|&pos| (plan.owner(pos), pos)));
        requests.iter().filter_map(|pos| docs.pos.binary_search(pos).ok()).collect()
    };
    let mut records =
        exchange(worker, answers.into_iter().map(|d| (0, (docs.pos[d], docs.id(d), docs.fp[d]))));
    records.sort_unstable_by_key(|r| r.0);
    let stats = figures(worker, stats);
    Gathered { stats, links, records }
}

/// Exchange 4: this worker's figures, with the bytes it sent so far and its process's
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
        sent: stats.iter().map(|s| s.sent).sum(),
        max_sent: stats.iter().map(|s| s.sent).max().unwrap_or(0),
        peak_mib: stats.iter().map(|s| s.peak_mib).max().unwrap_or(0),
    }
}

/// The pairs `simhash pairs` lists: each copy once with its set's representative (score
/// `copy_code`: distance 0, or Jaccard 1), and the representative pairs as they are (each stands for
/// the pairs of the two sets of copies, which are not repeated: a flood of copies is one
/// line a record, not one a pair). Sorted as `simhash pairs` writes them.
fn expand(
    rep_pairs: &[(u64, u64, u32)],
    copies: Vec<(u64, u64)>,
    copy_code: u32,
) -> Vec<(u64, u64, u32)> {
    let mut out: Vec<(u64, u64, u32)> = rep_pairs.to_vec();
    out.extend(
        copies.into_iter().map(|(rep, member)| (rep.min(member), rep.max(member), copy_code)),
    );
    out.sort_unstable();
    out
}
