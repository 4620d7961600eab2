//! Round `bands` (`--method minhash`): candidates from shared band keys, each owned by the
//! first band the two records share, and verified by the exact Jaccard similarity of their
//! shingle sets. One band at a time, so that one band's records are in memory at once.
//!
//! Crosses the network, per band `j`:
//! 1. for each representative ([`crate::rounds::sets`]): `(key, position, set length, keys of
//!    bands 0..j)` to the worker a well-mixed hash of (band, key) picks ([`mix`]): all
//!    records sharing a key in a band meet on one worker (`20 + 4 j` bytes, so about
//!    `bands × (20 + 2 × bands)` bytes a record over all bands). That worker groups them
//!    and keeps the pairs band `j` owns ([`band_owns`], the rule of the engine's scan: no
//!    earlier band agrees), so each candidate pair is found once, as on one machine.
//! 2. each candidate whose set lengths allow the threshold (Jaccard is at most
//!    `smaller / larger`, so the others cannot verify and are dropped, uncompared), to the
//!    reader of the record with the smaller set (16 bytes);
//! 3. that reader sends the smaller set (8 bytes a shingle) once to each worker reading a
//!    record it must be compared with, with those records' positions. The receiver
//!    computes the exact Jaccard similarity ([`simhash_core::jaccard`], as the engine's
//!    [`similarity`](simhash_index::lsh::similarity)) and keeps the pairs at or above
//!    `--jaccard`. Records never travel, and a set travels at most once per band and
//!    worker.

use timely::worker::Worker;

use serde::{Deserialize, Serialize};
use simhash_index::lsh::DocSketch;
use simhash_index::lsh::band_owns;
use simhash_io::Score;

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
    /// Candidate pairs owned by the bands this worker grouped.
    pub(crate) candidates: u64,
    /// Candidates whose Jaccard similarity this worker computed.
    pub(crate) verified: u64,
    /// Verified pairs of representatives.
    pub(crate) pairs: u64,
}

/// A band record: key, position, set length, the keys of the earlier bands.
type BandRecord<K> = (K, u64, u32, Vec<K>);

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

/// A set on its way to be compared: the record's position, its set, and the positions of
/// the records (read by the receiver) to compare it with.
type Shipment = (u64, Vec<u64>, Vec<u64>);

/// A candidate pair: `(a, a's set length, b, b's set length)`, `a < b`.
type Candidate = (u64, u32, u64, u32);

/// Runs every band over the representatives of `docs`, with band keys of `key_bits` (32 or
/// 64), and adds each verified pair to `links` (with its score code); returns the counts.
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    sets: &Sets,
    (bands, key_bits): (usize, u32),
    jaccard: f64,
    links: &mut Links,
) -> BandStats {
    if key_bits == 64 {
        run_keys::<u64>(worker, plan, docs, sets, bands, jaccard, links)
    } else {
        run_keys::<u32>(worker, plan, docs, sets, bands, jaccard, links)
    }
}

fn run_keys<K: Key>(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    sets: &Sets,
    bands: usize,
    jaccard: f64,
    links: &mut Links,
) -> BandStats {
    let peers = worker.peers() as u64;
    let mut stats = BandStats::default();
    let reps: Vec<usize> = sketched(docs).filter(|&d| !sets.is_copy[d]).collect();
    for band in 0..bands {
        super::label("band_keys");
        let mut records: Vec<BandRecord<K>> = exchange(
            worker,
            reps.iter().filter_map(|&d| {
                let sketch = docs.sketch[d].as_ref()?;
                let key = K::of(sketch, band);
                let earlier = (0..band).map(|b| K::of(sketch, b)).collect();
                let record = (key, docs.pos[d], sketch.set().len() as u32, earlier);
                Some(((mix(band as u64, key.route()) % peers) as usize, record))
            }),
        );
        stats.received += records.len() as u64;
        records.sort_unstable_by_key(|r| (r.0, r.1));
        let mut candidates: Vec<Candidate> = Vec::new();
        for group in records.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
            stats.largest_group = stats.largest_group.max(group.len() as u64);
            for (i, a) in group.iter().enumerate() {
                for b in &group[i + 1..] {
                    if band_owns(&a.3, &b.3) {
                        candidates.push((a.1, a.2, b.1, b.2));
                    }
                }
            }
        }
        drop(records);
        stats.candidates += candidates.len() as u64;
        verify(worker, plan, docs, jaccard, &candidates, &mut stats, links);
    }
    stats
}

/// Brings each candidate's two sets together (the smaller one to the larger one's reader)
/// and keeps the pairs whose exact Jaccard similarity reaches `jaccard`.
fn verify(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    jaccard: f64,
    candidates: &[Candidate],
    stats: &mut BandStats,
    links: &mut Links,
) {
    // Jaccard is at most smaller / larger (f64 division is monotone, so this is exact).
    let possible = |small: u32, large: u32| f64::from(small) / f64::from(large) >= jaccard;
    super::label("candidates");
    let mut requests: Vec<(u64, u64)> = exchange(
        worker,
        candidates.iter().filter_map(|&(a, la, b, lb)| {
            let ((small, ls), (large, ll)) =
                if la <= lb { ((a, la), (b, lb)) } else { ((b, lb), (a, la)) };
            possible(ls, ll).then(|| (plan.owner(small), (small, large)))
        }),
    );
    // One shipment per (smaller record, worker of the larger ones).
    requests.sort_unstable_by_key(|&(small, large)| (small, plan.owner(large), large));
    let mut shipments: Vec<(usize, Shipment)> = Vec::new();
    for run in requests.chunk_by(|x, y| x.0 == y.0 && plan.owner(x.1) == plan.owner(y.1)) {
        let (small, target) = (run[0].0, plan.owner(run[0].1));
        let Some(set) = docs.find(small).and_then(|d| docs.sketch[d].as_ref()) else { continue };
        let larges = run.iter().map(|r| r.1).collect();
        shipments.push((target, (small, set.set().to_vec(), larges)));
    }
    drop(requests);
    super::label("shingle_sets");
    for (small, set, larges) in exchange(worker, shipments) {
        for large in larges {
            let Some(other) = docs.find(large).and_then(|d| docs.sketch[d].as_ref()) else {
                continue;
            };
            stats.verified += 1;
            let j = simhash_core::jaccard(&set, other.set());
            if j >= jaccard {
                stats.pairs += 1;
                links.add(small.min(large), small.max(large), Score::Jaccard(j).code());
            }
        }
    }
}
