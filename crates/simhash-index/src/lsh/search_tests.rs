//! The searches against brute-force oracles (moved from the `simhash` binary's sketch
//! module with the code): the walk, the components and the pairs, on random and adversarial
//! documents, from memory, cached and file-read stores, at several thread counts.
#![allow(clippy::many_single_char_names)] // sets, ranks and thresholds in the oracles

use super::*;

use crate::own_flood;

/// A naive union-find for the oracles.
pub(super) struct Uf(Vec<u32>);

impl Uf {
    pub(super) fn new(n: usize) -> Uf {
        Uf((0..n as u32).collect())
    }

    pub(super) fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            x = self.0[x as usize];
        }
        x
    }

    pub(super) fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        self.0[ra.max(rb) as usize] = ra.min(rb);
    }
}

/// Records the matches.
#[derive(Default)]
struct Record {
    duplicates: Vec<(u32, u32)>,
    pairs: Vec<(u32, u32, u64)>,
}

impl MatchSink for Record {
    fn duplicate(&mut self, doc: u32, of: u32) {
        self.duplicates.push((doc, of));
    }
    fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
        self.pairs.push((a, b, jaccard.to_bits()));
    }
}

/// xorshift, for reproducible random sets.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The sketches of documents given as feature lists (empty: featureless), with their
/// band hashes kept for the oracles.
struct Fixture<S = SpillStore> {
    store: S,
    sets: Vec<Vec<u64>>,
    bands: Vec<Vec<u32>>,
}

fn fixture(docs: &[Vec<u64>], cache_bytes: u64) -> Fixture {
    let banding = Banding::for_threshold(0.3, 128).unwrap();
    let store = SpillStore::with_cache_bytes(banding.bands, cache_bytes).unwrap();
    fixture_in(docs, store)
}

/// [`fixture`] in a given store.
fn fixture_in<S: SketchStore>(docs: &[Vec<u64>], mut store: S) -> Fixture<S> {
    let minhasher = simhash_core::MinHasher::new(128, 0);
    let banding = Banding::for_threshold(0.3, 128).unwrap();
    let (mut sets, mut bands) = (Vec::new(), Vec::new());
    for features in docs {
        let sketch = (!features.is_empty()).then(|| {
            let sig = minhasher.signature(features.iter().copied()).unwrap();
            let mut b = vec![0u64; banding.bands];
            simhash_core::band_hashes(&sig, banding.bands, banding.rows, &mut b);
            let set = simhash_core::shingle_set(features.iter().copied());
            let mut sketch =
                DocSketch::from_parts(b.iter().map(|&h| (h ^ (h >> 32)) as u32).collect(), set);
            sketch.high = b.iter().map(|&h| (h >> 32) as u32).collect();
            sketch
        });
        sets.push(sketch.as_ref().map(|s| s.set.clone()).unwrap_or_default());
        bands.push(sketch.as_ref().map(|s| s.bands.clone()).unwrap_or_default());
        store.push(sketch.as_ref()).unwrap();
    }
    store.finish().unwrap();
    Fixture { store, sets, bands }
}

/// Documents drawn around a few bases (near and exact copies), some featureless.
pub(super) fn random_docs(seed: u64, n: u64) -> Vec<Vec<u64>> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|doc| {
            let base = doc % 40;
            if doc % 37 == 5 {
                return Vec::new();
            }
            (0..60)
                .map(
                    |i| {
                        if rng.below(10) < doc % 4 { 1000 + rng.below(500) } else { base * 100 + i }
                    },
                )
                .collect()
        })
        .collect()
}

/// A template flood: a shared paragraph and a few own words each; identical copies;
/// hashes that agree in 32 bits only; and tiny documents.
pub(super) fn adversarial_docs(seed: u64) -> Vec<Vec<u64>> {
    let mut rng = Rng(seed);
    let mut docs = Vec::new();
    for _ in 0..150 {
        let mut d: Vec<u64> = (0..40).collect();
        d.extend((0..6 + rng.below(30)).map(|_| 10_000 + rng.below(1_000_000)));
        docs.push(d);
    }
    for i in 0..60u64 {
        docs.push(vec![5_000_000, 5_000_001 + i % 3]);
        docs.push(vec![1 << 32 | i, i]);
        docs.push(vec![i]);
    }
    docs
}

fn run<S: SketchStore + ?Sized>(store: &S, threads: usize) -> Record {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut record = Record::default();
    pool.install(|| find_matches(store, 0.4, &mut record)).unwrap();
    record
}

fn share_band<S>(f: &Fixture<S>, a: usize, b: usize) -> bool {
    !f.sets[a].is_empty()
        && !f.sets[b].is_empty()
        && f.bands[a].iter().zip(&f.bands[b]).any(|(x, y)| x == y)
}

/// The brute-force walk: every kept document is compared, in priority order.
fn oracle_walk<S>(f: &Fixture<S>, rank: &[u32], t: f64) -> (Vec<u32>, Vec<f64>) {
    let n = f.sets.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&d| rank[d]);
    let mut center: Vec<u32> = (0..n as u32).collect();
    let mut jaccard = vec![0.0; n];
    let mut kept: Vec<usize> = Vec::new();
    for &d in &order {
        let hit = kept.iter().find_map(|&k| {
            let j = simhash_core::jaccard(&f.sets[d], &f.sets[k]);
            let identical = !f.sets[d].is_empty() && f.sets[d] == f.sets[k];
            ((share_band(f, d, k) || identical) && j >= t).then_some((k, j))
        });
        match hit {
            Some((k, j)) => {
                center[d] = k as u32;
                jaccard[d] = j;
            }
            None => kept.push(d),
        }
    }
    (center, jaccard)
}

/// The brute-force components of the verified candidate pairs.
fn oracle_components<S>(f: &Fixture<S>, t: f64) -> Vec<u32> {
    let n = f.sets.len();
    let mut uf = Uf::new(n);
    for a in 0..n {
        for b in a + 1..n {
            if share_band(f, a, b) && simhash_core::jaccard(&f.sets[a], &f.sets[b]) >= t {
                uf.union(a as u32, b as u32);
            }
        }
    }
    (0..n as u32).map(|d| uf.find(d)).collect()
}

fn same_partition(a: &[u32], b: &[u32]) -> bool {
    let mut map = std::collections::HashMap::new();
    let mut back = std::collections::HashMap::new();
    a.iter()
        .zip(b)
        .all(|(x, y)| *map.entry(x).or_insert(y) == y && *back.entry(y).or_insert(x) == x)
}

#[test]
fn cached_and_file_reads_find_the_same_matches() {
    let docs = random_docs(0x9e37_79b9, 300);
    let cached = fixture(&docs, SPILL_CACHE_BYTES);
    let on_disk = fixture(&docs, 0);
    let sets = &cached.sets;
    assert_eq!(cached.store.cached(), (true, true));
    assert_eq!(on_disk.store.cached(), (false, false));
    let want = run(&cached.store, 1);
    assert!(want.duplicates.len() > 10 && want.pairs.len() > 50);
    for (store, threads) in [(&cached.store, 3), (&on_disk.store, 1), (&on_disk.store, 3)] {
        let got = run(store, threads);
        assert_eq!(got.duplicates, want.duplicates);
        assert_eq!(got.pairs, want.pairs);
    }
    // Every match is exact: equal sets, or a Jaccard of at least the threshold.
    for &(doc, of) in &want.duplicates {
        assert!(of < doc && sets[doc as usize] == sets[of as usize]);
    }
    for &(a, b, j) in &want.pairs {
        let j = f64::from_bits(j);
        let exact = simhash_core::jaccard(&sets[a as usize], &sets[b as usize]);
        assert_eq!(j.to_bits(), exact.to_bits());
        assert!(a < b && j >= 0.4, "{a} {b} {j}");
    }
    // Sets and columns read back as written, through many column blocks.
    let mut set = Vec::new();
    for (doc, want) in sets.iter().enumerate() {
        on_disk.store.read_set(doc, &mut set).unwrap();
        assert_eq!(&set, want);
    }
    assert!(on_disk.store.column_blocks(0).0 > 50);
    assert_eq!(on_disk.store.column_blocks(3).1, cached.store.column_blocks(3).1);
}

#[test]
fn walk_and_components_agree_with_brute_force() {
    for (seed, docs) in [
        (1, random_docs(0x1234_5678, 300)),
        (2, random_docs(0xdead_beef, 200)),
        (3, adversarial_docs(77)),
    ] {
        let n = docs.len();
        for cache in [SPILL_CACHE_BYTES, 0] {
            let f = fixture(&docs, cache);
            let mut rng = Rng(seed * 31 + cache);
            let mut shuffled: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                shuffled.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let identity: Vec<u32> = (0..n as u32).collect();
            for t in [0.4, 0.7] {
                let want_components = oracle_components(&f, t);
                for rank in [&identity, &shuffled] {
                    let want = oracle_walk(&f, rank, t);
                    for threads in [1, 3] {
                        let pool =
                            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                        let (got, _) =
                            pool.install(|| walk(&f.store, t, rank, Templates::Remove)).unwrap();
                        assert_eq!(got.center, want.0, "seed {seed} t {t} threads {threads}");
                        for d in 0..n {
                            assert_eq!(got.jaccard[d].to_bits(), want.1[d].to_bits());
                        }
                        let (edges, _) =
                            pool.install(|| components(&f.store, t, Templates::Remove)).unwrap();
                        let mut uf = Uf::new(n);
                        for &(a, b) in &edges {
                            let j = simhash_core::jaccard(&f.sets[a as usize], &f.sets[b as usize]);
                            assert!(j >= t, "an unverified edge {a} {b}: {j}");
                            uf.union(a, b);
                        }
                        let got: Vec<u32> = (0..n as u32).map(|d| uf.find(d)).collect();
                        assert!(same_partition(&got, &want_components), "seed {seed} t {t}");
                    }
                }
            }
        }
    }
}

#[test]
fn floods_cost_one_comparison_a_document() {
    // 3,000 near-identical documents: one kept, every other compared with it once.
    let mut rng = Rng(5);
    let docs: Vec<Vec<u64>> = (0..3000)
        .map(|_| {
            let mut d: Vec<u64> = (0..100).collect();
            d.extend((0..12).map(|_| 1000 + rng.below(1 << 40)));
            d
        })
        .collect();
    let f = fixture(&docs, SPILL_CACHE_BYTES);
    let rank: Vec<u32> = (0..3000).collect();
    let (walked, stats) = walk(&f.store, 0.4, &rank, Templates::Remove).unwrap();
    assert!(walked.center.iter().all(|&c| c == 0));
    assert_eq!(stats.verified, 2999);
    let (edges, stats) = components(&f.store, 0.4, Templates::Remove).unwrap();
    assert_eq!(edges.len(), 2999);
    assert_eq!(stats.verified, 2999);
    // Identical documents are not compared at all.
    let f = fixture(&vec![(0..50).collect::<Vec<u64>>(); 3000], SPILL_CACHE_BYTES);
    let (walked, stats) = walk(&f.store, 0.4, &rank, Templates::Remove).unwrap();
    assert!(walked.center.iter().all(|&c| c == 0) && stats.verified == 0);
    assert_eq!(stats.duplicates, 2999);
}

#[test]
fn different_tiny_texts_are_never_identical() {
    // Two one-shingle documents whose hashes agree in their low 32 bits, or whose
    // halves XOR alike: distinct sets, so neither a duplicate nor a pair.
    let docs = vec![
        vec![0x0000_0001_0000_0005],
        vec![0x0000_0002_0000_0005],
        vec![0x0000_0005_0000_0001],
        vec![0x0000_0004_0000_0000],
    ];
    let f = fixture(&docs, SPILL_CACHE_BYTES);
    let got = run(&f.store, 1);
    assert!(got.duplicates.is_empty() && got.pairs.is_empty());
    let (walked, _) = walk(&f.store, 0.4, &[0, 1, 2, 3], Templates::Remove).unwrap();
    assert_eq!(walked.center, [0, 1, 2, 3]);
}

#[test]
fn memory_and_spill_stores_agree() {
    for docs in [random_docs(0x5eed, 250), adversarial_docs(3)] {
        let spilled = fixture(&docs, 0);
        let memory = fixture_in(&docs, MemoryStore::new(spilled.store.bands()));
        assert_eq!(memory.sets, spilled.sets);
        let n = docs.len();
        let rank: Vec<u32> = (0..n as u32).rev().collect();
        for threads in [1, 2, 4] {
            let (a, b) = (run(&memory.store, threads), run(&spilled.store, threads));
            assert_eq!((a.duplicates, a.pairs), (b.duplicates, b.pairs));
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let walks = pool.install(|| {
                (
                    walk(&memory.store, 0.4, &rank, Templates::Remove).unwrap(),
                    walk(&spilled.store, 0.4, &rank, Templates::Remove).unwrap(),
                )
            });
            assert_eq!(walks.0, walks.1);
            let edges = pool.install(|| {
                (
                    components(&memory.store, 0.4, Templates::Remove).unwrap(),
                    components(&spilled.store, 0.4, Templates::Remove).unwrap(),
                )
            });
            assert_eq!(edges.0, edges.1);
        }
    }
}

#[test]
fn stores_check_what_they_are_given() {
    let mut store = MemoryStore::new(3);
    let sketch = DocSketch::from_parts(vec![1, 2], vec![5]);
    let err = store.push(Some(&sketch)).unwrap_err();
    assert_eq!(err.kind(), EngineErrorKind::Mismatch);
    assert_eq!(err.to_string(), "a sketch has 2 band hashes, the store 3");
    assert!(store.is_empty(), "a refused sketch is not recorded");
    let err = walk(&store, 0.5, &[0], Templates::Remove).unwrap_err();
    assert_eq!(
        (err.kind(), err.to_string().as_str()),
        (EngineErrorKind::Mismatch, "1 ranks for 0 documents")
    );
    // A spilled store is closed by its first search.
    let mut spilled = SpillStore::new(2).unwrap();
    spilled.push(Some(&sketch)).unwrap();
    spilled.finish().unwrap();
    spilled.finish().unwrap();
    let err = spilled.push(None).unwrap_err();
    assert_eq!(err.kind(), EngineErrorKind::Finished);
    assert_eq!(spilled.len(), 1);
    let mut set = Vec::new();
    spilled.read_set(0, &mut set).unwrap();
    assert_eq!(set, [5]);
}

/// Both key widths, forced, in both stores: the same duplicates, pairs, walk and components
/// (verification is exact), at any thread count; only the candidates may differ.
#[test]
fn key_widths_agree() {
    let banding = Banding::for_threshold(0.3, 128).unwrap();
    for docs in [random_docs(0x5eed, 250), adversarial_docs(3)] {
        let n = docs.len();
        let rank: Vec<u32> = (0..n as u32).rev().collect();
        let mut results = Vec::new();
        for width in [BandKeyWidth::Bits32, BandKeyWidth::Bits64] {
            for cache in [0, SPILL_CACHE_BYTES] {
                let store = SpillStore::with_band_keys(banding.bands, width, cache).unwrap();
                let spilled = fixture_in(&docs, store);
                let memory = fixture_in(&docs, MemoryStore::with_band_keys(banding.bands, width));
                let bits = if width == BandKeyWidth::Bits32 { 32 } else { 64 };
                assert_eq!(spilled.store.band_key_bits(), bits);
                assert_eq!(memory.store.band_key_bits(), bits);
                for threads in [1, 2] {
                    let pool =
                        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    for store in [&spilled.store as &dyn SketchStore, &memory.store] {
                        let mut got = run(store, threads);
                        // Pairs come in band-group order, which depends on the keys.
                        got.pairs.sort_unstable();
                        let walked =
                            pool.install(|| walk(store, 0.4, &rank, Templates::Remove).unwrap().0);
                        let edges =
                            pool.install(|| components(store, 0.4, Templates::Remove).unwrap().0);
                        results.push((got.duplicates, got.pairs, walked, edges));
                    }
                }
            }
        }
        for r in &results[1..] {
            assert_eq!(r.0, results[0].0, "duplicates");
            assert_eq!(r.1, results[0].1, "pairs");
            assert_eq!(r.2, results[0].2, "walk");
            assert_eq!(r.3, results[0].3, "components");
        }
    }
}

/// Two documents whose 64-bit band hashes differ but whose 32-bit keys collide: a
/// candidate with 32-bit keys (verified and dropped), none with 64-bit keys.
#[test]
fn a_32_bit_collision_only_adds_a_candidate() {
    let sketches = [
        DocSketch::from_band_hashes(&[(1 << 32) | 1, 7], vec![1, 2, 3]),
        DocSketch::from_band_hashes(&[0, 8], vec![4, 5, 6]),
    ];
    assert_eq!(sketches[0].bands()[0], sketches[1].bands()[0]);
    let mut counts = Vec::new();
    for width in [BandKeyWidth::Bits32, BandKeyWidth::Bits64, BandKeyWidth::Auto] {
        let mut store = MemoryStore::with_band_keys(2, width);
        for s in &sketches {
            store.push(Some(s)).unwrap();
        }
        store.finish().unwrap();
        let mut got = Record::default();
        let found = find_matches(&store, 0.1, &mut got).unwrap();
        assert!(got.pairs.is_empty() && got.duplicates.is_empty());
        let (walked, stats) = walk(&store, 0.1, &[0, 1], Templates::Remove).unwrap();
        assert_eq!(walked.center, [0, 1]);
        counts.push((store.band_key_bits(), found.candidates, stats.candidates));
    }
    assert_eq!(counts, [(32, 1, 1), (64, 0, 0), (32, 1, 1)]);
    // A store of 64-bit keys refuses sketches of 32-bit keys only.
    let mut store = MemoryStore::with_band_keys(2, BandKeyWidth::Bits64);
    let narrow = DocSketch::from_parts(vec![1, 2], vec![5]);
    assert_eq!(store.push(Some(&narrow)).unwrap_err().kind(), EngineErrorKind::Mismatch);
    // Auto takes them, with 32-bit keys.
    let mut store = MemoryStore::new(2);
    store.push(Some(&sketches[0])).unwrap();
    store.push(Some(&narrow)).unwrap();
    assert_eq!(store.band_key_bits(), 32);
}

/// The sketch as it was made before sketching sorted the features in place: the signature
/// over the features as given (repeats, any order), the set by `shingle_set`, the set's
/// hash folded over the set.
fn sketch_by_the_old_path(sketcher: &Sketcher, features: &[u64]) -> Option<(DocSketch, u64)> {
    let minhasher = sketcher.minhasher();
    let banding = sketcher.banding();
    let sig = minhasher.signature(features.iter().copied())?;
    let mut b = vec![0u64; banding.bands];
    simhash_core::band_hashes(&sig, banding.bands, banding.rows, &mut b);
    let set = simhash_core::shingle_set(features.iter().copied());
    let mut h = set.len() as u64;
    for &x in &set {
        h = (h.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    let hash = h ^ (h >> 29);
    Some((DocSketch::from_band_hashes(&b, set), hash))
}

#[test]
fn sketches_equal_the_old_path() {
    let mut docs = random_docs(11, 300);
    docs.extend(adversarial_docs(12));
    let mut rng = Rng(13);
    // Repeats in any order (a set smaller than its features), one value many times, a
    // document larger than the scratch buffer kept between sketches, and few features
    // (empty signature slots to fill).
    for n in [1u64, 2, 3, 7, 50, 300, 5_000, 200_000] {
        let mut d: Vec<u64> = (0..n).map(|_| rng.below(n / 2 + 1) * 0x9e37_79b9).collect();
        d.extend(d.clone().iter().rev());
        docs.push(d);
        docs.push(vec![42; n as usize]);
    }
    for (num_perm, t) in [(128, 0.4), (111, 0.5), (16, 0.3)] {
        let banding = Banding::for_threshold(t, num_perm).unwrap();
        let sketcher = Sketcher::new(simhash_core::MinHasher::new(num_perm, 7), banding).unwrap();
        for d in &docs {
            let got = sketcher.sketch_shingles(d.iter().copied());
            let want = sketch_by_the_old_path(&sketcher, d);
            assert_eq!(got.is_some(), want.is_some());
            if let (Some(got), Some((want, hash))) = (got, want) {
                assert_eq!(got.bands(), want.bands());
                assert_eq!(got.band_hashes(), want.band_hashes());
                assert_eq!(got.set(), want.set());
                assert_eq!(got.set_hash(), hash);
                assert_eq!(want.set_hash(), hash);
            }
        }
    }
}

/// The candidate components by brute force: documents joined when any band key agrees.
fn components_by_brute_force(keys: &[Vec<u32>], docs: &[u32]) -> Vec<Vec<u32>> {
    let mut uf = Uf::new(docs.len());
    for a in 0..docs.len() {
        for b in a + 1..docs.len() {
            let (ka, kb) = (&keys[docs[a] as usize], &keys[docs[b] as usize]);
            if ka.iter().zip(kb).any(|(x, y)| x == y) {
                uf.union(a as u32, b as u32);
            }
        }
    }
    let mut by_root = std::collections::BTreeMap::<u32, Vec<u32>>::new();
    for (p, &d) in docs.iter().enumerate() {
        by_root.entry(uf.find(p as u32)).or_default().push(d);
    }
    let mut out: Vec<Vec<u32>> = by_root.into_values().filter(|c| c.len() > 1).collect();
    out.sort_unstable_by_key(|c| c[0]);
    out
}

#[test]
fn candidate_components_agree_with_brute_force() {
    let mut rng = Rng(21);
    // Keys from tiny ranges (huge groups, a full table's probing), from the whole range
    // (0 and u32::MAX among them), and a flood with one key in every band.
    for (n, range) in [(1, 3), (2, 1), (50, 2), (300, 7), (300, 300), (700, 5000), (400, 0)] {
        let bands = 1 + rng.below(5) as usize;
        let keys: Vec<Vec<u32>> = (0..n)
            .map(|_| {
                (0..bands)
                    .map(|_| match range {
                        0 => 7,
                        5000 => [0, u32::MAX, rng.below(1 << 32) as u32][rng.below(3) as usize],
                        r => (rng.below(r) as u32).wrapping_mul(0x1000_0001),
                    })
                    .collect()
            })
            .collect();
        let mut store = MemoryStore::with_band_keys(bands, BandKeyWidth::Bits32);
        for (d, k) in keys.iter().enumerate() {
            store.push(Some(&DocSketch::from_parts(k.clone(), vec![d as u64]))).unwrap();
        }
        store.finish().unwrap();
        let all: Vec<u32> = (0..n as u32).collect();
        let some: Vec<u32> = (0..n as u32).filter(|d| d % 3 != 1).collect();
        for docs in [all, some] {
            let got = super::scan::candidate_components(&store, &docs).unwrap();
            assert_eq!(got, components_by_brute_force(&keys, &docs), "n {n}, range {range}");
        }
    }
}

/// Texts that make every relation: template siblings (a name and a version filled in), a
/// boilerplate paragraph with a sentence of its own, exact copies, copies with a word or
/// two changed, copies with a passage added, and unrelated texts.
fn relation_texts(seed: u64, n: usize) -> Vec<String> {
    let mut rng = Rng(seed);
    let vocab: Vec<String> = (0..60)
        .map(|i| format!("w{}", char::from(b'a' + (i % 26) as u8)).repeat(1 + i / 26))
        .collect();
    let word = |rng: &mut Rng| vocab[rng.below(vocab.len() as u64) as usize].clone();
    let boiler = "the library holds utility functions developed for the project which are \
        useful to other programs in the sphere of mobile communications";
    let mut texts: Vec<String> = Vec::new();
    for i in 0..n {
        let earlier =
            |rng: &mut Rng, texts: &[String]| texts[rng.below(texts.len() as u64) as usize].clone();
        let text = match (i % 6, texts.is_empty()) {
            (0, _) | (_, true) => {
                let name = word(&mut rng);
                let v = rng.below(40);
                format!(
                    "bindings for the {name} library feature v3_{v} this metapackage enables \
                     feature v3_{v} for the {name} crate by pulling in any dependencies"
                )
            }
            (1, _) => {
                let own: Vec<String> = (0..4 + rng.below(16)).map(|_| word(&mut rng)).collect();
                format!("{boiler} {}", own.join(" "))
            }
            (2, _) => earlier(&mut rng, &texts),
            (3, _) => {
                let mut w: Vec<String> =
                    earlier(&mut rng, &texts).split(' ').map(str::to_string).collect();
                for _ in 0..=rng.below(2) {
                    let at = rng.below(w.len() as u64) as usize;
                    w[at] = word(&mut rng);
                }
                w.join(" ")
            }
            (4, _) => {
                let added: Vec<String> = (0..3 + rng.below(12)).map(|_| word(&mut rng)).collect();
                format!("{} {}", earlier(&mut rng, &texts), added.join(" "))
            }
            _ => (0..20).map(|_| word(&mut rng)).collect::<Vec<_>>().join(" "),
        };
        texts.push(text);
    }
    texts
}

/// Every match [`find_matches`] finds, and whether each is a copy.
struct AllFound(Vec<(u32, u32, f64, bool)>);

impl MatchSink for AllFound {
    fn duplicate(&mut self, doc: u32, of: u32) {
        self.0.push((of, doc, 1.0, true));
    }
    fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
        self.0.push((a, b, jaccard, false));
    }
}

#[test]
fn relations_agree_with_brute_force_at_any_thread_count() {
    let mut texts = relation_texts(7, 240);
    // And records that share a boilerplate, each with a sentence of its own.
    let mut flood = own_flood::OwnFlood::new();
    texts.extend((0..30).map(|_| flood.document()));
    let fp = simhash_core::Fingerprinter::new();
    let banding = Banding::for_threshold(0.3, 128).unwrap();
    let sketcher = Sketcher::new(simhash_core::MinHasher::new(128, 0), banding).unwrap();
    let sketches: Vec<DocSketch> =
        texts.iter().map(|t| sketcher.sketch(&fp, t).1.expect("features")).collect();
    let mut store = MemoryStore::new(banding.bands);
    for s in &sketches {
        store.push(Some(s)).unwrap();
    }
    store.finish().unwrap();
    let n = texts.len();
    let share =
        |a: usize, b: usize| sketches[a].bands.iter().zip(&sketches[b].bands).any(|(x, y)| x == y);
    let same_set = |a: usize, b: usize| sketches[a].set == sketches[b].set;
    let jaccard = |a: usize, b: usize| simhash_core::jaccard(&sketches[a].set, &sketches[b].set);
    let mut rng = Rng(99);
    let mut shuffled: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let (mut seen, mut spared, mut known_kept, mut own_skipped, mut unlisted) =
        (std::collections::BTreeSet::new(), 0, 0, 0, 0);
    // Pairs both of whose records have content no other record of their component has.
    let reps = scan::collapse_identical(&store, None).unwrap().reps;
    let alone = scan::alone_records(&store, &reps).unwrap();
    let mut both_alone = 0;
    for t in [0.4, 0.6] {
        for templates in [Templates::Remove, Templates::Keep] {
            for rank in [(0..n as u32).collect::<Vec<u32>>(), shuffled.clone()] {
                // The brute-force walk: every kept text, in priority order.
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by_key(|&d| (rank[d], d));
                let (mut center, mut relations) =
                    ((0..n as u32).collect::<Vec<u32>>(), vec![Relation::Same; n]);
                let mut kept: Vec<usize> = Vec::new();
                for &d in &order {
                    let hit = kept.iter().find_map(|&k| {
                        if same_set(d, k) {
                            return Some((k, Relation::Same));
                        }
                        let r = relation(&sketches[d].tokens, &sketches[k].tokens);
                        (share(d, k) && jaccard(d, k) >= t && templates.acts_on(r))
                            .then_some((k, r))
                    });
                    match hit {
                        Some((k, r)) => {
                            center[d] = k as u32;
                            relations[d] = r;
                            seen.insert(r);
                        }
                        None => kept.push(d),
                    }
                }
                for threads in [1, 2, 4] {
                    let pool =
                        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let (walked, stats) =
                        pool.install(|| walk(&store, t, &rank, templates)).unwrap();
                    spared += stats.spared;
                    known_kept += stats.known_kept;
                    own_skipped += stats.own_skipped;
                    unlisted += stats.unlisted;
                    assert!(stats.unlisted <= stats.known_kept, "{stats:?}");
                    // Counted once a record, and only for kept records.
                    let kept = (0..n).filter(|&d| walked.center[d] as usize == d).count();
                    assert!(stats.known_kept <= kept as u64, "{} known", stats.known_kept);
                    assert_eq!(walked.center, center, "t {t} {templates} -j{threads}");
                    assert_eq!(walked.relation, relations, "t {t} {templates} -j{threads}");
                    // `pairs`: every verified pair (each copy with its first) whose
                    // relation is acted on, as reading every found pair's relation gives.
                    let mut all = AllFound(Vec::new());
                    pool.install(|| find_matches(&store, t, &mut all)).unwrap();
                    let want: Vec<RelatedMatch> = all
                        .0
                        .iter()
                        .filter_map(|&(a, b, j, copy)| {
                            let r = if copy {
                                Relation::Same
                            } else {
                                pair_relation_in(&store, a as usize, b as usize).unwrap()
                            };
                            both_alone += usize::from(alone[a as usize] && alone[b as usize]);
                            templates.acts_on(r).then_some((a, b, j, r))
                        })
                        .collect();
                    let (got, _) = pool.install(|| related_matches(&store, t, templates)).unwrap();
                    assert_eq!(got, want, "pairs, t {t} {templates} -j{threads}");
                    let (edges, _) = pool.install(|| components(&store, t, templates)).unwrap();
                    let mut uf = Uf::new(n);
                    for (a, b) in edges {
                        uf.union(a, b);
                    }
                    let mut want = Uf::new(n);
                    for a in 0..n {
                        for b in a + 1..n {
                            let acted = same_set(a, b)
                                || (share(a, b)
                                    && jaccard(a, b) >= t
                                    && templates.acts_on(pair_relation(
                                        &sketches[a].tokens,
                                        &sketches[b].tokens,
                                    )));
                            if acted {
                                want.union(a as u32, b as u32);
                            }
                        }
                    }
                    let got: Vec<u32> = (0..n as u32).map(|d| uf.find(d)).collect();
                    let exp: Vec<u32> = (0..n as u32).map(|d| want.find(d)).collect();
                    assert!(
                        same_partition(&got, &exp),
                        "components, t {t} {templates} -j{threads}"
                    );
                }
            }
        }
    }
    // The texts made every relation that is acted on, and pairs that verify but overlap.
    assert!(seen.contains(&Relation::Same) && seen.contains(&Relation::Template), "{seen:?}");
    assert!(spared > 0, "no verified pair was spared");
    // And records known to be kept by content no kept record has.
    assert!(known_kept > 0, "no record was known to be kept");
    // And kept records not compared, for the content a record had of its own.
    assert!(own_skipped > 0, "no comparison was skipped for own content");
    // And pairs of two records with content no other has, not listed.
    assert!(both_alone > 0, "no pair of records alone");
    // And records kept without listing their many candidates.
    assert!(unlisted > 0, "no record was known to be kept before its candidates were listed");
}
