//! Round `collapse`: each set of identical fingerprints becomes one representative.
//!
//! Crosses the network: each matched record's fingerprint and position, to the worker the
//! fingerprint's hash picks, which sees every copy of it. The first record (in input order)
//! of each set becomes its representative, with the set's size as its multiplicity, so a
//! flood of copies costs one record per table in the table phase, not a quadratic group.

use timely::worker::Worker;

use super::{exchange, mix};
use crate::share::Docs;

/// A representative fingerprint in the table phase: its position, fingerprint, and how
/// many records share the fingerprint.
pub(crate) type Rep = (u64, u64, u32);

/// The representatives this worker holds, and the copies they stand for.
#[derive(Debug, Default)]
pub(crate) struct Collapsed {
    /// One representative per distinct fingerprint, with its multiplicity.
    pub(crate) reps: Vec<Rep>,
    /// `(representative, member)` for every record that is not its set's representative.
    pub(crate) copies: Vec<(u64, u64)>,
    /// The record pairs among the copies: `m (m - 1) / 2` for a set of `m`.
    pub(crate) copy_pairs: u64,
}

/// Collapses the fingerprints of the matched records of `docs` (all workers' together).
pub(crate) fn run(worker: &mut Worker, docs: &Docs) -> Collapsed {
    let peers = worker.peers() as u64;
    let mut fps = exchange(
        worker,
        (0..docs.len()).filter(|&d| !docs.removed[d]).filter_map(|d| {
            let fp = docs.fp[d]?;
            Some(((mix(u64::MAX, fp) % peers) as usize, (fp, docs.pos[d])))
        }),
    );
    fps.sort_unstable();
    let mut collapsed = Collapsed::default();
    for run in fps.chunk_by(|a, b| a.0 == b.0) {
        let (fp, rep) = run[0];
        collapsed.reps.push((rep, fp, run.len() as u32));
        collapsed.copies.extend(run[1..].iter().map(|&(_, member)| (rep, member)));
        let m = run.len() as u64;
        collapsed.copy_pairs += m * (m - 1) / 2;
    }
    collapsed
}
