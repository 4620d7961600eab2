//! The tests' random numbers: splitmix64, seeded, so that every run draws the same inputs.

/// splitmix64 from a seed.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An index below `n`.
    pub(crate) fn index(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    /// `x` with `bits` distinct random bits flipped.
    pub(crate) fn flip(&mut self, x: u64, bits: u32) -> u64 {
        let mut flipped = 0u64;
        while flipped.count_ones() < bits {
            flipped |= 1 << (self.next() % 64);
        }
        x ^ flipped
    }
}
