//! Exact Hamming-distance matching of 64-bit fingerprints: the block-permutation tables,
//! the pairing kernel, the batch all-pairs API (`pairs`: `AllPairs`, `all_pairs`, cross
//! pairs) over its engine (`batch`, in memory, or a range of prefixes at a time within a
//! memory budget; `group` sorts a bucket into runs of equal prefixes), the online index,
//! the planner, the `blocks` setting, the dedup walk and identical fingerprints collapsed in
//! place (`Distinct`). This module is private and every public item here is re-exported at
//! the crate root (the crate's namespace rule: Hamming at the root, MinHash under `lsh`).

pub(crate) mod batch;
pub(crate) mod blocks;
pub(crate) mod distinct;
pub(crate) mod group;
pub(crate) mod kernel;
pub(crate) mod merge;
pub(crate) mod online;
pub(crate) mod pair;
pub(crate) mod pairs;
pub(crate) mod plan;
pub(crate) mod scatter;
pub(crate) mod settle;
pub(crate) mod tables;
pub(crate) mod walk;

#[cfg(test)]
mod tests;
