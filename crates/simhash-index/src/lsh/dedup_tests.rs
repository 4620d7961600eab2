//! [`MinHashDedup`] against brute force: every pair with an exact Jaccard of at least the
//! threshold among those sharing a band, a naive sequential walk, and the components of
//! those pairs; on random and adversarial documents, floods, tiny and empty documents, in
//! memory and spilled, at several thread counts.

use super::search_tests::{Rng, Uf, adversarial_docs, random_docs};
use super::*;

/// What brute force decides, from each document's shingle set and band hashes.
struct Oracle {
    sets: Vec<Vec<u64>>,
    bands: Vec<Vec<u32>>,
    t: f64,
    /// Per document, the documents it matches ([`Oracle::brute`]) with the similarity,
    /// ascending: every pair compared once, by brute force, when the oracle is made (the
    /// walks, pairs and clusters below then look pairs up, where comparing them again
    /// took most of the flood tests' time).
    matched: Vec<Vec<(usize, f64)>>,
}

impl Oracle {
    fn new(sketcher: &Sketcher, docs: &[Vec<u64>], t: f64) -> Oracle {
        let sketches: Vec<Option<DocSketch>> =
            docs.iter().map(|d| sketcher.sketch_shingles(d.iter().copied())).collect();
        let mut oracle = Oracle {
            sets: sketches
                .iter()
                .map(|s| s.as_ref().map(|s| s.set().to_vec()).unwrap_or_default())
                .collect(),
            bands: sketches
                .iter()
                .map(|s| s.as_ref().map(|s| s.bands().to_vec()).unwrap_or_default())
                .collect(),
            t,
            matched: Vec::new(),
        };
        let n = docs.len();
        let mut matched = vec![Vec::new(); n];
        for b in 0..n {
            for a in 0..b {
                if let Some(j) = oracle.brute(a, b) {
                    matched[a].push((b, j));
                    matched[b].push((a, j));
                }
            }
        }
        oracle.matched = matched;
        oracle
    }

    fn identical(&self, a: usize, b: usize) -> bool {
        !self.sets[a].is_empty() && self.sets[a] == self.sets[b]
    }

    /// A candidate pair that verifies (identical sets always do).
    fn brute(&self, a: usize, b: usize) -> Option<f64> {
        if self.sets[a].is_empty() || self.sets[b].is_empty() {
            return None;
        }
        let share = self.bands[a].iter().zip(&self.bands[b]).any(|(x, y)| x == y);
        if !share && !self.identical(a, b) {
            return None;
        }
        let j = simhash_core::jaccard(&self.sets[a], &self.sets[b]);
        (j >= self.t).then_some(j)
    }

    /// [`Oracle::brute`] of `a` and `b`, as computed when the oracle was made.
    fn matches(&self, a: usize, b: usize) -> Option<f64> {
        let m = &self.matched[a];
        m.binary_search_by_key(&b, |e| e.0).ok().map(|i| m[i].1)
    }

    /// The first earlier document with the same set, if any.
    fn first_copy(&self, d: usize) -> Option<usize> {
        (0..d).find(|&e| self.identical(e, d))
    }

    fn pairs(&self) -> Vec<SimilarPair> {
        let n = self.sets.len();
        let mut out = Vec::new();
        for b in 0..n {
            if let Some(a) = self.first_copy(b) {
                out.push(SimilarPair { a, b, jaccard: 1.0, relation: Relation::Same });
                continue;
            }
            for a in (0..b).filter(|&a| self.first_copy(a).is_none()) {
                if let Some(jaccard) = self.matches(a, b) {
                    out.push(SimilarPair { a, b, jaccard, relation: Relation::Same });
                }
            }
        }
        out.sort_by_key(|p| (p.a, p.b));
        out
    }

    /// The naive walk: each document against every kept one, in priority order.
    fn dedup(&self, rank: &[u32]) -> Vec<Decision> {
        let n = self.sets.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&d| rank[d]);
        let mut out = vec![Decision::Keep; n];
        let mut kept: Vec<usize> = Vec::new();
        for d in order {
            match kept.iter().find_map(|&k| self.matches(d, k).map(|j| (k, j))) {
                Some((of, jaccard)) => {
                    out[d] = Decision::Duplicate { of, jaccard, relation: Relation::Same }
                }
                None => kept.push(d),
            }
        }
        out
    }

    fn clusters(&self) -> Vec<Vec<usize>> {
        let n = self.sets.len();
        let mut uf = Uf::new(n);
        for a in 0..n {
            for b in a + 1..n {
                if self.matches(a, b).is_some() {
                    uf.union(a as u32, b as u32);
                }
            }
        }
        let mut by_root = std::collections::BTreeMap::<u32, Vec<usize>>::new();
        for d in 0..n {
            by_root.entry(uf.find(d as u32)).or_default().push(d);
        }
        let mut out: Vec<Vec<usize>> = by_root.into_values().collect();
        out.sort();
        out
    }
}

fn engine(t: f64, spill: bool, docs: &[Vec<u64>]) -> MinHashDedup {
    let mut dedup = MinHashDedup::builder().jaccard(t).spill_to_disk(spill).build().unwrap();
    let range = dedup.extend_shingles(docs).unwrap();
    assert_eq!(range, 0..docs.len());
    dedup
}

fn shuffled(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = Rng(seed);
    let mut rank: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        rank.swap(i, rng.below(i as u64 + 1) as usize);
    }
    rank
}

#[test]
fn pairs_dedup_and_clusters_agree_with_brute_force() {
    for (seed, docs) in
        [(1, random_docs(0xfeed, 220)), (2, adversarial_docs(11)), (3, random_docs(0xabc, 90))]
    {
        let n = docs.len();
        for t in [0.4, 0.75] {
            let mut dedup = engine(t, false, &docs);
            let oracle = Oracle::new(dedup.sketcher(), &docs, t);
            let want_pairs = oracle.pairs();
            assert!(!want_pairs.is_empty());
            let identity: Vec<u32> = (0..n as u32).collect();
            let rank = shuffled(n, seed);
            let want_clusters = oracle.clusters();
            for threads in [1, 2, 4] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    assert_eq!(dedup.pairs().unwrap(), want_pairs, "seed {seed} t {t}");
                    assert_eq!(dedup.dedup().unwrap(), oracle.dedup(&identity));
                    assert_eq!(dedup.dedup_by_rank(&rank).unwrap(), oracle.dedup(&rank));
                    assert_eq!(dedup.clusters().unwrap(), want_clusters);
                });
            }
        }
    }
}

/// Families of tiny sets (3 to 6 values, each a variant of its family's five): the walk's
/// kept records soon outgrow the sets it holds (a few dozen values in tests), so records
/// kept within a chunk are compared from the sets the chunk holds, or read back.
#[test]
fn tiny_sets_past_the_held_budget() {
    let mut rng = Rng(77);
    let docs: Vec<Vec<u64>> = (0..400u64)
        .map(|d| {
            let family = d % 23;
            let mut set: Vec<u64> = (0..5).map(|v| family * 10 + v).collect();
            set.retain(|_| rng.below(5) != 0);
            set.extend((0..rng.below(3)).map(|_| 1_000 + rng.below(40)));
            set
        })
        .collect();
    for t in [0.4, 0.6] {
        let mut dedup = engine(t, false, &docs);
        let oracle = Oracle::new(dedup.sketcher(), &docs, t);
        let identity: Vec<u32> = (0..docs.len() as u32).collect();
        let rank = shuffled(docs.len(), 5);
        let want = oracle.dedup(&identity);
        // Many records removed, and not only as exact copies.
        let near = want
            .iter()
            .filter(|d| matches!(d, Decision::Duplicate { jaccard, .. } if *jaccard < 1.0))
            .count();
        assert!(near > 50, "{near}");
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                assert_eq!(dedup.dedup().unwrap(), want, "t {t}");
                assert_eq!(dedup.dedup_by_rank(&rank).unwrap(), oracle.dedup(&rank), "t {t}");
            });
        }
    }
}

#[test]
fn spilled_and_in_memory_engines_agree() {
    let docs = adversarial_docs(5);
    let (mut memory, mut spilled) = (engine(0.4, false, &docs), engine(0.4, true, &docs));
    let rank = shuffled(docs.len(), 9);
    assert_eq!(memory.pairs().unwrap(), spilled.pairs().unwrap());
    assert_eq!(memory.stats(), spilled.stats());
    assert_eq!(memory.dedup_by_rank(&rank).unwrap(), spilled.dedup_by_rank(&rank).unwrap());
    assert_eq!(memory.clusters().unwrap(), spilled.clusters().unwrap());
    // The memory store takes more documents after a search; the spilled one refuses them.
    assert_eq!(memory.add_shingles([1, 2, 3]).unwrap(), docs.len());
    assert_eq!(memory.dedup().unwrap().len(), docs.len() + 1);
    let err = spilled.add_shingles([1, 2, 3]).unwrap_err();
    assert_eq!(err.kind(), EngineErrorKind::Finished);
}

#[test]
fn a_flood_of_identical_documents() {
    let docs = vec![(0..30).collect::<Vec<u64>>(); 10_000];
    let mut dedup = engine(0.5, false, &docs);
    let decisions = dedup.dedup().unwrap();
    assert_eq!(decisions[0], Decision::Keep);
    assert!(
        decisions[1..]
            .iter()
            .all(|d| *d == Decision::Duplicate { of: 0, jaccard: 1.0, relation: Relation::Same })
    );
    assert_eq!((dedup.stats().duplicates, dedup.stats().verified), (9_999, 0));
    let pairs = dedup.pairs().unwrap();
    assert_eq!(pairs.len(), 9_999);
    assert!(pairs.iter().enumerate().all(|(i, p)| (p.a, p.b, p.jaccard) == (0, i + 1, 1.0)));
    assert_eq!(dedup.clusters().unwrap(), [(0..10_000).collect::<Vec<usize>>()]);
    // The last document first: it is kept, and the others are its duplicates.
    let mut rank: Vec<u32> = vec![1; 10_000];
    rank[9_999] = 0;
    let decisions = dedup.dedup_by_rank(&rank).unwrap();
    assert_eq!(decisions[9_999], Decision::Keep);
    assert!(
        decisions[..9_999].iter().all(
            |d| *d == Decision::Duplicate { of: 9_999, jaccard: 1.0, relation: Relation::Same }
        )
    );
}

/// Short documents sharing a phrase (as titles and short posts do): four shingles each,
/// two of their own, one shared with the documents of their group and the phrase's,
/// shared with all (Jaccard 1/7, a band shared about one time in ten), and every tenth a
/// near-copy of the one before. The walk agrees with brute force and verifies a few
/// candidates a document, not a tenth of the corpus.
#[test]
fn short_documents_sharing_a_phrase() {
    let n = 3_000u64;
    let docs: Vec<Vec<u64>> = (0..n)
        .map(|i| {
            let own = if i % 10 == 9 { i - 1 } else { i };
            let mut set = vec![10_000 + 3 * own, 10_000 + 3 * own + 1, 1_000 + own % 500, 7];
            if i % 10 == 9 {
                set[1] = 5_000_000 + i; // Jaccard 3/5 with the one before
            }
            set.sort_unstable();
            set
        })
        .collect();
    for (t, spill) in [(0.4, false), (0.6, false), (0.4, true)] {
        let mut dedup = engine(t, spill, &docs);
        let oracle = Oracle::new(dedup.sketcher(), &docs, t);
        let identity: Vec<u32> = (0..n as u32).collect();
        let rank = shuffled(n as usize, 3);
        let want = oracle.dedup(&identity);
        let want_ranked = oracle.dedup(&rank);
        let removed = want.iter().filter(|d| !d.is_keep()).count();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                assert_eq!(dedup.dedup().unwrap(), want, "t {t}");
                let candidates = dedup.stats().candidates;
                assert!(candidates < 10 * n, "t {t}: {candidates} candidates");
                assert_eq!(dedup.dedup_by_rank(&rank).unwrap(), want_ranked, "t {t}");
            });
        }
        // The near-copies share a band with their original most of the time.
        assert!(removed > 200, "t {t}: {removed}");
        // No two sets are equal, so every verified pair is one brute force finds.
        let mut want_pairs = Vec::new();
        for b in 0..n as usize {
            for a in 0..b {
                if let Some(jaccard) = oracle.matches(a, b) {
                    want_pairs.push(SimilarPair { a, b, jaccard, relation: Relation::Same });
                }
            }
        }
        assert_eq!(dedup.pairs().unwrap(), want_pairs, "t {t}");
        assert!(dedup.stats().candidates < 10 * n, "t {t}: {:?}", dedup.stats());
        assert_eq!(dedup.clusters().unwrap(), oracle.clusters(), "t {t}");
        assert!(dedup.stats().candidates < 10 * n, "t {t}: {:?}", dedup.stats());
    }
}

#[test]
fn tiny_and_empty_documents() {
    let mut dedup = MinHashDedup::new().unwrap();
    let texts = ["", "   ", "hello", "hello", "hello world", "", "world"];
    for text in texts {
        dedup.add_text(text).unwrap();
    }
    assert_eq!(dedup.add_shingles([]).unwrap(), texts.len());
    let decisions = dedup.dedup().unwrap();
    // Empty documents match nothing, not even each other.
    for d in [0, 1, 5, 7] {
        assert_eq!(decisions[d], Decision::Keep, "{d}");
    }
    assert_eq!(decisions[3], Decision::Duplicate { of: 2, jaccard: 1.0, relation: Relation::Same });
    let pairs = dedup.pairs().unwrap();
    assert!(pairs.contains(&SimilarPair { a: 2, b: 3, jaccard: 1.0, relation: Relation::Same }));
    assert!(pairs.iter().all(|p| ![0, 1, 5, 7].contains(&p.a) && ![0, 1, 5, 7].contains(&p.b)));
    let clusters = dedup.clusters().unwrap();
    assert_eq!(clusters.iter().map(Vec::len).sum::<usize>(), 8);
    assert!(clusters.contains(&vec![0]) && clusters.contains(&vec![7]));
    // Nothing added: nothing decided.
    let mut empty = MinHashDedup::new().unwrap();
    assert!(empty.dedup().unwrap().is_empty() && empty.pairs().unwrap().is_empty());
    assert!(empty.clusters().unwrap().is_empty());
}

#[test]
fn bulk_adds_equal_one_at_a_time() {
    let texts: Vec<String> = (0..300)
        .map(|i| {
            format!("record {} of a template shared by many documents, variant {}", i % 7, i % 13)
        })
        .collect();
    let mut one = MinHashDedup::new().unwrap();
    for t in &texts {
        one.add_text(t).unwrap();
    }
    let mut bulk = MinHashDedup::new().unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    assert_eq!(pool.install(|| bulk.extend_texts(&texts)).unwrap(), 0..300);
    let decisions = one.dedup().unwrap();
    assert_eq!(decisions, bulk.dedup().unwrap());
    assert!(decisions.iter().filter(|d| d.is_keep()).count() < 300);
    assert_eq!(one.pairs().unwrap(), bulk.pairs().unwrap());
}

#[test]
fn bad_settings_are_typed_errors() {
    for j in [0.0, -1.0, 1.5, f64::NAN] {
        let err = MinHashDedup::builder().jaccard(j).build().unwrap_err();
        assert_eq!(err.kind(), EngineErrorKind::Config, "{j}");
        assert!(err.to_string().starts_with("jaccard ("), "{err}");
    }
    let err = MinHashDedup::builder().lsh_threshold(1.0).build().unwrap_err();
    assert_eq!(err.kind(), EngineErrorKind::Config);
    let source = std::error::Error::source(&err).expect("the LSH error");
    assert!(source.to_string().contains("threshold"), "{source}");
    // num_perm is clamped like every size setting: 0 is one slot (and one band of one row).
    let mut one = MinHashDedup::builder().num_perm(0).build().unwrap();
    one.add_text("one slot").unwrap();
    assert_eq!(one.dedup().unwrap().len(), 1);
    let mh = simhash_core::MinHasher::new(16, 0);
    let err = Sketcher::new(mh, Banding::new(5, 4).unwrap()).unwrap_err();
    assert_eq!(err.to_string(), "bands × rows (5 × 4) exceeds num_perm (16)");
    let mut dedup = MinHashDedup::new().unwrap();
    dedup.add_text("some text").unwrap();
    assert_eq!(dedup.dedup_by_rank(&[0, 1]).unwrap_err().kind(), EngineErrorKind::Mismatch);
}

#[test]
fn the_engine_crosses_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Sketcher>();
    send_sync::<MinHashDedup>();
    send_sync::<MemoryStore>();
    send_sync::<SpillStore>();
    send_sync::<EngineError>();
}

/// The online index and the batch engine find the same verified pairs: inserting documents
/// one by one and querying each before its insert lists, for every document, exactly the
/// earlier documents the engine pairs it with (among documents with distinct sets: the
/// engine pairs a copy with its first only).
#[test]
fn online_index_finds_the_engines_pairs() {
    for (seed, docs) in [(1, random_docs(11, 300)), (2, adversarial_docs(5))] {
        let (jaccard, lsh_threshold, num_perm) = (0.5, 0.3, 64);
        let mut distinct: Vec<Vec<u64>> = Vec::new();
        for doc in docs {
            let set = simhash_core::shingle_set(doc.iter().copied());
            if !set.is_empty() && !distinct.contains(&set) {
                distinct.push(set);
            }
        }
        let mut engine = MinHashDedup::builder()
            .jaccard(jaccard)
            .lsh_threshold(lsh_threshold)
            .num_perm(num_perm)
            .build()
            .unwrap();
        engine.extend_shingles(&distinct).unwrap();
        let want: Vec<(usize, usize)> =
            engine.pairs().unwrap().iter().map(|p| (p.a, p.b)).collect();
        let banding = Banding::for_threshold(lsh_threshold, num_perm).unwrap();
        let minhasher = simhash_core::MinHasher::new(num_perm, DEFAULT_SEED);
        let mut index: MinHashIndex<usize> =
            MinHashIndex::with_parts(minhasher, banding, jaccard).unwrap();
        let mut got = Vec::new();
        for (i, set) in distinct.iter().enumerate() {
            got.extend(index.query(set.iter().copied()).iter().map(|h| (h.id, i)));
            index.insert(i, set.iter().copied());
        }
        got.sort_unstable();
        assert!(!want.is_empty(), "seed {seed}: the fixture has pairs");
        assert_eq!(got, want, "seed {seed}");
    }
}
