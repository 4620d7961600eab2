//! Round `dedup`: the dedup walk of `simhash dedup` (star mode: records in `--keep` order,
//! each kept unless it matches a record already kept), run per component, each component
//! on one worker; and for `cluster --method minhash`, the engine's components per candidate
//! component ([`verified_edges`]).
//!
//! A record's fate depends only on the kept records it matches, which are in its component
//! of the graph the walk compares along: for simhash, the pairs within the distance that
//! the tables found (and identical fingerprints); for minhash, the *candidate* graph, the
//! records sharing a band key ([`super::bands`], unverified: the walk verifies what it
//! needs, as `simhash dedup`'s does, and identical sets). So the walk of each component on
//! its own decides exactly as the walk of the whole input does.
//!
//! Crosses the network, in these exchanges:
//! 1. and 2. each worker's spanning-forest edges joined into components by all workers
//!    together, each named by its smallest position, and the name sent to the reader of
//!    each record in a component ([`components`]);
//! 3. from each reader, to the worker a well-mixed hash of the component's name picks
//!    ([`mix`]): the record's position, its `--keep` priority ([`KeepKey`]) and what the
//!    walk reads: the fingerprint, the sketch (band keys and shingle set), or for a record
//!    whose set and tokens equal an earlier record's, that record's position only (so a
//!    flood of copies sends one set);
//! 4. to each removed record's reader, the kept record it duplicates and the score.
//!
//! That worker runs the engine's own walk on the component ([`DedupWalk`] per component
//! for simhash; for minhash one [`lsh::walk`] over a [`MemoryStore`] of all the components
//! it received, which the engine splits into them again), with ranks that keep the global
//! priority order; records of identical sets and tokens follow the set's first record in
//! priority order, as [`lsh::walk`] collapses them.
//!
//! The components are found by rounds over every worker's edges, and each component's walk
//! runs on the worker its name picks: one huge component is one worker's work and memory
//! (its records' sketches), as it is one thread's on one machine. For minhash the
//! candidate components are what the walk needs, and can be larger than the verified
//! clusters (text sharing boilerplate can join most of a corpus into one: docs/scale-out.md).

use serde::{Deserialize, Serialize};
use simhash_cluster::KeepKey;
use simhash_index::lsh::{
    self, BandKeyWidth, DocSketch, MemoryStore, Relation, SketchStore, Templates,
};
use simhash_index::{Blocks, DedupWalk, Fingerprint};
use simhash_io::Score;
use timely::worker::Worker;

use super::{components, exchange, mix};
use crate::args::Keep;
use crate::share::{Docs, InputPlan};

/// The routing table of components, apart from the permutation tables' numbers.
const COMPONENT_TABLE: u64 = u64::MAX - 2;

/// Record `d` of `docs`'s place in the `--keep` order, comparable across workers: the
/// library's [`KeepKey`], as `simhash` orders records (the id read only for `lowest-id`).
fn priority(keep: Keep, docs: &Docs, d: usize) -> KeepKey<'static> {
    let id = if keep == Keep::LowestId { docs.id(d) } else { String::new() };
    keep.key(docs.pos[d], docs.len[d], &id).into_owned()
}

/// What the walk reads of a record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Body {
    Fingerprint(u64),
    /// Band keys, shingle set and tokens (for the relation).
    Sketch(Keys, Vec<u64>, Vec<u32>),
    /// The set equals that of the record at this position (an earlier one, in the same
    /// component), which sends it.
    CopyOf(u64),
}

/// A record on its way to its component's worker: component, position, priority, body.
type Entry = (u64, u64, KeepKey<'static>, Body);

/// The score of a removed record against its kept one.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) enum Removal {
    /// simhash: the fingerprints' distance.
    Distance(u32),
    /// minhash: the Jaccard similarity and the relation ([`Relation::code`]).
    Jaccard(f64, u8),
}

impl Removal {
    /// The score `simhash` writes for the removal (in `--removed`).
    pub(crate) fn score(self) -> Score {
        match self {
            Removal::Distance(d) => Score::Distance(d),
            Removal::Jaccard(j, _) => Score::Jaccard(j),
        }
    }

    /// minhash: the pair's relation, as `simhash dedup --removed` writes it.
    pub(crate) fn relation(self) -> Option<Relation> {
        match self {
            Removal::Distance(_) => None,
            Removal::Jaccard(_, r) => Relation::from_code(r),
        }
    }

    /// minhash: a removal of similarity `j` in relation `r`.
    fn jaccard(j: f64, r: Relation) -> Removal {
        Removal::Jaccard(j, r.code())
    }
}

/// A removed record, the kept record it duplicates, and the score.
pub(crate) type Decision = (u64, u64, Removal);

/// How the walk matches.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Walker {
    /// simhash: kept unless within `distance` bits of a kept record (tables of `blocks`).
    Simhash { distance: u32, blocks: Blocks },
    /// `key_bits`: the band keys' width, the job's ([`super::bands`]).
    Minhash { jaccard: f64, bands: usize, key_bits: u32, templates: Templates },
}

/// A sketch's band keys at the job's width.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Keys {
    Bits32(Vec<u32>),
    /// The whole band hashes.
    Bits64(Vec<u64>),
}

/// The decisions for the records this worker read (sorted by position): every record
/// not listed is kept. `edges`: this worker's spanning-forest edges; `copies`:
/// `(representative, member)` of identical sets collapsed here (minhash).
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    edges: Vec<(u64, u64)>,
    copies: &[(u64, u64)],
    walker: Walker,
    keep: Keep,
) -> Result<Vec<Decision>, String> {
    let peers = worker.peers() as u64;
    let roots = components::run(worker, plan, edges);
    let mut copy_of: Vec<(u64, u64)> =
        exchange(worker, copies.iter().map(|&(rep, member)| (plan.owner(member), (member, rep))));
    copy_of.sort_unstable();
    let entries = roots.into_iter().filter_map(|(pos, root)| {
        let d = docs.find(pos)?;
        let body = match walker {
            Walker::Simhash { .. } => Body::Fingerprint(docs.fp[d]?),
            Walker::Minhash { key_bits, .. } => {
                if let Ok(i) = copy_of.binary_search_by_key(&pos, |c| c.0) {
                    Body::CopyOf(copy_of[i].1)
                } else {
                    sketch_body(docs.sketch[d].as_ref()?, key_bits)
                }
            }
        };
        let target = (mix(COMPONENT_TABLE, root) % peers) as usize;
        Some((target, (root, pos, priority(keep, docs, d), body)))
    });
    let mut entries: Vec<Entry> = exchange(worker, entries);
    let mut decisions = Vec::new();
    let mut error = None;
    match walker {
        Walker::Simhash { distance, blocks } => {
            entries.sort_unstable_by_key(|e| (e.0, e.1));
            for component in entries.chunk_by(|a, b| a.0 == b.0) {
                match walk_fingerprints(component, distance, blocks) {
                    Ok(d) => decisions.extend(d),
                    Err(e) => {
                        error.get_or_insert(e);
                    }
                }
            }
        }
        Walker::Minhash { jaccard, bands, key_bits, templates } => {
            // All of this worker's components in one walk: no two of them share a band key
            // or a set, so the engine's walk splits them again (in parallel) and decides
            // each as on its own, without a store and a walk per component (most are two
            // or three near copies: on 1M generated documents, 1 x 2, the walks of 150k
            // components took 5.6 s, one walk per worker 2.1 s).
            entries.sort_unstable_by_key(|e| e.1);
            match walk_sketches(&entries, (jaccard, templates), (bands, key_bits)) {
                Ok(d) => decisions.extend(d),
                Err(e) => error = Some(e),
            }
        }
    }
    let mut mine: Vec<Decision> =
        exchange(worker, decisions.into_iter().map(|d| (plan.owner(d.0), d)));
    mine.sort_unstable_by_key(|d| d.0);
    // Every worker must run the same rounds: the error (an internal one) is told after.
    match error {
        Some(e) => Err(e),
        None => Ok(mine),
    }
}

/// A `pairs` score code ([`Score::code`], a Jaccard similarity's at most 10,000) with the
/// pair's relation in its two high bits, as the pairs travel to their writer.
pub(crate) fn related_code(code: u32, relation: Relation) -> u32 {
    code | (u32::from(relation.code()) << 30)
}

/// The score code and relation of a [`related_code`].
pub(crate) fn split_code(code: u32) -> (u32, Relation) {
    (code & ((1 << 30) - 1), Relation::from_code((code >> 30) as u8).unwrap_or(Relation::Same))
}

/// The relation of the pair of records at positions `a` and `b` from their tokens, as
/// `simhash pairs` reads a pair ([`lsh::pair_relation`], the earlier record first).
pub(crate) fn pair_relation(a: (u64, &[u32]), b: (u64, &[u32])) -> Relation {
    let (earlier, later) = if a.0 < b.0 { (a, b) } else { (b, a) };
    lsh::pair_relation(earlier.1, later.1)
}

/// What the walk reads of a sketch: its band keys at the job's width, and its set.
pub(crate) fn sketch_body(s: &DocSketch, key_bits: u32) -> Body {
    let keys = match s.band_hashes().filter(|_| key_bits == 64) {
        Some(hashes) => Keys::Bits64(hashes),
        None => Keys::Bits32(s.bands().to_vec()),
    };
    Body::Sketch(keys, s.set().to_vec(), s.tokens().to_vec())
}

/// `cluster` (`--method minhash`): the verified edges of the candidate graph's components.
/// `edges` are this worker's spanning-forest edges of the records sharing a band key
/// (representatives only: identical sets are joined by the caller). Each component goes
/// to one worker ([`mix`] of its name), which runs the engine's [`lsh::components`] once
/// on all the components it received, verifying what `simhash cluster` verifies; returns
/// the edges that worker found (each verified pair that joined two of its clusters), as
/// positions.
///
/// A verified cluster lies inside one candidate component (its pairs share a band), so
/// the components of all workers' edges are `simhash cluster`'s clusters.
pub(crate) fn verified_edges(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    edges: Vec<(u64, u64)>,
    (jaccard, templates, bands, key_bits): (f64, Templates, usize, u32),
) -> Result<(Vec<(u64, u64)>, lsh::MatchStats), String> {
    let peers = worker.peers() as u64;
    let roots = components::run(worker, plan, edges);
    let entries = roots.into_iter().filter_map(|(pos, root)| {
        let body = sketch_body(docs.sketch[docs.find(pos)?].as_ref()?, key_bits);
        let target = (mix(COMPONENT_TABLE, root) % peers) as usize;
        Some((target, (root, pos, KeepKey::default(), body)))
    });
    let mut entries: Vec<Entry> = exchange(worker, entries);
    // All of this worker's components in one run of the engine, as in `run`'s walk.
    entries.sort_unstable_by_key(|e| e.1);
    component_edges(&entries, (jaccard, templates), (bands, key_bits))
}

/// The engine's components ([`lsh::components`]) of one or more whole candidate components
/// (entries sorted by position, sketches only), as edges between positions.
fn component_edges(
    component: &[Entry],
    (jaccard, templates): (f64, Templates),
    (bands, key_bits): (usize, u32),
) -> Result<(Vec<(u64, u64)>, lsh::MatchStats), String> {
    let fail = |e: lsh::EngineError| format!("the components failed: {e}");
    let store = store_of(component.iter().map(|e| &e.3), bands, key_bits).map_err(fail)?;
    let (edges, stats) = lsh::components(&store, jaccard, templates).map_err(fail)?;
    let at = |i: u32| component[i as usize].1;
    Ok((edges.into_iter().map(|(a, b)| (at(a), at(b))).collect(), stats))
}

/// A memory store of the sketches among `bodies`, in their order, at the job's width (not
/// the component's size: the whole corpus's store decides it in `simhash`).
pub(crate) fn store_of<'e>(
    bodies: impl Iterator<Item = &'e Body>,
    bands: usize,
    key_bits: u32,
) -> Result<MemoryStore, lsh::EngineError> {
    let width = BandKeyWidth::from_bits(key_bits).unwrap_or(BandKeyWidth::Bits32);
    let mut store = MemoryStore::with_band_keys(bands, width);
    for body in bodies {
        let sketch = match body {
            Body::Sketch(Keys::Bits32(keys), set, tokens) => {
                DocSketch::from_parts(keys.clone(), set.clone()).with_tokens(tokens.clone())
            }
            Body::Sketch(Keys::Bits64(hashes), set, tokens) => {
                DocSketch::from_band_hashes(hashes, set.clone()).with_tokens(tokens.clone())
            }
            _ => continue,
        };
        store.push(Some(&sketch))?;
    }
    store.finish()?;
    Ok(store)
}

/// Dense ranks (0 first) of `keys` in their order.
fn ranks<'k>(keys: impl Iterator<Item = &'k KeepKey<'static>>) -> Vec<u32> {
    let keys: Vec<&KeepKey<'static>> = keys.collect();
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| keys[a as usize].cmp(keys[b as usize]));
    let mut rank = vec![0u32; keys.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    rank
}

/// The simhash walk ([`DedupWalk`]) of one component (entries sorted by position).
fn walk_fingerprints(
    component: &[Entry],
    distance: u32,
    blocks: Blocks,
) -> Result<Vec<Decision>, String> {
    let fps: Vec<Option<Fingerprint>> = component
        .iter()
        .map(|e| match e.3 {
            Body::Fingerprint(fp) => Some(Fingerprint(fp)),
            _ => None,
        })
        .collect();
    let rank = ranks(component.iter().map(|e| &e.2));
    let walk = DedupWalk::new(&fps, &rank);
    let tables = blocks
        .tables(walk.distinct() as u64, distance)
        .map_err(|e| format!("invalid --blocks and -k/--distance: {e}"))?;
    let outcome = walk.run(&tables, |_, _| {});
    let mut out = Vec::new();
    for (i, &c) in outcome.center.iter().enumerate() {
        let c = c as usize;
        if c != i {
            let d = match (fps[i], fps[c]) {
                (Some(a), Some(b)) => a.distance(b),
                _ => 0,
            };
            out.push((component[i].1, component[c].1, Removal::Distance(d)));
        }
    }
    Ok(out)
}

/// The MinHash walk ([`lsh::walk`]) of one or more whole components (entries sorted by
/// position): one store entry per distinct set, ranked by its first member in priority
/// order.
fn walk_sketches(
    component: &[Entry],
    (jaccard, templates): (f64, Templates),
    (bands, key_bits): (usize, u32),
) -> Result<Vec<Decision>, String> {
    let sets: Vec<&Entry> = component.iter().filter(|e| matches!(e.3, Body::Sketch(..))).collect();
    // Per set: its members' positions, and its first member in priority order.
    let mut members: Vec<Vec<u64>> = sets.iter().map(|e| vec![e.1]).collect();
    let mut first: Vec<&KeepKey<'static>> = sets.iter().map(|e| &e.2).collect();
    for e in component {
        if let Body::CopyOf(rep) = e.3 {
            let g = sets
                .binary_search_by_key(&rep, |s| s.1)
                .map_err(|_| "internal error: a copy's set is missing".to_string())?;
            members[g].push(e.1);
            if e.2 < *first[g] {
                first[g] = &e.2;
            }
        }
    }
    let fail = |e: lsh::EngineError| format!("the dedup walk failed: {e}");
    let store = store_of(sets.iter().map(|e| &e.3), bands, key_bits).map_err(fail)?;
    let rank = ranks(first.iter().copied());
    let (walk, _) = lsh::walk(&store, jaccard, &rank, templates).map_err(fail)?;
    let kept_of = |g: usize| first[g].position();
    let mut out = Vec::new();
    for (g, &c) in walk.center.iter().enumerate() {
        let c = c as usize;
        let (kept, removal) = if c == g {
            (kept_of(g), Removal::jaccard(1.0, Relation::Same))
        } else {
            (kept_of(c), Removal::jaccard(walk.jaccard[g], walk.relation[g]))
        };
        out.extend(members[g].iter().filter(|&&m| m != kept).map(|&m| (m, kept, removal)));
    }
    Ok(out)
}
