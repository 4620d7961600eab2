//! Round `floods` (`pairs --method minhash`): the band groups too large to list pair by
//! pair. A group of `g` records sharing a band key holds `g (g - 1) / 2` candidate pairs;
//! short documents that share a phrase make such groups by the thousand (two 4-shingle
//! sets with one shingle in common share a band about one time in ten), and listing them
//! would make a worker's memory and the candidates' exchange grow with the square of the
//! group, though few of the pairs verify.
//!
//! So the worker that gathered a group of more than `--flood-group` records ([`FLOOD_GROUP`]
//! unless a test asks for less) lists none of its pairs ([`crate::rounds::bands`]) and
//! keeps its members instead; after the last band:
//! 1. it asks the reader of each member it kept (over all bands, each once) for its sketch
//!    (16 bytes);
//! 2. that reader sends the band keys and the shingle set (the sketch, as
//!    [`crate::rounds::dedup`] ships it);
//! 3. the worker runs the engine's own pair search ([`lsh::find_matches`]) once over every
//!    sketch it received: the pairs among them that share a band and verify, found through
//!    the engine's prefix index when their sets are small (the same search `simhash pairs`
//!    runs, so the same pairs and scores, without listing those that cannot verify);
//! 4. each pair found goes to the worker that verifies it on the listing path (the reader
//!    of its larger set, [`crate::rounds::bands`]), `(smaller, larger, score code)`, where
//!    a pair also listed in another band's smaller group is kept once.
//!
//! A pair the search finds shares a band and verifies, so it is a pair `simhash pairs`
//! writes, whichever group it came from; and every pair of a flooded group is among those
//! the search compares. A worker holds the sketches of the flooded groups it gathered
//! (each record once), so its memory grows with the groups, not their squares, as
//! `simhash pairs`'s does on one machine.

use simhash_index::lsh::{self, MatchSink, Templates};
use simhash_io::Score;
use timely::worker::Worker;

use super::dedup::{Body, pair_relation, related_code, sketch_body, store_of};
use super::exchange;
use crate::share::{Docs, InputPlan};

/// The band groups larger than this (in representatives) are searched whole on the worker
/// that gathered them rather than listed pair by pair: listing one costs about 24 bytes a
/// pair on that worker (half a million pairs at 1,024), searching it the members' sketches.
pub(crate) const FLOOD_GROUP: usize = 1024;

/// A pair found, `(smaller set, larger set, score code)` by positions, as its verifier on
/// the listing path names it.
pub(crate) type FoundPair = (u64, u64, u32);

/// What the round did on this worker.
#[derive(Debug, Default)]
pub(crate) struct Flooded {
    /// Sketches this worker received and searched.
    pub(crate) records: u64,
    /// The engine's counts over them.
    pub(crate) engine: lsh::MatchStats,
    /// The pairs found by every worker's search that this worker verifies on the listing
    /// path, sorted, each once.
    pub(crate) pairs: Vec<FoundPair>,
}

/// Searches the members of the flooded groups this worker gathered (`members`, positions,
/// sorted, each once) and sends each pair found to its verifier. Every worker
/// must call it at the same point. An error (of the engine's, an internal one) is returned
/// after the round, so that every worker runs the same exchanges.
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    members: Vec<u64>,
    (jaccard, templates, bands, key_bits): (f64, Templates, usize, u32),
) -> (Flooded, Option<String>) {
    let me = worker.index() as u64;
    super::label("flood_requests");
    let asked: Vec<(u64, u64)> =
        exchange(worker, members.into_iter().map(|pos| (plan.owner(pos), (pos, me))));
    super::label("flood_sketches");
    let sent = asked.into_iter().filter_map(|(pos, from)| {
        let sketch = docs.sketch[docs.find(pos)?].as_ref()?;
        Some((from as usize, (pos, sketch_body(sketch, key_bits))))
    });
    let mut received: Vec<(u64, Body)> = exchange(worker, sent);
    received.sort_unstable_by_key(|r| r.0);
    let mut flooded = Flooded { records: received.len() as u64, ..Flooded::default() };
    let (found, error) = match search(&received, (jaccard, templates), (bands, key_bits)) {
        Ok((found, engine)) => {
            flooded.engine = engine;
            (found, None)
        }
        Err(e) => (Vec::new(), Some(e)),
    };
    drop(received);
    super::label("flood_pairs");
    let mut pairs: Vec<FoundPair> = exchange(
        worker,
        found.into_iter().map(|(small, large, code)| (plan.owner(large), (small, large, code))),
    );
    pairs.sort_unstable();
    pairs.dedup_by_key(|p| (p.0, p.1));
    flooded.pairs = pairs;
    (flooded, error)
}

/// The engine's pair search over `sketches` (sorted by position): each pair found as
/// `(smaller set, larger set, score code)`, the smaller one the shorter set, or the earlier
/// of two as long (as [`crate::rounds::bands`] orders a candidate).
fn search(
    sketches: &[(u64, Body)],
    (jaccard, templates): (f64, Templates),
    (bands, key_bits): (usize, u32),
) -> Result<(Vec<FoundPair>, lsh::MatchStats), String> {
    let fail = |e: lsh::EngineError| format!("the search of the flooded band groups failed: {e}");
    let store = store_of(sketches.iter().map(|s| &s.1), bands, key_bits).map_err(fail)?;
    let mut sink = Found(Vec::new());
    let stats = lsh::find_matches(&store, jaccard, &mut sink).map_err(fail)?;
    let len = |i: u32| match &sketches[i as usize].1 {
        Body::Sketch(_, set, _) => set.len(),
        _ => 0,
    };
    let tokens = |i: u32| match &sketches[i as usize].1 {
        Body::Sketch(_, _, tokens) => &tokens[..],
        _ => &[],
    };
    // The pairs `--templates` acts on, each with its relation in its code.
    let ordered = |(a, b, j): (u32, u32, f64)| {
        let (pa, pb) = (sketches[a as usize].0, sketches[b as usize].0);
        let relation = pair_relation((pa, tokens(a)), (pb, tokens(b)));
        templates.acts_on(relation).then(|| {
            let (small, large) = if (len(a), pa) <= (len(b), pb) { (pa, pb) } else { (pb, pa) };
            (small, large, related_code(Score::Jaccard(j).code(), relation))
        })
    };
    Ok((sink.0.into_iter().filter_map(ordered).collect(), stats))
}

/// The pairs the search reports, as store indices with their similarity.
struct Found(Vec<(u32, u32, f64)>);

impl MatchSink for Found {
    /// Identical sets were collapsed before the bands ([`crate::rounds::sets`]), so this
    /// is not expected; if it happens, the two are a pair of similarity 1, as `simhash
    /// pairs` writes a copy.
    fn duplicate(&mut self, doc: u32, of: u32) {
        self.0.push((of, doc, 1.0));
    }

    fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
        self.0.push((a, b, jaccard));
    }
}
