//! MinHash signatures in MB/s of text, next to fingerprinting the same text in the same run,
//! and LSH candidate generation for a million documents.

use std::hint::black_box;

use benches::SplitMix;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use simhash_core::{Fingerprinter, MinHasher, band_hashes, shingle_set_into};
use simhash_index::{Banding, candidate_pairs_with};

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
    let n = 1_000_000;
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

criterion_group!(benches, signatures, candidates);
criterion_main!(benches);
