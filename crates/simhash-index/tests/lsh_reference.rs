//! The MinHash LSH engine against a naive reference of the documented definitions
//! (`simhash-core`'s `tests/minhash_reference/naive.rs`): the sketches' shingle sets, band
//! hashes and 32-bit band keys; `MinHashDedup`'s pairs, decisions and clusters against a
//! brute-force oracle that takes its sets, signatures and band keys from the reference
//! only (never from the engine's sketcher); `MinHashIndex` queries likewise; and the
//! `slots` and `bands` lines of `simhash explain`'s golden files.

#![allow(clippy::float_cmp)] // exact ratios of small integers

#[path = "../../simhash-core/tests/minhash_reference/naive.rs"]
#[allow(dead_code)] // the core tests use the rest
mod naive;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use naive::{Naive, Rng};
use simhash_core::{Fingerprinter, MinHasher};
use simhash_index::lsh::{
    BandKeyWidth, Banding, DEFAULT_NUM_PERM, DEFAULT_SEED, Decision, MINHASH_INDEX_SEED,
    MinHashDedup, MinHashIndex, Relation, SimilarPair, Sketcher,
};

/// The reference's sketch of a document: its set and, when it has features, its band
/// hashes.
struct RefSketch {
    set: BTreeSet<u64>,
    hashes: Option<Vec<u64>>,
}

impl RefSketch {
    fn new(naive: &Naive, banding: Banding, doc: &[u64]) -> RefSketch {
        let hashes = naive
            .signature(doc.iter().copied())
            .map(|sig| naive::band_hashes(&sig, banding.bands, banding.rows));
        RefSketch { set: doc.iter().copied().collect(), hashes }
    }

    /// The 32-bit band keys; empty without features.
    fn keys(&self) -> Vec<u32> {
        self.hashes.iter().flatten().map(|&h| naive::band_key(h)).collect()
    }
}

/// A random corpus of `n` shingle lists: families of near-copies (one of them large), a
/// stock phrase some share, exact copies (reordered, repeated), one-shingle documents,
/// empty ones, extreme hashes, and hashes that agree in 32 bits only.
fn corpus(seed: u64, n: usize) -> Vec<Vec<u64>> {
    let mut rng = Rng(seed);
    let phrase: Vec<u64> = (0..6).map(|_| rng.next()).collect();
    let families: Vec<Vec<u64>> = (0..24)
        .map(|f| {
            let size = [1, 2, 3, 4, 5, 6, 8, 10, 16, 30, 60, 120][f % 12];
            (0..size)
                .map(|i| match rng.below(8) {
                    0 => u64::MAX - i,
                    1 => (1 << 32) | i,
                    2 => i,
                    _ => rng.next(),
                })
                .collect()
        })
        .collect();
    let mut docs: Vec<Vec<u64>> = Vec::with_capacity(n);
    for _ in 0..n {
        let doc = match rng.below(24) {
            0 => Vec::new(),
            1 | 2 if !docs.is_empty() => {
                let earlier = &docs[rng.below(docs.len() as u64) as usize];
                let mut copy: Vec<u64> = earlier.iter().rev().copied().collect();
                copy.extend(earlier.iter().take(2));
                copy
            }
            3 => vec![[0, 1, u64::MAX, 1 << 32, rng.next()][rng.below(5) as usize]],
            r => {
                let f = if r < 9 { 0 } else { rng.below(families.len() as u64) as usize };
                let mut doc: Vec<u64> =
                    families[f].iter().copied().filter(|_| rng.below(100) < 85).collect();
                doc.extend((0..rng.below(3)).map(|_| rng.next()));
                if rng.below(4) == 0 {
                    doc.extend(&phrase[..2 + rng.below(4) as usize]);
                }
                doc
            }
        };
        docs.push(doc);
    }
    docs
}

/// Brute force over the reference's sketches, from the documented behaviour of
/// `MinHashDedup`.
struct Oracle {
    sketches: Vec<RefSketch>,
    keys: Vec<Vec<u32>>,
    t: f64,
    /// Per document, every other it verifies with and their Jaccard similarity, ascending.
    verified: Vec<Vec<(usize, f64)>>,
    /// Per document, the first document with the same (non-empty) set, when earlier.
    first_copy: Vec<Option<usize>>,
}

impl Oracle {
    fn new(naive: &Naive, banding: Banding, docs: &[Vec<u64>], t: f64) -> Oracle {
        let sketches: Vec<RefSketch> =
            docs.iter().map(|d| RefSketch::new(naive, banding, d)).collect();
        let keys: Vec<Vec<u32>> = sketches.iter().map(RefSketch::keys).collect();
        let n = docs.len();
        let mut verified = vec![Vec::new(); n];
        for b in 0..n {
            for a in 0..b {
                if sketches[a].set.is_empty() || sketches[b].set.is_empty() {
                    continue;
                }
                // Candidates: a band key in common (at the same band), or the same set.
                let meet = (0..banding.bands).any(|i| keys[a][i] == keys[b][i]);
                if !meet && sketches[a].set != sketches[b].set {
                    continue;
                }
                let j = naive::jaccard(&sketches[a].set, &sketches[b].set);
                if j >= t {
                    verified[a].push((b, j));
                    verified[b].push((a, j));
                }
            }
        }
        for v in &mut verified {
            v.sort_by_key(|&(d, _)| d);
        }
        let mut first = BTreeMap::new();
        let first_copy = (0..n)
            .map(|d| {
                let set = &sketches[d].set;
                if set.is_empty() {
                    return None;
                }
                let f = *first.entry(set).or_insert(d);
                (f < d).then_some(f)
            })
            .collect();
        Oracle { sketches, keys, t, verified, first_copy }
    }

    fn verifies(&self, a: usize, b: usize) -> Option<f64> {
        let v = &self.verified[a];
        v.binary_search_by_key(&b, |&(d, _)| d).ok().map(|i| v[i].1)
    }

    fn first_copy(&self, d: usize) -> Option<usize> {
        self.first_copy[d]
    }

    /// `pairs`: each copy with the first document of its set, and the verified pairs among
    /// first documents; relation `Same` (shingles have no tokens).
    fn pairs(&self) -> Vec<SimilarPair> {
        let mut out = Vec::new();
        for b in 0..self.sketches.len() {
            if let Some(a) = self.first_copy(b) {
                out.push(SimilarPair { a, b, jaccard: 1.0, relation: Relation::Same });
                continue;
            }
            for &(a, jaccard) in &self.verified[b] {
                if a < b && self.first_copy(a).is_none() {
                    out.push(SimilarPair { a, b, jaccard, relation: Relation::Same });
                }
            }
        }
        out.sort_by_key(|p| (p.a, p.b));
        out
    }

    /// The walk: documents by rank (ties in insertion order), each a duplicate of the
    /// first kept document it verifies with, else kept.
    fn dedup(&self, rank: &[u32]) -> Vec<Decision> {
        let n = self.sketches.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&d| (rank[d], d));
        let mut out = vec![Decision::Keep; n];
        let mut kept: Vec<usize> = Vec::new();
        for d in order {
            match kept.iter().find_map(|&k| self.verifies(d, k).map(|j| (k, j))) {
                Some((of, jaccard)) => {
                    out[d] = Decision::Duplicate { of, jaccard, relation: Relation::Same };
                }
                None => kept.push(d),
            }
        }
        out
    }

    /// Connected components of the verified pairs, each ascending, by first member.
    fn clusters(&self) -> Vec<Vec<usize>> {
        let n = self.sketches.len();
        let mut seen = vec![false; n];
        let mut out = Vec::new();
        for start in 0..n {
            if seen[start] {
                continue;
            }
            seen[start] = true;
            let mut cluster = vec![start];
            let mut queue = VecDeque::from([start]);
            while let Some(d) = queue.pop_front() {
                for &(e, _) in &self.verified[d] {
                    if !seen[e] {
                        seen[e] = true;
                        cluster.push(e);
                        queue.push_back(e);
                    }
                }
            }
            cluster.sort_unstable();
            out.push(cluster);
        }
        out
    }
}

/// Asserts `got == want`, naming the first entries that differ (not the whole lists).
fn same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    if got != want {
        let at = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)).unwrap();
        panic!(
            "{what}: {} entries, want {}; from {at}: got {:?}, want {:?}",
            got.len(),
            want.len(),
            &got[at.min(got.len())..(at + 3).min(got.len())],
            &want[at.min(want.len())..(at + 3).min(want.len())],
        );
    }
}

/// The engine's settings under test: slots, seed, LSH threshold, Jaccard threshold.
const SETTINGS: [(usize, u64, f64, f64); 4] = [
    (DEFAULT_NUM_PERM, DEFAULT_SEED, 0.3, 0.4),
    (64, 7, 0.5, 0.5),
    (100, u64::MAX, 0.7, 0.75),
    (32, 3, 0.2, 1.0 / 3.0),
];

/// The engine with these settings, its sketches in memory or spilled to temporary files.
fn engine(num_perm: usize, seed: u64, lsh: f64, t: f64, spill: bool) -> MinHashDedup {
    MinHashDedup::builder()
        .num_perm(num_perm)
        .seed(seed)
        .lsh_threshold(lsh)
        .jaccard(t)
        .spill_to_disk(spill)
        .build()
        .unwrap()
}

/// Checks a sketcher's sketches of `docs` against the reference's.
fn check_sketches(sketcher: &Sketcher, naive: &Naive, docs: &[Vec<u64>], what: &str) {
    let banding = sketcher.banding();
    let wide = sketcher.band_keys() != BandKeyWidth::Bits32;
    for (d, doc) in docs.iter().enumerate() {
        let want = RefSketch::new(naive, banding, doc);
        let got = sketcher.sketch_shingles(doc.iter().copied());
        let Some(got) = got else {
            assert!(want.hashes.is_none(), "{what}: doc {d} has features");
            continue;
        };
        let hashes = want.hashes.as_ref().unwrap_or_else(|| panic!("{what}: doc {d} has none"));
        assert!(got.set().iter().copied().eq(want.set.iter().copied()), "{what}: doc {d} set");
        assert_eq!(got.bands(), want.keys(), "{what}: doc {d} band keys");
        if wide {
            assert_eq!(got.band_hashes().as_ref(), Some(hashes), "{what}: doc {d} band hashes");
        } else {
            assert_eq!(got.band_hashes(), None, "{what}: doc {d}");
        }
    }
}

#[test]
fn sketches_equal_the_reference() {
    let docs = corpus(1, 300);
    for (num_perm, seed, lsh, t) in SETTINGS {
        let dedup = engine(num_perm, seed, lsh, t, false);
        let naive = Naive::new(num_perm, seed);
        let sketcher = dedup.sketcher();
        assert_eq!(sketcher.minhasher().num_perm(), naive.k());
        check_sketches(sketcher, &naive, &docs, &format!("engine {num_perm}/{seed}"));
        let narrow = sketcher.clone().with_band_keys(BandKeyWidth::Bits32);
        check_sketches(&narrow, &naive, &docs, &format!("32-bit {num_perm}/{seed}"));
    }
    // Bandings of every shape, odd and even rows, fewer slots used than there are.
    for (bands, rows) in [(1, 1), (1, 7), (3, 2), (9, 5), (16, 8), (128, 1), (1, 128), (2, 45)] {
        let sketcher = Sketcher::new(MinHasher::new(128, 9), Banding::new(bands, rows).unwrap());
        check_sketches(&sketcher.unwrap(), &Naive::new(128, 9), &docs[..60], "banding");
    }
    // The online index sketches the same way, with its seed.
    let index: MinHashIndex<u32> = MinHashIndex::new(0.5, 128).unwrap();
    check_sketches(index.sketcher(), &Naive::new(128, MINHASH_INDEX_SEED), &docs, "index");
}

#[test]
fn dedup_agrees_with_the_reference_oracle() {
    for (c, (num_perm, seed, lsh, t)) in SETTINGS.into_iter().enumerate() {
        let docs = corpus(100 + c as u64, 260);
        let mut dedup = engine(num_perm, seed, lsh, t, c == 1);
        assert_eq!(dedup.extend_shingles(&docs).unwrap(), 0..docs.len());
        let oracle = Oracle::new(&Naive::new(num_perm, seed), dedup.sketcher().banding(), &docs, t);
        let pairs = oracle.pairs();
        let mut rng = Rng(seed ^ 5);
        let rank: Vec<u32> = (0..docs.len()).map(|_| rng.below(40) as u32).collect();
        // The corpus exercises what it should: copies, near-duplicates, LSH misses.
        let copies = pairs.iter().filter(|p| p.jaccard == 1.0).count();
        assert!(copies > 5 && pairs.len() > copies + 20, "{} pairs", pairs.len());
        let misses = (0..docs.len())
            .flat_map(|a| (0..a).map(move |b| (a, b)))
            .filter(|&(a, b)| {
                let (x, y) = (&oracle.sketches[a].set, &oracle.sketches[b].set);
                !x.is_empty()
                    && !y.is_empty()
                    && x != y
                    && naive::jaccard(x, y) >= oracle.t
                    && oracle.keys[a].iter().zip(&oracle.keys[b]).all(|(p, q)| p != q)
            })
            .count();
        let at_threshold = pairs.iter().filter(|p| p.jaccard == t).count();
        let what = format!(
            "settings {c}: {} pairs ({at_threshold} at the threshold), {misses} LSH misses",
            pairs.len()
        );
        assert!(misses > 0 && at_threshold > 0, "{what}");
        check_engine(&mut dedup, &oracle, &rank, &what);
    }
}

/// Asserts that the engine's pairs, decisions (in insertion order and by `rank`) and
/// clusters are the oracle's, at one thread and at three.
fn check_engine(dedup: &mut MinHashDedup, oracle: &Oracle, rank: &[u32], what: &str) {
    let identity: Vec<u32> = (0..oracle.sketches.len() as u32).collect();
    let (pairs, clusters) = (oracle.pairs(), oracle.clusters());
    let (dedup_first, dedup_ranked) = (oracle.dedup(&identity), oracle.dedup(rank));
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let what = format!("{what}, {threads} threads");
            same(&dedup.pairs().unwrap(), &pairs, &format!("{what}: pairs"));
            same(&dedup.dedup().unwrap(), &dedup_first, &format!("{what}: dedup"));
            let ranked = dedup.dedup_by_rank(rank).unwrap();
            same(&ranked, &dedup_ranked, &format!("{what}: dedup by rank"));
            same(&dedup.clusters().unwrap(), &clusters, &format!("{what}: clusters"));
        });
    }
}

/// Thousands of short documents that share a phrase: one candidate component whose small
/// sets flood the band buckets (sets of 32 shingles or fewer, 2,048 or more of them), where
/// the engine finds candidates through its prefix index instead. Among them, families of
/// near-copies that verify, some exactly at the threshold, and copies.
#[test]
fn flood_of_short_documents_agrees_with_the_reference_oracle() {
    let mut rng = Rng(23);
    let phrase: Vec<u64> = (0..3).map(|_| rng.next()).collect();
    let docs: Vec<Vec<u64>> = (0..2600u64)
        .map(|d| {
            // The phrase, and at least two of the family's four shingles (families of six):
            // two families share at most the phrase, Jaccard 3/7 or less.
            let family: Vec<u64> = (0..4).map(|i| naive::mix(((d / 6) << 8) | i)).collect();
            let mut kept: Vec<u64> = family.iter().copied().filter(|_| rng.below(10) < 8).collect();
            if kept.len() < 2 {
                kept = family[..2].to_vec();
            }
            let mut doc = phrase.clone();
            // Some documents are the phrase alone, or with one shingle of their own: they
            // match others through the phrase, the most common shingles, which come last
            // in the prefix index's order.
            match d % 50 {
                0 | 25 => doc.push(rng.next()),
                10 => {}
                _ => {
                    doc.extend(kept);
                    doc.extend((0..rng.below(2)).map(|_| rng.next()));
                }
            }
            doc
        })
        .collect();
    let t = 0.5;
    let mut dedup = engine(DEFAULT_NUM_PERM, DEFAULT_SEED, 0.3, t, false);
    dedup.extend_shingles(&docs).unwrap();
    let oracle = Oracle::new(
        &Naive::new(DEFAULT_NUM_PERM, DEFAULT_SEED),
        dedup.sketcher().banding(),
        &docs,
        t,
    );
    let pairs = oracle.pairs();
    let at_threshold = pairs.iter().filter(|p| p.jaccard == t).count();
    let copies = pairs.iter().filter(|p| p.jaccard == 1.0).count();
    // Band pairs: the sum over bands of the pairs sharing that band's key.
    let band_pairs: usize = (0..oracle.keys[0].len())
        .map(|band| {
            let mut column: Vec<u32> = oracle.keys.iter().map(|k| k[band]).collect();
            column.sort_unstable();
            column.chunk_by(|a, b| a == b).map(|r| r.len() * (r.len() - 1) / 2).sum::<usize>()
        })
        .sum();
    let what = format!(
        "flood: {} pairs ({at_threshold} at the threshold, {copies} copies), {band_pairs} band pairs",
        pairs.len()
    );
    // A flood by the engine's measure (2^20 band pairs and 64 a set), of 2,048 distinct
    // small sets or more (copies are collapsed first).
    let distinct = oracle.first_copy.iter().filter(|f| f.is_none()).count();
    assert!(band_pairs > (1 << 20) + 64 * docs.len() && distinct > 2048 + 100, "{what}");
    assert!(at_threshold > 10 && copies > 10 && pairs.len() > at_threshold + copies, "{what}");
    let rank: Vec<u32> = (0..docs.len()).map(|_| rng.below(100) as u32).collect();
    check_engine(&mut dedup, &oracle, &rank, &what);
}

#[test]
fn index_queries_agree_with_the_reference() {
    let docs = corpus(7, 200);
    let t = 0.5;
    let mut index: MinHashIndex<usize> = MinHashIndex::new(t, 128).unwrap();
    index.insert_many(docs.iter().enumerate().map(|(d, doc)| (d, doc.iter().copied())));
    let naive = Naive::new(128, MINHASH_INDEX_SEED);
    let oracle = Oracle::new(&naive, index.banding(), &docs, t);
    let mut found = 0;
    for (q, doc) in docs.iter().enumerate() {
        // Every stored set (itself too) that shares a band key and reaches the threshold.
        let mut want: Vec<(usize, f64)> = oracle.verified[q].clone();
        if oracle.keys[q].len() == index.banding().bands {
            want.push((q, 1.0));
        }
        want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let got: Vec<(usize, f64)> =
            index.query(doc.iter().copied()).into_iter().map(|h| (h.id, h.jaccard)).collect();
        same(&got, &want, &format!("query {q}"));
        found += want.len();
    }
    assert!(found > docs.len(), "{found}");
}

/// A golden explain file's `settings`, `jaccard` and `bands` lines, as numbers.
struct ExplainGolden {
    num_perm: usize,
    banding: Banding,
    slots: usize,
    shared: usize,
    union: usize,
    bands_met: Vec<usize>,
}

fn parse_explain(text: &str) -> ExplainGolden {
    let line = |label: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label} line in {text}"))
    };
    let settings = line("settings  ");
    assert!(settings.contains("--method minhash --preset default-v1 --window 3 "), "{settings}");
    let word_after = |s: &str, before: &str| -> usize {
        let at = s.find(before).unwrap_or_else(|| panic!("{before:?} in {s}")) + before.len();
        s[at..].split([' ', ')']).next().unwrap().parse().unwrap()
    };
    let num_perm = word_after(settings, "--num-perm ");
    let banding =
        Banding::new(word_after(settings, "("), word_after(settings, "bands of ")).unwrap();
    let jaccard = line("jaccard   ");
    let slots = word_after(jaccard, "estimate (");
    assert!(jaccard.ends_with(&format!(" of {num_perm} slots)")), "{jaccard}");
    let shared = word_after(jaccard, "exact (");
    let union = word_after(jaccard, &format!("exact ({shared} of "));
    let bands = line("bands     ");
    let met = word_after(bands, "");
    let bands_met: Vec<usize> = match bands.split_once("meet: ") {
        Some((_, list)) => list.split(' ').map(|b| b.parse().unwrap()).collect(),
        None => Vec::new(),
    };
    assert_eq!(met, bands_met.len(), "{bands}");
    assert!(bands.starts_with(&format!("{met} of {} meet", banding.bands)), "{bands}");
    ExplainGolden { num_perm, banding, slots, shared, union, bands_met }
}

/// `simhash explain`'s golden files (blessed from the implementation): the slots the two
/// signatures agree on and the bands that meet are the reference's, from the shingles
/// `Fingerprinter::for_each_feature` gives (the default preset, window 3).
#[test]
fn explain_goldens_are_the_reference_values() {
    let corpus_file = include_str!("../../simhash-cli/tests/golden/corpus.jsonl");
    let record = |id: &str| -> String {
        corpus_file
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|r| match &r["id"] {
                serde_json::Value::String(s) => s == id,
                other => other.as_u64().is_some() && other.as_u64() == id.parse().ok(),
            })
            .and_then(|r| r["text"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no record {id}"))
    };
    let today = "the quick brown fox jumps over the lazy dog near the river bank today";
    let tonight = "the quick brown fox jumps over the lazy dog near the river bank tonight";
    // The goldens' A and B, as `tests/explain.rs` runs them.
    let cases: [(&str, String, String); 6] = [
        (
            include_str!("../../simhash-cli/tests/golden/explain-minhash-match.txt"),
            today.into(),
            tonight.into(),
        ),
        (
            include_str!("../../simhash-cli/tests/golden/explain-minhash-below-threshold.txt"),
            today.into(),
            tonight.into(),
        ),
        (
            include_str!("../../simhash-cli/tests/golden/explain-minhash-dissimilar.txt"),
            "the quick brown fox jumps over the lazy dog".into(),
            "a completely different sentence about ships and harbours".into(),
        ),
        (
            include_str!("../../simhash-cli/tests/golden/explain-featureless.txt"),
            String::new(),
            "some text".into(),
        ),
        (
            include_str!("../../simhash-cli/tests/golden/explain-ids-keep-longest.txt"),
            record("d1"),
            record("7"),
        ),
        (
            include_str!("../../simhash-cli/tests/golden/explain-ids-lowest-id.txt"),
            record("d2"),
            record("d1"),
        ),
    ];
    let fingerprinter = Fingerprinter::new();
    let features = |text: &str| {
        let mut out = Vec::new();
        fingerprinter.for_each_feature(text, |h, _| out.push(h));
        out
    };
    for (golden, a, b) in &cases {
        let want = parse_explain(golden);
        let naive = Naive::new(want.num_perm, DEFAULT_SEED);
        let (fa, fb) = (features(a), features(b));
        let (sa, sb) =
            (RefSketch::new(&naive, want.banding, &fa), RefSketch::new(&naive, want.banding, &fb));
        let common = sa.set.intersection(&sb.set).count();
        assert_eq!(
            (common, sa.set.len() + sb.set.len() - common),
            (want.shared, want.union),
            "{golden}"
        );
        let (siga, sigb) = (naive.signature(fa), naive.signature(fb));
        let slots = match (&siga, &sigb) {
            (Some(x), Some(y)) => naive::agreeing_slots(x, y),
            _ => 0,
        };
        assert_eq!(slots, want.slots, "slots, {golden}");
        let met: Vec<usize> = match (&sa.hashes, &sb.hashes) {
            (Some(x), Some(y)) => (0..x.len()).filter(|&i| x[i] == y[i]).collect(),
            _ => Vec::new(),
        };
        assert_eq!(met, want.bands_met, "bands, {golden}");
    }
}
