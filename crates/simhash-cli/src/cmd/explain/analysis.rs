//! What `explain` shows of two texts: their simhash fingerprints and distance, and for
//! MinHash their shingle sets, exact Jaccard, the MinHash estimate and the LSH bands that
//! meet; all from the fingerprinter and sketcher `dedup` reads with.

use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::lsh::{DocSketch, Sketcher};

/// One text, as dedup sees it.
#[derive(Debug)]
pub struct Side {
    /// Bytes of text.
    pub bytes: usize,
    /// The simhash fingerprint (none: no features).
    pub fingerprint: Option<Fingerprint>,
    /// The distinct shingle hashes, ascending (MinHash only).
    pub shingles: Option<Vec<u64>>,
}

/// The shingle sets compared (MinHash).
#[derive(Debug)]
pub struct Sets {
    pub shared: Vec<u64>,
    pub only_a: Vec<u64>,
    pub only_b: Vec<u64>,
    /// Counts of each group (the lists above are the first `--shingles` of each).
    pub counts: [usize; 3],
    /// Exact Jaccard of the two sets (0 when either is empty).
    pub jaccard: f64,
    /// The MinHash estimate: the share of equal signature slots.
    pub estimate: f64,
    /// Signature slots (`--num-perm`).
    pub num_perm: usize,
    /// The LSH bands whose keys are equal, ascending.
    pub bands_met: Vec<usize>,
    pub bands: usize,
    pub rows: usize,
}

/// What dedup's matching sees of the two texts.
#[derive(Debug)]
pub struct Analysis {
    pub a: Side,
    pub b: Side,
    /// Bits the fingerprints differ in (none: either has no features).
    pub distance: Option<u32>,
    /// MinHash only.
    pub sets: Option<Sets>,
}

/// Analyses texts `a` and `b` with `fingerprinter` and, for MinHash, `sketcher`; `listed`
/// shingles of each group are kept.
pub fn analyse(
    fingerprinter: &Fingerprinter,
    sketcher: Option<&Sketcher>,
    a: &str,
    b: &str,
    listed: usize,
) -> Analysis {
    let pair = sketcher.map(|s| (s.sketch(fingerprinter, a).1, s.sketch(fingerprinter, b).1));
    let side = |text: &str, sketch: Option<&Option<DocSketch>>| Side {
        bytes: text.len(),
        fingerprint: fingerprinter.fingerprint(text),
        shingles: sketch.map(|s| s.as_ref().map_or_else(Vec::new, |s| s.set().to_vec())),
    };
    let (side_a, side_b) =
        (side(a, pair.as_ref().map(|s| &s.0)), side(b, pair.as_ref().map(|s| &s.1)));
    let distance = match (side_a.fingerprint, side_b.fingerprint) {
        (Some(x), Some(y)) => Some(x.distance(y)),
        _ => None,
    };
    let sets = sketcher
        .zip(pair.as_ref())
        .map(|(sketcher, (sa, sb))| compare(sketcher, sa.as_ref(), sb.as_ref(), listed));
    Analysis { a: side_a, b: side_b, distance, sets }
}

/// The two sketches' sets, signatures and band keys compared.
fn compare(
    sketcher: &Sketcher,
    first: Option<&DocSketch>,
    second: Option<&DocSketch>,
    listed: usize,
) -> Sets {
    let empty: &[u64] = &[];
    let (set_a, set_b) =
        (first.map_or(empty, DocSketch::set), second.map_or(empty, DocSketch::set));
    let mut sets = Sets {
        shared: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
        counts: [0; 3],
        jaccard: 0.0,
        estimate: 0.0,
        num_perm: sketcher.minhasher().num_perm(),
        bands_met: Vec::new(),
        bands: sketcher.banding().bands,
        rows: sketcher.banding().rows,
    };
    let (mut at_a, mut at_b) = (0, 0);
    let push = |group: usize, hash: u64, sets: &mut Sets| {
        sets.counts[group] += 1;
        let list = match group {
            0 => &mut sets.shared,
            1 => &mut sets.only_a,
            _ => &mut sets.only_b,
        };
        if list.len() < listed {
            list.push(hash);
        }
    };
    while at_a < set_a.len() || at_b < set_b.len() {
        match (set_a.get(at_a), set_b.get(at_b)) {
            (Some(&x), Some(&y)) if x == y => {
                push(0, x, &mut sets);
                (at_a, at_b) = (at_a + 1, at_b + 1);
            }
            (Some(&x), Some(&y)) if x < y => {
                push(1, x, &mut sets);
                at_a += 1;
            }
            (Some(&x), None) => {
                push(1, x, &mut sets);
                at_a += 1;
            }
            (_, Some(&y)) => {
                push(2, y, &mut sets);
                at_b += 1;
            }
            (None, None) => break,
        }
    }
    if let (Some(a), Some(b)) = (first, second) {
        sets.jaccard = simhash_core::jaccard(a.set(), b.set());
        let signature = |s: &DocSketch| sketcher.minhasher().signature(s.set().iter().copied());
        if let (Some(x), Some(y)) = (signature(a), signature(b)) {
            sets.estimate = simhash_core::estimate_jaccard(&x, &y);
        }
        sets.bands_met = bands_met(a, b);
    }
    sets
}

/// The bands whose keys are equal: the whole 64-bit band hashes when both sketches have
/// them, else the 32-bit keys.
fn bands_met(a: &DocSketch, b: &DocSketch) -> Vec<usize> {
    match (a.band_hashes(), b.band_hashes()) {
        (Some(x), Some(y)) => (0..x.len()).filter(|&i| x[i] == y[i]).collect(),
        _ => (0..a.bands().len()).filter(|&i| a.bands()[i] == b.bands()[i]).collect(),
    }
}
