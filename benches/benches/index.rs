//! Matching throughput: all pairs, cross pairs and online queries, each next to a brute-force
//! baseline measured in the same run.
//!
//! Large sizes (10M and 100M all-pairs, a 10M-entry index) are in the bench binaries
//! `bench_all_pairs` and `bench_index_queries`; see `docs/index.md`. A smoke run
//! ([`benches::smoke`]) runs each once on a hundredth of the sizes.

use std::hint::black_box;

use benches::planted;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use simhash_core::Fingerprint;
use simhash_index::{AllPairs, Hit, Index, Tables, cross_pairs_with, plan};

const K: u32 = 3;

fn brute_pairs(fps: &[Fingerprint]) -> usize {
    let mut count = 0;
    for (i, a) in fps.iter().enumerate() {
        count += fps[i + 1..].iter().filter(|b| a.distance(**b) <= K).count();
    }
    count
}

fn all_pairs(c: &mut Criterion) {
    let mut group = c.benchmark_group("index/all_pairs");
    group.sample_size(10);
    for n in [20_000usize, 1_000_000].map(benches::scaled) {
        let fps = planted(n, K, 1);
        group.throughput(Throughput::Elements(n as u64));
        for blocks in [4, 5, 6] {
            let tables = Tables::new(blocks, K).unwrap();
            group.bench_with_input(
                BenchmarkId::new(format!("blocks={blocks}"), n),
                &fps,
                |b, fps| {
                    b.iter(|| {
                        let mut count = 0;
                        AllPairs::new(&tables)
                            .run(black_box(fps), |p| count += p.len())
                            .expect("no budget, no error");
                        count
                    });
                },
            );
        }
        if n <= 20_000 {
            group.bench_with_input(BenchmarkId::new("brute-force", n), &fps, |b, fps| {
                b.iter(|| brute_pairs(black_box(fps)));
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("index/cross_pairs");
    group.sample_size(10);
    let corpus = planted(benches::scaled(1_000_000), K, 2);
    let queries = planted(benches::scaled(100_000), K, 3);
    let tables =
        Tables::new(plan((corpus.len() + queries.len()) as u64, K).unwrap().blocks, K).unwrap();
    group.throughput(Throughput::Elements(queries.len() as u64));
    group.bench_function("100k-queries-x-1M", |b| {
        b.iter(|| {
            let mut count = 0;
            cross_pairs_with(black_box(&queries), &corpus, &tables, |p| count += p.len());
            count
        });
    });
    group.finish();
}

fn queries(c: &mut Criterion) {
    let n = benches::scaled(1_000_000);
    let fps = planted(n, K, 4);
    // Half near copies of stored fingerprints, half random.
    let qs: Vec<Fingerprint> = planted(2_000, K, 5)
        .into_iter()
        .enumerate()
        .map(|(i, q)| if i % 2 == 0 { Fingerprint(fps[i * 97 % n].0 ^ 0b101) } else { q })
        .collect();
    let mut group = c.benchmark_group("index/query-1M");
    group.sample_size(10);
    group.throughput(Throughput::Elements(qs.len() as u64));
    for blocks in [4, 5] {
        let mut index: Index<u32> = Index::new(Tables::new(blocks, K).unwrap());
        index.insert_many(fps.iter().enumerate().map(|(i, &f)| (i as u32, f)));
        group.bench_function(format!("find_all_into/blocks={blocks}"), |b| {
            let mut hits: Vec<Hit<u32>> = Vec::new();
            b.iter(|| {
                let mut found = 0;
                for &q in &qs {
                    index.find_all_into(black_box(q), &mut hits);
                    found += hits.len();
                }
                found
            });
        });
        group.bench_function(format!("find_first/blocks={blocks}"), |b| {
            b.iter(|| qs.iter().filter(|&&q| index.find_first(black_box(q)).is_some()).count());
        });
        group.bench_function(format!("find_all_many/blocks={blocks}"), |b| {
            b.iter(|| index.find_all_many(black_box(&qs)).len());
        });
    }
    // Baseline: a linear scan of the stored fingerprints per query (on 20 queries; the
    // throughput is per query either way).
    let few = &qs[..20];
    group.throughput(Throughput::Elements(few.len() as u64));
    group.bench_function("linear-scan", |b| {
        b.iter(|| {
            few.iter().map(|q| fps.iter().filter(|f| q.distance(**f) <= K).count()).sum::<usize>()
        });
    });
    group.finish();

    let mut group = c.benchmark_group("index/insert-1M");
    group.sample_size(10);
    let extra = planted(10_000, K, 6);
    group.throughput(Throughput::Elements(extra.len() as u64));
    let mut index: Index<u32> = Index::new(Tables::new(4, K).unwrap());
    index.insert_many(fps.iter().enumerate().map(|(i, &f)| (i as u32, f)));
    group.bench_function("insert-then-remove/blocks=4", |b| {
        b.iter(|| {
            for (i, &f) in extra.iter().enumerate() {
                index.insert((n + i) as u32, f);
            }
            for i in 0..extra.len() {
                index.remove(&((n + i) as u32));
            }
        });
    });
    group.finish();
}

criterion_group!(benches, all_pairs, queries);
criterion_main!(benches);
