//! Scoring a prediction against the truth, and the scores as text.

use std::collections::HashMap;
use std::fmt::Write as _;

use simhash_cluster::UnionFind;

use super::read::{Ids, Side};
use crate::error::{Context, Result};

/// Tiers of the shared dev set, listed in this order; any other tier follows, sorted.
const TIER_ORDER: [&str; 4] = ["easy", "medium", "hard", "very-hard"];

/// Cluster number of every id in `0..n` after joining `edges`.
pub(super) fn partition(n: usize, edges: &[(u32, u32)]) -> Result<Vec<u32>> {
    let mut uf = UnionFind::try_new(n).context("too many ids")?;
    for &(a, b) in edges {
        uf.union(a, b).context("clustering failed")?;
    }
    let mut label = vec![0u32; n];
    for (c, members) in uf.into_clusters().iter().enumerate() {
        for &m in members {
            label[m as usize] = c as u32;
        }
    }
    Ok(label)
}

/// The pairs among `n` documents.
pub(super) fn pairs_of(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// `num / den`, or 1 when there is nothing to divide.
pub(super) fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 { 1.0 } else { num / den }
}

/// The harmonic mean of precision `p` and recall `r` (0 when both are 0).
pub(super) fn f1(p: f64, r: f64) -> f64 {
    if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) }
}

/// The scores, as printed and as written with `--json`.
#[derive(Debug, serde::Serialize)]
pub struct Scores {
    /// Documents: every id either side names.
    pub documents: usize,
    /// Pairs in one true cluster.
    pub true_pairs: u64,
    /// Pairs in one predicted cluster.
    pub predicted_pairs: u64,
    /// Pairs in both.
    pub true_positive_pairs: u64,
    /// Predicted pairs not in one true cluster.
    pub false_positive_pairs: u64,
    /// Pair precision: true positives over predicted pairs.
    pub precision: f64,
    /// Pair recall: true positives over true pairs.
    pub recall: f64,
    /// Pair F1.
    pub f1: f64,
    /// B-cubed precision, averaged over documents.
    pub bcubed_precision: f64,
    /// B-cubed recall, averaged over documents.
    pub bcubed_recall: f64,
    /// B-cubed F1.
    pub bcubed_f1: f64,
    /// Predicted edges (pairs as listed, before closing them) that join two true clusters.
    pub false_edges: u64,
    /// Predicted edges, as listed.
    pub predicted_edges: u64,
    /// Predicted ids that the truth does not mention (scored as singletons in the truth).
    pub unknown_ids: usize,
    /// Recall per tier of labelled pairs.
    pub tiers: Vec<TierScore>,
    /// Labelled negative pairs that the prediction put in one cluster.
    pub negatives_merged: u64,
    /// Labelled negative pairs.
    pub negatives: u64,
}

/// The recall of one tier of labelled positive pairs.
#[derive(Debug, serde::Serialize)]
pub struct TierScore {
    /// The tier's name.
    pub tier: String,
    /// Its positive pairs.
    pub pairs: u64,
    /// Those the prediction put in one cluster.
    pub found: u64,
    /// Found over pairs.
    pub recall: f64,
}

/// Scores the prediction `pred` against the truth (`known`: the ids the truth names).
pub(super) fn score(ids: &Ids, truth: &Side, pred: &Side, known: &[bool]) -> Result<Scores> {
    let n = ids.names.len();
    let t = partition(n, &truth.edges)?;
    let p = partition(n, &pred.edges)?;
    let mut tsize: HashMap<u32, u64> = HashMap::new();
    let mut psize: HashMap<u32, u64> = HashMap::new();
    let mut joint: HashMap<(u32, u32), u64> = HashMap::new();
    for d in 0..n {
        *tsize.entry(t[d]).or_default() += 1;
        *psize.entry(p[d]).or_default() += 1;
        *joint.entry((t[d], p[d])).or_default() += 1;
    }
    let tp: u64 = joint.values().map(|&c| pairs_of(c)).sum();
    let true_pairs: u64 = tsize.values().map(|&c| pairs_of(c)).sum();
    let predicted_pairs: u64 = psize.values().map(|&c| pairs_of(c)).sum();
    let (precision, recall) =
        (ratio(tp as f64, predicted_pairs as f64), ratio(tp as f64, true_pairs as f64));
    let (mut bp, mut br) = (0.0, 0.0);
    for d in 0..n {
        let inter = joint[&(t[d], p[d])] as f64;
        bp += inter / psize[&p[d]] as f64;
        br += inter / tsize[&t[d]] as f64;
    }
    let (bp, br) = if n == 0 { (1.0, 1.0) } else { (bp / n as f64, br / n as f64) };

    let mut tiers: HashMap<String, (u64, u64)> = HashMap::new();
    let (mut negatives, mut negatives_merged) = (0, 0);
    for pair in &truth.labelled {
        let hit = p[pair.a as usize] == p[pair.b as usize];
        if pair.positive {
            if let Some(tier) = &pair.tier {
                let e = tiers.entry(tier.clone()).or_default();
                e.0 += 1;
                e.1 += u64::from(hit);
            }
        } else {
            negatives += 1;
            negatives_merged += u64::from(hit);
        }
    }
    let mut tiers: Vec<TierScore> = tiers
        .into_iter()
        .map(|(tier, (pairs, found))| TierScore {
            recall: ratio(found as f64, pairs as f64),
            tier,
            pairs,
            found,
        })
        .collect();
    let rank = |tier: &str| TIER_ORDER.iter().position(|t| *t == tier).unwrap_or(TIER_ORDER.len());
    tiers.sort_by(|x, y| rank(&x.tier).cmp(&rank(&y.tier)).then_with(|| x.tier.cmp(&y.tier)));

    let false_edges = pred.edges.iter().filter(|&&(a, b)| t[a as usize] != t[b as usize]).count();
    let mut unknown: Vec<u32> =
        pred.mentioned.iter().copied().filter(|&d| !known[d as usize]).collect();
    unknown.sort_unstable();
    unknown.dedup();
    Ok(Scores {
        documents: n,
        true_pairs,
        predicted_pairs,
        true_positive_pairs: tp,
        false_positive_pairs: predicted_pairs - tp,
        precision,
        recall,
        f1: f1(precision, recall),
        bcubed_precision: bp,
        bcubed_recall: br,
        bcubed_f1: f1(bp, br),
        false_edges: false_edges as u64,
        predicted_edges: pred.edges.len() as u64,
        unknown_ids: unknown.len(),
        tiers,
        negatives_merged,
        negatives,
    })
}

/// The scores as printed (the text report).
pub fn render(s: &Scores) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "documents {}  true pairs {}  predicted pairs {}  (false positives {})",
        s.documents, s.true_pairs, s.predicted_pairs, s.false_positive_pairs
    );
    let _ = writeln!(
        out,
        "pairwise  precision {:.4}  recall {:.4}  F1 {:.4}",
        s.precision, s.recall, s.f1
    );
    let _ = writeln!(
        out,
        "B-cubed   precision {:.4}  recall {:.4}  F1 {:.4}",
        s.bcubed_precision, s.bcubed_recall, s.bcubed_f1
    );
    let _ = writeln!(
        out,
        "edges     {} predicted, {} join different true clusters",
        s.predicted_edges, s.false_edges
    );
    for t in &s.tiers {
        let _ = writeln!(
            out,
            "tier {:<12} recall {:.4}  ({} of {} pairs)",
            t.tier, t.recall, t.found, t.pairs
        );
    }
    if s.negatives > 0 {
        let _ = writeln!(out, "negative pairs merged: {} of {}", s.negatives_merged, s.negatives);
    }
    if s.unknown_ids > 0 {
        let _ = writeln!(
            out,
            "note: {} predicted ids are not in the truth (scored as singletons there)",
            s.unknown_ids
        );
    }
    out
}
