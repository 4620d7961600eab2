//! Rounds `id kinds` and `duplicates`: the records `simhash` would skip for their ids.
//!
//! * [`kinds`]: crosses the network: from each worker to all, the position of its first
//!   record and whether that record has an id. The first record of the input (over all
//!   files, in order) decides whether records have ids; every record of the other kind is a
//!   bad record (`mixed_ids`), as `simhash` reports it.
//! * [`duplicates`]: each id's hash and position go to the worker its hash picks, which
//!   sees every copy of the id; for the ids whose hash another record shares, that worker
//!   asks their readers for the ids themselves (requests, then answers), since only equal
//!   bytes make equal ids (a hash collision never skips a record); all but the first (in
//!   input order) of each id go back to the worker that read them, which skips them as
//!   `simhash` skips them. Other ids never travel, only their 128-bit hashes.

use simhash_io::Problem;
use timely::worker::Worker;

use super::{all_gather, exchange};
use crate::share::{BadRecord, InputPlan, Share};

/// Marks every record whose kind (with or without an id) differs from the input's first
/// record's as removed, and reports it as a bad record.
pub(crate) fn kinds(worker: &mut Worker, share: &mut Share) {
    let docs = &mut share.docs;
    let firsts = all_gather(worker, &docs.pos.first().map(|&pos| (pos, !docs.generated[0])));
    let Some((_, with_ids)) = firsts.iter().flatten().min() else { return };
    for d in 0..docs.len() {
        if docs.generated[d] != *with_ids {
            continue;
        }
        docs.removed[d] = true;
        share.bad.push(BadRecord {
            pos: docs.pos[d],
            chunk: 0,
            line: docs.line[d],
            problem: Problem::mixed_ids(!*with_ids),
        });
    }
}

/// Marks every record whose id an earlier record of the input has as removed, and reports
/// it as a bad record. Two ids are the same only when their bytes are: ids whose hashes are
/// equal are fetched from their readers and compared before any record is skipped.
pub(crate) fn duplicates(worker: &mut Worker, plan: &InputPlan, share: &mut Share) {
    let (me, peers) = (worker.index(), worker.peers() as u64);
    let docs = &mut share.docs;
    let mut ids = exchange(
        worker,
        (0..docs.len()).filter(|&d| !docs.removed[d]).filter_map(|d| {
            let h = id_hash(docs.given_id(d)?);
            Some(((h.0 % peers) as usize, (h, docs.pos[d])))
        }),
    );
    ids.sort_unstable();
    // The records whose id hash another record has: their ids, from their readers.
    let shared: Vec<u64> = ids
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|group| group.len() > 1)
        .flat_map(|group| group.iter().map(|x| x.1))
        .collect();
    let asked = exchange(worker, shared.iter().map(|&pos| (plan.owner(pos), (pos, me))));
    let answers = asked.into_iter().filter_map(|(pos, from)| {
        let d = docs.pos.binary_search(&pos).ok()?;
        Some((from, (pos, docs.given_id(d)?.to_string())))
    });
    let mut texts: Vec<(u64, String)> = exchange(worker, answers);
    texts.sort_unstable();
    let text =
        |pos: u64| texts.binary_search_by_key(&pos, |t| t.0).ok().map(|i| texts[i].1.as_str());
    let later = repeats(&ids, text).into_iter().map(|pos| (plan.owner(pos), pos));
    for pos in exchange(worker, later) {
        if let Ok(d) = docs.pos.binary_search(&pos) {
            docs.removed[d] = true;
            let id = docs.given_id(d).unwrap_or_default();
            share.bad.push(BadRecord {
                pos,
                chunk: 0,
                line: docs.line[d],
                problem: Problem::duplicate_id(id),
            });
        }
    }
}

/// The positions of the records whose id an earlier record has, from `ids` (`(id hash,
/// position)`, sorted) and `text`, the id of each record whose hash another shares: records
/// with equal hashes are the same id only when their texts are equal.
fn repeats<'t>(ids: &[((u64, u64), u64)], text: impl Fn(u64) -> Option<&'t str>) -> Vec<u64> {
    let mut later = Vec::new();
    for group in ids.chunk_by(|a, b| a.0 == b.0).filter(|group| group.len() > 1) {
        let mut members: Vec<(&str, u64)> =
            group.iter().filter_map(|x| Some((text(x.1)?, x.1))).collect();
        members.sort_unstable();
        later.extend(members.windows(2).filter(|w| w[0].0 == w[1].0).map(|w| w[1].1));
    }
    later.sort_unstable();
    later
}

/// A 128-bit hash of an id: XXH3-128 of its UTF-8 bytes, as `(high, low)` 64-bit halves;
/// `high % workers` is the worker that checks the id for duplicates. XXH3 is a fixed,
/// specified function, so processes built with different Rust toolchains agree on it
/// (`std`'s `DefaultHasher` is not specified and may change between Rust releases).
fn id_hash(id: &str) -> (u64, u64) {
    let h = xxhash_rust::xxh3::xxh3_128(id.as_bytes());
    ((h >> 64) as u64, h as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_hashes_are_repeats_only_for_equal_ids() {
        let texts = [(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "b"), (6, "a"), (7, "z")];
        let text = |pos: u64| texts.iter().find(|t| t.0 == pos).map(|t| t.1);
        // Every id on one hash (forced collisions): only equal texts repeat.
        let one: Vec<((u64, u64), u64)> = (1..=7).map(|pos| ((9, 9), pos)).collect();
        assert_eq!(repeats(&one, text), vec![3, 5, 6]);
        // Distinct hashes are never compared, whatever their texts.
        let apart: Vec<((u64, u64), u64)> = (1..=7).map(|pos| ((pos, 0), pos)).collect();
        assert_eq!(repeats(&apart, text), Vec::<u64>::new());
        // Two hashes, each shared by different ids: no repeat across them.
        let two = vec![((1, 1), 1), ((1, 1), 2), ((2, 2), 3), ((2, 2), 4), ((2, 2), 6)];
        assert_eq!(repeats(&two, text), vec![6]);
    }

    #[test]
    fn id_hash_is_xxh3_128() {
        // XXH3-128 (seed 0) of the empty input, from the reference implementation's test
        // vectors; then a value pinned here: a change of hash would split one job's
        // processes built from different sources.
        assert_eq!(id_hash(""), (0x99aa06d3014798d8, 0x6001c324468d497f));
        assert_eq!(id_hash("doc-1"), (0x86d30a7187b8846d, 0x519b17ab187068cc));
    }
}
