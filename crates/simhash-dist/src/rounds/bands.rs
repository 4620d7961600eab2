//! Round `bands` (`--method minhash`): candidates from shared band keys. For `pairs`,
//! each candidate is settled on the reader of its larger set and verified there once, by the
//! exact Jaccard similarity of the two shingle sets. One band at a time, so that one band's
//! records are in memory at once; the verification once, after the last band, so that a set
//! crosses to a worker once.
//!
//! Crosses the network, per band:
//! 1. for each representative ([`crate::rounds::sets`]): `(key, position, set length)` to
//!    the worker a well-mixed hash of (band, key) picks ([`mix`]), where all records sharing
//!    a key in the band meet (28 bytes with its address, so about `28 × bands` bytes a
//!    record over all bands). That worker groups them and lists their pairs;
//! 2. each pair whose set lengths allow the threshold (Jaccard is at most
//!    `smaller / larger`, so the others cannot verify and are dropped, uncompared), to the
//!    reader of the record with the larger set, grouped by the smaller one (the larger
//!    ones' positions as ascending deltas, [`deltas`]: 3 or 4 bytes a pair). A pair met in
//!    several bands arrives once for each; its verifier keeps it once.
//!
//! Then, once over all bands:
//! 3. each verifier asks the reader of each smaller set it needs for it, once (16 bytes);
//! 4. that reader sends the set (8 bytes a shingle) once to each worker that asked. The
//!    receiver computes the exact Jaccard similarity ([`simhash_core::jaccard`], as the
//!    engine's [`similarity`](simhash_index::lsh::similarity)) of each of its pairs and keeps
//!    those at or above `--jaccard`. Records never travel, and a set travels at most once to
//!    a worker. When the sets are many, they go in rounds of at most [`VERIFY_ROUND_BYTES`]
//!    received a worker, each set in one round.
//!
//! A group of more than `--flood-group` records ([`FLOOD_GROUP`](super::floods::FLOOD_GROUP))
//! is not listed: its `g²/2` pairs would make the worker's memory and step 2 grow with the
//! square of the group (short documents sharing a phrase make such groups). The worker keeps
//! its members instead, and after the last band searches them whole with the engine
//! ([`crate::rounds::floods`]), whose pairs join the listed ones at their verifier.
//!
//! `cluster` and `dedup` need only what the components of the candidate graph decide
//! ([`Verifying::Groups`]): after step 1, each group's records are joined in the worker's
//! forest (its first record with each other one: a group of `g` records is `g - 1` unions,
//! not `g²/2` candidates, so a flood of short documents sharing a phrase stays linear), and
//! nothing else crosses here; each candidate component then goes whole to one worker, which
//! verifies it as `simhash` does ([`crate::rounds::dedup`]).
//!
//! A band record carries no keys of other bands (the engine's "first common band owns the
//! pair" test would need all earlier ones, `2 × bands²` bytes a record): a pair met in
//! several bands costs a few bytes a meeting instead (docs/scale-out.md has the figures).

use timely::worker::Worker;

use serde::{Deserialize, Serialize};
use simhash_index::lsh::{DocSketch, Templates};
use simhash_io::Score;

use super::dedup::{pair_relation, related_code};
use super::floods;
use super::sets::{Sets, sketched};
use super::tables::Links;
use super::{exchange, mix};
use crate::share::{Docs, InputPlan};

/// What this worker's part of the band rounds did.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub(crate) struct BandStats {
    /// Band records received (the shuffle), over all bands.
    pub(crate) received: u64,
    /// The largest group sharing a key in a band, in representatives.
    pub(crate) largest_group: u64,
    /// Distinct candidate pairs this worker settled, as the reader of their larger set
    /// (those whose set lengths allow the threshold), and the candidates of its search of
    /// the flooded groups ([`super::floods`]).
    pub(crate) candidates: u64,
    /// Candidates whose Jaccard similarity this worker computed.
    pub(crate) verified: u64,
    /// Verified pairs of representatives.
    pub(crate) pairs: u64,
    /// Records of the flooded band groups this worker searched ([`super::floods`]).
    pub(crate) flooded: u64,
}

/// A band record: key, position, set length.
type BandRecord<K> = (K, u64, u32);

/// A band key: 32 bits (the sketch's folded keys) or 64 (the whole band hashes), as
/// `simhash_index::lsh::band_key_bits` chose for the job.
trait Key: Copy + Ord + timely::ExchangeData + Serialize + for<'a> Deserialize<'a> {
    /// The key of `band` in `sketch`.
    fn of(sketch: &DocSketch, band: usize) -> Self;
    /// The key as the router's input.
    fn route(self) -> u64;
}

impl Key for u32 {
    fn of(sketch: &DocSketch, band: usize) -> u32 {
        sketch.bands()[band]
    }
    fn route(self) -> u64 {
        u64::from(self)
    }
}

impl Key for u64 {
    /// A sketch narrowed to 32-bit keys is never banded at 64 bits; its 32-bit key would
    /// still be correct (only more candidates).
    fn of(sketch: &DocSketch, band: usize) -> u64 {
        sketch.band_hash(band).unwrap_or_else(|| u64::from(sketch.bands()[band]))
    }
    fn route(self) -> u64 {
        self
    }
}

/// What the band rounds make of the records that share a key.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Verifying {
    /// `pairs`: candidates verified at `jaccard`, the sets shipped in rounds of at most
    /// `round_bytes` received a worker; the groups of more than `flood_group` records
    /// searched whole ([`super::floods`]).
    Pairs { jaccard: f64, round_bytes: u64, flood_group: usize, templates: Templates },
    /// `dedup`: no verification; the records sharing a key are joined in the forest, whose
    /// components (the candidate graph's) the walk then runs on, verifying what it needs as
    /// `simhash dedup`'s walk does ([`crate::rounds::dedup`]).
    Groups,
}

/// Runs every band over the representatives of `docs`, with band keys of `key_bits` (32 or
/// 64), and adds each verified pair to `links` (with its score code); returns the counts,
/// and the error that failed the search of the flooded groups on this worker, if any
/// (returned after the last round, so that every worker runs the same rounds).
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    sets: &Sets,
    keys: (usize, u32),
    verifying: Verifying,
    links: &mut Links,
) -> (BandStats, Option<String>) {
    if keys.1 == 64 {
        run_keys::<u64>(worker, plan, docs, sets, keys, verifying, links)
    } else {
        run_keys::<u32>(worker, plan, docs, sets, keys, verifying, links)
    }
}

fn run_keys<K: Key>(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    sets: &Sets,
    (bands, key_bits): (usize, u32),
    verifying: Verifying,
    links: &mut Links,
) -> (BandStats, Option<String>) {
    let peers = worker.peers() as u64;
    let mut stats = BandStats::default();
    let reps: Vec<usize> = sketched(docs).filter(|&d| !sets.is_copy[d]).collect();
    // This worker's candidates `(smaller, larger)` as the reader of the larger set (the
    // worker that verifies them), over all bands.
    // The pairs met again in a later band are kept once: memory stays near the distinct
    // candidates'.
    let mut pending: Distinct<(u64, u64)> = Distinct::default();
    // The members of the flooded groups this worker gathered, over all bands (a record met
    // in several of them kept once).
    let mut flooded: Distinct<u64> = Distinct::default();
    for band in 0..bands {
        super::label("band_keys");
        let mut records: Vec<BandRecord<K>> = exchange(
            worker,
            reps.iter().filter_map(|&d| {
                let sketch = docs.sketch[d].as_ref()?;
                let key = K::of(sketch, band);
                let record = (key, docs.pos[d], sketch.set().len() as u32);
                Some(((mix(band as u64, key.route()) % peers) as usize, record))
            }),
        );
        stats.received += records.len() as u64;
        records.sort_unstable_by_key(|r| (r.0, r.1));
        let Verifying::Pairs { jaccard, flood_group, .. } = verifying else {
            for group in records.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
                stats.largest_group = stats.largest_group.max(group.len() as u64);
                for b in &group[1..] {
                    // The group is joined: its first record and each other one (code unused).
                    links.add(group[0].1, b.1, 0);
                }
            }
            continue;
        };
        // Each possible pair with its verifier, `(reader of the larger set, smaller, larger)`.
        let mut addressed: Vec<(usize, u64, u64)> = Vec::new();
        for group in records.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
            stats.largest_group = stats.largest_group.max(group.len() as u64);
            if group.len() > flood_group {
                flooded.extend(group.iter().map(|r| r.1));
                continue;
            }
            for (i, a) in group.iter().enumerate() {
                addressed.extend(group[i + 1..].iter().filter_map(|b| {
                    let (small, large) = possible_pair(jaccard, a, b)?;
                    Some((plan.owner(large), small, large))
                }));
            }
        }
        drop(records);
        super::label("candidates");
        // Grouped by (verifier, smaller set), the larger sets' positions as ascending deltas
        // of a few bytes each ([`deltas`]).
        addressed.sort_unstable();
        let groups = addressed
            .chunk_by(|x, y| (x.0, x.1) == (y.0, y.1))
            .map(|run| (run[0].0, (run[0].1, deltas(run.iter().map(|r| r.2)))));
        for (small, larges) in exchange(worker, groups) {
            pending.extend(undelta(&larges).map(|large| (small, large)));
        }
    }
    let mut error = None;
    if let Verifying::Pairs { jaccard, round_bytes, templates, .. } = verifying {
        let flooded = flooded.into_sorted();
        let settings = (jaccard, templates, bands, key_bits);
        let (found, failed) = floods::run(worker, plan, docs, flooded, settings);
        error = failed;
        stats.flooded = found.records;
        stats.candidates += found.engine.candidates;
        stats.verified += found.engine.verified;
        let both = (pending.into_sorted(), found.pairs);
        verify(worker, plan, docs, (jaccard, templates, round_bytes), both, &mut stats, links);
    }
    (stats, error)
}

/// Values gathered over the bands, repeats allowed: sorted and deduplicated whenever they
/// have more than doubled since the last time (and by a million at least), so that memory
/// stays near the distinct values' while sorting stays linear overall.
struct Distinct<T> {
    values: Vec<T>,
    /// The length after the last deduplication.
    kept: usize,
}

impl<T> Default for Distinct<T> {
    fn default() -> Distinct<T> {
        Distinct { values: Vec::new(), kept: 0 }
    }
}

impl<T: Ord> Distinct<T> {
    fn extend(&mut self, values: impl IntoIterator<Item = T>) {
        self.values.extend(values);
        if self.values.len() > 2 * self.kept + (1 << 20) {
            self.values.sort_unstable();
            self.values.dedup();
            self.kept = self.values.len();
        }
    }

    /// Every distinct value, ascending.
    fn into_sorted(mut self) -> Vec<T> {
        self.values.sort_unstable();
        self.values.dedup();
        self.values
    }
}

/// Ascending `values` as LEB128 varints of their differences (the first from 0): a
/// candidate's position costs the bytes of its distance from the previous one, 3 or 4 for
/// records a few hundred kilobytes apart, where a `u64` costs 8.
fn deltas(values: impl Iterator<Item = u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut last = 0u64;
    for v in values {
        let mut d = v.wrapping_sub(last);
        last = v;
        loop {
            let byte = (d & 0x7f) as u8;
            d >>= 7;
            if d == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    out
}

/// The values [`deltas`] encoded.
fn undelta(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let mut at = 0;
    let mut last = 0u64;
    std::iter::from_fn(move || {
        let (mut d, mut shift) = (0u64, 0u32);
        loop {
            let byte = *bytes.get(at)?;
            at += 1;
            d |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        last = last.wrapping_add(d);
        Some(last)
    })
}

/// The pair of band records `a`, `b` as `(smaller set, larger set)`, if their set lengths
/// allow the threshold: Jaccard is at most `smaller / larger` (f64 division is monotone, so
/// this is exact), so the others cannot verify and are dropped, uncompared.
fn possible_pair<K>(jaccard: f64, a: &BandRecord<K>, b: &BandRecord<K>) -> Option<(u64, u64)> {
    let ((small, ls), (large, ll)) =
        if a.2 <= b.2 { ((a.1, a.2), (b.1, b.2)) } else { ((b.1, b.2), (a.1, a.2)) };
    (f64::from(ls) / f64::from(ll) >= jaccard).then_some((small, large))
}

/// The bytes of shingle sets one worker receives in one verification round, at most (about;
/// a set bigger than this is its own round's share).
pub(crate) const VERIFY_ROUND_BYTES: u64 = 256 << 20;

/// Brings each candidate's two sets together (the smaller one to the larger one's reader,
/// once per worker over all bands) and keeps the pairs whose exact Jaccard similarity
/// reaches `jaccard`. `pending` are this worker's candidates `(smaller, larger)` (sorted,
/// each once), as the reader of the larger set: it asks each smaller set's reader for it
/// once. `flooded` are the pairs the search of the flooded groups found that this worker
/// verifies (sorted, each once): those not among `pending` are kept as found. When the
/// sets to ship are many, they go in several rounds, each set in one, so that no worker
/// holds more than about `round_bytes` ([`VERIFY_ROUND_BYTES`] unless a test asks for
/// less) of other workers' sets at once.
fn verify(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    (jaccard, templates, round_bytes): (f64, Templates, u64),
    (pending, flooded): (Vec<(u64, u64)>, Vec<floods::FoundPair>),
    stats: &mut BandStats,
    links: &mut Links,
) {
    stats.candidates += pending.len() as u64;
    for (small, large, code) in flooded {
        // A pair also listed is verified below, to the same score.
        if pending.binary_search(&(small, large)).is_err() {
            stats.pairs += 1;
            links.add(small.min(large), small.max(large), code);
        }
    }
    let me = worker.index() as u64;
    super::label("set_requests");
    let mut asked: Vec<(u64, u64)> = exchange(
        worker,
        pending.chunk_by(|x, y| x.0 == y.0).map(|run| (plan.owner(run[0].0), (run[0].0, me))),
    );
    // Per requester, in position order.
    asked.sort_unstable_by_key(|&(small, from)| (from, small));
    let sketch_of = |pos: u64| docs.find(pos).and_then(|d| docs.sketch[d].as_ref());
    let set_of = |pos: u64| sketch_of(pos).map(DocSketch::set);
    // Per requester, its rounds: each a run of `asked` of at most a `peers`-th of
    // `round_bytes` (a bigger set is a round of its own), so that what one worker receives
    // in a round is at most about `round_bytes`.
    let peers = worker.peers();
    let share = (round_bytes / peers as u64).max(1);
    let mut rounds: Vec<Vec<(std::ops::Range<usize>, u64)>> = vec![Vec::new(); peers];
    for (i, &(small, from)) in asked.iter().enumerate() {
        let bytes = set_of(small).map_or(0, |set| 8 * set.len() as u64);
        let to = &mut rounds[from as usize];
        match to.last_mut() {
            Some((run, sum)) if *sum + bytes <= share => {
                run.end = i + 1;
                *sum += bytes;
            }
            _ => to.push((i..i + 1, bytes)),
        }
    }
    let mine = rounds.iter().map(Vec::len).max().unwrap_or(0) as u64;
    let count = super::all_gather(worker, &mine).into_iter().max().unwrap_or(0) as usize;
    for round in 0..count {
        let shipments = rounds.iter().filter_map(|per| per.get(round)).flat_map(|(run, _)| {
            asked[run.clone()].iter().filter_map(|&(small, from)| {
                let s = sketch_of(small)?;
                Some((from as usize, (small, s.set().to_vec(), s.tokens().to_vec())))
            })
        });
        super::label("shingle_sets");
        let mut received: Vec<(u64, Vec<u64>, Vec<u32>)> = exchange(worker, shipments);
        // In position order, so that the pairs are found in the same order on every run.
        received.sort_unstable_by_key(|s| s.0);
        for (small, set, tokens) in received {
            let from = pending.partition_point(|p| p.0 < small);
            let to = pending.partition_point(|p| p.0 <= small);
            for &(_, large) in &pending[from..to] {
                let (a, b) = (small.min(large), small.max(large));
                let Some(other) = sketch_of(large) else { continue };
                stats.verified += 1;
                let j = simhash_core::jaccard(&set, other.set());
                if j >= jaccard {
                    // What `simhash pairs` lists: the pairs `--templates` acts on.
                    let relation = pair_relation((small, &tokens), (large, other.tokens()));
                    if templates.acts_on(relation) {
                        stats.pairs += 1;
                        links.add(a, b, related_code(Score::Jaccard(j).code(), relation));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{deltas, undelta};

    #[test]
    fn deltas_round_trip_ascending_positions() {
        let cases: [&[u64]; 5] = [
            &[],
            &[0],
            &[0, 0, 1, 127, 128, 16_383, 16_384, 1 << 40, (1 << 40) + 1],
            &[u64::MAX - 1, u64::MAX],
            &[5, 5, 5],
        ];
        for values in cases {
            let bytes = deltas(values.iter().copied());
            assert_eq!(undelta(&bytes).collect::<Vec<u64>>(), values);
        }
        // Small steps cost a byte, the first value its own size.
        assert_eq!(deltas([100u64, 101, 110].into_iter()).len(), 3);
        assert_eq!(deltas([u64::MAX].into_iter()).len(), 10);
        // A cut-off encoding ends early rather than inventing a value.
        let bytes = deltas([1u64, 1 << 30].into_iter());
        assert_eq!(undelta(&bytes[..bytes.len() - 1]).collect::<Vec<u64>>(), [1]);
    }
}
