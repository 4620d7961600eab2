//! Exactness against brute force, for many `(blocks, max_distance)`, on random and
//! adversarial fingerprints.

use proptest::prelude::*;
use simhash_core::Fingerprint;

use crate::{AllPairs, CrossPair, Pair, Tables, all_pairs, cross_pairs, pair_group};

/// The configurations the issue names, and more.
const CONFIGS: &[(usize, u32)] = &[
    (1, 0),
    (2, 1),
    (4, 3),
    (5, 3),
    (6, 3),
    (7, 4),
    (8, 5),
    (10, 6),
    (16, 8),
    (4, 1),
    (5, 2),
    (9, 3),
    (12, 10),
    (20, 4),
    (64, 62),
    (64, 63),
];

fn brute_pairs(fps: &[Fingerprint], k: u32) -> Vec<Pair> {
    let mut out = Vec::new();
    for (i, a) in fps.iter().enumerate() {
        for (j, b) in fps.iter().enumerate().skip(i + 1) {
            let d = a.distance(*b);
            if d <= k {
                out.push(Pair { a: i as u32, b: j as u32, distance: d });
            }
        }
    }
    out
}

fn brute_cross(q: &[Fingerprint], c: &[Fingerprint], k: u32) -> Vec<CrossPair> {
    let mut out = Vec::new();
    for (i, a) in q.iter().enumerate() {
        for (j, b) in c.iter().enumerate() {
            let d = a.distance(*b);
            if d <= k {
                out.push(CrossPair { query: i as u32, corpus: j as u32, distance: d });
            }
        }
    }
    out
}

/// Flips `bits` distinct bits of `fp`, chosen by `seed`; `packed` puts them next to each other
/// (so mostly within one block) instead of spreading them.
pub(crate) fn flip(fp: Fingerprint, bits: u32, seed: u64, packed: bool) -> Fingerprint {
    let mut x = fp.0;
    if packed {
        let start = (seed % 64) as u32;
        for i in 0..bits {
            x ^= 1u64 << ((start + i) % 64);
        }
    } else {
        let mut s = seed | 1;
        let mut done = 0u64;
        while done.count_ones() < bits {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            done |= 1 << (s % 64);
        }
        x ^= done;
    }
    Fingerprint(x)
}

/// Random fingerprints plus near copies at exactly k and k + 1 bits, packed and spread, and
/// identical copies.
pub(crate) fn adversarial(seeds: &[u64], k: u32, salt: u64) -> Vec<Fingerprint> {
    let mut fps = Vec::new();
    for (i, &s) in seeds.iter().enumerate() {
        let fp = Fingerprint(s);
        fps.push(fp);
        let salt = salt.wrapping_add(i as u64 * 0x9e37_79b9);
        match s % 7 {
            0 => fps.push(flip(fp, k, salt, false)),
            1 => fps.push(flip(fp, (k + 1).min(64), salt, false)),
            2 => fps.push(flip(fp, k, salt, true)),
            3 => fps.push(flip(fp, (k + 1).min(64), salt, true)),
            4 => fps.extend([fp, fp]),
            5 => fps.push(flip(fp, k.saturating_sub(1), salt, false)),
            _ => {}
        }
    }
    fps
}

fn check_all_pairs(fps: &[Fingerprint], m: usize, k: u32) {
    let tables = Tables::new(m, k).unwrap();
    let expect = brute_pairs(fps, k);
    let got = all_pairs(fps, &tables);
    assert_eq!(got, expect, "m = {m}, k = {k}");
    // The public kernel, over groups of (table, prefix), finds the same pairs.
    let mut via_kernel = Vec::new();
    for table in &tables {
        let mut keyed: Vec<(u64, u32, Fingerprint)> =
            fps.iter().enumerate().map(|(i, &f)| (table.prefix(f), i as u32, f)).collect();
        keyed.sort_unstable();
        for group in keyed.chunk_by(|x, y| x.0 == y.0) {
            let group: Vec<(u32, Fingerprint)> = group.iter().map(|&(_, i, f)| (i, f)).collect();
            pair_group(table, k, &group, |a, b, distance| via_kernel.push(Pair { a, b, distance }));
        }
    }
    via_kernel.sort_unstable();
    assert_eq!(via_kernel, expect, "kernel, m = {m}, k = {k}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn all_pairs_match_brute_force(
        seeds in proptest::collection::vec(any::<u64>(), 0..120),
        salt in any::<u64>(),
        config in 0..CONFIGS.len(),
    ) {
        let (m, k) = CONFIGS[config];
        check_all_pairs(&adversarial(&seeds, k, salt), m, k);
    }

    #[test]
    fn clustered_fingerprints_match_brute_force(
        base in any::<u64>(),
        flips in proptest::collection::vec((0u32..9, any::<u64>(), any::<bool>()), 0..150),
        config in 0..CONFIGS.len(),
    ) {
        // Everything within a few bits of one point: many candidates in every table.
        let (m, k) = CONFIGS[config];
        let fps: Vec<Fingerprint> =
            flips.iter().map(|&(b, s, p)| flip(Fingerprint(base), b, s, p)).collect();
        check_all_pairs(&fps, m, k);
    }

    #[test]
    fn optional_pairs_match_brute_force_on_the_present(
        seeds in proptest::collection::vec(any::<u64>(), 0..120),
        missing in proptest::collection::vec(any::<bool>(), 0..240),
        salt in any::<u64>(),
        config in 0..CONFIGS.len(),
    ) {
        let (m, k) = CONFIGS[config];
        let fps: Vec<Option<Fingerprint>> = adversarial(&seeds, k, salt)
            .into_iter()
            .enumerate()
            .map(|(i, f)| (!missing.get(i).copied().unwrap_or(false)).then_some(f))
            .collect();
        // Brute force over positions, skipping the documents with no fingerprint.
        let mut expect = Vec::new();
        for (i, a) in fps.iter().enumerate() {
            for (j, b) in fps.iter().enumerate().skip(i + 1) {
                if let (Some(a), Some(b)) = (a, b) {
                    let d = a.distance(*b);
                    if d <= k {
                        expect.push(Pair { a: i as u32, b: j as u32, distance: d });
                    }
                }
            }
        }
        prop_assert_eq!(AllPairs::new(&Tables::new(m, k).unwrap()).collect(&fps).unwrap(), expect);
    }

    #[test]
    fn cross_pairs_match_brute_force(
        q in proptest::collection::vec(any::<u64>(), 0..60),
        c in proptest::collection::vec(any::<u64>(), 0..60),
        salt in any::<u64>(),
        config in 0..CONFIGS.len(),
    ) {
        let (m, k) = CONFIGS[config];
        let tables = Tables::new(m, k).unwrap();
        let queries = adversarial(&q, k, salt);
        // The corpus holds near copies of the queries too.
        let mut corpus = adversarial(&c, k, !salt);
        corpus.extend(queries.iter().enumerate().map(|(i, &f)| flip(f, k + (i as u32 % 2), salt ^ i as u64, i % 3 == 0)));
        prop_assert_eq!(cross_pairs(&queries, &corpus, &tables), brute_cross(&queries, &corpus, k));
    }
}

/// proptest replays the failures saved for `src/a/b.rs` from `proptest-regressions/a/b.txt`
/// (its default `FileFailurePersistence::SourceParallel`, `src` holding `lib.rs`): a file
/// left behind when the tests it holds cases of move is never read again.
#[test]
fn saved_proptest_failures_are_where_proptest_reads_them() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let saved = root.join("proptest-regressions");
    let mut dirs = vec![saved.clone()];
    let mut files = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let source = root.join("src").join(path.strip_prefix(&saved).unwrap());
            let source = source.with_extension("rs");
            assert!(
                source.is_file(),
                "{} is read for {}, which does not exist",
                path.display(),
                source.display()
            );
            files.push(path);
        }
    }
    // This file's own saved cases, among them.
    assert!(files.contains(&saved.join("hamming").join("tests.txt")), "{files:?}");
}

#[test]
fn small_inputs() {
    let tables = Tables::new(6, 3).unwrap();
    assert!(all_pairs(&[], &tables).is_empty());
    assert!(all_pairs(&[Fingerprint(7)], &tables).is_empty());
    assert!(cross_pairs(&[], &[Fingerprint(7)], &tables).is_empty());
    assert!(cross_pairs(&[Fingerprint(7)], &[], &tables).is_empty());
    assert_eq!(
        cross_pairs(&[Fingerprint(7)], &[Fingerprint(7)], &tables),
        [CrossPair { query: 0, corpus: 0, distance: 0 }]
    );
}

#[test]
fn many_identical() {
    // One huge group of equal prefixes in every table.
    let fps = vec![Fingerprint(0x5555_5555_5555_5555); 300];
    let pairs = all_pairs(&fps, &Tables::new(6, 3).unwrap());
    assert_eq!(pairs.len(), 300 * 299 / 2);
    assert!(pairs.iter().all(|p| p.distance == 0 && p.a < p.b));
}

/// Enough fingerprints to use every path of the engine: several scatter bits, buckets
/// larger than the insertion-sort limit, radix passes, and several tasks and waves.
/// Many mid-sized groups of identical fingerprints (each under the big-run threshold) must
/// stream: no sink batch may hold more than one task's allowance, and nothing is lost.
#[test]
fn many_mid_sized_groups_stream() {
    let mut fps = Vec::new();
    for g in 0..300u64 {
        let fp = Fingerprint(g.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        fps.extend(std::iter::repeat_n(fp, 2 + (g as usize % 15)));
    }
    let tables = Tables::new(5, 3).unwrap();
    let mut got = Vec::new();
    let mut largest = 0;
    AllPairs::new(&tables)
        .run(&fps, |batch| {
            largest = largest.max(batch.len());
            got.extend_from_slice(batch);
        })
        .unwrap();
    got.sort_unstable();
    assert_eq!(got, brute_pairs(&fps, 3));
    // In tests a task holds TASK_PAIRS = 8 pairs before deferring, deferred runs are sunk
    // every PIECE_PAIRS = 40 pairs, and one run (at most BIG_RUN = 16 entries) adds at most
    // 120: no batch may exceed 40 + 120, far below the input's thousands of pairs.
    assert!(got.len() > 5_000);
    assert!(largest <= 40 + 120, "a sink batch of {largest} pairs");
}

fn large_input(n: usize, k: u32) -> Vec<Fingerprint> {
    let mut s = 0x1234_5678_9abc_def1_u64;
    let mut fps = Vec::with_capacity(n);
    while fps.len() < n {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let fp = Fingerprint(s ^ (s >> 29));
        fps.push(fp);
        if s.is_multiple_of(5) {
            fps.push(flip(fp, 1 + (s >> 60) as u32 % (k + 1), s >> 7, s.is_multiple_of(2)));
        }
    }
    fps
}

#[test]
fn large_input_matches_sorted_brute_force() {
    // Brute force is quadratic, so check it on a slice, and check that three table sets
    // (different prefixes, scatter bits and radix passes) agree on the whole input.
    let k = 3;
    let fps = large_input(60_000, k);
    let a = all_pairs(&fps, &Tables::new(4, k).unwrap());
    let b = all_pairs(&fps, &Tables::new(6, k).unwrap());
    let c = all_pairs(&fps, &Tables::new(9, k).unwrap());
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert!(a.len() > 5_000, "planted pairs: {}", a.len());
    let head = &fps[..3000];
    assert_eq!(all_pairs(head, &Tables::new(5, k).unwrap()), brute_pairs(head, k));
}

#[test]
fn same_batches_for_any_thread_count() {
    let mut fps = large_input(200_000, 3);
    // A group far larger than the big-run limit: split over threads and sink batches.
    fps.extend(std::iter::repeat_n(Fingerprint(0x0f0f_0f0f_0f0f_0f0f), 120));
    let tables = Tables::new(5, 3).unwrap();
    let collect = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut batches: Vec<Vec<Pair>> = Vec::new();
        pool.install(|| AllPairs::new(&tables).run(&fps, |p| batches.push(p.to_vec())).unwrap());
        batches
    };
    let one = collect(1);
    assert!(one.len() > 1);
    assert_eq!(one, collect(3));
    let mut pairs: Vec<Pair> = one.concat();
    pairs.sort_unstable();
    assert_eq!(pairs, all_pairs(&fps, &tables));
    let copies = pairs.iter().filter(|p| p.a >= 200_000 && p.distance == 0).count();
    assert_eq!(copies, 120 * 119 / 2);
}

mod online {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use simhash_core::Fingerprint;

    use super::{CONFIGS, flip};
    use crate::{Hit, Index, Tables};

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8, u64),
        /// Insert a near copy of the fingerprint of an id (or of a constant), at `bits` bits.
        InsertNear(u8, u8, u32, u64, bool),
        InsertMany(Vec<(u8, u64)>),
        Remove(u8),
        RemoveMany(Vec<u8>),
        Query(u64),
        QueryNear(u8, u32, u64, bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..40, any::<u64>()).prop_map(|(i, f)| Op::Insert(i, f)),
            (0u8..40, 0u8..40, 0u32..10, any::<u64>(), any::<bool>())
                .prop_map(|(i, of, b, s, p)| Op::InsertNear(i, of, b, s, p)),
            proptest::collection::vec((0u8..40, any::<u64>()), 0..30).prop_map(Op::InsertMany),
            (0u8..40).prop_map(Op::Remove),
            proptest::collection::vec(0u8..40, 0..20).prop_map(Op::RemoveMany),
            any::<u64>().prop_map(Op::Query),
            (0u8..40, 0u32..10, any::<u64>(), any::<bool>())
                .prop_map(|(i, b, s, p)| Op::QueryNear(i, b, s, p)),
        ]
    }

    fn brute(model: &BTreeMap<u8, Fingerprint>, q: Fingerprint, k: u32) -> Vec<Hit<u8>> {
        let mut hits: Vec<Hit<u8>> = model
            .iter()
            .filter(|(_, f)| q.distance(**f) <= k)
            .map(|(&id, f)| Hit { id, distance: q.distance(*f) })
            .collect();
        hits.sort();
        hits
    }

    fn check(index: &Index<u8>, model: &BTreeMap<u8, Fingerprint>, q: Fingerprint, k: u32) {
        let expect = brute(model, q, k);
        assert_eq!(index.find_all(q).collect::<Vec<_>>(), expect, "query {q}");
        let mut buf = vec![Hit { id: 0, distance: 99 }];
        index.find_all_into(q, &mut buf);
        assert_eq!(buf, expect);
        match index.find_first(q) {
            None => assert!(expect.is_empty()),
            Some(hit) => assert!(expect.contains(&hit), "find_first {hit:?} for {q}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn index_matches_a_model(
            ops in proptest::collection::vec(op(), 0..200),
            config in 0..CONFIGS.len(),
            base in any::<u64>(),
        ) {
            let (m, k) = CONFIGS[config];
            let tables = Tables::new(m, k).unwrap();
            // Thousands of tables (16 blocks at distance 8) are covered by the batch tests.
            prop_assume!(tables.len() <= 300);
            let mut index: Index<u8> = Index::new(tables);
            let mut model: BTreeMap<u8, Fingerprint> = BTreeMap::new();
            let near = |model: &BTreeMap<u8, Fingerprint>, of: u8| {
                model.get(&of).copied().unwrap_or(Fingerprint(base))
            };
            for op in ops {
                match op {
                    Op::Insert(id, f) => {
                        prop_assert_eq!(index.insert(id, Fingerprint(f)), model.insert(id, Fingerprint(f)));
                    }
                    Op::InsertNear(id, of, bits, s, p) => {
                        let f = flip(near(&model, of), bits.min(k + 1), s, p);
                        prop_assert_eq!(index.insert(id, f), model.insert(id, f));
                    }
                    Op::InsertMany(items) => {
                        let items: Vec<(u8, Fingerprint)> =
                            items.iter().map(|&(i, f)| (i, flip(Fingerprint(base), (f % 6) as u32, f, f % 2 == 0))).collect();
                        index.insert_many(items.iter().copied());
                        model.extend(items);
                    }
                    Op::Remove(id) => prop_assert_eq!(index.remove(&id), model.remove(&id)),
                    Op::RemoveMany(ids) => {
                        let removed = ids.iter().filter(|id| model.remove(id).is_some()).count();
                        prop_assert_eq!(index.remove_many(&ids), removed);
                    }
                    Op::Query(q) => check(&index, &model, Fingerprint(q), k),
                    Op::QueryNear(of, bits, s, p) => {
                        check(&index, &model, flip(near(&model, of), bits.min(k + 1), s, p), k);
                    }
                }
                prop_assert_eq!(index.len(), model.len());
            }
            for (&id, &f) in &model {
                prop_assert!(index.contains(&id));
                prop_assert_eq!(index.get(&id), Some(f));
                check(&index, &model, f, k);
            }
            let stored: BTreeMap<u8, Fingerprint> = index.iter().map(|(&id, f)| (id, f)).collect();
            prop_assert_eq!(&stored, &model);
            let queries: Vec<Fingerprint> = model.values().copied().chain([Fingerprint(base)]).collect();
            let queries: Vec<Fingerprint> = queries
                .iter()
                .flat_map(|&q| [q, flip(q, k, q.0, false), flip(q, k + 1, !q.0, true)])
                .collect();
            let all = index.find_all_many(&queries);
            let first = index.find_first_many(&queries);
            prop_assert_eq!(&all, &index.find_all_many_by(&queries, true));
            prop_assert_eq!(&all, &index.find_all_many_by(&queries, false));
            prop_assert_eq!(&first, &index.find_first_many_by(&queries, true));
            prop_assert_eq!(&first, &index.find_first_many_by(&queries, false));
            for ((q, hits), first) in queries.iter().zip(all).zip(first) {
                prop_assert_eq!(&hits, &brute(&model, *q, k));
                prop_assert_eq!(first, index.find_first(*q));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// `String` ids (heap-allocated, not `Copy`) give the same matches as a model.
        #[test]
        fn string_ids_match_a_model(
            ops in proptest::collection::vec(op(), 0..200),
            base in any::<u64>(),
        ) {
            let k = 3;
            let mut index: Index<String> = Index::new(Tables::new(5, k).unwrap());
            let mut model: BTreeMap<String, Fingerprint> = BTreeMap::new();
            let name = |id: u8| format!("doc-{id}");
            for op in ops {
                match op {
                    Op::Insert(id, f) | Op::InsertNear(id, _, _, f, _) => {
                        let f = flip(Fingerprint(base), (f % 5) as u32, f, false);
                        prop_assert_eq!(index.insert(name(id), f), model.insert(name(id), f));
                    }
                    Op::InsertMany(items) => {
                        let items: Vec<(String, Fingerprint)> = items
                            .iter()
                            .map(|&(i, f)| (name(i), flip(Fingerprint(base), (f % 6) as u32, f, true)))
                            .collect();
                        index.extend(items.iter().cloned());
                        model.extend(items);
                    }
                    Op::Remove(id) => prop_assert_eq!(index.remove(name(id).as_str()), model.remove(&name(id))),
                    Op::RemoveMany(ids) => {
                        let names: Vec<String> = ids.iter().map(|&i| name(i)).collect();
                        let removed = names.iter().filter(|n| model.remove(*n).is_some()).count();
                        prop_assert_eq!(index.remove_many(names.iter().map(String::as_str)), removed);
                    }
                    Op::Query(q) | Op::QueryNear(_, _, q, _) => {
                        let q = flip(Fingerprint(base), (q % 6) as u32, q, q % 2 == 0);
                        let mut expect: Vec<Hit<String>> = model
                            .iter()
                            .filter(|(_, f)| q.distance(**f) <= k)
                            .map(|(id, f)| Hit { id: id.clone(), distance: q.distance(*f) })
                            .collect();
                        expect.sort();
                        prop_assert_eq!(index.find_all(q).collect::<Vec<_>>(), expect);
                    }
                }
                prop_assert_eq!(index.len(), model.len());
            }
            for (id, &f) in &model {
                prop_assert!(index.contains(id.as_str()));
                prop_assert_eq!(index.get(id), Some(f));
            }
        }
    }

    #[test]
    fn debug_summarises_default_and_from_iterator() {
        let index: Index<u32> = (0..100_000u32)
            .map(|i| (i, Fingerprint(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15))))
            .collect();
        assert_eq!(index.len(), 100_000);
        assert_eq!(index.tables(), Index::<u32>::default().tables());
        assert_eq!(
            format!("{index:?}"),
            "Index { len: 100000, max_distance: 3, blocks: 4, tables: 4 }"
        );
        let empty: Index<String> = Index::default();
        assert!(empty.is_empty());
        assert_eq!(empty.tables().max_distance(), crate::DEFAULT_MAX_DISTANCE);
        assert_eq!(empty.tables().blocks(), crate::DEFAULT_BLOCKS);
    }

    #[test]
    fn remove_many_rebuilds_once_and_keeps_the_rest() {
        let mut index: Index<u32> = Index::new(Tables::new(5, 3).unwrap());
        let fp = |i: u32| Fingerprint(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        index.insert_many((0..5000).map(|i| (i, fp(i))));
        let gone: Vec<u32> = (0..5000).filter(|i| i % 3 != 0).collect();
        assert_eq!(index.remove_many(&gone), gone.len());
        assert_eq!(index.remove_many(&gone), 0);
        assert_eq!(index.len(), 5000 - gone.len());
        for i in 0..5000 {
            let hit = index.find_first(fp(i)).map(|h| h.id);
            assert_eq!(hit, (i % 3 == 0).then_some(i), "{i}");
        }
    }

    #[test]
    fn duplicate_ids_replace_and_remove_then_query() {
        let mut index: Index = Index::new(Tables::new(6, 3).unwrap());
        let a = Fingerprint(0xaaaa_bbbb_cccc_dddd);
        assert_eq!(index.insert(7, a), None);
        assert_eq!(index.insert(7, a), Some(a));
        assert_eq!(index.find_all(a).collect::<Vec<_>>(), [Hit { id: 7, distance: 0 }]);
        let b = flip(a, 3, 1, false);
        assert_eq!(index.insert(7, b), Some(a));
        assert_eq!(index.len(), 1);
        assert_eq!(index.find_all(a).collect::<Vec<_>>(), [Hit { id: 7, distance: 3 }]);
        assert_eq!(index.remove(&7), Some(b));
        assert_eq!(index.remove(&7), None);
        assert!(index.find_all(a).next().is_none());
        assert!(index.find_first(b).is_none());
        assert!(index.is_empty());
    }

    #[test]
    fn many_inserts_and_removes_merge_and_rebuild() {
        let mut index: Index<u32> = Index::new(Tables::new(5, 3).unwrap());
        let fp = |i: u32| Fingerprint(u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for i in 0..3000 {
            index.insert(i, fp(i));
            index.insert(100_000 + i, flip(fp(i), 3, u64::from(i), i % 2 == 0));
        }
        for i in (0..3000).step_by(2) {
            index.remove(&i);
        }
        for i in 0..3000 {
            let hits: Vec<Hit<u32>> = index.find_all(fp(i)).collect();
            let mut expect = vec![Hit { id: 100_000 + i, distance: 3 }];
            if i % 2 == 1 {
                expect.insert(0, Hit { id: i, distance: 0 });
            }
            assert_eq!(hits, expect, "i = {i}");
        }
    }
}

#[test]
fn cross_pairs_with_big_groups_any_thread_count() {
    // Groups of equal prefixes with dozens of queries and corpus entries: big runs on
    // both sides, split by rows.
    let a = Fingerprint(0x0f0f_0f0f_0f0f_0f0f);
    let mut queries: Vec<Fingerprint> =
        (0..60).map(|i| flip(a, i % 4, i as u64, i % 2 == 0)).collect();
    let mut corpus: Vec<Fingerprint> =
        (0..70).map(|i| flip(a, i % 5, !i as u64, i % 3 == 0)).collect();
    queries.extend(large_input(3000, 3));
    corpus.extend(large_input(4000, 3));
    let tables = Tables::new(6, 3).unwrap();
    let collect = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let mut batches: Vec<Vec<CrossPair>> = Vec::new();
        pool.install(|| {
            crate::cross_pairs_with(&queries, &corpus, &tables, |p| batches.push(p.to_vec()));
        });
        batches
    };
    let one = collect(1);
    assert_eq!(one, collect(2));
    let mut pairs = one.concat();
    pairs.sort_unstable();
    assert_eq!(pairs, brute_cross(&queries, &corpus, 3));
}

/// The memory-budget path: a table in passes over ranges of buckets gives the same batches,
/// in the same order, as one pass over all of them.
mod budget {
    use proptest::prelude::*;
    use simhash_core::Fingerprint;

    use super::{adversarial, brute_pairs, flip, large_input};
    use crate::hamming::batch::{
        all_pairs_optional_with_capacity, all_pairs_with_capacity, passes,
    };
    use crate::{AllPairs, ConfigErrorKind, Pair, Tables, plan_with_memory};

    /// Configurations with few enough tables for many capacities in a debug build.
    const CONFIGS: &[(usize, u32)] =
        &[(1, 0), (2, 1), (4, 3), (5, 3), (6, 3), (7, 4), (5, 2), (9, 3), (4, 1)];

    fn batches(fps: &[Fingerprint], tables: &Tables) -> Vec<Vec<Pair>> {
        let mut out = Vec::new();
        AllPairs::new(tables).run(fps, |b| out.push(b.to_vec())).unwrap();
        out
    }

    /// The batches with at most `capacity` entries per pass, and the number of passes.
    fn batches_in_passes(
        fps: &[Fingerprint],
        tables: &Tables,
        cap: usize,
    ) -> (Vec<Vec<Pair>>, usize) {
        let mut out = Vec::new();
        let passes = all_pairs_with_capacity(fps, tables, cap, |b| out.push(b.to_vec()));
        (out, passes)
    }

    /// Checks every capacity from one task per pass to all at once against the in-memory
    /// batches, and that the smallest capacities really split the tables.
    fn check(fps: &[Fingerprint], m: usize, k: u32) {
        let tables = Tables::new(m, k).unwrap();
        let expect = batches(fps, &tables);
        for cap in [0, 1, 255, 256, 700, 1500, fps.len() / 2, fps.len(), usize::MAX] {
            let (got, passes) = batches_in_passes(fps, &tables, cap);
            assert_eq!(got, expect, "m = {m}, k = {k}, capacity {cap}");
            if fps.len() >= 2 {
                assert!(passes >= tables.len(), "{passes} passes");
            }
            // In tests a task is at least 256 entries: smaller capacities mean a pass per
            // task, and inputs of a few thousand have several tasks per table.
            if cap <= 256 && fps.len() >= 4096 {
                assert!(passes >= 2 * tables.len(), "capacity {cap}: {passes} passes");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        #[test]
        fn passes_give_the_same_batches(
            seeds in proptest::collection::vec(any::<u64>(), 2000..4000),
            salt in any::<u64>(),
            config in 0..CONFIGS.len(),
        ) {
            let (m, k) = CONFIGS[config];
            check(&adversarial(&seeds, k, salt), m, k);
        }

        #[test]
        fn clustered_passes_give_the_same_batches(
            bases in proptest::collection::vec(any::<u64>(), 8..60),
            flips in proptest::collection::vec((0u32..8, any::<u64>(), any::<bool>()), 2000..3000),
            config in 0..CONFIGS.len(),
        ) {
            // Clusters within a few bits of some points: big runs, deferred runs, skew.
            let (m, k) = CONFIGS[config];
            let fps: Vec<Fingerprint> = flips
                .iter()
                .enumerate()
                .map(|(i, &(b, s, p))| flip(Fingerprint(bases[i % bases.len()]), b, s, p))
                .collect();
            check(&fps, m, k);
        }

        #[test]
        fn optional_passes_give_the_batches_of_the_present(
            seeds in proptest::collection::vec(any::<u64>(), 0..3000),
            missing in proptest::collection::vec(any::<bool>(), 0..6000),
            salt in any::<u64>(),
            config in 0..CONFIGS.len(),
        ) {
            let (m, k) = CONFIGS[config];
            let tables = Tables::new(m, k).unwrap();
            let fps: Vec<Option<Fingerprint>> = adversarial(&seeds, k, salt)
                .into_iter()
                .enumerate()
                .map(|(i, f)| (!missing.get(i).copied().unwrap_or(false)).then_some(f))
                .collect();
            // The definition: AllPairs over the present ones, mapped to positions.
            let positions: Vec<u32> =
                fps.iter().enumerate().filter(|(_, f)| f.is_some()).map(|(i, _)| i as u32).collect();
            let present: Vec<Fingerprint> = fps.iter().flatten().copied().collect();
            let expect: Vec<Vec<Pair>> = batches(&present, &tables)
                .into_iter()
                .map(|b| {
                    b.iter()
                        .map(|p| Pair { a: positions[p.a as usize], b: positions[p.b as usize], distance: p.distance })
                        .collect()
                })
                .collect();
            let mut got = Vec::new();
            AllPairs::new(&tables).run(&fps, |b| got.push(b.to_vec())).unwrap();
            prop_assert_eq!(&got, &expect);
            for cap in [1, 300, 1000] {
                got.clear();
                all_pairs_optional_with_capacity(&fps, &tables, cap, |b| got.push(b.to_vec()));
                prop_assert_eq!(&got, &expect, "capacity {}", cap);
            }
        }
    }

    /// Fingerprints at the edges of the scatter buckets (so at the edges of the passes) of
    /// the tables whose prefix starts with block 0: values just below and at `j << 59`,
    /// with near copies that flip exactly `k` and `k + 1` bits across the edge and floods
    /// of identical copies on both sides of it.
    fn edges(k: u32) -> Vec<Fingerprint> {
        let mut fps = Vec::new();
        for j in 1..32u64 {
            for v in [(j << 59) - 1, j << 59, (j << 59) | 1, ((j << 59) - 1) ^ 0xff] {
                let v = Fingerprint(v);
                fps.push(v);
                // Packed flips from the top bit down cross the edge in the bucket bits.
                for bits in [1, k, k + 1] {
                    fps.push(flip(v, bits, 63 - u64::from(bits.saturating_sub(1)), true));
                    fps.push(flip(v, bits, j * 31 + u64::from(bits), false));
                }
                if j % 4 == 0 {
                    // A flood of one value: all of it in one bucket, hence one pass.
                    fps.extend(std::iter::repeat_n(v, 40));
                }
            }
        }
        fps.extend(large_input(3000, k));
        fps
    }

    #[test]
    fn passes_are_balanced_and_cover_every_task_once() {
        // Tasks of 10 entries, one of 95 (skew), one of 0.
        let mut sizes = vec![10usize; 40];
        sizes[7] = 95;
        sizes[20] = 0;
        let starts: Vec<usize> = std::iter::once(0)
            .chain(sizes.iter().scan(0, |at, s| {
                *at += s;
                Some(*at)
            }))
            .collect();
        let tasks: Vec<(usize, usize)> = (0..sizes.len()).map(|b| (b, b + 1)).collect();
        let total = starts[sizes.len()];
        for cap in [0, 1, 10, 11, 50, 94, 95, 96, 200, 484, 485, usize::MAX] {
            let got = passes(&starts, &tasks, cap);
            let flat: Vec<usize> = got.iter().flat_map(Clone::clone).collect();
            assert_eq!(flat, (0..tasks.len()).collect::<Vec<_>>(), "capacity {cap}");
            let want = total.div_ceil(cap.max(1));
            assert!(got.len() >= want.min(tasks.len()), "capacity {cap}: {} passes", got.len());
            for pass in &got {
                let len = starts[tasks[pass.end - 1].1] - starts[tasks[pass.start].0];
                assert!(len <= cap || pass.len() == 1, "capacity {cap}: pass {pass:?} of {len}");
                // Balanced: at most a share and one task (the largest is 95).
                assert!(len <= total.div_ceil(want) + 95, "capacity {cap}: {len}");
            }
        }
        assert_eq!(passes(&starts, &tasks, usize::MAX), vec![(0..tasks.len())]);
        assert_eq!(passes(&starts, &tasks, 200).len(), 3);
        assert!(passes(&starts, &[], 5).is_empty());
    }

    #[test]
    fn prefixes_at_pass_edges() {
        for (m, k) in [(4, 3), (5, 3), (6, 3), (3, 1), (7, 4)] {
            let fps = edges(k);
            let tables = Tables::new(m, k).unwrap();
            let mut pairs: Vec<Pair> = batches(&fps, &tables).concat();
            pairs.sort_unstable();
            assert_eq!(pairs, brute_pairs(&fps, k), "m = {m}, k = {k}");
            check(&fps, m, k);
        }
    }

    #[test]
    fn floods_never_cross_passes() {
        // Identical fingerprints have the same permuted value in every table, hence the same
        // bucket, hence the same pass: a flood of 2,000 copies next to random fingerprints
        // gives all C(2000, 2) pairs at distance 0 however small the passes are.
        let mut fps = large_input(3000, 3);
        fps.extend(std::iter::repeat_n(Fingerprint(0x8000_0000_0000_0000), 2000));
        fps.extend(std::iter::repeat_n(Fingerprint(0x7fff_ffff_ffff_ffff), 1000));
        let tables = Tables::new(5, 3).unwrap();
        let (got, passes) = batches_in_passes(&fps, &tables, 1);
        assert!(passes > 2 * tables.len());
        assert_eq!(got, batches(&fps, &tables));
        let copies = got.iter().flatten().filter(|p| p.distance == 0 && p.a >= 3000).count();
        let in_input = brute_pairs(&fps[..3000], 0).len();
        assert_eq!(copies + in_input, 2000 * 1999 / 2 + 1000 * 999 / 2 + in_input);
    }

    #[test]
    fn tiny_and_empty_inputs() {
        let tables = Tables::new(4, 3).unwrap();
        for fps in [vec![], vec![Fingerprint(1)], vec![Fingerprint(1), Fingerprint(1)]] {
            let (got, _) = batches_in_passes(&fps, &tables, 1);
            assert_eq!(got, batches(&fps, &tables));
            let mut via_budget = Vec::new();
            AllPairs::new(&tables)
                .budget(Some(1 << 20))
                .run(&fps, |b| via_budget.push(b.to_vec()))
                .unwrap();
            assert_eq!(via_budget, got);
        }
        let mut got = Vec::new();
        AllPairs::new(&tables)
            .budget(Some(1000))
            .run(&[None, None], |b| got.push(b.len()))
            .unwrap();
        assert!(got.is_empty());
    }

    #[test]
    fn budgets_through_the_public_api() {
        let fps = large_input(40_000, 3);
        let n = fps.len() as u64;
        let tables = Tables::new(5, 3).unwrap();
        let expect = batches(&fps, &tables);
        // Input 8n, in flight 4n, a whole table 16n: 28n holds it all; 13n is about a
        // sixteenth of a table per pass.
        for memory in [None, Some(28 * n), Some(16 * n), Some(13 * n)] {
            let mut got = Vec::new();
            AllPairs::new(&tables).budget(memory).run(&fps, |b| got.push(b.to_vec())).unwrap();
            assert_eq!(got, expect, "memory {memory:?}");
            let plan = plan_with_memory(n, 3, memory).unwrap();
            assert!(memory.is_none_or(|m| plan.peak_bytes <= m), "{plan:?}");
        }
        assert_eq!(plan_with_memory(n, 3, Some(13 * n)).unwrap().passes, 16);
        // Below the input, the memory in flight and 1/256 of a table: an error, no pairs.
        let too_small = 12 * n + 16 * n.div_ceil(256) - 1;
        let mut called = false;
        let err = AllPairs::new(&tables).budget(Some(too_small)).run(&fps, |_| called = true);
        assert_eq!(err.unwrap_err().kind(), ConfigErrorKind::MemoryTooSmall);
        assert!(!called);
        let err = plan_with_memory(n, 3, Some(too_small)).unwrap_err();
        assert_eq!(err.kind(), ConfigErrorKind::MemoryTooSmall);
        assert!(err.to_string().starts_with("a memory budget of "), "{err}");
        assert!(AllPairs::new(&tables).budget(Some(too_small + 1)).run(&fps, |_| {}).is_ok());
        // The optional input counts at 16 bytes per entry.
        let opt: Vec<Option<Fingerprint>> = fps.iter().map(|&f| Some(f)).collect();
        let err = AllPairs::new(&tables).budget(Some(too_small + 1)).run(&opt, |_| {});
        assert_eq!(err.unwrap_err().kind(), ConfigErrorKind::MemoryTooSmall);
        let mut got = Vec::new();
        AllPairs::new(&tables).budget(Some(21 * n)).run(&opt, |b| got.push(b.to_vec())).unwrap();
        assert_eq!(got, expect);
    }
}

/// `sort_bucket` against a plain stable sort by prefix, for every table of many
/// configurations (prefixes of 1 to 64 bits: one to eight radix passes, a narrower last
/// digit), buckets below and above the insertion-sort and in-place sizes, few and many
/// distinct prefixes, and every number of bits already sorted by the scatter.
#[test]
fn sort_bucket_is_a_stable_sort_by_prefix() {
    use crate::hamming::group::sort_bucket;
    use crate::hamming::kernel::Entry;
    let mut next = splitmix(0x5151_u64);
    let mut scratch = Vec::new();
    for &(m, k) in CONFIGS {
        let tables = Tables::new(m, k).unwrap();
        for table in tables.iter().take(3) {
            let p = table.prefix_bits();
            let shift = 64 - p;
            for len in [2, 47, 48, 49, 150, 200, 201, 700] {
                for done in [0, p / 3, p.saturating_sub(1), p] {
                    // Few distinct prefixes (ties keep their order) or many.
                    let spread = if len % 2 == 0 { 3 } else { u64::MAX };
                    let top = next() & !(u64::MAX.checked_shr(done).unwrap_or(0));
                    let mut bucket: Vec<Entry> = (0..len)
                        .map(|i| {
                            let low = (next() % spread).wrapping_mul(0x0123_4567_89ab_cdef);
                            let low = low & u64::MAX.checked_shr(done).unwrap_or(0);
                            Entry { key: top | low, id: i as u32, side: 0 }
                        })
                        .collect();
                    let mut expect = bucket.clone();
                    expect.sort_by_key(|e| e.key.checked_shr(shift).unwrap_or(0));
                    let got = sort_bucket(&mut bucket, &mut scratch, table, done).to_vec();
                    let ids = |v: &[Entry]| v.iter().map(|e| (e.key, e.id)).collect::<Vec<_>>();
                    assert_eq!(ids(&got), ids(&expect), "m = {m}, k = {k}, len {len}, done {done}");
                }
            }
        }
    }
}

/// `for_each_run` against `chunk_by` (runs of two or more): runs at either end, everything
/// one run, no run at all, empty and one-entry inputs, and prefixes of 1 to 64 bits (where
/// entries with equal prefixes differ below them).
#[test]
fn for_each_run_is_chunk_by_without_singletons() {
    use crate::hamming::group::for_each_run;
    use crate::hamming::kernel::Entry;
    let mut next = splitmix(0x7a7a_u64);
    let mut checked_runs = 0;
    for shift in [0, 1, 20, 31, 33, 63] {
        for len in [0, 1, 2, 3, 5, 64, 300] {
            // 1: all distinct; 2: a few prefixes (long runs); 3: one prefix; 4: mixed.
            for mode in 1..=4 {
                let mut prefixes: Vec<u64> = (0..len)
                    .map(|i| match mode {
                        1 => i as u64,
                        2 => next() % 4,
                        3 => 7,
                        _ => next() % (len as u64 / 2 + 1),
                    })
                    .map(|p| p & (u64::MAX >> shift))
                    .collect();
                prefixes.sort_unstable();
                let sorted: Vec<Entry> = prefixes
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| {
                        let low = next() & (1u64 << shift).wrapping_sub(1);
                        let key = if shift == 0 { p } else { p << shift | low };
                        Entry { key, id: i as u32, side: 0 }
                    })
                    .collect();
                let expect: Vec<Vec<Entry>> = sorted
                    .chunk_by(|a, b| a.key >> shift == b.key >> shift)
                    .filter(|r| r.len() >= 2)
                    .map(<[Entry]>::to_vec)
                    .collect();
                let mut got = Vec::new();
                for_each_run(&sorted, shift, |run| got.push(run.to_vec()));
                assert_eq!(got, expect, "shift {shift}, len {len}, mode {mode}");
                checked_runs += expect.len();
            }
        }
    }
    assert!(checked_runs > 100, "{checked_runs}");
}

/// `group_bucket` against the runs of a stable sort by prefix (`sort_bucket`, then
/// `chunk_by`): every configuration (the rest of the prefix from 0 to 64 bits: the short-key
/// path up to 32 when sparse enough, the sort otherwise), buckets below, between and above the small and huge
/// sizes, one prefix (a flood), few prefixes, many (runs of one), identical fingerprints,
/// and every number of bits the scatter may have split on.
#[test]
fn group_bucket_hands_on_the_runs_of_a_stable_sort() {
    use crate::hamming::group::{Scratch, group_bucket, sort_bucket};
    use crate::hamming::kernel::Entry;
    let mut next = splitmix(0x6b6b_u64);
    let (mut scratch, mut plain) = (Scratch::default(), Vec::new());
    let (mut short_paths, mut runs) = (0, 0);
    for &(m, k) in CONFIGS {
        let tables = Tables::new(m, k).unwrap();
        for table in tables.iter().take(3) {
            let p = table.prefix_bits();
            let shift = 64 - p;
            for len in [2, 48, 49, 120, 200, 201, 700] {
                for done in [0, 1, p / 3, p.saturating_sub(20), p.saturating_sub(1), p] {
                    // Spread 1: one prefix; 3: few; 40: runs of a few; else: mostly runs of
                    // one. Half the time, the entries with equal prefixes are identical.
                    for spread in [1, 3, 40, u64::MAX] {
                        let top = next() & !(u64::MAX.checked_shr(done).unwrap_or(0));
                        let same = next().is_multiple_of(2);
                        let bucket: Vec<Entry> = (0..len)
                            .map(|i| {
                                let v = next() % spread;
                                let low = v.wrapping_mul(0x0123_4567_89ab_cdef);
                                let low = low & u64::MAX.checked_shr(done).unwrap_or(0);
                                let key = top | low;
                                let key = if same {
                                    key
                                } else {
                                    key ^ (next() & u64::MAX.checked_shr(p).unwrap_or(0))
                                };
                                Entry { key, id: i as u32, side: 0 }
                            })
                            .collect();
                        let mut expect = Vec::new();
                        let sorted =
                            sort_bucket(&mut bucket.clone(), &mut plain, table, done).to_vec();
                        for run in sorted.chunk_by(|a, b| a.key >> shift == b.key >> shift) {
                            if run.len() >= 2 {
                                expect.push(run.to_vec());
                            }
                        }
                        let mut got = Vec::new();
                        group_bucket(&mut bucket.clone(), &mut scratch, table, done, |run| {
                            got.push(run.to_vec());
                        });
                        assert_eq!(got, expect, "m = {m}, k = {k}, len {len}, done {done}");
                        runs += expect.len();
                        let rest = p - done;
                        let sparse = rest > 0 && rest <= 32 && (len as u64) << 4 <= 1u64 << rest;
                        short_paths += usize::from(sparse && len > 48 && len <= 200);
                    }
                }
            }
        }
    }
    assert!(short_paths > 100 && runs > 1000, "{short_paths} short-key buckets, {runs} runs");
}

/// Tables whose prefixes start with the same block share one scatter of the fingerprints as
/// they are: the same batches in the same order as a scatter per table, and the pairs of
/// brute force, at 1 and 3 threads. Inputs small enough that every bucket fits the
/// short-key path (in tests, at most 200 entries) with buckets above and below the
/// insertion-sort size: random fingerprints, near copies at exactly `k` and `k + 1` bits
/// (packed across block edges or spread), identical copies, a flood of one value that
/// fills most of a bucket, and one too large for it (its tables then do not share).
#[test]
fn shared_scatters_give_the_batches_of_one_per_table() {
    use crate::hamming::batch::{all_pairs_sharing, cross_pairs_sharing};
    let mut next = splitmix(0x5eed_u64);
    let configs = [(6, 3), (5, 3), (4, 3), (7, 4), (5, 2), (9, 3), (4, 1), (2, 1), (1, 0)];
    let (mut shared_tables, mut checked) = (0, 0);
    for &(m, k) in &configs {
        let tables = Tables::new(m, k).unwrap();
        for (n, flood) in
            [(2, 0), (3, 0), (40, 0), (120, 0), (300, 0), (390, 0), (300, 90), (300, 250)]
        {
            let mut fps: Vec<Fingerprint> = Vec::new();
            while fps.len() < n {
                let v = Fingerprint(next());
                fps.push(v);
                match next() % 6 {
                    0 => fps.push(v),
                    1 => fps.push(flip(v, k, next(), true)),
                    2 => fps.push(flip(v, k + 1, next(), true)),
                    3 => fps.push(flip(v, k, next(), false)),
                    4 => fps.push(flip(v, k + 1, next(), false)),
                    _ => {}
                }
            }
            fps.truncate(n);
            let v = Fingerprint(next());
            fps.extend(std::iter::repeat_n(v, flood));
            let mut expect_sorted = brute_pairs(&fps, k);
            expect_sorted.sort_unstable();
            let mut unshared = Vec::new();
            assert_eq!(all_pairs_sharing(&fps, &tables, false, |b| unshared.push(b.to_vec())), 0);
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut got = Vec::new();
                let shared = pool
                    .install(|| all_pairs_sharing(&fps, &tables, true, |b| got.push(b.to_vec())));
                shared_tables += shared;
                assert_eq!(got, unshared, "m = {m}, k = {k}, n = {n}, flood {flood}");
                let mut flat: Vec<Pair> = got.concat();
                flat.sort_unstable();
                assert_eq!(flat, expect_sorted, "m = {m}, k = {k}, n = {n}, flood {flood}");
                // Cross pairs: the first half against the rest.
                let (q, c) = fps.split_at(fps.len() / 2);
                let (mut a, mut b) = (Vec::new(), Vec::new());
                pool.install(|| {
                    cross_pairs_sharing(q, c, &tables, true, |p| a.push(p.to_vec()));
                    cross_pairs_sharing(q, c, &tables, false, |p| b.push(p.to_vec()));
                });
                assert_eq!(a, b, "cross: m = {m}, k = {k}, n = {n}, flood {flood}");
                let mut flat: Vec<CrossPair> = a.concat();
                flat.sort_unstable();
                let mut expect = brute_cross(q, c, k);
                expect.sort_unstable();
                assert_eq!(flat, expect, "cross: m = {m}, k = {k}, n = {n}, flood {flood}");
                checked += 1;
            }
        }
    }
    // At 6 blocks and k = 3 alone, 19 of 20 tables share (10, 6, 3 and 1 by first block,
    // the last group of one scatters for itself).
    assert!(shared_tables > 200 && checked == configs.len() * 16, "{shared_tables} {checked}");
}

/// splitmix64 from `seed`: a reproducible stream of test inputs (each call adds the golden
/// gamma to the state and returns its mix).
pub(crate) fn splitmix(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = state;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
}
