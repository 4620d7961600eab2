//! The planner: how many blocks to use for `n` fingerprints at distance `k`, and, under a
//! memory budget, how many passes per table.

use crate::hamming::tables::{ConfigError, MAX_TABLES, Tables, binomial, block_widths};

/// CPU nanoseconds per fingerprint per table for the scatter pass, the scan and the
/// bookkeeping. The three constants are fitted to `bench_all_pairs` runs on the reference
/// machine (a 2-core AMD EPYC VM) at 10M fingerprints and k = 3 with 4, 5 and 6 blocks
/// (2.2, 1.7 and 5.0 CPU seconds); see `docs/index.md`.
const NS_PER_ELEMENT: f64 = 3.0;
/// CPU nanoseconds per fingerprint per table per in-bucket radix pass (8 bits each).
const NS_PER_RADIX_PASS: f64 = 7.5;
/// CPU nanoseconds per candidate pair (a popcount in a run of equal prefixes).
const NS_PER_CANDIDATE: f64 = 0.6;
/// CPU nanoseconds per fingerprint per table for each pass after the first under a memory
/// budget (a read of the input that scatters only the pass's buckets): `bench_all_pairs
/// --memory` at 10M and 100M, k = 3, 2 and 6 passes, measured 5 to 6.6; see `docs/index.md`.
const NS_PER_EXTRA_PASS: f64 = 5.0;

/// Bytes per fingerprint of the table being processed: the permuted value and the position.
pub(crate) const ENTRY_BYTES: u64 = 16;
/// The most passes per table a memory budget may ask for: below `n / MAX_PASSES` entries per
/// pass, rereading the input costs more than a disk-based sort would.
pub(crate) const MAX_PASSES: u64 = 256;
/// The most bytes the model allows for memory in flight besides the input and the table:
/// a wave's pairs, the per-thread sort scratch, the copies of big runs.
const IN_FLIGHT_MAX: u64 = 256 << 20;

/// The memory the model allows in flight for `n` fingerprints: 4 bytes per fingerprint, at
/// most 256 MiB.
pub(crate) fn in_flight_bytes(n: u64) -> u64 {
    n.saturating_mul(4).min(IN_FLIGHT_MAX)
}

/// The average bucket size the batch's first (scatter) pass aims for.
const BUCKET_TARGET: usize = 1 << 10;
/// The most bits the scatter pass splits on.
const MAX_SCATTER_BITS: u32 = 10;

/// The prefix bits the batch's scatter pass splits a table's `n` entries on (of its
/// `prefix_bits`): about [`BUCKET_TARGET`] entries a bucket. Here, with the cost model
/// that counts the radix passes left after it, so that the batch depends on the plan and
/// not the other way round.
pub(crate) fn scatter_bits(n: usize, prefix_bits: u32) -> u32 {
    let want = (n / BUCKET_TARGET).max(1).ilog2() + 1;
    want.min(MAX_SCATTER_BITS).min(prefix_bits)
}

/// How many entries one pass over a table may hold for `n` fingerprints held in
/// `input_bytes`, within `memory` bytes in all; an error if that is below `n / MAX_PASSES`
/// (or the input alone is over the budget).
pub(crate) fn pass_capacity(memory: u64, input_bytes: u64, n: u64) -> Result<u64, ConfigError> {
    let fixed = input_bytes.saturating_add(in_flight_bytes(n));
    let smallest = n.div_ceil(MAX_PASSES).saturating_mul(ENTRY_BYTES);
    let needed = fixed.saturating_add(smallest);
    if memory < needed {
        return Err(ConfigError::memory_too_small(memory, needed));
    }
    Ok((memory - fixed) / ENTRY_BYTES)
}

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
    /// The expected peak memory of [`AllPairs::budget`](crate::AllPairs::budget)
    /// in bytes: the input (8 bytes per fingerprint), the entries of one pass (16 bytes per
    /// fingerprint of the pass) and the memory in flight (4 bytes per fingerprint, at most
    /// 256 MiB).
    pub peak_bytes: u64,
    /// The memory budget planned for, if any (see [`plan_with_memory`]).
    pub memory: Option<u64>,
    /// Passes per table: 1 (the whole table in memory at once) with no budget, else enough
    /// that one pass's entries fit the budget. Each pass reads the whole input.
    pub passes: u64,
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
    plan_with_memory(n, max_distance, None)
}

/// [`plan`] within a memory budget of `memory` bytes (`None`: no budget, one pass per
/// table), for [`AllPairs::budget`](crate::AllPairs::budget) over `n`
/// fingerprints held in a slice (8 bytes each).
///
/// The model of peak memory is
///
/// ```text
/// peak(passes) = 8 n  +  16 ceil(n / passes)  +  min(4 n, 256 MiB)
///                input   one pass of a table     pairs in flight, sort scratch
/// ```
///
/// and the plan has the fewest passes with `peak <= memory`. The blocks are those of
/// [`plan`] whatever the budget (the passes' cost is in `estimated_cpu_seconds`), so that
/// the tables, and with them the batches and their order, do not depend on the budget. The
/// pairs of a table all lie
/// within one pass, since a pass is a range of prefixes, so no pass needs any other's
/// entries and nothing goes to disk. Each pass after the first rereads the input, which the
/// cost model counts. Errors if `max_distance >= 64`, or if the budget is below the input,
/// the memory in flight and 1/256 of a table (more passes than that would cost more than
/// an external sort on disk, which this crate does not do).
///
/// ```
/// use simhash_index::{ConfigErrorKind, plan_with_memory};
///
/// let n = 1_000_000_000;
/// let free = plan_with_memory(n, 3, None)?;
/// assert_eq!((free.passes, free.peak_bytes), (1, 24 * n + (256 << 20)));
/// let budget = 20 << 30; // 20 GiB: the input (8 GB) stays, a table goes in two passes
/// let p = plan_with_memory(n, 3, Some(budget))?;
/// assert_eq!(p.passes, 2);
/// assert!(p.peak_bytes <= budget);
/// let err = plan_with_memory(n, 3, Some(8_000_000_000)).unwrap_err();
/// assert_eq!(err.kind(), ConfigErrorKind::MemoryTooSmall);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_with_memory(
    n: u64,
    max_distance: u32,
    memory: Option<u64>,
) -> Result<Plan, ConfigError> {
    if max_distance >= 64 {
        return Err(ConfigError::distance_too_large(max_distance));
    }
    let passes = match memory {
        None => 1,
        Some(bytes) => {
            let capacity = pass_capacity(bytes, n.saturating_mul(8), n)?;
            n.div_ceil(capacity.max(1)).max(1)
        }
    };
    let k = max_distance as usize;
    let mut best: Option<Plan> = None;
    for m in k + 1..=64 {
        let keep = (m - k) as u64;
        let tables = binomial(m as u64, keep);
        if tables > u128::from(MAX_TABLES) {
            // More blocks only add tables from here on (for a fixed k, C(m, m - k) grows).
            break;
        }
        // The blocks are chosen as without a budget, so that the tables, hence the order of
        // the pairs, do not depend on it.
        let candidate = evaluate(n, m, max_distance, 1);
        if best.as_ref().is_none_or(|b| candidate.estimated_cpu_seconds < b.estimated_cpu_seconds) {
            best = Some(candidate);
        }
    }
    // m = k + 1 always has k + 1 <= 64 tables, so there is always a plan.
    let blocks = best.map_or(k + 1, |b| b.blocks);
    let mut best = evaluate(n, blocks, max_distance, passes);
    best.memory = memory;
    Ok(best)
}

/// The model's figures for `n` fingerprints with `m` blocks at distance `k`, `passes`
/// passes per table.
fn evaluate(n: u64, m: usize, k: u32, passes: u64) -> Plan {
    let widths = block_widths(m);
    let narrow = widths[m - 1];
    let wide = widths.iter().filter(|&&w| w > narrow).count() as u64;
    let keep = m as u64 - u64::from(k);
    let n_f = n as f64;
    let pairs = n_f * (n_f - 1.0).max(0.0) / 2.0;
    let (mut tables, mut candidates, mut radix, mut min_prefix) = (0.0, 0.0, 0.0, u32::MAX);
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
        let scatter_bits = scatter_bits(usize::try_from(n).unwrap_or(usize::MAX), bits);
        radix += count * f64::from((bits - scatter_bits).div_ceil(8));
    }
    let cost_ns = tables * n_f * NS_PER_ELEMENT
        + tables * n_f * (passes - 1) as f64 * NS_PER_EXTRA_PASS
        + radix * n_f * NS_PER_RADIX_PASS
        + candidates * NS_PER_CANDIDATE;
    Plan {
        blocks: m,
        max_distance: k,
        tables: tables as usize,
        prefix_bits: min_prefix,
        expected_candidates: candidates,
        peak_bytes: peak_bytes(n, n.saturating_mul(8), passes),
        memory: None,
        passes,
        estimated_cpu_seconds: cost_ns / 1e9,
    }
}

/// The model's peak memory for `n` fingerprints held in `input_bytes`, `passes` passes per
/// table.
pub(crate) fn peak_bytes(n: u64, input_bytes: u64, passes: u64) -> u64 {
    let pass = n.div_ceil(passes.max(1)).saturating_mul(ENTRY_BYTES);
    input_bytes.saturating_add(pass).saturating_add(in_flight_bytes(n))
}

/// The tables of a plan (here, beside [`Plan`], so that the tables know nothing of plans).
impl Tables {
    /// Builds the tables a [`Plan`] recommends: its `blocks` at its
    /// `max_distance`, so `k` is stated once.
    ///
    /// ```
    /// use simhash_index::{Tables, plan};
    ///
    /// let plan = plan(1_000_000, 3)?;
    /// let tables = Tables::from_plan(&plan)?;
    /// assert_eq!((tables.blocks(), tables.max_distance(), tables.len()), (plan.blocks, 3, plan.tables));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors only if the plan's public fields were changed to an invalid configuration.
    pub fn from_plan(plan: &Plan) -> Result<Tables, ConfigError> {
        Tables::new(plan.blocks, plan.max_distance)
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

    #[test]
    fn budgets_set_passes_not_blocks() {
        for n in [2u64, 1000, 10_000_000, 100_000_000, 1_000_000_000, 4_000_000_000] {
            for k in [0, 3, 6] {
                let free = plan(n, k).unwrap();
                assert_eq!((free.passes, free.memory), (1, None));
                assert_eq!(free.peak_bytes, 24 * n + in_flight_bytes(n));
                let mut last = 1;
                // From all of it in memory down to the least the budget allows.
                let least = 8 * n + in_flight_bytes(n) + 16 * n.div_ceil(MAX_PASSES);
                for memory in [
                    free.peak_bytes * 2,
                    free.peak_bytes,
                    free.peak_bytes - 1,
                    16 * n,
                    12 * n,
                    least,
                ] {
                    if memory < least {
                        continue;
                    }
                    let p = plan_with_memory(n, k, Some(memory)).unwrap();
                    assert_eq!(p.blocks, free.blocks, "n = {n}, k = {k}");
                    assert_eq!(p.memory, Some(memory));
                    assert!(p.peak_bytes <= memory, "n = {n}, memory = {memory}: {p:?}");
                    assert!(p.passes >= last && p.passes <= MAX_PASSES);
                    // The fewest passes: one fewer would not fit.
                    if p.passes > 1 {
                        assert!(peak_bytes(n, 8 * n, p.passes - 1) > memory);
                    }
                    assert!(p.estimated_cpu_seconds >= free.estimated_cpu_seconds);
                    last = p.passes;
                }
                assert_eq!(plan_with_memory(n, k, Some(free.peak_bytes)).unwrap().passes, 1);
                let err = plan_with_memory(n, k, Some(least - 1)).unwrap_err();
                assert_eq!(err.kind(), crate::ConfigErrorKind::MemoryTooSmall);
            }
        }
        assert!(plan_with_memory(10, 64, Some(1 << 30)).is_err());
    }
}
