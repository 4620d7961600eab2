//! Tests of LSH banding and candidate pairs.

use super::candidates::{Unit, units};
use super::*;

#[test]
fn column_errors_stop_the_scan() {
    let m = [1u64, 2, 1, 2, 1, 2];
    let r = candidate_pairs_from_columns(
        3,
        2,
        |band| {
            if band == 1 { Err("disk") } else { Ok(vec![m[band], m[2 + band], m[4 + band]]) }
        },
        |_, _, _| Ok(()),
        |_| {},
    );
    assert_eq!(r, Err("disk"));
    let r = candidate_pairs_from_columns(
        3,
        2,
        |band| Ok(vec![m[band], m[2 + band], m[4 + band]]),
        |_, _, _| Err("rows"),
        |_| {},
    );
    assert_eq!(r, Err("rows"));
}

#[test]
fn narrow_hashes_only_add_candidates() {
    // u64 hashes whose low bytes collide often when truncated to u8.
    let mut x = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % 40 * 0x0101_0101_0101_0100 + x % 7
    };
    let (n, bands) = (300, 4);
    let wide: Vec<u64> = (0..n * bands).map(|_| next()).collect();
    let narrow: Vec<u8> = wide.iter().map(|&h| h as u8).collect();
    let (w, t) = (candidate_pairs(&wide, bands), candidate_pairs(&narrow, bands));
    assert!(t.len() > w.len(), "the test should make narrow collisions");
    assert!(w.iter().all(|c| t.binary_search(c).is_ok()));
    let mut unique = t.clone();
    unique.dedup();
    assert_eq!(unique.len(), t.len(), "a pair emitted twice");
}

fn brute(m: &[u64], bands: usize) -> Vec<Candidate> {
    let n = m.len() / bands;
    let mut out = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            if first_common_band(m, bands, a, b).is_some() {
                out.push(Candidate { a: a as u32, b: b as u32 });
            }
        }
    }
    out
}

/// Batches at 1 and 3 threads.
fn batches(m: &[u64], bands: usize, threads: usize) -> Vec<Vec<Candidate>> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut out = Vec::new();
    pool.install(|| candidate_pairs_with(m, bands, |b| out.push(b.to_vec())));
    out
}

/// The batches of [`candidate_pairs_from_columns`] over the same matrix.
fn column_batches(m: &[u64], bands: usize, threads: usize) -> Vec<Vec<Candidate>> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let n = m.len() / bands;
    let mut out = Vec::new();
    let asked = std::sync::atomic::AtomicUsize::new(0);
    pool.install(|| {
        candidate_pairs_from_columns(
            n,
            bands,
            |band| Ok::<_, ()>((0..n).map(|d| m[d * bands + band]).collect()),
            |docs, band, rows| {
                asked.fetch_add(docs.len(), std::sync::atomic::Ordering::Relaxed);
                assert!(docs.windows(2).all(|w| w[0] < w[1]), "docs not ascending");
                for &d in docs {
                    rows.extend_from_slice(&m[d as usize * bands..d as usize * bands + band]);
                }
                Ok(())
            },
            |b| out.push(b.to_vec()),
        )
    })
    .unwrap();
    // Each document's rows are read at most once a band (a huge group's once, for all its
    // units).
    assert!(asked.into_inner() <= n * bands);
    out
}

fn check(m: &[u64], bands: usize) {
    let one = batches(m, bands, 1);
    assert_eq!(one, batches(m, bands, 3), "output depends on the thread count");
    assert_eq!(one, column_batches(m, bands, 1), "columns and matrix differ");
    assert_eq!(one, column_batches(m, bands, 3), "columns and matrix differ");
    let mut all: Vec<Candidate> = one.concat();
    let emitted = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), emitted, "a pair emitted twice");
    assert_eq!(all, brute(m, bands));
    assert_eq!(candidate_pairs(m, bands), all);
    // The groups cover the same pairs.
    let mut from_groups = Vec::new();
    for_each_band_group(m, bands, |band, docs| {
        assert!(docs.windows(2).all(|w| w[0] < w[1]));
        for (i, &a) in docs.iter().enumerate() {
            for &b in &docs[i + 1..] {
                if first_common_band(m, bands, a as usize, b as usize) == Some(band) {
                    from_groups.push(Candidate { a, b });
                }
            }
        }
    });
    from_groups.sort_unstable();
    assert_eq!(from_groups, all);
}

use crate::test_rng::Rng;

#[test]
fn candidates_match_brute_force() {
    let mut rng = Rng(1);
    // Random hashes from small alphabets, so bands collide often.
    for (n, bands, alphabet) in [(200, 4, 20), (150, 8, 6), (60, 1, 3), (90, 3, 2), (40, 16, 40)] {
        let m: Vec<u64> = (0..n * bands).map(|_| rng.next() % alphabet).collect();
        check(&m, bands);
    }
    // Edge sizes.
    check(&[], 4);
    check(&[1, 2, 3, 4], 4);
    check(&[5, 5], 1);
    // All identical: every pair, owned by band 0.
    let m = vec![9u64; 50 * 5];
    check(&m, 5);
    assert_eq!(candidate_pairs(&m, 5).len(), 50 * 49 / 2);
    // Groups of duplicates plus near-duplicates that share only a later band.
    let mut m = Vec::new();
    for d in 0..120u64 {
        let group = d % 7;
        for band in 0..6u64 {
            let shared = band >= 4 || d % 3 == 0;
            m.push(if shared { group * 100 + band } else { rng.next() });
        }
    }
    check(&m, 6);
}

#[test]
fn units_cover_every_row() {
    // One huge group, split by rows, with small groups around it.
    let mut entries: Vec<(u64, u32)> = (0..40).map(|d| (5, d)).collect();
    entries.insert(0, (1, 100));
    entries.extend([(7, 101), (7, 102), (9, 103)]);
    let units = units(&entries);
    let mut rows = 0;
    let mut covered = Vec::new();
    for u in &units {
        match u {
            Unit::Groups(r) => covered.push(r.clone()),
            Unit::Rows { group, rows: r } => {
                assert_eq!(group.clone(), 1..41);
                assert_eq!(r.start, rows);
                rows = r.end;
            }
        }
    }
    assert_eq!(rows, 39);
    assert_eq!(covered, [0..1, 41..44]);
}

#[test]
fn banding_for_thresholds() {
    // datasketch's _optimal_param at 128 permutations (0.5 / 0.5 weights).
    // (Computed with a fine numerical integral in place of scipy's quad.)
    let want = [(37, 3), (32, 4), (25, 5), (18, 7), (14, 9), (9, 13), (5, 25)];
    for (t, want) in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].into_iter().zip(want) {
        let b = Banding::for_threshold(t, 128).unwrap();
        assert_eq!((b.bands, b.rows), want, "threshold {t}");
        assert!(b.probability(t) > 0.2 && b.probability(t) < 0.8, "{t}: {b:?}");
    }
    for t in [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] {
        let b = Banding::for_threshold(t, 128).unwrap();
        // The curve is steep around the threshold.
        assert!(b.probability((t + 0.2).min(1.0)) > 0.9, "{t}: {b:?}");
        assert!(b.probability((t - 0.2).max(0.0)) < 0.1, "{t}: {b:?}");
    }
    // Weighting false negatives more moves the curve left.
    let even = Banding::for_threshold(0.5, 128).unwrap();
    let recall = Banding::for_threshold_weighted(0.5, 128, 0.1, 0.9).unwrap();
    assert!(recall.probability(0.5) > even.probability(0.5));
    assert_eq!(Banding::for_threshold(0.5, 1).unwrap(), Banding { bands: 1, rows: 1 });
}

#[test]
fn bad_configurations_are_errors() {
    for t in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let e = Banding::for_threshold(t, 128).unwrap_err();
        assert_eq!(e.kind(), LshErrorKind::Threshold);
        assert!(e.to_string().contains("strictly between 0 and 1"), "{e}");
    }
    for (fp, fnr) in [(0.0, 0.0), (-1.0, 1.0), (f64::NAN, 1.0), (1.0, f64::INFINITY)] {
        let e = Banding::for_threshold_weighted(0.5, 128, fp, fnr).unwrap_err();
        assert_eq!(e.kind(), LshErrorKind::Weights);
    }
    for (bands, rows) in [(0, 3), (3, 0), (0, 0)] {
        let e = Banding::new(bands, rows).unwrap_err();
        assert_eq!(e.kind(), LshErrorKind::Empty);
        assert_eq!(
            e.to_string(),
            format!("bands ({bands}) and rows ({rows}) must both be at least 1")
        );
    }
    for (bands, rows) in [(1000, 1000), (1025, 1), (1, 1025), (usize::MAX, 2), (33, 32)] {
        let e = Banding::new(bands, rows).unwrap_err();
        assert_eq!(e.kind(), LshErrorKind::TooLong, "{bands} x {rows}");
    }
    assert_eq!(Banding::new(4, 3).unwrap().num_perm(), 12);
    assert_eq!(Banding::new(32, 32).unwrap().num_perm(), simhash_core::MAX_PERM);
}

#[test]
fn num_perm_is_clamped_as_the_minhasher_clamps_it() {
    // Every banding for_threshold returns fits the MinHasher built with the same num_perm.
    for num_perm in [0, 1, 2, 128, simhash_core::MAX_PERM, simhash_core::MAX_PERM + 1, usize::MAX] {
        let b = Banding::for_threshold(0.5, num_perm).unwrap();
        let mh = simhash_core::MinHasher::new(num_perm, 0);
        assert!(b.num_perm() <= mh.num_perm(), "{num_perm}: {b:?}");
        assert_eq!(Banding::new(b.bands, b.rows), Ok(b));
    }
    assert_eq!(Banding::for_threshold(0.5, 0).unwrap(), Banding { bands: 1, rows: 1 });
}

#[test]
#[should_panic(expected = "not a multiple of bands")]
fn ragged_matrix_panics() {
    candidate_pairs(&[1, 2, 3], 2);
}

/// `band_owns` is `first_common_band` seen from one band group: for every pair sharing band
/// `j`, band `j` owns it exactly when `j` is their first common band (narrow random values,
/// so most pairs share several bands).
#[test]
fn band_owns_is_the_first_common_band() {
    let bands = 5;
    let mut state = 7u64;
    let m: Vec<u64> = (0..40 * bands)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 61) % 3
        })
        .collect();
    let mut owned = 0;
    for a in 0..40 {
        for b in a + 1..40 {
            let (ra, rb) = (&m[a * bands..(a + 1) * bands], &m[b * bands..(b + 1) * bands]);
            for j in (0..bands).filter(|&j| ra[j] == rb[j]) {
                let owns = band_owns(&ra[..j], &rb[..j]);
                assert_eq!(owns, first_common_band(&m, bands, a, b) == Some(j), "{a} {b} {j}");
                owned += usize::from(owns);
            }
        }
    }
    assert_eq!(owned, brute(&m, bands).len());
}

/// Texts with one shingle set are copies only when their tokens are the same too: at
/// `--window 1` "Alice pays Bob" and "Bob pays Alice" share a set, and so does a text with
/// its words shuffled at any window of 1. They once followed the first of them as copies
/// (`same`, removed even with template siblings kept, a text of its own removed); now their
/// relation is read, in `dedup`, `pairs` and `clusters` alike, in memory and spilled. A
/// copy with the same tokens (another case) is still one.
#[test]
fn one_set_in_another_order_is_not_a_copy() {
    let words = "the quick brown fox jumps over the lazy dog while a slow red hen watches from \
                 the old barn near the river bank and the farmer counts his sheep in the morning \
                 light before breakfast";
    let mut shuffled: Vec<&str> = words.split(' ').collect();
    shuffled.reverse();
    let texts = [
        "Alice pays Bob five dollars for the old bicycle".to_string(),
        "Bob pays Alice five dollars for the old bicycle".to_string(),
        "ALICE PAYS BOB FIVE DOLLARS FOR THE OLD BICYCLE!".to_string(),
        words.to_string(),
        shuffled.join(" "),
    ];
    for spill in [false, true] {
        let fp = simhash_core::Fingerprinter::builder().window(1).build();
        let build = |templates| {
            let mut d = MinHashDedup::builder()
                .fingerprinter(fp.clone())
                .templates(templates)
                .spill_to_disk(spill)
                .build()
                .expect("engine");
            d.extend_texts(&texts).expect("texts");
            d
        };
        let mut keep = build(Templates::Keep);
        let got = keep.dedup().expect("dedup");
        // The names swapped are template siblings: kept with them; the copy in capitals is
        // the same text; the shuffled text has an order of its own: kept.
        assert_eq!(got[1], Decision::Keep, "spill {spill}");
        assert!(
            matches!(got[2], Decision::Duplicate { of: 0, relation: Relation::Same, .. }),
            "{:?}",
            got[2]
        );
        assert_eq!(got[4], Decision::Keep, "spill {spill}");
        let mut remove = build(Templates::Remove);
        let got = remove.dedup().expect("dedup");
        assert!(
            matches!(got[1], Decision::Duplicate { of: 0, relation: Relation::Template, .. }),
            "{:?}",
            got[1]
        );
        assert_eq!(got[4], Decision::Keep, "spill {spill}");
        let pairs = build(Templates::Keep).pairs().expect("pairs");
        let listed: Vec<(usize, usize)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        assert_eq!(listed, [(0, 2)], "spill {spill}");
        let clusters = build(Templates::Keep).clusters().expect("clusters");
        assert_eq!(clusters, [vec![0, 2], vec![1], vec![3], vec![4]], "spill {spill}");
    }
}
