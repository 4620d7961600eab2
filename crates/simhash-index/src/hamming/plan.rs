//! The planner: how many blocks to use for `n` fingerprints at distance `k`.

use crate::hamming::tables::{ConfigError, MAX_TABLES, binomial, block_widths};

/// CPU nanoseconds per fingerprint per table for the scatter pass, the scan and the
/// bookkeeping. The three constants are fitted to `bench_all_pairs` runs on the reference
/// machine (a 2-core AMD EPYC VM) at 10M fingerprints and k = 3 with 4, 5 and 6 blocks
/// (2.2, 1.7 and 5.0 CPU seconds); see `docs/index.md`.
const NS_PER_ELEMENT: f64 = 3.0;
/// CPU nanoseconds per fingerprint per table per in-bucket radix pass (8 bits each).
const NS_PER_RADIX_PASS: f64 = 7.5;
/// CPU nanoseconds per candidate pair (a popcount in a run of equal prefixes).
const NS_PER_CANDIDATE: f64 = 0.6;

/// A recommended configuration for a batch job; see [`plan`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Plan {
    /// The recommended number of blocks `m` (or build the tables with [`Tables::from_plan`](crate::Tables::from_plan)).
    pub blocks: usize,
    /// The maximum distance `k` planned for.
    pub max_distance: u32,
    /// The number of tables, `C(m, m - k)`: one sorting pass over the input each.
    pub tables: usize,
    /// The shortest prefix of any table, in bits.
    pub prefix_bits: u32,
    /// The expected number of candidate pairs (fingerprints sharing a prefix, summed over
    /// tables) for uniformly random fingerprints: about `tables * n^2 / 2^(prefix_bits + 1)`.
    pub expected_candidates: f64,
    /// The expected peak memory of [`all_pairs_with`](crate::all_pairs_with) in bytes,
    /// input included: 24 bytes per fingerprint, plus the pairs in flight.
    pub peak_bytes: u64,
    /// The model's cost in CPU seconds on the reference machine (see `docs/index.md`).
    pub estimated_cpu_seconds: f64,
}

/// Recommends a number of blocks for all pairs among `n` fingerprints within
/// `max_distance` bits, from a cost model.
///
/// The model: each table costs one pass over the input (permute, scatter, a radix sort of
/// each bucket by the rest of its prefix, scan), and each candidate pair (two fingerprints
/// sharing a table's prefix) costs a popcount. More blocks mean longer prefixes, hence
/// fewer candidates, but more tables:
///
/// ```text
/// cost(m) = tables(m) * n * (c_element + passes(m) * c_pass) + candidates(m) * c_candidate
/// candidates(m) = sum over tables t of n (n - 1) / 2 / 2^prefix_bits(t)
/// ```
///
/// `docs/index.md` lists the constants and the plans for `n` up to 8 billion. Errors only
/// if `max_distance >= 64`.
///
/// ```
/// let plan = simhash_index::plan(10_000_000, 3)?;
/// assert!(plan.blocks > 3);
/// let tables = simhash_index::Tables::from_plan(&plan)?;
/// assert_eq!(tables.len(), plan.tables);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan(n: u64, max_distance: u32) -> Result<Plan, ConfigError> {
    if max_distance >= 64 {
        return Err(ConfigError::distance_too_large(max_distance));
    }
    let k = max_distance as usize;
    let mut best: Option<Plan> = None;
    for m in k + 1..=64 {
        let keep = (m - k) as u64;
        let tables = binomial(m as u64, keep);
        if tables > u128::from(MAX_TABLES) {
            // More blocks only add tables from here on (for a fixed k, C(m, m - k) grows).
            break;
        }
        let candidate = evaluate(n, m, max_distance);
        if best.as_ref().is_none_or(|b| candidate.estimated_cpu_seconds < b.estimated_cpu_seconds) {
            best = Some(candidate);
        }
    }
    // m = k + 1 always has k + 1 <= 64 tables, so there is always a plan.
    Ok(best.unwrap_or_else(|| evaluate(n, k + 1, max_distance)))
}

/// The model's figures for `n` fingerprints with `m` blocks at distance `k`.
fn evaluate(n: u64, m: usize, k: u32) -> Plan {
    let widths = block_widths(m);
    let narrow = widths[m - 1];
    let wide = widths.iter().filter(|&&w| w > narrow).count() as u64;
    let keep = m as u64 - u64::from(k);
    let n_f = n as f64;
    let pairs = n_f * (n_f - 1.0).max(0.0) / 2.0;
    let (mut tables, mut candidates, mut passes, mut min_prefix) = (0.0, 0.0, 0.0, u32::MAX);
    // A table with j wide blocks among its `keep` has a prefix of keep * narrow + j bits.
    for j in 0..=keep.min(wide) {
        if keep - j > m as u64 - wide {
            continue;
        }
        let count = (binomial(wide, j) * binomial(m as u64 - wide, keep - j)) as f64;
        let bits = keep as u32 * narrow + j as u32;
        min_prefix = min_prefix.min(bits);
        tables += count;
        candidates += count * pairs / 2f64.powi(bits as i32);
        let scatter_bits =
            crate::hamming::batch::scatter_bits(usize::try_from(n).unwrap_or(usize::MAX), bits);
        passes += count * f64::from((bits - scatter_bits).div_ceil(8));
    }
    let cost_ns = tables * n_f * NS_PER_ELEMENT
        + passes * n_f * NS_PER_RADIX_PASS
        + candidates * NS_PER_CANDIDATE;
    Plan {
        blocks: m,
        max_distance: k,
        tables: tables as usize,
        prefix_bits: min_prefix,
        expected_candidates: candidates,
        peak_bytes: n.saturating_mul(24),
        estimated_cpu_seconds: cost_ns / 1e9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tables;

    #[test]
    fn plan_agrees_with_tables() {
        for n in [0u64, 1, 1000, 10_000_000, 8_000_000_000] {
            for k in 0..10 {
                let p = plan(n, k).unwrap();
                let t = Tables::new(p.blocks, k).unwrap();
                assert_eq!(p.tables, t.len(), "n = {n}, k = {k}");
                assert_eq!(p.prefix_bits, t.min_prefix_bits());
                let cands: f64 = t
                    .iter()
                    .map(|t| {
                        (n as f64) * (n as f64 - 1.0).max(0.0)
                            / 2.0
                            / 2f64.powi(t.prefix_bits() as i32)
                    })
                    .sum();
                assert!((cands - p.expected_candidates).abs() <= 1e-6 * cands.max(1.0));
            }
        }
        assert!(plan(10, 64).is_err());
        assert!(plan(10, 63).is_ok());
    }

    #[test]
    fn more_fingerprints_want_longer_prefixes() {
        let small = plan(1_000, 3).unwrap();
        let big = plan(8_000_000_000, 3).unwrap();
        assert!(small.blocks <= big.blocks);
        assert!(big.prefix_bits >= 30);
    }
}
