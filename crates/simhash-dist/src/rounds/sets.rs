//! Round `sets` (`--method minhash`): records with identical shingle sets and tokens become
//! one representative, as the engine's searches collapse them before banding.
//!
//! Crosses the network, in four exchanges:
//! 1. each sketched record's set hash ([`DocSketch::set_hash`]) and position, to the worker
//!    a well-mixed hash of the set hash picks ([`mix`]), which sees every record with that
//!    hash (16 bytes a record);
//! 2. for set hashes shared by two or more records only, a request for their sets and
//!    tokens to the workers that read them, and 3. the sets and tokens back (8 bytes a
//!    shingle, 4 a token): equal hashes are only a hint, sets and tokens are compared whole,
//!    as the engine compares them (with a short window two texts in another order can
//!    share a set: they are not copies, their relation is read);
//! 4. to the reader of each record whose set and tokens equal an earlier record's, its
//!    position, so that it sends no band keys ([`crate::rounds::bands`]).
//!
//! The representative of a set is its first record in input order (the engine's, whose
//! documents are numbered in input order), so a flood of ten thousand copies of a page is
//! one record in the band rounds, and one line a copy in the output.
//!
//! [`DocSketch::set_hash`]: simhash_index::lsh::DocSketch::set_hash

use std::collections::HashMap;

use simhash_index::lsh;
use timely::worker::Worker;

use super::{exchange, mix};
use crate::share::{Docs, InputPlan};

/// The routing table of set hashes, apart from the permutation tables' numbers.
const SET_TABLE: u64 = u64::MAX - 1;

/// What the round leaves on a worker.
#[derive(Debug, Default)]
pub(crate) struct Sets {
    /// `(representative, member)` for each record whose set and tokens equal an earlier
    /// record's, for the set hashes this worker checked.
    pub(crate) copies: Vec<(u64, u64)>,
    /// Per record this worker read: its set and tokens equal an earlier record's.
    pub(crate) is_copy: Vec<bool>,
    /// Distinct sets among the set hashes this worker checked.
    pub(crate) distinct: u64,
}

/// A record's shingle set and tokens, as a worker that read it sends them.
type SetAndTokens = (Vec<u64>, Vec<u32>);

/// The sketched records of `docs` that take part in the matching.
pub(crate) fn sketched(docs: &Docs) -> impl Iterator<Item = usize> + '_ {
    (0..docs.len()).filter(|&d| !docs.removed[d] && docs.sketch[d].is_some())
}

/// Collapses the identical shingle sets and tokens of all workers' records.
pub(crate) fn run(worker: &mut Worker, plan: &InputPlan, docs: &Docs) -> Sets {
    let (me, peers) = (worker.index(), worker.peers() as u64);
    let mut hashes: Vec<(u64, u64)> = exchange(
        worker,
        sketched(docs).filter_map(|d| {
            let h = docs.sketch[d].as_ref()?.set_hash();
            Some(((mix(SET_TABLE, h) % peers) as usize, (h, docs.pos[d])))
        }),
    );
    hashes.sort_unstable();
    let shared = || hashes.chunk_by(|a, b| a.0 == b.0).filter(|run| run.len() > 1);
    let requests =
        exchange(worker, shared().flatten().map(|&(_, pos)| (plan.owner(pos), (pos, me as u64))));
    let mut sets: Vec<(u64, SetAndTokens)> = exchange(
        worker,
        requests.into_iter().filter_map(|(pos, from)| {
            let sketch = docs.sketch[docs.find(pos)?].as_ref()?;
            Some((from as usize, (pos, (sketch.set().to_vec(), sketch.tokens().to_vec()))))
        }),
    );
    sets.sort_unstable_by_key(|s| s.0);
    let copy_of = |pos: u64| {
        sets.binary_search_by_key(&pos, |s| s.0)
            .map_or((&[][..], &[][..]), |i| (sets[i].1.0.as_slice(), sets[i].1.1.as_slice()))
    };
    let mut out =
        Sets { distinct: (hashes.len() - shared().flatten().count()) as u64, ..Sets::default() };
    for run in shared() {
        // In input order: each record joins the first earlier distinct record with its set
        // and tokens, found among those with a hash of the same tokens.
        let mut reps: HashMap<u64, Vec<u64>> = HashMap::new();
        for &(_, pos) in run {
            let (set, tokens) = copy_of(pos);
            let same_tokens = reps.entry(lsh::tokens_hash(tokens)).or_default();
            if let Some(&rep) = same_tokens.iter().find(|&&rep| copy_of(rep) == (set, tokens)) {
                out.copies.push((rep, pos));
            } else {
                same_tokens.push(pos);
                out.distinct += 1;
            }
        }
    }
    out.is_copy = vec![false; docs.len()];
    for pos in exchange(worker, out.copies.iter().map(|&(_, m)| (plan.owner(m), m))) {
        if let Some(d) = docs.find(pos) {
            out.is_copy[d] = true;
        }
    }
    out
}
