//! Clustering 10M documents given 10M pairs: union-find components, star mode and a
//! two-thread split, next to two baselines measured in the same run (breadth-first search
//! over an adjacency array, and union-find without path compression).
//!
//! What each computes: `components`, `components-2-threads` and `star` build the full
//! `Clusters` (cluster ids, member lists, representatives); `union-find-only` is the
//! unions alone; `union-find-labels` and both baselines end at the dense cluster id of
//! each document.
//!
//! Two deterministic graphs: `random` (both ends uniform: one giant component, the worst
//! case for caches) and `groups8` (pairs inside scattered groups of 8 documents, like
//! near-duplicates in a crawl).

use std::collections::VecDeque;
use std::hint::black_box;

use benches::SplitMix;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use simhash_cluster::{Clusters, Representative, UnionFind};

const DOCUMENTS: usize = 10_000_000;
const PAIRS: usize = 10_000_000;

/// A smoke run ([`benches::smoke`]: `cargo test`, the CI's, or `cargo bench -- --test`)
/// only checks that everything runs, on a hundredth of the graph.
fn size() -> (usize, usize) {
    (benches::scaled(DOCUMENTS), benches::scaled(PAIRS))
}

fn random_graph(n: usize, m: usize) -> Vec<(u32, u32)> {
    let mut rng = SplitMix(1);
    (0..m).map(|_| (rng.below(n), rng.below(n))).collect()
}

fn groups_graph(n: usize, m: usize) -> Vec<(u32, u32)> {
    let mut rng = SplitMix(2);
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i + 1) as usize);
    }
    (0..m)
        .map(|_| {
            let p = rng.below(n) as usize;
            let q = ((p & !7) | rng.below(8) as usize).min(n - 1);
            (perm[p], perm[q])
        })
        .collect()
}

/// Baseline: an adjacency array, then breadth-first search from each unvisited document in
/// order. Its labels are already dense and in order of first member.
fn bfs_labels(n: usize, pairs: &[(u32, u32)]) -> Vec<u32> {
    let mut starts = vec![0usize; n + 1];
    for &(a, b) in pairs {
        starts[a as usize + 1] += 1;
        starts[b as usize + 1] += 1;
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let mut targets = vec![0u32; starts[n]];
    for &(a, b) in pairs {
        targets[fill[a as usize]] = b;
        fill[a as usize] += 1;
        targets[fill[b as usize]] = a;
        fill[b as usize] += 1;
    }
    let mut label = vec![u32::MAX; n];
    let mut next = 0;
    let mut queue = VecDeque::new();
    for start in 0..n {
        if label[start] != u32::MAX {
            continue;
        }
        label[start] = next;
        queue.push_back(start as u32);
        while let Some(d) = queue.pop_front() {
            for &e in &targets[starts[d as usize]..starts[d as usize + 1]] {
                if label[e as usize] == u32::MAX {
                    label[e as usize] = next;
                    queue.push_back(e);
                }
            }
        }
        next += 1;
    }
    label
}

/// Baseline: union by size without path compression, then dense labels in order of first
/// member (the same output as `bfs_labels`).
fn no_compression_labels(n: usize, pairs: &[(u32, u32)]) -> Vec<u32> {
    let mut parent: Vec<u32> = (0..n as u32).collect();
    let mut size = vec![1u32; n];
    let root = |parent: &[u32], mut d: u32| {
        while parent[d as usize] != d {
            d = parent[d as usize];
        }
        d
    };
    for &(a, b) in pairs {
        let (ra, rb) = (root(&parent, a), root(&parent, b));
        if ra != rb {
            let (big, small) =
                if size[ra as usize] < size[rb as usize] { (rb, ra) } else { (ra, rb) };
            parent[small as usize] = big;
            size[big as usize] += size[small as usize];
        }
    }
    let mut label = vec![u32::MAX; n];
    let mut next = 0;
    (0..n as u32)
        .map(|d| {
            let r = root(&parent, d) as usize;
            if label[r] == u32::MAX {
                label[r] = next;
                next += 1;
            }
            label[r]
        })
        .collect()
}

/// [`UnionFind`], then the same labelling as `no_compression_labels`: the like-for-like
/// comparison (`components` also builds member lists and representatives).
fn union_find_labels(n: usize, pairs: &[(u32, u32)]) -> Vec<u32> {
    let mut uf = UnionFind::new(n);
    uf.union_all(pairs.iter().copied()).unwrap();
    let mut label = vec![u32::MAX; n];
    let mut next = 0;
    (0..n as u32)
        .map(|d| {
            let r = uf.find(d).unwrap() as usize;
            if label[r] == u32::MAX {
                label[r] = next;
                next += 1;
            }
            label[r]
        })
        .collect()
}

/// Components on two threads: each half of the pairs into its own `UnionFind`, then merged.
fn two_threads(n: usize, pairs: &[(u32, u32)]) -> Clusters {
    let (left, right) = pairs.split_at(pairs.len() / 2);
    let (mut a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| {
            let mut uf = UnionFind::new(n);
            uf.union_all(left.iter().copied()).unwrap();
            uf
        });
        let mut b = UnionFind::new(n);
        b.union_all(right.iter().copied()).unwrap();
        (a.join().unwrap(), b)
    });
    a.merge(&b).unwrap();
    a.into_clusters()
}

fn cluster(c: &mut Criterion) {
    let (n, m) = size();
    for (name, pairs) in [("random", random_graph(n, m)), ("groups8", groups_graph(n, m))] {
        // The baselines compute the same thing.
        let expected = Clusters::components(n, pairs.iter().copied()).unwrap();
        assert_eq!(bfs_labels(n, &pairs), expected.cluster_ids());
        assert_eq!(no_compression_labels(n, &pairs), expected.cluster_ids());
        assert_eq!(union_find_labels(n, &pairs), expected.cluster_ids());
        assert_eq!(two_threads(n, &pairs), expected);

        let mut group = c.benchmark_group(format!("cluster/{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(m as u64));
        group.bench_function("components", |b| {
            b.iter(|| Clusters::components(n, black_box(&pairs).iter().copied()).unwrap());
        });
        group.bench_function("union-find-only", |b| {
            b.iter(|| {
                let mut uf = UnionFind::new(n);
                uf.union_all(black_box(&pairs).iter().copied()).unwrap();
                uf.sets()
            });
        });
        group.bench_function("union-find-labels", |b| {
            b.iter(|| union_find_labels(n, black_box(&pairs)));
        });
        group.bench_function("components-2-threads", |b| {
            b.iter(|| two_threads(n, black_box(&pairs)));
        });
        group.bench_function("star", |b| {
            b.iter(|| {
                Clusters::star(n, black_box(&pairs).iter().copied(), &Representative::First)
                    .unwrap()
            });
        });
        group.bench_function("baseline-bfs", |b| {
            b.iter(|| bfs_labels(n, black_box(&pairs)));
        });
        group.bench_function("baseline-no-path-compression", |b| {
            b.iter(|| no_compression_labels(n, black_box(&pairs)));
        });
        group.finish();
    }
}

criterion_group!(benches, cluster);
criterion_main!(benches);
