//! MinHash signatures in MB/s of text, next to fingerprinting the same text in the same run,
//! LSH candidate generation for a million documents, and the library's MinHash dedup engine
//! (`simhash_index::lsh::MinHashDedup`) end to end on 100k shingle sets (a hundredth of the
//! sizes in a smoke run, [`benches::smoke`]).

use std::hint::black_box;

use benches::SplitMix;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use simhash_core::{Fingerprinter, MinHasher, band_hashes, shingle_set_into};
use simhash_index::lsh::MinHashDedup;
use simhash_index::lsh::{Banding, candidate_pairs_with};

fn signatures(c: &mut Criterion) {
    let fp = Fingerprinter::new();
    let mh = MinHasher::new(128, 0);
    let banding = Banding::for_threshold(0.5, 128).expect("valid");
    let text = benches::english();
    let paragraphs: Vec<&str> = text.split("\n\n").filter(|d| !d.trim().is_empty()).collect();
    for (name, docs) in [("english", vec![text.as_str()]), ("paragraphs", paragraphs)] {
        let bytes: usize = docs.iter().map(|d| d.len()).sum();
        let mut group = c.benchmark_group(format!("minhash/{name}"));
        group.throughput(Throughput::Bytes(bytes as u64));
        // Baseline: the fingerprint alone.
        group.bench_function("fingerprint", |b| {
            b.iter(|| docs.iter().filter_map(|d| fp.fingerprint(black_box(d))).count());
        });
        // The features alone: what a signature adds to.
        group.bench_function("features", |b| {
            b.iter(|| {
                let mut n = 0u64;
                for d in &docs {
                    fp.for_each_feature(black_box(d), |h, _| n ^= h);
                }
                n
            });
        });
        let mut sig = vec![0u32; mh.num_perm()];
        let mut features = Vec::new();
        group.bench_function("signature-128", |b| {
            b.iter(|| {
                for d in &docs {
                    features.clear();
                    fp.for_each_feature(black_box(d), |h, _| features.push(h));
                    mh.signature_into(features.iter().copied(), &mut sig);
                }
                sig[0]
            });
        });
        let mut bands = vec![0u64; banding.bands];
        group.bench_function("signature-128-and-bands", |b| {
            b.iter(|| {
                for d in &docs {
                    features.clear();
                    fp.for_each_feature(black_box(d), |h, _| features.push(h));
                    if mh.signature_into(features.iter().copied(), &mut sig) {
                        band_hashes(&sig, banding.bands, banding.rows, &mut bands);
                    }
                }
                bands[0]
            });
        });
        let mut set = Vec::new();
        group.bench_function("fingerprint-signature-shingle-set", |b| {
            b.iter(|| {
                for d in &docs {
                    features.clear();
                    fp.for_each_feature(black_box(d), |h, _| features.push(h));
                    mh.signature_into(features.iter().copied(), &mut sig);
                    shingle_set_into(features.iter().copied(), &mut set);
                    black_box(fp.fingerprint(d));
                }
                set.len()
            });
        });
        group.finish();
    }
}

/// Band hashes of `n` documents: random, except that one in eight copies some bands of an
/// earlier document (a near-duplicate sharing that many bands). Deterministic.
fn band_matrix(n: usize, bands: usize) -> Vec<u64> {
    let mut rng = SplitMix(7);
    let mut m = Vec::with_capacity(n * bands);
    for d in 0..n {
        if d > 0 && rng.below(8) == 0 {
            let of = rng.below(d) as usize;
            let shared = rng.below(bands + 1) as usize;
            for band in 0..bands {
                let h = if band < shared { m[of * bands + band] } else { rng.next_u64() };
                m.push(h);
            }
        } else {
            m.extend((0..bands).map(|_| rng.next_u64()));
        }
    }
    m
}

fn candidates(c: &mut Criterion) {
    let n = benches::scaled(1_000_000);
    let banding = Banding::for_threshold(0.5, 128).expect("valid");
    let m = band_matrix(n, banding.bands);
    let mut group = c.benchmark_group("lsh/1M");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(format!("candidate_pairs_with, {} bands", banding.bands), |b| {
        b.iter(|| {
            let mut count = 0;
            candidate_pairs_with(black_box(&m), banding.bands, |p| count += p.len());
            count
        });
    });
    group.finish();
}

/// `n` shingle sets of about 100 shingles: one in four a near-duplicate of an earlier one
/// (about a tenth of its shingles replaced), one in fifty an exact copy. Deterministic.
fn shingle_docs(n: usize) -> Vec<Vec<u64>> {
    let mut rng = SplitMix(11);
    let mut docs: Vec<Vec<u64>> = Vec::with_capacity(n);
    for d in 0..n {
        let doc = match rng.below(100) {
            0..=1 if d > 0 => docs[rng.below(d) as usize].clone(),
            2..=26 if d > 0 => {
                let mut doc = docs[rng.below(d) as usize].clone();
                for s in &mut doc {
                    if rng.below(10) == 0 {
                        *s = rng.next_u64();
                    }
                }
                doc
            }
            _ => (0..80 + rng.below(40)).map(|_| rng.next_u64()).collect(),
        };
        docs.push(doc);
    }
    docs
}

/// The engine as a library user meets it: add shingle sets (sketched in parallel), then the
/// dedup walk, in memory and spilled to temporary files.
fn engine(c: &mut Criterion) {
    let n = benches::scaled(100_000);
    let docs = shingle_docs(n);
    let mut group = c.benchmark_group("minhash-dedup/100k");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n as u64));
    for spill in [false, true] {
        let name = if spill { "spilled" } else { "in-memory" };
        group.bench_function(format!("extend_shingles+dedup, {name}"), |b| {
            b.iter(|| {
                let mut dedup =
                    MinHashDedup::builder().spill_to_disk(spill).build().expect("valid settings");
                dedup.extend_shingles(black_box(&docs)).expect("in memory or a temp dir");
                let decisions = dedup.dedup().expect("in memory or a temp dir");
                decisions.iter().filter(|d| !d.is_keep()).count()
            });
        });
    }
    let mut dedup = MinHashDedup::new().expect("valid settings");
    dedup.extend_shingles(&docs).expect("in memory");
    group.bench_function("dedup only, in-memory", |b| {
        b.iter(|| dedup.dedup().expect("in memory").len());
    });
    group.bench_function("pairs only, in-memory", |b| {
        b.iter(|| dedup.pairs().expect("in memory").len());
    });
    group.finish();
}

criterion_group!(benches, signatures, candidates, engine);
criterion_main!(benches);
