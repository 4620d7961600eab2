//! Round `gather`: worker 0 gets what it must print.
//!
//! Crosses the network, in four exchanges:
//! 1. each worker's matching figures to every worker (for the summary);
//! 2. to worker 0, the representative pairs and the copies (`pairs`), or the spanning-forest
//!    edges (`cluster`), found on each worker;
//! 3. from worker 0 to the worker that read each record (its [`InputPlan::owner`]), the
//!    positions of the records worker 0 will print (skipped for `cluster --singletons`,
//!    which prints every record);
//! 4. back to worker 0, each of those records' position, id and fingerprint.
//!
//! Only worker 0 holds the ids it prints: the others never send the rest.

use serde::{Deserialize, Serialize};
use timely::worker::Worker;

use super::collapse::Collapsed;
use super::tables::{Found, Links};
use super::{all_gather, exchange};
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
    /// Distinct fingerprints.
    pub(crate) representatives: u64,
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
    collapsed: Collapsed,
    found: Found,
) -> Gathered {
    let stats = MatchStats {
        record_pairs: found.matches.record_pairs + collapsed.copy_pairs,
        largest_group: found.matches.largest_group,
        received: found.matches.received,
        representatives: collapsed.reps.len() as u64,
    };
    let stats = total(&all_gather(worker, &stats));
    let links = match found.links {
        Links::Pairs(rep_pairs) => {
            let rep_pairs = exchange(worker, rep_pairs.into_iter().map(|p| (0, p)));
            let copies = exchange(worker, collapsed.copies.into_iter().map(|c| (0, c)));
            expand(&rep_pairs, copies)
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
    Gathered { stats, links, records }
}

/// The job's figures from every worker's.
fn total(stats: &[MatchStats]) -> MatchStats {
    MatchStats {
        record_pairs: stats.iter().map(|s| s.record_pairs).sum(),
        largest_group: stats.iter().map(|s| s.largest_group).max().unwrap_or(0),
        received: stats.iter().map(|s| s.received).sum(),
        representatives: stats.iter().map(|s| s.representatives).sum(),
    }
}

/// The pairs `simhash pairs` lists: each copy of a fingerprint once with its set's
/// representative (distance 0), and the representative pairs as they are (each stands for
/// the pairs of the two sets of copies, which are not repeated: a flood of copies is one
/// line a record, not one a pair). Sorted as `simhash pairs` writes them.
fn expand(rep_pairs: &[(u64, u64, u32)], copies: Vec<(u64, u64)>) -> Vec<(u64, u64, u32)> {
    let mut out: Vec<(u64, u64, u32)> = rep_pairs.to_vec();
    out.extend(copies.into_iter().map(|(rep, member)| (rep.min(member), rep.max(member), 0)));
    out.sort_unstable();
    out
}
