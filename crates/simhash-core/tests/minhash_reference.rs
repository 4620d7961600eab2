//! `MinHasher` signatures, `band_hashes`, `estimate_jaccard`, `shingle_set` and the golden
//! values pinned in `src/minhash.rs` against a naive reference written from the module's
//! documented definition (`minhash_reference/naive.rs`): random sets at every size from
//! one feature to many per slot, and adversarial ones (empty, one feature, repeats, extreme
//! hashes, features placed in chosen bins with chosen values, so that every number of
//! filled slots is densified).

#[path = "minhash_reference/naive.rs"]
#[allow(dead_code)] // the LSH tests use the rest
mod naive;

use std::collections::BTreeSet;

use naive::{EMPTY, MAX_PERM, Naive, Rng, mix, unmix};
use simhash_core::{MinHasher, band_hashes, estimate_jaccard, shingle_set};

/// Checks `MinHasher`'s signature of `features` (both forms) and `shingle_set` against the
/// reference.
fn check(mh: &MinHasher, naive: &Naive, features: &[u64], what: &str) {
    assert_eq!(mh.num_perm(), naive.k(), "{what}: slots");
    let want = naive.signature(features.iter().copied());
    let got = mh.signature(features.iter().copied());
    if got != want {
        let n = features.len();
        match (&got, &want) {
            (Some(g), Some(w)) => {
                let diff: Vec<usize> = (0..g.len()).filter(|&i| g[i] != w[i]).collect();
                panic!("{what}: {n} features, slots that differ {diff:?}");
            }
            _ => panic!("{what}: {n} features, got {got:?}, want {want:?}"),
        }
    }
    let mut out = vec![0; mh.num_perm()];
    assert_eq!(mh.signature_into(features.iter().copied(), &mut out), want.is_some(), "{what}");
    assert_eq!(out, want.unwrap_or_else(|| vec![EMPTY; naive.k()]), "{what}: signature_into");
    let set: Vec<u64> = features.iter().copied().collect::<BTreeSet<u64>>().into_iter().collect();
    assert_eq!(shingle_set(features.iter().copied()), set, "{what}: shingle_set");
}

/// The values of `const NAME: [T; N] = [...];` in `src`, written as a list or as `[x; n]`.
fn golden_const(src: &str, name: &str) -> Vec<u64> {
    let at = src.find(&format!("const {name}:")).unwrap_or_else(|| panic!("no const {name}"));
    let rest = &src[at..];
    let eq = rest.find('=').expect("a value");
    let open = eq + rest[eq..].find('[').expect("an array") + 1;
    let close = open + rest[open..].find("];").expect("the array's end");
    let body = &rest[open..close];
    let number = |s: &str| {
        let s = s.trim().replace('_', "");
        match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => s.parse(),
        }
        .unwrap_or_else(|e| panic!("{name}: {s:?}: {e}"))
    };
    if let Some((x, n)) = body.split_once(';') {
        vec![number(x); number(n) as usize]
    } else {
        body.split(',').filter(|s| !s.trim().is_empty()).map(number).collect()
    }
}

/// The golden values of `minhash.rs`'s tests (its stability contract, blessed from the
/// implementation) are the reference's values for the same inputs.
#[test]
fn golden_values_are_the_reference_values() {
    let src = include_str!("../src/minhash.rs");
    let sig = |k, seed, features: &[u64]| {
        let v = Naive::new(k, seed).signature(features.iter().copied()).unwrap();
        v.into_iter().map(u64::from).collect::<Vec<u64>>()
    };
    assert_eq!(sig(8, 42, &[1, 2, 3, 4, 5]), golden_const(src, "GOLDEN_SMALL"), "GOLDEN_SMALL");
    let large: Vec<u64> = (0..1000).collect();
    assert_eq!(sig(8, 42, &large), golden_const(src, "GOLDEN_LARGE"), "GOLDEN_LARGE");
    assert_eq!(sig(4, 0, &[0xdead_beef]), golden_const(src, "GOLDEN_ONE"), "GOLDEN_ONE");
    let golden_large: Vec<u32> =
        golden_const(src, "GOLDEN_LARGE").into_iter().map(|v| v as u32).collect();
    assert_eq!(
        naive::band_hashes(&golden_large, 4, 2),
        golden_const(src, "GOLDEN_BANDS"),
        "GOLDEN_BANDS"
    );
    // The goldens' inputs are still the ones above.
    for call in [
        "MinHasher::new(8, 42)",
        "mh.signature([1, 2, 3, 4, 5]).unwrap(), GOLDEN_SMALL",
        "mh.signature(0..1000).unwrap(), GOLDEN_LARGE",
        "MinHasher::new(4, 0)",
        "mh.signature([0xdead_beef]).unwrap(), GOLDEN_ONE",
        "band_hashes(&GOLDEN_LARGE, 4, 2, &mut bands)",
    ] {
        assert!(src.contains(call), "golden_signatures no longer calls {call}");
    }
}

/// The reference's own parts: `unmix` undoes `mix`, and the bins split `0..2^32` into `K`
/// ranges of near-equal size, in order.
#[test]
fn the_reference_is_consistent() {
    let mut rng = Rng(1);
    for x in [0, 1, u64::MAX, 1 << 63].into_iter().chain((0..1000).map(|_| rng.next())) {
        assert_eq!(mix(unmix(x)), x);
        assert_eq!(unmix(mix(x)), x);
    }
    for k in [1, 3, 128, 1000] {
        let naive = Naive::new(k, 0);
        assert_eq!(naive.bin(0), 0);
        assert_eq!(naive.bin(u64::from(u32::MAX)), k - 1);
        assert_eq!(naive.bin(u64::MAX), k - 1); // high bits do not count
    }
    assert_eq!(Naive::value(u64::MAX), u32::MAX - 1);
    assert_eq!(Naive::new(0, 0).k(), 1);
    assert_eq!(Naive::new(MAX_PERM + 1, 0).k(), MAX_PERM);
}

#[test]
fn random_sets_at_every_size() {
    let mut rng = Rng(7);
    let sizes = [1, 2, 3, 4, 5, 7, 10, 20, 33, 64, 100, 300, 2000];
    for k in [0, 1, 2, 3, 5, 8, 31, 64, 100, 128, 129, 256, 1000, MAX_PERM, MAX_PERM + 1] {
        let seeds: &[u64] = if k > 256 { &[3] } else { &[0, 1, 42, 0xdead_beef, u64::MAX] };
        for &seed in seeds {
            let (mh, naive) = (MinHasher::new(k, seed), Naive::new(k, seed));
            for size in sizes {
                let features: Vec<u64> = (0..size).map(|_| rng.next()).collect();
                check(&mh, &naive, &features, &format!("k {k}, seed {seed}, random"));
                // Small integers: the hashes callers least expect.
                let small: Vec<u64> = (0..size as u64).collect();
                check(&mh, &naive, &small, &format!("k {k}, seed {seed}, 0..{size}"));
            }
        }
    }
}

#[test]
fn empty_one_repeated_and_extreme_features() {
    let mut rng = Rng(11);
    for (k, seed) in [(1, 0), (2, 5), (16, 9), (128, 0), (129, u64::MAX)] {
        let (mh, naive) = (MinHasher::new(k, seed), Naive::new(k, seed));
        let what = format!("k {k}, seed {seed}");
        check(&mh, &naive, &[], &what);
        let extremes = [0, 1, u64::MAX, u64::MAX - 1, 1 << 63, 1 << 32, 0xffff_ffff, 0xdead_beef];
        for x in extremes {
            check(&mh, &naive, &[x], &format!("{what}, one feature {x:#x}"));
            check(&mh, &naive, &[x; 50], &format!("{what}, {x:#x} fifty times"));
        }
        check(&mh, &naive, &extremes, &what);
        // Equal low or high halves, one bit apart.
        let halves: Vec<u64> = (0..40).flat_map(|i| [i << 32, i, (i << 32) | i, !i]).collect();
        check(&mh, &naive, &halves, &format!("{what}, halves"));
        // Order and repetition: the set's signature.
        for size in [2, 5, 40, 300] {
            let set: Vec<u64> = (0..size).map(|_| rng.next()).collect();
            let mut messy: Vec<u64> =
                set.iter().chain(&set).chain(&set[..size / 2]).copied().collect();
            for i in (1..messy.len()).rev() {
                messy.swap(i, rng.below(i as u64 + 1) as usize);
            }
            check(&mh, &naive, &messy, &format!("{what}, {size} shuffled with repeats"));
            assert_eq!(mh.signature(messy), naive.signature(set));
        }
    }
}

/// Features whose mixes are chosen (through `unmix`): in chosen bins, at the bins' edges,
/// with the largest high halves (values clamped to `2^32 - 2`), several in a bin, and
/// every number of filled slots from 1 to `K`, so every densification is exercised.
#[test]
fn features_in_chosen_bins() {
    let mut rng = Rng(13);
    for (k, seed) in [(1, 0), (7, 1), (64, 2), (100, 3), (128, 0), (1000, 4)] {
        let (mh, naive) = (MinHasher::new(k, seed), Naive::new(k, seed));
        // The first and last low half of bin `b`: ceil(b 2^32 / K) and the next bin's less 1.
        let first = |b: usize| ((b as u64) << 32).div_ceil(k as u64);
        let last = |b: usize| first(b + 1) - 1;
        for b in [0, 1, k / 2, k - 1].into_iter().filter(|&b| b < k) {
            assert_eq!((naive.bin(first(b)), naive.bin(last(b))), (b, b));
        }
        // A feature in bin `b` at its first (even `edge`) or last low half, of `value`.
        let feature = |b: usize, edge: u64, value: u64| {
            let low = if edge.is_multiple_of(2) { first(b) } else { last(b) };
            naive.feature_with_mix((value << 32) | low)
        };
        let what = format!("k {k}, seed {seed}");
        // High halves of all ones and one less: both value 2^32 - 2, so equal slots.
        let top = [feature(0, 0, 0xffff_ffff), feature(k - 1, 1, 0xffff_fffe)];
        check(&mh, &naive, &top, &format!("{what}, top values"));
        let sig = naive.signature(top).unwrap();
        assert!(sig.iter().all(|&v| v == u32::MAX - 1), "{what}: {sig:?}");
        check(&mh, &naive, &[feature(k / 2, 1, 0xffff_ffff)], &what);
        // Several features in one bin: its least value, everywhere.
        let crowded: Vec<u64> =
            (0..20).map(|i| feature(k / 3, i, rng.below(1 << 32) | 1 << 20)).collect();
        check(&mh, &naive, &crowded, &format!("{what}, one crowded bin"));
        // f filled slots of K, for every f (a sample of them for large K).
        let counts: Vec<usize> =
            if k <= 128 { (1..=k).collect() } else { vec![1, 2, 5, 31, 32, 33, k / 2, k - 1, k] };
        for f in counts {
            let mut bins: Vec<usize> = (0..k).collect();
            for i in (1..k).rev() {
                bins.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let mut features = Vec::new();
            for &b in &bins[..f] {
                for edge in 0..=rng.below(3) {
                    features.push(feature(b, edge, rng.below(1 << 32)));
                }
            }
            let filled: BTreeSet<usize> = bins[..f].iter().copied().collect();
            let got: BTreeSet<usize> = features.iter().map(|&h| naive.bin_of(h)).collect();
            assert_eq!(got, filled);
            check(&mh, &naive, &features, &format!("{what}, {f} filled slots"));
        }
    }
}

#[test]
fn band_hashes_equal_the_reference() {
    let mut rng = Rng(17);
    let mut sigs: Vec<Vec<u32>> =
        (0..20).map(|_| (0..128).map(|_| rng.next() as u32).collect()).collect();
    sigs.push(vec![0; 128]);
    sigs.push(vec![u32::MAX - 1; 128]);
    sigs.push(vec![EMPTY; 128]);
    let naive = Naive::new(128, 5);
    for size in [1, 3, 50, 1000] {
        let features: Vec<u64> = (0..size).map(|_| rng.next()).collect();
        sigs.push(naive.signature(features).unwrap());
    }
    let bandings = [
        (0, 3),
        (1, 0),
        (1, 1),
        (1, 2),
        (1, 3),
        (4, 2),
        (37, 3),
        (42, 3),
        (25, 5),
        (14, 9),
        (5, 25),
        (16, 8),
        (1, 128),
        (128, 1),
        (3, 7),
    ];
    for sig in &sigs {
        for (bands, rows) in bandings {
            let mut got = vec![0; bands];
            band_hashes(sig, bands, rows, &mut got);
            assert_eq!(got, naive::band_hashes(sig, bands, rows), "{bands} × {rows}");
        }
    }
}

#[test]
fn estimates_count_the_agreeing_slots() {
    let mut rng = Rng(19);
    for k in [1, 7, 128] {
        let (mh, naive) = (MinHasher::new(k, 0), Naive::new(k, 0));
        for (size, common) in [(1, 0), (1, 1), (4, 2), (10, 7), (100, 50), (300, 299)] {
            let shared: Vec<u64> = (0..common).map(|_| rng.next()).collect();
            let a: Vec<u64> =
                shared.iter().copied().chain((common..size).map(|_| rng.next())).collect();
            let b: Vec<u64> =
                shared.iter().copied().chain((common..size).map(|_| rng.next())).collect();
            let (sa, sb) =
                (naive.signature(a.clone()).unwrap(), naive.signature(b.clone()).unwrap());
            let want = naive::agreeing_slots(&sa, &sb) as f64 / k as f64;
            let (ga, gb) = (mh.signature(a).unwrap(), mh.signature(b).unwrap());
            assert_eq!(estimate_jaccard(&ga, &gb).to_bits(), want.to_bits(), "k {k}");
        }
        let empty = vec![EMPTY; k];
        assert_eq!(estimate_jaccard(&empty, &empty).to_bits(), 0f64.to_bits());
        assert_eq!(naive::agreeing_slots(&empty, &empty), 0);
    }
}
