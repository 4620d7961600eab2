//! What `explain` shows of two texts: their simhash fingerprints and distance, and for
//! MinHash their shingle sets, exact Jaccard, the MinHash estimate and the LSH bands that
//! meet; all from the fingerprinter and sketcher `dedup` reads with.

use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::lsh::{self, DocSketch, Sketcher};

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

/// One shingle: its hash and the text it covers (as the record that has it wrote it; A's
/// for a shared one).
#[derive(Debug)]
pub struct Shingle {
    /// The shingle's hash.
    pub hash: u64,
    /// The text it covers.
    pub text: String,
}

/// The shingle sets compared (MinHash).
#[derive(Debug)]
pub struct Sets {
    /// The first shingles of each group, in the order of their first occurrence in A (in B
    /// for `only_b`).
    pub shared: Vec<Shingle>,
    /// The first shingles only A has.
    pub only_a: Vec<Shingle>,
    /// The first shingles only B has.
    pub only_b: Vec<Shingle>,
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
    /// LSH bands.
    pub bands: usize,
    /// Rows a band.
    pub rows: usize,
}

/// What dedup's matching sees of the two texts.
#[derive(Debug)]
pub struct Analysis {
    /// What A's text gives.
    pub a: Side,
    /// What B's text gives.
    pub b: Side,
    /// Bits the fingerprints differ in (none: either has no features).
    pub distance: Option<u32>,
    /// MinHash only.
    pub sets: Option<Sets>,
    /// MinHash only: what the pair is, read with B as the record that would go (`.0`) and
    /// with A (`.1`).
    pub relations: Option<(Related, Related)>,
}

/// A pair's [`Relation`](lsh::Relation) read with one side as the record that would go:
/// the relation, its counts and the runs each side has alone, as text.
#[derive(Debug)]
pub struct Related {
    /// The engine's evidence (token positions, counts, the relation).
    pub evidence: lsh::Evidence,
    /// The removed side's runs, as their tokens joined by spaces (cut).
    pub removed_alone: Vec<String>,
    /// The kept side's runs.
    pub kept_alone: Vec<String>,
}

/// Runs shown per side, and tokens per run.
const RUNS_SHOWN: usize = 12;
const RUN_TOKENS_SHOWN: usize = 40;

/// The relation of `removed` to `kept`, with their runs as text.
fn related(fingerprinter: &Fingerprinter, removed: &str, kept: &str) -> Related {
    let tokens = |text: &str| {
        let mut out: (Vec<u32>, Vec<String>) = (Vec::new(), Vec::new());
        fingerprinter.for_each_token(text, |w, t| {
            out.0.push(w);
            out.1.push(t.to_string());
        });
        out
    };
    let ((rw, rt), (kw, kt)) = (tokens(removed), tokens(kept));
    let evidence = lsh::evidence(&rw, &kw);
    let show = |runs: &[std::ops::Range<usize>], text: &[String]| {
        runs.iter()
            .take(RUNS_SHOWN)
            .map(|r| {
                let mut run = text[r.start..r.end.min(r.start + RUN_TOKENS_SHOWN)].join(" ");
                if r.len() > RUN_TOKENS_SHOWN {
                    run.push_str(" ...");
                }
                run
            })
            .collect()
    };
    let removed_alone = show(&evidence.removed_runs, &rt);
    let kept_alone = show(&evidence.kept_runs, &kt);
    Related { evidence, removed_alone, kept_alone }
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
    let sets = sketcher.zip(pair.as_ref()).map(|(sketcher, (sa, sb))| {
        let mut sets = compare(sketcher, sa.as_ref(), sb.as_ref());
        let (set_a, set_b) = (side_a.shingles.as_deref(), side_b.shingles.as_deref());
        let in_b = |h: u64| set_b.is_some_and(|s| s.binary_search(&h).is_ok());
        let in_a = |h: u64| set_a.is_some_and(|s| s.binary_search(&h).is_ok());
        for (hash, text) in in_order(fingerprinter, a) {
            let list = if in_b(hash) { &mut sets.shared } else { &mut sets.only_a };
            if list.len() < listed {
                list.push(Shingle { hash, text });
            }
        }
        for (hash, text) in in_order(fingerprinter, b) {
            if !in_a(hash) && sets.only_b.len() < listed {
                sets.only_b.push(Shingle { hash, text });
            }
        }
        sets
    });
    // A record without features matches no other: no relation is read for it.
    let both = pair.as_ref().filter(|(sa, sb)| sa.is_some() && sb.is_some());
    let relations = both.map(|_| (related(fingerprinter, b, a), related(fingerprinter, a, b)));
    Analysis { a: side_a, b: side_b, distance, sets, relations }
}

/// The distinct shingles of `text` in the order of their first occurrence, with their text.
fn in_order(fingerprinter: &Fingerprinter, text: &str) -> Vec<(u64, String)> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    fingerprinter.for_each_shingle_text(text, |hash, covered| {
        if seen.insert(hash) {
            out.push((hash, covered.to_string()));
        }
    });
    out
}

/// The two sketches' sets, signatures and band keys compared (the lists left empty).
fn compare(sketcher: &Sketcher, first: Option<&DocSketch>, second: Option<&DocSketch>) -> Sets {
    let empty: &[u64] = &[];
    let (set_a, set_b) =
        (first.map_or(empty, DocSketch::set), second.map_or(empty, DocSketch::set));
    let shared = simhash_core::intersection_size(set_a, set_b);
    let mut sets = Sets {
        shared: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
        counts: [shared, set_a.len() - shared, set_b.len() - shared],
        jaccard: 0.0,
        estimate: 0.0,
        num_perm: sketcher.minhasher().num_perm(),
        bands_met: Vec::new(),
        bands: sketcher.banding().bands,
        rows: sketcher.banding().rows,
    };
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
