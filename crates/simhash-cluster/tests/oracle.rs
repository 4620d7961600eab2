//! Both modes against naive implementations on random graphs, and determinism across pair
//! orders, orientations, duplicates and splits across threads.

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;
use simhash_cluster::{Clusters, Mode, Representative, UnionFind};

type Pairs = Vec<(u32, u32)>;

fn neighbours(n: usize, pairs: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in pairs {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    adj
}

/// Connected components by breadth-first search from each unvisited document in order:
/// clusters come out in order of first member; members are sorted afterwards.
fn bfs(n: usize, pairs: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let adj = neighbours(n, pairs);
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for start in 0..n {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut queue = std::collections::VecDeque::from([start as u32]);
        let mut members = Vec::new();
        while let Some(d) = queue.pop_front() {
            members.push(d);
            for &e in &adj[d as usize] {
                if !seen[e as usize] {
                    seen[e as usize] = true;
                    queue.push_back(e);
                }
            }
        }
        members.sort_unstable();
        out.push(members);
    }
    out
}

/// The priority key of a document under each policy: smaller is preferred.
#[derive(Clone, Copy, Debug)]
enum Policy {
    First,
    Longest,
    Lowest,
}

fn policy(p: Policy, keys: &[u64]) -> Representative<'_> {
    match p {
        Policy::First => Representative::First,
        Policy::Longest => Representative::Longest(keys),
        Policy::Lowest => Representative::Lowest(keys),
    }
}

fn priority(p: Policy, keys: &[u64], d: u32) -> (u64, u32) {
    match p {
        Policy::First => (0, d),
        Policy::Longest => (u64::MAX - keys[d as usize], d),
        Policy::Lowest => (keys[d as usize], d),
    }
}

fn best(p: Policy, keys: &[u64], members: &[u32]) -> u32 {
    *members.iter().min_by_key(|&&d| priority(p, keys, d)).unwrap()
}

/// Star clustering straight from its definition.
fn naive_star(
    n: usize,
    pairs: &[(u32, u32)],
    p: Policy,
    keys: &[u64],
) -> (Vec<Vec<u32>>, Vec<u32>) {
    let adj = neighbours(n, pairs);
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&d| priority(p, keys, d));
    let mut center: Vec<Option<u32>> = vec![None; n];
    for d in order {
        if center[d as usize].is_some() {
            continue;
        }
        center[d as usize] = Some(d);
        for &other in &adj[d as usize] {
            if center[other as usize].is_none() {
                center[other as usize] = Some(d);
            }
        }
    }
    let mut groups: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (d, c) in center.iter().enumerate() {
        groups.entry(c.unwrap()).or_default().push(d as u32);
    }
    let mut groups: Vec<(u32, Vec<u32>)> = groups.into_iter().collect();
    groups.sort_by_key(|(_, members)| members[0]);
    groups.into_iter().map(|(c, m)| (m, c)).unzip()
}

fn all(clusters: &Clusters) -> Vec<Vec<u32>> {
    clusters.iter().map(<[u32]>::to_vec).collect()
}

/// A deterministic shuffle (splitmix64 Fisher-Yates), flipping some pairs and repeating
/// some, so the set of pairs stays the same.
fn scramble(pairs: &[(u32, u32)], seed: u64) -> Pairs {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    };
    let mut out: Pairs = Vec::with_capacity(pairs.len() * 2);
    for &(a, b) in pairs {
        let r = next();
        out.push(if r & 1 == 0 { (a, b) } else { (b, a) });
        if r & 6 == 0 {
            out.push((b, a));
        }
    }
    for i in (1..out.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        out.swap(i, j);
    }
    out
}

/// Components built from `parts` chunks on their own threads, merged in a seeded order.
fn components_split(n: usize, pairs: &[(u32, u32)], parts: usize, seed: u64) -> Clusters {
    let chunk = pairs.len().div_ceil(parts).max(1);
    let mut partials: Vec<UnionFind> = std::thread::scope(|s| {
        let handles: Vec<_> = pairs
            .chunks(chunk)
            .map(|chunk| {
                s.spawn(move || {
                    let mut uf = UnionFind::new(n);
                    uf.union_all(chunk.iter().copied()).unwrap();
                    uf
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    if partials.is_empty() {
        return UnionFind::new(n).into_clusters();
    }
    // Merge as a tree whose shape depends on the seed: associativity and commutativity.
    let mut seed = seed;
    while partials.len() > 1 {
        let i = (seed as usize) % partials.len();
        let taken = partials.swap_remove(i);
        seed = seed.rotate_left(7) ^ 0x5555;
        let j = (seed as usize) % partials.len();
        partials[j].merge(&taken).unwrap();
    }
    partials.pop().unwrap().into_clusters()
}

/// A graph: `n` documents, pairs within range (self-loops and repeats likely), and one key
/// per document drawn from a small range so ties are common.
fn graph() -> impl Strategy<Value = (usize, Pairs, Vec<u64>)> {
    (0usize..40).prop_flat_map(|n| {
        let pairs = if n == 0 {
            Just(Vec::new()).boxed()
        } else {
            vec((0..n as u32, 0..n as u32), 0..3 * n).boxed()
        };
        (Just(n), pairs, vec(0u64..4, n))
    })
}

fn policies() -> impl Strategy<Value = Policy> {
    prop_oneof![Just(Policy::First), Just(Policy::Longest), Just(Policy::Lowest)]
}

proptest! {
    #[test]
    fn components_agree_with_bfs((n, pairs, keys) in graph(), p in policies()) {
        let clusters = Clusters::builder()
            .representative(policy(p, &keys))
            .build(n, pairs.iter().copied())
            .unwrap();
        let want = bfs(n, &pairs);
        prop_assert_eq!(all(&clusters), want.clone());
        let reps: Vec<u32> = want.iter().map(|m| best(p, &keys, m)).collect();
        prop_assert_eq!(clusters.representatives(), &reps[..]);
        for (id, members) in clusters.iter().enumerate() {
            for &d in members {
                prop_assert_eq!(clusters.cluster_of(d), id as u32);
            }
        }
        let stats = clusters.stats(3);
        prop_assert_eq!(stats.clustered + stats.singletons, n);
        prop_assert_eq!(stats.largest, want.iter().map(Vec::len).max().unwrap_or(0));
        prop_assert_eq!(stats.oversized, want.iter().filter(|m| m.len() > 3).count());
        prop_assert_eq!(stats.clusters, want.iter().filter(|m| m.len() > 1).count());
    }

    #[test]
    fn star_agrees_with_definition((n, pairs, keys) in graph(), p in policies()) {
        let clusters = Clusters::star(n, pairs.iter().copied(), &policy(p, &keys)).unwrap();
        let (want, centers) = naive_star(n, &pairs, p, &keys);
        prop_assert_eq!(all(&clusters), want);
        prop_assert_eq!(clusters.representatives(), &centers[..]);
        // Every member is paired with its center, and no two centers are paired.
        let adj = neighbours(n, &pairs);
        for (id, members) in clusters.iter().enumerate() {
            let center = clusters.representative(id as u32);
            prop_assert!(members.contains(&center));
            prop_assert_eq!(best(p, &keys, members), center);
            for &d in members {
                prop_assert!(d == center || adj[center as usize].contains(&d));
            }
        }
        for &c in &centers {
            for &e in &adj[c as usize] {
                prop_assert!(e == c || !centers.contains(&e));
            }
        }
        // Star never merges across components.
        let components = Clusters::components(n, pairs.iter().copied()).unwrap();
        for members in &clusters {
            let id = components.cluster_of(members[0]);
            prop_assert!(members.iter().all(|&d| components.cluster_of(d) == id));
        }
    }

    #[test]
    fn any_pair_order((n, pairs, keys) in graph(), p in policies(), seed: u64) {
        let shuffled = scramble(&pairs, seed);
        for mode in [Mode::Components, Mode::Star] {
            let mut builder = Clusters::builder();
            builder.mode(mode).representative(policy(p, &keys));
            let a = builder.build(n, pairs.iter().copied()).unwrap();
            let b = builder.build(n, shuffled.iter().copied()).unwrap();
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn any_thread_count((n, pairs, _keys) in graph(), parts in 1usize..5, seed: u64) {
        let shuffled = scramble(&pairs, seed);
        let want = Clusters::components(n, pairs.iter().copied()).unwrap();
        prop_assert_eq!(components_split(n, &shuffled, parts, seed), want);
    }
}

#[test]
fn giant_chain_and_isolated_nodes() {
    // One chain over the even documents in a scrambled order; odd documents are isolated.
    let n = 20_001usize;
    let chain: Pairs = (1..=10_000u32).map(|i| (2 * i - 2, 2 * i)).collect();
    let pairs = scramble(&chain, 7);
    let clusters = Clusters::components(n, pairs.iter().copied()).unwrap();
    assert_eq!(all(&clusters), bfs(n, &pairs));
    assert_eq!(clusters.len(), 1 + 10_000);
    assert_eq!(clusters.members(0).len(), 10_001);
    let stats = clusters.stats(1000);
    assert_eq!((stats.largest, stats.oversized, stats.singletons), (10_001, 1, 10_000));
    assert_eq!(components_split(n, &pairs, 3, 1), clusters);

    // Star cuts the chain into pairs: 0 takes 2, 4 takes 6, 8 takes 10, ...
    let star = Clusters::star(n, pairs.iter().copied(), &Representative::First).unwrap();
    let (want, centers) = naive_star(n, &pairs, Policy::First, &[]);
    assert_eq!(all(&star), want);
    assert_eq!(star.representatives(), &centers[..]);
    assert_eq!(star.members(0), &[0, 2]);
    assert_eq!(star.members(1), &[1]);
    assert_eq!(star.members(3), &[4, 6]);
    assert_eq!(star.stats(1000).largest, 2);
}

#[test]
fn empty_and_edgeless() {
    let none: Pairs = Vec::new();
    for mode in [Mode::Components, Mode::Star] {
        let empty = Clusters::builder().mode(mode).build(0, none.iter().copied()).unwrap();
        assert!(empty.is_empty());
        let alone = Clusters::builder().mode(mode).build(3, none.iter().copied()).unwrap();
        assert_eq!(all(&alone), [vec![0], vec![1], vec![2]]);
        assert_eq!(alone.representatives(), &[0, 1, 2]);
    }
}
