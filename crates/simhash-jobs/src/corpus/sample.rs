//! `--sample N`: a uniform sample of the valid records, the same at any thread count.

use std::collections::BinaryHeap;

use simhash_index::lsh::DocSketch;

use super::batch::Meta;

/// Bottom-k sampling: each record gets a pseudo-random key from (seed, line); the n records
/// with the smallest keys are the sample. One pass, memory for n records, and the sample
/// depends only on the seed and the input.
pub(super) struct Sampler {
    /// How many records the sample holds, at most.
    pub(super) n: u64,
    /// `--seed`: the keys' seed.
    pub(super) seed: u64,
    /// The records with the smallest keys so far (the largest on top).
    pub(super) heap: BinaryHeap<Sampled>,
    /// Records offered.
    pub(super) offered: u64,
}

/// A sampled record: its key and what the corpus keeps of it.
pub(super) struct Sampled {
    /// Its pseudo-random key.
    pub(super) key: u64,
    /// Its id.
    pub(super) id: Box<str>,
    /// What the corpus keeps of it.
    pub(super) meta: Meta,
    /// Its MinHash sketch, if sketched.
    pub(super) sketch: Option<DocSketch>,
}

impl PartialEq for Sampled {
    fn eq(&self, other: &Sampled) -> bool {
        (self.key, self.meta.line) == (other.key, other.meta.line)
    }
}
impl Eq for Sampled {}
impl PartialOrd for Sampled {
    fn partial_cmp(&self, other: &Sampled) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Sampled {
    fn cmp(&self, other: &Sampled) -> std::cmp::Ordering {
        (self.key, self.meta.line).cmp(&(other.key, other.meta.line))
    }
}

impl Sampler {
    /// A sampler of `n` records with keys seeded by `seed`.
    pub(super) fn new(n: u64, seed: u64) -> Sampler {
        Sampler { n, seed, heap: BinaryHeap::new(), offered: 0 }
    }

    /// Offers a record: kept when its key is among the `n` smallest so far.
    pub(super) fn offer(&mut self, id: &str, meta: Meta, sketch: Option<DocSketch>) {
        let line = meta.line;
        self.offered += 1;
        if self.n == 0 {
            return;
        }
        let key = splitmix(self.seed ^ splitmix(line));
        if self.heap.len() as u64 >= self.n {
            match self.heap.peek() {
                Some(top) if (key, line) < (top.key, top.meta.line) => {
                    self.heap.pop();
                }
                _ => return,
            }
        }
        self.heap.push(Sampled { key, id: id.into(), meta, sketch });
    }

    /// The sample, in line order.
    pub(super) fn into_sorted(self) -> Vec<Sampled> {
        let mut docs = self.heap.into_vec();
        docs.sort_unstable_by_key(|d| d.meta.line);
        docs
    }
}

/// SplitMix64's finalizer: a well-mixed 64-bit hash of `x`.
pub(super) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
