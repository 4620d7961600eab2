//! Exact Hamming-distance matching of 64-bit fingerprints: the block-permutation tables,
//! the pairing kernel, the batch all-pairs engine (in memory, or a range of prefixes at a
//! time within a memory budget), the online index, the planner, the `blocks` setting, the
//! dedup walk and identical fingerprints collapsed in place (`Distinct`). Everything here is
//! re-exported at the crate root.

pub(crate) mod batch;
pub(crate) mod blocks;
pub(crate) mod distinct;
pub(crate) mod kernel;
pub(crate) mod online;
pub(crate) mod plan;
pub(crate) mod scatter;
pub(crate) mod tables;
pub(crate) mod walk;

#[cfg(test)]
mod tests;
