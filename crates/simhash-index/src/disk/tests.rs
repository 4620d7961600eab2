//! The on-disk index against the in-memory engines and brute force: queries, ids, commits,
//! compaction, settings, the lock and rollback.
#![allow(clippy::float_cmp)] // exact Jaccard ratios compared with the engine's
#![allow(clippy::ref_option)] // the adders take the documents as the tests store them

use std::collections::BTreeMap;
use std::path::Path;

use simhash_core::{Fingerprint, MinHasher};

use super::*;
use crate::lsh::{Banding, JaccardHit, Relation, Templates};
use crate::lsh::{DocSketch, MatchSink, MemoryStore, SketchStore, Sketcher, find_matches};
use crate::{AllPairs, Tables};

pub(super) use crate::test_rng::Rng;

use crate::own_flood;

pub(super) fn minhash_settings(bands: usize, rows: usize, jaccard: f64) -> Settings {
    Settings::MinHash(MinHashSettings {
        preset: "default".into(),
        window: 3,
        num_perm: bands * rows,
        bands,
        rows,
        lsh_threshold: 0.3,
        jaccard,
        seed: 0,
        band_key_bits: 32,
        extra: BTreeMap::new(),
    })
}

pub(super) fn simhash_settings(k: u32, blocks: usize) -> Settings {
    Settings::Simhash(SimhashSettings {
        preset: "default".into(),
        window: 3,
        max_distance: k,
        blocks,
        extra: BTreeMap::new(),
    })
}

pub(super) fn sketcher(bands: usize, rows: usize) -> Sketcher {
    Sketcher::new(MinHasher::new(bands * rows, 0), Banding::new(bands, rows).unwrap()).unwrap()
}

/// Random and adversarial MinHash documents: families of near-duplicates (a base set with a
/// few shingles changed), floods of identical sets, tiny sets, featureless documents, and
/// hand-made sketches that share band keys without sharing shingles (and the reverse).
pub(super) fn minhash_docs(rng: &mut Rng, n: usize, sk: &Sketcher) -> Vec<Option<DocSketch>> {
    let bands = sk.banding().bands;
    let mut bases: Vec<Vec<u64>> = Vec::new();
    let mut docs = Vec::with_capacity(n);
    while docs.len() < n {
        let doc = match rng.below(10) {
            0 => None,
            1 => sk.sketch_shingles([rng.below(4)]),
            2 if !bases.is_empty() => {
                // An exact copy of a base (a flood when it repeats).
                let b = &bases[rng.below(bases.len() as u64) as usize];
                sk.sketch_shingles(b.iter().copied())
            }
            3 => {
                // Band keys chosen by hand from a tiny key space, so that unrelated sets
                // collide (equal sets still have equal keys, as the sketcher makes them).
                let len = 1 + rng.below(6) as usize;
                let mut set: Vec<u64> = (0..len).map(|_| (1 << 40) + rng.below(12)).collect();
                set.sort_unstable();
                set.dedup();
                let h = set.iter().fold(0u64, |h, &x| h.rotate_left(7) ^ x);
                let keys = (0..bands).map(|b| ((h >> b) % 3) as u32).collect();
                Some(DocSketch::from_parts(keys, set))
            }
            4..=6 if !bases.is_empty() => {
                let b = bases[rng.below(bases.len() as u64) as usize].clone();
                let mut set: Vec<u64> = b.into_iter().filter(|_| rng.below(8) != 0).collect();
                for _ in 0..rng.below(4) {
                    set.push(rng.below(1 << 20));
                }
                sk.sketch_shingles(set)
            }
            _ => {
                let len = 1 + rng.below(24) as usize;
                let set: Vec<u64> = (0..len).map(|_| rng.below(1 << 20)).collect();
                bases.push(set.clone());
                sk.sketch_shingles(set)
            }
        };
        docs.push(doc);
    }
    docs
}

/// Adds `docs` (ids `"{prefix}{i}"`) in commits of the given sizes, with a small flush
/// budget so that commits write several segments.
pub(super) fn add_commits<T>(
    dir: &Path,
    settings: &Settings,
    docs: &[(String, T)],
    commits: &[usize],
    flush_bytes: usize,
    mut add: impl FnMut(&mut Writer, &str, &T) -> Result<(), DiskError>,
) -> Vec<Commit> {
    let mut out = Vec::new();
    let mut at = 0;
    for &size in commits {
        let mut w = Writer::builder().flush_bytes(flush_bytes).open(dir, settings).unwrap();
        for (id, doc) in &docs[at..at + size] {
            add(&mut w, id, doc).unwrap();
        }
        at += size;
        out.push(w.commit().unwrap());
    }
    assert_eq!(at, docs.len());
    out
}

fn add_sketch(w: &mut Writer, id: &str, s: &Option<DocSketch>) -> Result<(), DiskError> {
    w.add_sketch(id, s.as_ref())
}

fn add_fp(w: &mut Writer, id: &str, fp: &Option<Fingerprint>) -> Result<(), DiskError> {
    w.add_fingerprint(id, *fp)
}

fn ids<T: Clone>(prefix: &str, docs: &[T]) -> Vec<(String, T)> {
    docs.iter().enumerate().map(|(i, d)| (format!("{prefix}{i}"), d.clone())).collect()
}

/// Every match of `q` among `indexed`, by brute force: a shared band key and an exact
/// Jaccard similarity of at least `t`.
fn brute_minhash(indexed: &[Option<DocSketch>], q: &DocSketch, t: f64) -> Vec<JaccardHit<u64>> {
    let mut out = Vec::new();
    for (d, x) in indexed.iter().enumerate() {
        let Some(x) = x else { continue };
        let shares = x.bands().iter().zip(q.bands()).any(|(a, b)| a == b);
        let j = simhash_core::jaccard(x.set(), q.set());
        if shares && j >= t {
            out.push(JaccardHit { id: d as u64, jaccard: j });
        }
    }
    out
}

/// The cross pairs `(query, indexed, jaccard)` that `find_matches` finds among `indexed`
/// followed by `queries`, with the pairs it leaves implied by identical sets spelled out.
fn engine_cross_pairs(
    indexed: &[Option<DocSketch>],
    queries: &[Option<DocSketch>],
    bands: usize,
    t: f64,
) -> Vec<(usize, u64, f64)> {
    #[derive(Default)]
    struct Rec {
        dup: Vec<(u32, u32)>,
        pairs: Vec<(u32, u32, f64)>,
    }
    impl MatchSink for Rec {
        fn duplicate(&mut self, doc: u32, of: u32) {
            self.dup.push((doc, of));
        }
        fn pair(&mut self, a: u32, b: u32, j: f64) {
            self.pairs.push((a, b, j));
        }
    }
    let mut store = MemoryStore::new(bands);
    for s in indexed.iter().chain(queries) {
        store.push(s.as_ref()).unwrap();
    }
    store.finish().unwrap();
    let mut rec = Rec::default();
    find_matches(&store, t, &mut rec).unwrap();
    let n = indexed.len() + queries.len();
    let mut rep: Vec<u32> = (0..n as u32).collect();
    for &(doc, of) in &rec.dup {
        rep[doc as usize] = of;
    }
    let mut by_rep: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for d in 0..n as u32 {
        if store.has(d as usize) {
            by_rep.entry(rep[d as usize]).or_default().push(d);
        }
    }
    let mut all: Vec<(u32, u32, f64)> = Vec::new();
    for members in by_rep.values() {
        for (i, &a) in members.iter().enumerate() {
            for &b in &members[i + 1..] {
                all.push((a, b, 1.0));
            }
        }
    }
    for &(a, b, j) in &rec.pairs {
        for &x in &by_rep[&a] {
            for &y in &by_rep[&b] {
                all.push((x.min(y), x.max(y), j));
            }
        }
    }
    let m = indexed.len() as u32;
    let mut cross: Vec<(usize, u64, f64)> = all
        .into_iter()
        .filter(|&(a, b, _)| a < m && b >= m)
        .map(|(a, b, j)| ((b - m) as usize, u64::from(a), j))
        .collect();
    cross.sort_by_key(|x| (x.0, x.1));
    cross
}

#[test]
fn minhash_queries_equal_the_engine_and_brute_force() {
    for (seed, (bands, rows, t)) in
        [(4, 2, 0.5), (8, 4, 0.3), (2, 1, 1.0), (16, 2, 0.8)].into_iter().enumerate()
    {
        let mut rng = Rng(seed as u64);
        let sk = sketcher(bands, rows);
        let settings = minhash_settings(bands, rows, t);
        let mut indexed = minhash_docs(&mut rng, 420, &sk);
        let queries = indexed.split_off(300);
        let dir = tempfile::tempdir().unwrap();
        add_commits(dir.path(), &settings, &ids("a", &indexed), &[100, 1, 199], 3000, add_sketch);
        let index = DiskIndex::open(dir.path()).unwrap();
        assert_eq!(index.len(), 300);
        assert_eq!(index.stats().segments, 3, "one segment per add");
        let answers = index.query_sketches(&queries).unwrap();
        let mut listed = Vec::new();
        for (q, (query, hits)) in queries.iter().zip(&answers).enumerate() {
            let expected = query.as_ref().map_or(Vec::new(), |s| brute_minhash(&indexed, s, t));
            assert_eq!(hits, &expected, "seed {seed}, query {q}");
            if let Some(s) = query {
                assert_eq!(index.query_sketch(s).unwrap(), expected);
                assert_eq!(index.first_sketch(s).unwrap(), expected.first().cloned());
            }
            listed.extend(hits.iter().map(|h| (q, h.id, h.jaccard)));
        }
        assert_eq!(listed, engine_cross_pairs(&indexed, &queries, bands, t), "seed {seed}");
        assert!(!listed.is_empty(), "the inputs must produce matches");
    }
}

fn simhash_docs(rng: &mut Rng, n: usize, k: u32) -> Vec<Option<Fingerprint>> {
    let mut bases: Vec<u64> = Vec::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let fp = match rng.below(8) {
            0 => None,
            1..=4 if !bases.is_empty() => {
                // Exactly k, k + 1 or fewer bits from a base; or the base itself.
                let base = bases[rng.below(bases.len() as u64) as usize];
                let flips =
                    [k, k + 1, 0, rng.below(u64::from(k) + 1) as u32][rng.below(4) as usize];
                let mut fp = base;
                let mut bits: Vec<u32> = (0..64).collect();
                for i in 0..flips as usize {
                    let j = i + rng.below((64 - i) as u64) as usize;
                    bits.swap(i, j);
                    fp ^= 1 << bits[i];
                }
                Some(Fingerprint(fp))
            }
            _ => {
                let fp = rng.next();
                bases.push(fp);
                Some(Fingerprint(fp))
            }
        };
        out.push(fp);
    }
    out
}

#[test]
fn simhash_queries_equal_all_pairs_and_brute_force() {
    for (seed, (k, blocks)) in [(3, 6), (0, 1), (2, 4), (6, 8)].into_iter().enumerate() {
        let mut rng = Rng(100 + seed as u64);
        let settings = simhash_settings(k, blocks);
        let mut indexed = simhash_docs(&mut rng, 550, k);
        let queries = indexed.split_off(400);
        let dir = tempfile::tempdir().unwrap();
        add_commits(dir.path(), &settings, &ids("a", &indexed), &[150, 250], 5000, add_fp);
        let index = DiskIndex::open(dir.path()).unwrap();
        let answers = index.query_fingerprints(&queries).unwrap();
        let mut listed = Vec::new();
        for (q, (query, hits)) in queries.iter().zip(&answers).enumerate() {
            let expected: Vec<crate::Hit<u64>> = match query {
                None => Vec::new(),
                Some(f) => indexed
                    .iter()
                    .enumerate()
                    .filter_map(|(d, x)| {
                        let distance = (*x)?.distance(*f);
                        (distance <= k).then_some(crate::Hit { distance, id: d as u64 })
                    })
                    .collect(),
            };
            assert_eq!(hits, &expected, "seed {seed}, query {q}");
            if let Some(f) = query {
                assert_eq!(index.first_fingerprint(*f).unwrap(), expected.first().copied());
            }
            listed.extend(hits.iter().map(|h| (q, h.id, h.distance)));
        }
        let all: Vec<Option<Fingerprint>> = indexed.iter().chain(&queries).copied().collect();
        let m = indexed.len() as u32;
        let tables = Tables::new(blocks, k).unwrap();
        let mut cross: Vec<(usize, u64, u32)> = AllPairs::new(&tables)
            .collect(&all)
            .unwrap()
            .into_iter()
            .filter(|p| p.a < m && p.b >= m)
            .map(|p| ((p.b - m) as usize, u64::from(p.a), p.distance))
            .collect();
        cross.sort_unstable();
        assert_eq!(listed, cross, "seed {seed}");
        assert!(listed.iter().any(|p| p.2 == k), "matches at exactly k bits");
    }
}

/// The segment files in `dir`.
fn segment_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut segs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    segs.sort();
    segs
}

#[test]
fn an_add_of_several_flushes_commits_one_segment() {
    let mut rng = Rng(11);
    let sk = sketcher(8, 2);
    let settings = minhash_settings(8, 2, 0.4);
    let mut all = minhash_docs(&mut rng, 700, &sk);
    let queries = all.split_off(500);
    let docs = ids("d", &all);
    let (once, runs) = same_id_dirs(&settings);
    add_commits(once.path(), &settings, &docs[..200], &[200], usize::MAX, add_sketch);
    add_commits(runs.path(), &settings, &docs[..200], &[200], usize::MAX, add_sketch);
    let mut w = Writer::builder().flush_bytes(3000).open(runs.path(), &settings).unwrap();
    for (id, doc) in &docs[200..] {
        add_sketch(&mut w, id, doc).unwrap();
    }
    assert!(segment_files(runs.path()).len() > 3, "the add flushed several runs");
    let commit = w.commit().unwrap();
    assert_eq!((commit.added, commit.documents), (300, 500));
    // One segment for the first add, one for the second; the runs are gone.
    assert_eq!(segment_files(runs.path()).len(), 2);
    let index = DiskIndex::open(runs.path()).unwrap();
    assert_eq!(index.stats().segments, 2);
    index.verify().unwrap();
    // The same answers as the same add written in one flush, and the same bytes.
    add_commits(once.path(), &settings, &docs[200..], &[300], usize::MAX, add_sketch);
    let expected = DiskIndex::open(once.path()).unwrap().query_sketches(&queries).unwrap();
    assert_eq!(index.query_sketches(&queries).unwrap(), expected);
    assert!(expected.iter().any(|h| h.iter().any(|h| h.id >= 200)), "matches in the runs");
    for (a, b) in segment_files(once.path()).iter().zip(segment_files(runs.path())) {
        assert!(std::fs::read(a).unwrap() == std::fs::read(&b).unwrap(), "{a:?} and {b:?} differ");
    }
    for d in [0, 199, 200, 350, 499] {
        assert_eq!(index.find_id(&format!("d{d}")).unwrap(), Some(d));
    }
}

#[test]
fn runs_of_one_key_across_fences_are_found_whole() {
    // Groups of identical documents (one band key per band for the whole group), of
    // sizes around the fence spacing, so runs of one key start, end and straddle fences.
    use super::segment::FENCE;
    let sk = sketcher(4, 2);
    let settings = minhash_settings(4, 2, 0.5);
    let sizes = [1, FENCE - 1, 1, FENCE, FENCE + 1, 2 * FENCE + 3, 7, FENCE - 2, 3 * FENCE];
    let mut indexed = Vec::new();
    for (g, &size) in sizes.iter().enumerate() {
        let base = 1000 * g as u64;
        indexed.extend((0..size).map(|_| sk.sketch_shingles(base..base + 40)));
    }
    let dir = tempfile::tempdir().unwrap();
    add_commits(
        dir.path(),
        &settings,
        &ids("a", &indexed),
        &[indexed.len()],
        usize::MAX,
        add_sketch,
    );
    let index = DiskIndex::open(dir.path()).unwrap();
    let mut rng = Rng(3);
    let mut queries: Vec<DocSketch> = (0..sizes.len() as u64)
        .map(|g| sk.sketch_shingles(1000 * g..1000 * g + 40).unwrap())
        .collect();
    // Keys below, between and above the groups'.
    queries.extend((0..50).map(|_| {
        let at = rng.below(10_000);
        sk.sketch_shingles(at..at + 40).unwrap()
    }));
    let mut at = 0;
    for (q, query) in queries.iter().enumerate() {
        let expected = brute_minhash(&indexed, query, 0.5);
        if q < sizes.len() {
            let group: Vec<u64> = (at..at + sizes[q] as u64).collect();
            assert_eq!(expected.iter().map(|h| h.id).collect::<Vec<_>>(), group, "group {q}");
            at += sizes[q] as u64;
        }
        assert_eq!(index.query_sketch(query).unwrap(), expected, "query {q}");
        assert_eq!(index.first_sketch(query).unwrap(), expected.first().cloned());
    }
}

/// The only segment file of an index.
fn only_segment(dir: &Path) -> Vec<u8> {
    let segs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    assert_eq!(segs.len(), 1, "{segs:?}");
    std::fs::read(&segs[0]).unwrap()
}

/// Two new indexes with the same id (a segment's header holds its index's id), so that the
/// same documents make the same bytes in both.
fn same_id_dirs(settings: &Settings) -> (tempfile::TempDir, tempfile::TempDir) {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&dirs.0, &dirs.1] {
        drop(Writer::builder().new_index_id(0x5eed).create(dir.path(), settings).unwrap());
    }
    dirs
}

#[test]
fn two_adds_and_a_compaction_equal_one_add() {
    let mut rng = Rng(7);
    let sk = sketcher(8, 2);
    let settings = minhash_settings(8, 2, 0.4);
    let docs = ids("d", &minhash_docs(&mut rng, 500, &sk));
    let queries = minhash_docs(&mut rng, 100, &sk);
    let (once, twice) = same_id_dirs(&settings);
    add_commits(once.path(), &settings, &docs, &[500], usize::MAX, add_sketch);
    add_commits(twice.path(), &settings, &docs, &[200, 300], 4000, add_sketch);
    let before = DiskIndex::open(twice.path()).unwrap().query_sketches(&queries).unwrap();
    let w = Writer::open(twice.path(), &settings).unwrap();
    let commit = w.compact().unwrap();
    assert_eq!(commit.documents, 500);
    let (a, b) = (DiskIndex::open(once.path()).unwrap(), DiskIndex::open(twice.path()).unwrap());
    assert_eq!(b.stats().segments, 1);
    assert_eq!(a.stats().documents, b.stats().documents);
    let answers = a.query_sketches(&queries).unwrap();
    assert_eq!(answers, b.query_sketches(&queries).unwrap());
    assert_eq!(answers, before);
    assert!(answers.iter().any(|h| !h.is_empty()));
    for d in [0, 199, 200, 499] {
        assert_eq!(a.id(d).unwrap(), b.id(d).unwrap());
        assert_eq!(b.find_id(&format!("d{d}")).unwrap(), Some(d));
    }
    // The same documents make the same bytes.
    assert!(only_segment(once.path()) == only_segment(twice.path()), "the bytes differ");

    // And for simhash.
    let settings = simhash_settings(3, 6);
    let docs = ids("s", &simhash_docs(&mut rng, 500, 3));
    let (once, twice) = same_id_dirs(&settings);
    add_commits(once.path(), &settings, &docs, &[500], usize::MAX, add_fp);
    add_commits(twice.path(), &settings, &docs, &[1, 250, 249], 6000, add_fp);
    Writer::open(twice.path(), &settings).unwrap().compact().unwrap();
    assert!(only_segment(once.path()) == only_segment(twice.path()), "the bytes differ");
}

#[test]
fn duplicate_ids_are_refused_and_reported() {
    let settings = simhash_settings(3, 6);
    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::builder().flush_bytes(200).open(dir.path(), &settings).unwrap();
    for (i, id) in ["a", "b", "a", "c", "b", "d", "e", "f", "a"].iter().enumerate() {
        w.add_fingerprint(id, Some(Fingerprint(i as u64))).unwrap();
    }
    w.add_fingerprint("", None).unwrap();
    let c = w.commit().unwrap();
    let refused: Vec<(u64, &str, u64)> =
        c.refused.iter().map(|r| (r.position, r.id.as_str(), r.doc)).collect();
    assert_eq!(refused, [(2, "a", 0), (4, "b", 1), (8, "a", 0)]);
    assert_eq!((c.added, c.documents), (7, 7));
    let mut w = Writer::open(dir.path(), &settings).unwrap();
    for id in ["c", "new", "new", ""] {
        w.add_fingerprint(id, None).unwrap();
    }
    let c = w.commit().unwrap();
    let refused: Vec<(u64, &str, u64)> =
        c.refused.iter().map(|r| (r.position, r.id.as_str(), r.doc)).collect();
    assert_eq!(refused, [(0, "c", 2), (2, "new", 7), (3, "", 6)]);
    let index = DiskIndex::open(dir.path()).unwrap();
    assert_eq!(index.len(), 8);
    let all: Vec<&str> = (0..8).map(|d| index.id(d).unwrap()).collect();
    assert_eq!(all, ["a", "b", "c", "d", "e", "f", "", "new"]);
    // A featureless document is in the index, and matches nothing.
    assert_eq!(index.find_id("").unwrap(), Some(6));
    let near: Vec<u64> =
        index.query_fingerprint(Fingerprint(0)).unwrap().iter().map(|h| h.id).collect();
    assert_eq!(near, [0, 1, 2, 3, 4, 5], "fingerprints 0, 1, 3, 5, 6, 7: not the featureless one");
    assert!(index.id(8).is_err());
}

#[test]
fn settings_are_stored_and_a_mismatch_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = minhash_settings(4, 2, 0.5);
    if let Settings::MinHash(s) = &mut settings {
        s.extra.insert("lowercase".into(), "yes please".into());
        s.preset = "fork json".into();
    }
    Writer::open(dir.path(), &settings).unwrap().commit().unwrap();
    let index = DiskIndex::open(dir.path()).unwrap();
    assert_eq!(index.settings(), &settings);
    assert_eq!(index.generation(), 1);
    let mut other = settings.clone();
    if let Settings::MinHash(s) = &mut other {
        s.window = 4;
        s.seed = 9;
    }
    for e in [
        DiskIndex::open_with(dir.path(), &other).unwrap_err(),
        Writer::open(dir.path(), &other).unwrap_err(),
    ] {
        assert_eq!(e.kind(), DiskErrorKind::SettingsMismatch);
        assert_eq!(e.settings(), ["seed", "window"]);
        let msg = e.to_string();
        assert!(msg.contains("MANIFEST") && msg.contains("window (index 3, given 4)"), "{msg}");
    }
    let e = Writer::open(dir.path(), &simhash_settings(3, 6)).unwrap_err();
    assert_eq!(e.settings(), ["method"]);
    let e = DiskIndex::open(dir.path().join("nothing")).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::NotFound);
    let mut bad = settings.clone();
    if let Settings::MinHash(s) = &mut bad {
        s.bands = 100;
    }
    // Other settings than the index's are a mismatch, valid or not; invalid settings are
    // refused for a new index, and nothing is made.
    assert_eq!(Writer::open(dir.path(), &bad).unwrap_err().kind(), DiskErrorKind::SettingsMismatch);
    let new = dir.path().join("new");
    assert_eq!(Writer::open(&new, &bad).unwrap_err().kind(), DiskErrorKind::Invalid);
    assert!(!new.exists());
}

#[test]
fn one_writer_at_a_time_and_rollback_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let settings = simhash_settings(3, 6);
    let mut w = Writer::builder().flush_bytes(1).open(dir.path(), &settings).unwrap();
    w.add_fingerprint("a", Some(Fingerprint(1))).unwrap();
    w.commit().unwrap();
    let reader = DiskIndex::open(dir.path()).unwrap();
    let mut w = Writer::builder().flush_bytes(1).open(dir.path(), &settings).unwrap();
    let e = Writer::open(dir.path(), &settings).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::Locked);
    assert!(e.to_string().contains("LOCK"), "{e}");
    for i in 0..5 {
        w.add_fingerprint(&format!("x{i}"), Some(Fingerprint(i))).unwrap();
    }
    let files = |dir: &Path| std::fs::read_dir(dir).unwrap().count();
    assert!(files(dir.path()) > 4, "flushed segments exist before the commit");
    assert_eq!(DiskIndex::open(dir.path()).unwrap().len(), 1, "and are not read");
    drop(w);
    assert_eq!(files(dir.path()), 3, "MANIFEST, LOCK and one segment");
    let index = DiskIndex::open(dir.path()).unwrap();
    assert_eq!(index.len(), 1);
    assert_eq!(index.generation(), 1);
    // A reader keeps its state while a writer commits and compacts.
    let mut w = Writer::open(dir.path(), &settings).unwrap();
    w.add_fingerprint("b", Some(Fingerprint(1))).unwrap();
    w.compact().unwrap();
    assert_eq!(reader.len(), 1);
    assert_eq!(reader.query_fingerprint(Fingerprint(1)).unwrap().len(), 1);
    reader.verify().unwrap();
    assert_eq!(
        DiskIndex::open(dir.path()).unwrap().query_fingerprint(Fingerprint(1)).unwrap().len(),
        2
    );
}

#[test]
fn wrong_method_and_band_count_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::open(dir.path(), &minhash_settings(4, 2, 0.5)).unwrap();
    assert_eq!(w.add_fingerprint("a", None).unwrap_err().kind(), DiskErrorKind::Invalid);
    let s = sketcher(8, 1).sketch_shingles([1, 2, 3]).unwrap();
    assert_eq!(w.add_sketch("a", Some(&s)).unwrap_err().kind(), DiskErrorKind::Invalid);
    w.add_sketch("a", sketcher(4, 2).sketch_shingles([1, 2, 3]).as_ref()).unwrap();
    w.commit().unwrap();
    let index = DiskIndex::open(dir.path()).unwrap();
    assert!(index.query_fingerprint(Fingerprint(0)).is_err());
    assert!(index.query_sketch(&s).is_err());
}

/// An index recorded with 64-bit band keys stores the whole band hashes and answers as one
/// of 32-bit keys does (verification is exact); it refuses sketches of 32-bit keys only.
#[test]
fn minhash_index_of_64_bit_keys() {
    let (bands, rows, t) = (8, 4, 0.3);
    let mut rng = Rng(7);
    let sk = sketcher(bands, rows);
    let docs: Vec<Option<DocSketch>> = minhash_docs(&mut rng, 300, &sk)
        .into_iter()
        .filter(|d| d.as_ref().is_none_or(DocSketch::has_wide_keys))
        .collect();
    let (indexed, queries) = docs.split_at(200);
    let mut answers = Vec::new();
    for bits in [32, 64] {
        let mut settings = minhash_settings(bands, rows, t);
        if let Settings::MinHash(s) = &mut settings {
            s.band_key_bits = bits;
        }
        let dir = tempfile::tempdir().unwrap();
        add_commits(dir.path(), &settings, &ids("a", indexed), &[120, 80], 3000, add_sketch);
        let index = DiskIndex::open(dir.path()).unwrap();
        answers.push(index.query_sketches(queries).unwrap());
        if bits == 64 {
            let narrow = DocSketch::from_parts(vec![0; bands], vec![1]);
            assert!(index.query_sketch(&narrow).is_err());
        }
    }
    assert_eq!(answers[0], answers[1]);
    assert!(answers[0].iter().any(|hits| !hits.is_empty()));
}

/// Every file of `dir` and its bytes.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// A simhash index of `n` documents `"{prefix}{i:04}"` in two commits (two segments).
fn simhash_index(dir: &Path, prefix: &str, seed: u64, n: usize) -> Settings {
    let settings = simhash_settings(3, 6);
    let docs = ids(prefix, &simhash_docs(&mut Rng(seed), n, 3));
    let docs: Vec<_> = docs.into_iter().map(|(id, d)| (format!("{id:0>6}"), d)).collect();
    add_commits(dir, &settings, &docs, &[n / 2, n - n / 2], usize::MAX, add_fp);
    settings
}

/// An index directory whose MANIFEST is lost (its segments there), or any directory that
/// holds files and no MANIFEST, is refused by every way of opening it, naming it, and
/// nothing in it changes; an index is made only where nothing is.
#[test]
fn a_directory_without_a_manifest_is_never_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let settings = simhash_index(dir.path(), "a", 1, 40);
    std::fs::remove_file(dir.path().join("MANIFEST")).unwrap();
    let before = snapshot(dir.path());
    assert!(before.keys().filter(|n| n.starts_with('g')).count() == 2, "{:?}", before.keys());
    let refused = |e: DiskError| {
        assert_eq!(e.kind(), DiskErrorKind::Corrupt, "{e}");
        assert_eq!(e.path(), Some(dir.path()), "{e}");
        assert!(e.to_string().contains("no MANIFEST"), "{e}");
    };
    refused(DiskIndex::open(dir.path()).unwrap_err());
    refused(DiskIndex::open_with(dir.path(), &settings).unwrap_err());
    refused(Writer::open(dir.path(), &settings).unwrap_err());
    refused(Writer::create(dir.path(), &settings).unwrap_err());
    refused(Writer::open_existing(dir.path(), &settings).unwrap_err());
    // Other settings too: the directory is refused before they are looked at.
    refused(Writer::open(dir.path(), &minhash_settings(4, 2, 0.5)).unwrap_err());
    assert_eq!(snapshot(dir.path()), before, "nothing changed");

    // A directory of other files: refused, and no LOCK is made in it.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("notes.txt"), "mine").unwrap();
    for e in [
        Writer::open(other.path(), &settings).unwrap_err(),
        DiskIndex::open(other.path()).unwrap_err(),
    ] {
        assert_eq!(e.kind(), DiskErrorKind::Corrupt, "{e}");
        assert!(e.to_string().contains("notes.txt"), "{e}");
    }
    assert_eq!(snapshot(other.path()).len(), 1);

    // Nothing: a missing directory (its parent exists), an empty one, one with only what
    // an interrupted creation leaves.
    let root = tempfile::tempdir().unwrap();
    let e = Writer::open(root.path().join("no/parent"), &settings).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::NotFound, "{e}");
    assert!(!root.path().join("no").exists());
    let e = DiskIndex::open(root.path().join("missing")).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::NotFound, "{e}");
    let interrupted = root.path().join("interrupted");
    std::fs::create_dir(&interrupted).unwrap();
    std::fs::write(interrupted.join("LOCK"), "").unwrap();
    std::fs::write(interrupted.join("MANIFEST.tmp"), "simhash-index manif").unwrap();
    assert_eq!(DiskIndex::open(&interrupted).unwrap_err().kind(), DiskErrorKind::NotFound);
    let empty = tempfile::tempdir().unwrap();
    for path in [root.path().join("missing"), empty.path().to_path_buf(), interrupted] {
        let mut w = Writer::open(&path, &settings).unwrap();
        // The new index is committed at once (empty), before anything is added.
        assert_eq!(DiskIndex::open(&path).unwrap().generation(), 0);
        w.add_fingerprint("x", Some(Fingerprint(1))).unwrap();
        assert_eq!(w.commit().unwrap().documents, 1);
        let files: Vec<String> = snapshot(&path).into_keys().collect();
        assert_eq!(files.len(), 3, "LOCK, MANIFEST and the segment: {files:?}");
    }
}

/// `create` makes an index only where nothing is; `open_existing` never makes one; the
/// id made with an index stays through adds and compactions.
#[test]
fn create_open_existing_and_the_index_id() {
    let root = tempfile::tempdir().unwrap();
    let settings = simhash_settings(3, 6);
    let path = root.path().join("ix");
    let e = Writer::open_existing(&path, &settings).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::NotFound, "{e}");
    assert!(!path.exists(), "open_existing makes nothing");
    std::fs::create_dir(&path).unwrap();
    let e = Writer::open_existing(&path, &settings).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::NotFound, "{e}");
    assert_eq!(snapshot(&path).len(), 0, "open_existing makes nothing");
    let mut w = Writer::create(&path, &settings).unwrap();
    w.add_fingerprint("a", Some(Fingerprint(1))).unwrap();
    w.commit().unwrap();
    let id = DiskIndex::open(&path).unwrap().index_id().unwrap();
    let e = Writer::create(&path, &settings).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::Exists, "{e}");
    let mut w = Writer::open_existing(&path, &settings).unwrap();
    w.add_fingerprint("b", Some(Fingerprint(2))).unwrap();
    w.commit().unwrap();
    assert_eq!(DiskIndex::open(&path).unwrap().index_id(), Some(id));
    Writer::open(&path, &settings).unwrap().compact().unwrap();
    let index = DiskIndex::open(&path).unwrap();
    assert_eq!((index.index_id(), index.len(), index.stats().segments), (Some(id), 2, 1));
    index.verify().unwrap();
    // Another index gets another id.
    let other = root.path().join("other");
    Writer::create(&other, &settings).unwrap().commit().unwrap();
    assert_ne!(DiskIndex::open(&other).unwrap().index_id(), Some(id));
}

/// A segment copied in from another index (the same name and length), or another index's
/// MANIFEST copied over this one's, is refused when the index is opened, by a reader or a
/// writer, naming the file: never read, never merged into this index by a compaction.
#[test]
fn a_segment_or_manifest_of_another_index_is_refused_at_open() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let settings = simhash_index(a.path(), "a", 1, 40);
    simhash_index(b.path(), "b", 2, 40);
    let name = "g00000001-0000.seg";
    let (ours, theirs) = (a.path().join(name), b.path().join(name));
    let intact = std::fs::read(&ours).unwrap();
    let foreign = std::fs::read(&theirs).unwrap();
    assert_eq!(intact.len(), foreign.len(), "the same length: only the id tells them apart");
    assert_ne!(intact, foreign);
    std::fs::write(&ours, &foreign).unwrap();
    for e in [
        DiskIndex::open(a.path()).unwrap_err(),
        Writer::open(a.path(), &settings).unwrap_err(),
        Writer::open_existing(a.path(), &settings).unwrap_err(),
    ] {
        assert_eq!(e.kind(), DiskErrorKind::Corrupt, "{e}");
        assert_eq!(e.path(), Some(ours.as_path()), "{e}");
        assert!(e.to_string().contains("another index"), "{e}");
    }
    std::fs::write(&ours, &intact).unwrap();
    DiskIndex::open(a.path()).unwrap().verify().unwrap();

    // B's manifest over A's: its segments have A's names and lengths, and A's id.
    let manifest = std::fs::read(a.path().join("MANIFEST")).unwrap();
    std::fs::copy(b.path().join("MANIFEST"), a.path().join("MANIFEST")).unwrap();
    let e = DiskIndex::open(a.path()).unwrap_err();
    assert_eq!(e.kind(), DiskErrorKind::Corrupt, "{e}");
    assert!(e.to_string().contains("another index"), "{e}");
    std::fs::write(a.path().join("MANIFEST"), manifest).unwrap();
    DiskIndex::open(a.path()).unwrap().verify().unwrap();
}

/// Copies the fixture `name` (an index written by the previous format, version 1) to a
/// new directory.
fn v1_fixture(name: &str) -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/disk/testdata").join(name);
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

/// An index of format version 1 (no index id; written by the library before ids, kept in
/// `testdata/`) is read as it is, with the answers of a new index of the same documents;
/// a writer gives it an id, keeps its segments as they are (format 1) under a version 2
/// manifest, and a compaction rewrites them all with the id.
#[test]
fn indexes_of_format_1_are_read_and_upgraded() {
    // The fixtures' documents (as made for them, two commits of 40 and 20).
    let mut rng = Rng(41);
    let sk = sketcher(4, 2);
    let minhash = minhash_settings(4, 2, 0.5);
    let mdocs = ids("m", &minhash_docs(&mut rng, 60, &sk));
    let simhash = simhash_settings(3, 6);
    let sdocs = ids("s", &simhash_docs(&mut rng, 60, 3));
    // Queries: the documents themselves (each finds itself, at least).
    let mqueries: Vec<_> = mdocs.iter().map(|(_, d)| d.clone()).collect();
    let squeries: Vec<_> = sdocs.iter().map(|(_, d)| *d).collect();
    let fresh = tempfile::tempdir().unwrap();
    let (fm, fs) = (fresh.path().join("m"), fresh.path().join("s"));
    add_commits(&fm, &minhash, &mdocs, &[40, 20], usize::MAX, add_sketch);
    add_commits(&fs, &simhash, &sdocs, &[40, 20], usize::MAX, add_fp);
    let answers = |dir: &Path| {
        let index = DiskIndex::open(dir).unwrap();
        index.verify().unwrap();
        let ids: Vec<String> = (0..index.len()).map(|d| index.id(d).unwrap().into()).collect();
        let hits = match index.settings() {
            Settings::MinHash(_) => format!("{:?}", index.query_sketches(&mqueries).unwrap()),
            Settings::Simhash(_) => format!("{:?}", index.query_fingerprints(&squeries).unwrap()),
        };
        (ids, hits)
    };
    for (fixture, fresh, settings) in [("v1-minhash", &fm, &minhash), ("v1-simhash", &fs, &simhash)]
    {
        let dir = v1_fixture(fixture);
        let index = DiskIndex::open(dir.path()).unwrap();
        assert_eq!((index.index_id(), index.len(), index.stats().segments), (None, 60, 2));
        let want = answers(fresh);
        assert!(want.1.contains("id"), "the queries have answers");
        assert_eq!(answers(dir.path()), want, "{fixture}");
        assert_eq!(
            index.stats().bytes,
            snapshot(dir.path()).values().map(|b| b.len() as u64).sum::<u64>()
        );
        drop(index);
        // A writer's first commit gives the index an id; its segments stay as they are.
        let before = snapshot(dir.path());
        Writer::open(dir.path(), settings).unwrap().commit().unwrap();
        let manifest = std::fs::read_to_string(dir.path().join("MANIFEST")).unwrap();
        assert!(manifest.starts_with("simhash-index manifest 2\nindex "), "{manifest}");
        assert_eq!(manifest.matches(" format 1\n").count(), 2, "{manifest}");
        for (name, bytes) in &before {
            if name.starts_with('g') {
                assert_eq!(&std::fs::read(dir.path().join(name)).unwrap(), bytes, "{name}");
            }
        }
        let id = DiskIndex::open(dir.path()).unwrap().index_id().unwrap();
        assert_eq!(answers(dir.path()), want, "{fixture}, upgraded");
        // A version 2 segment where the manifest lists one of format 1 is refused.
        let seg = dir.path().join("g00000001-0000.seg");
        std::fs::copy(fresh.join("g00000001-0000.seg"), &seg).unwrap();
        let e = DiskIndex::open(dir.path()).unwrap_err();
        assert_eq!((e.kind(), e.path()), (DiskErrorKind::Corrupt, Some(seg.as_path())), "{e}");
        std::fs::write(&seg, &before["g00000001-0000.seg"]).unwrap();
        // A compaction rewrites them with the id.
        Writer::open(dir.path(), settings).unwrap().compact().unwrap();
        let manifest = std::fs::read_to_string(dir.path().join("MANIFEST")).unwrap();
        assert!(!manifest.contains("format 1"), "{manifest}");
        let index = DiskIndex::open(dir.path()).unwrap();
        assert_eq!((index.index_id(), index.stats().segments), (Some(id), 1));
        assert_eq!(answers(dir.path()), want, "{fixture}, compacted");
    }
}

/// A flood of short documents sharing a phrase, with longer documents (more shingles than
/// a short query, fewer than the largest that can still match one) and copies among them:
/// short queries go through the prefix index of the small documents and find exactly
/// what brute force finds (a shared band key and the threshold), in document order, and
/// the first that a stop accepts, as the band buckets did.
#[test]
fn short_queries_against_a_flood_equal_brute_force() {
    let t = 0.5;
    let sk = sketcher(8, 2);
    let settings = minhash_settings(8, 2, t);
    let mut rng = Rng(77);
    let phrase: Vec<u64> = (0..4).map(|i| 1000 + i).collect();
    let short = |rng: &mut Rng| -> Vec<u64> {
        let mut set = phrase.clone();
        set.extend((0..2).map(|_| 10_000 + rng.below(60)));
        set
    };
    let mut indexed: Vec<Option<DocSketch>> = Vec::new();
    let mut queries: Vec<DocSketch> = Vec::new();
    for i in 0..240 {
        indexed.push(sk.sketch_shingles(short(&mut rng)));
        if i % 8 == 0 {
            // A query of 32 shingles and an indexed document of 40 that holds it (0.8).
            let base: Vec<u64> = (0..32).map(|_| 50_000 + rng.below(1 << 20)).collect();
            let mut longer = base.clone();
            longer.extend((0..8).map(|_| 90_000_000 + rng.below(1 << 20)));
            indexed.push(sk.sketch_shingles(longer));
            queries.push(sk.sketch_shingles(base).unwrap());
        }
        if i % 5 == 0 {
            indexed.push(None);
        }
    }
    for _ in 0..60 {
        queries.push(sk.sketch_shingles(short(&mut rng)).unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let docs = ids("f", &indexed);
    let n = docs.len();
    add_commits(dir.path(), &settings, &docs, &[n / 3, n - n / 3], 3000, add_sketch);
    let index = DiskIndex::open(dir.path()).unwrap();
    let mut longer_found = 0;
    for (q, query) in queries.iter().enumerate() {
        let expected = brute_minhash(&indexed, query, t);
        longer_found += usize::from(query.set().len() == 32 && !expected.is_empty());
        assert_eq!(index.query_sketch(query).unwrap(), expected, "query {q}");
        assert_eq!(index.first_sketch(query).unwrap(), expected.first().cloned(), "query {q}");
    }
    assert!(longer_found >= 20, "{longer_found} long documents found by short queries");
    assert!(index.used_small_docs(), "the prefix index was used");
}

/// A flood of indexed documents that share a boilerplate, each with a sentence of its own,
/// and queries of four kinds: new documents of the flood (content of their own in no
/// indexed document: no match), copies and near-copies of indexed ones (found, `same` or
/// `template`), and an indexed document with a sentence added (`overlap` with it, no
/// match). `first_sketch_acted` answers as brute force does (the earliest indexed document
/// that shares a band key, verifies and whose relation is acted on) before and after it
/// reads the index's windows into its filter, and with an indexed copy of the query
/// passed over.
#[test]
fn queries_with_content_of_their_own_against_a_flood_equal_brute_force() {
    let t = 0.4;
    let sk = sketcher(37, 3);
    let MinHashSettings { extra, .. } = match minhash_settings(37, 3, t) {
        Settings::MinHash(s) => s,
        Settings::Simhash(_) => unreachable!(),
    };
    let mut extra = extra;
    extra.insert(super::settings::TOKENS.to_string(), "1".to_string());
    let settings = match minhash_settings(37, 3, t) {
        Settings::MinHash(s) => Settings::MinHash(MinHashSettings { extra, ..s }),
        Settings::Simhash(_) => unreachable!(),
    };
    let mut rng = Rng(91);
    let fp = simhash_core::Fingerprinter::new();
    let mut flood = own_flood::OwnFlood::new();
    let boilerplate = flood.boilerplate.clone();
    let texts: Vec<String> = (0..150).map(|_| flood.document()).collect();
    let sketch = |text: &str| sk.sketch(&fp, text).1.expect("features");
    let mut indexed: Vec<Option<DocSketch>> = texts.iter().map(|x| Some(sketch(x))).collect();
    // A featureless document among them (no sketch: no one's candidate).
    indexed.push(None);
    let dir = tempfile::tempdir().unwrap();
    let docs = ids("o", &indexed);
    add_commits(dir.path(), &settings, &docs, &[100, 51], 1 << 20, add_sketch);
    let index = DiskIndex::open(dir.path()).unwrap();
    let mut queries: Vec<(String, Option<u64>)> = Vec::new();
    for i in 0..60 {
        let other = &texts[rng.below(texts.len() as u64) as usize];
        // A document of its own, a copy, a copy with a word changed, a copy with a paragraph
        // added (content of its own) and one with a sentence added (a variant's).
        let query = match i % 5 {
            0 => flood.document(),
            1 => other.clone(),
            2 => other.replacen(&boilerplate, &boilerplate.replacen(' ', " zzq ", 1), 1),
            3 => format!("{other} {}.", flood.sentence(25)),
            _ => format!("{other} {}.", flood.sentence(12)),
        };
        // A copy of an indexed document passes over itself when it is that document.
        let own = (i % 10 == 1).then(|| texts.iter().position(|x| *x == query)).flatten();
        queries.push((query, own.map(|d| d as u64)));
    }
    let mut kinds = std::collections::BTreeSet::new();
    for (q, (text, own)) in queries.iter().enumerate() {
        let query = sketch(text);
        let expected = brute_minhash(&indexed, &query, t).into_iter().find_map(|hit| {
            if own.is_some_and(|own| hit.id >= own) {
                return None;
            }
            let tokens = indexed[hit.id as usize].as_ref().unwrap().tokens();
            let r = crate::lsh::relation(query.tokens(), tokens);
            Templates::Remove.acts_on(r).then_some((hit, r))
        });
        kinds.insert(expected.as_ref().map(|(_, r)| *r));
        let got = index.first_sketch_acted(&query, *own, Templates::Remove).unwrap();
        assert_eq!(got, expected, "query {q}");
    }
    assert!(index.made_own_windows(), "the filter of windows was made");
    let want = [None, Some(Relation::Same), Some(Relation::Template)];
    assert!(want.iter().all(|k| kinds.contains(k)), "{kinds:?}");
}
