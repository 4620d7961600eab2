//! The `fork` preset's vote: `jenkins64` of every byte `w`-gram, counted per bit.
//!
//! On x86-64 grams of up to 12 bytes are hashed 32 at a time in AVX2 registers where the CPU
//! has AVX2 (detected at run time), then sixteen at a time in SSE2 registers (part of the
//! x86-64 baseline), and their hashes are counted with carry-save adders on 256- or 128-bit
//! words, four or two hashes a word. The last few grams of a text (those whose loads would
//! pass its end), longer grams and other targets go through [`jenkins64_grams`] and
//! [`BitCounts::add`]. The vote is a sum, so the order in which grams are counted does not
//! change it.

use crate::accumulate::BitCounts;
use crate::hash::jenkins64_grams;

/// Counts `jenkins64(&bytes[o..o + w], 0)` for each `o` in `0..count` into `counts`.
///
/// # Panics
///
/// If `count > 0` and `count - 1 + w > bytes.len()`.
pub(crate) fn count_gram_hashes(bytes: &[u8], w: usize, count: usize, counts: &mut BitCounts) {
    let done = wide::count_blocks(bytes, w, count, counts);
    jenkins64_grams(&bytes[done..], w, count - done, |h| counts.add(h));
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod wide {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi32, _mm_and_si128, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_or_si128,
        _mm_set1_epi32, _mm_setzero_si128, _mm_slli_epi32, _mm_srli_epi32, _mm_sub_epi32,
        _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi32, _mm_xor_si128,
    };

    use crate::accumulate::BitCounts;

    /// Bytes a block of sixteen grams reads: its loads start at offsets 0 to 11 of the block.
    const SPAN: usize = 27;

    /// lookup3's `final` rotation `x.rotate_left(L)` on four lanes (`R = 32 - L`).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn rot<const L: i32, const R: i32>(x: __m128i) -> __m128i {
        _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x))
    }

    /// A full adder on 128 lanes: (carry, sum) of `a + b + c`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn csa(a: __m128i, b: __m128i, c: __m128i) -> (__m128i, __m128i) {
        let u = _mm_xor_si128(a, b);
        (_mm_or_si128(_mm_and_si128(a, b), _mm_and_si128(u, c)), _mm_xor_si128(u, c))
    }

    /// The 16 bytes of `block` from `at`, as a vector (little-endian lanes).
    #[inline]
    #[target_feature(enable = "sse2")]
    fn load(block: &[u8; SPAN], at: usize) -> __m128i {
        let chunk: &[u8; 16] = block[at..at + 16].try_into().expect("16 bytes");
        // SAFETY: `chunk` is a reference to 16 initialised bytes, so its pointer is valid for
        // a 16-byte read; `_mm_loadu_si128` reads exactly 16 bytes and needs no alignment.
        unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) }
    }

    /// A lookup3 word: `init` plus the bytes of `block` at `at`, masked, in each lane.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn word(init: __m128i, block: &[u8; SPAN], at: usize, mask: __m128i) -> __m128i {
        _mm_add_epi32(init, _mm_and_si128(load(block, at), mask))
    }

    /// A mask of the low `n` bytes (0 to 4) of each 32-bit lane.
    #[target_feature(enable = "sse2")]
    fn lane_mask(n: usize) -> __m128i {
        let m = if n >= 4 { u32::MAX } else { (1u32 << (8 * n)) - 1 };
        _mm_set1_epi32(m as i32)
    }

    /// The two 64-bit halves of `x`.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn halves(x: __m128i) -> [u64; 2] {
        [_mm_cvtsi128_si64(x) as u64, _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64]
    }

    /// Carry-save per-bit counts of 64-bit hashes, two hashes to a 128-bit word: bit `i` of
    /// each half of `ones`, `twos`, `fours` weighs 1, 2, 4 at position `i`; `eights` are
    /// vertical counters of the weight-8 carries, flushed into `BitCounts` every 255.
    struct Planes {
        ones: __m128i,
        twos: __m128i,
        fours: __m128i,
        eights: [__m128i; 8],
        in_eights: u32,
    }

    impl Planes {
        #[target_feature(enable = "sse2")]
        fn flush_eights(&mut self, counts: &mut BitCounts) {
            let eights = self.eights.map(|p| halves(p));
            for half in 0..2 {
                counts.add_planes(&eights.map(|h| h[half]), 8);
            }
            self.eights = [_mm_setzero_si128(); 8];
            self.in_eights = 0;
        }

        /// Folds sixteen hashes (eight words) into the carry-save state.
        #[inline]
        #[target_feature(enable = "sse2")]
        fn reduce(&mut self, h: [__m128i; 8], counts: &mut BitCounts) {
            let (twos_a, ones) = csa(self.ones, h[0], h[1]);
            let (twos_b, ones) = csa(ones, h[2], h[3]);
            let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
            let (twos_a, ones) = csa(ones, h[4], h[5]);
            let (twos_b, ones) = csa(ones, h[6], h[7]);
            let (fours_b, twos) = csa(twos, twos_a, twos_b);
            let (mut carry, fours) = csa(self.fours, fours_a, fours_b);
            (self.ones, self.twos, self.fours) = (ones, twos, fours);
            for plane in &mut self.eights {
                let next = _mm_and_si128(*plane, carry);
                *plane = _mm_xor_si128(*plane, carry);
                carry = next;
            }
            self.in_eights += 1;
            if self.in_eights == 255 {
                self.flush_eights(counts);
            }
        }

        /// Adds the counts still in the planes to `counts`: `ones`, `twos`, `fours` and the low
        /// five planes of `eights` as one 8-bit count per position (at most 7 + 8 * 31), the
        /// high three planes (weight 256) only when there can be any.
        #[target_feature(enable = "sse2")]
        fn finish(self, counts: &mut BitCounts) {
            let e = self.eights.map(|p| halves(p));
            let low = [self.ones, self.twos, self.fours].map(|p| halves(p));
            for half in 0..2 {
                let planes = [low[0], low[1], low[2], e[0], e[1], e[2], e[3], e[4]];
                counts.add_planes(&planes.map(|p| p[half]), 1);
                if self.in_eights >= 32 {
                    counts.add_planes(&[e[5][half], e[6][half], e[7][half]], 256);
                }
            }
        }
    }

    /// Counts the hashes of a prefix of grams `0..count` into `counts`, as many as whole
    /// AVX2 (where the CPU has it) and SSE2 blocks take; returns how many. Grams longer than
    /// 12 bytes are left to the caller (returns 0).
    pub(super) fn count_blocks(
        bytes: &[u8],
        w: usize,
        count: usize,
        counts: &mut BitCounts,
    ) -> usize {
        let mut done = 0;
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU running this has AVX2 (just detected), the only requirement of
            // calling a safe function compiled with `target_feature(enable = "avx2")`.
            done = unsafe { avx2::count_blocks(bytes, w, count, counts) };
        }
        done + count_blocks_sse2_only(&bytes[done..], w, count - done, counts)
    }

    /// Counts the hashes of grams `0..16 * n` into `counts` with SSE2 only, for the largest
    /// `n` whose blocks stay inside `bytes` and below `count`; returns `16 * n`.
    pub(super) fn count_blocks_sse2_only(
        bytes: &[u8],
        w: usize,
        count: usize,
        counts: &mut BitCounts,
    ) -> usize {
        // SAFETY: this module is compiled only where the target enables SSE2 (every x86-64
        // target does: it is part of the x86-64 baseline), so the CPU supports it.
        unsafe { count_blocks_sse2(bytes, w, count, counts) }
    }

    #[target_feature(enable = "sse2")]
    fn count_blocks_sse2(bytes: &[u8], w: usize, count: usize, counts: &mut BitCounts) -> usize {
        if !(1..=12).contains(&w) {
            return 0;
        }
        let blocks = count.min(bytes.len().saturating_sub(SPAN - 16)) / 16;
        if blocks == 0 {
            return 0;
        }
        // lookup3 with seed 0 and length w ≤ 12: a, b, c start at 0xdeadbeef + w and take the
        // gram's bytes 0..4, 4..8 and 8..12 (zero-padded), then `final`; the hash is c:b.
        let init = _mm_set1_epi32(0xdead_beef_u32.wrapping_add(w as u32) as i32);
        let (mask_a, mask_b, mask_c) =
            (lane_mask(w), lane_mask(w.saturating_sub(4)), lane_mask(w.saturating_sub(8)));
        let mut planes = Planes {
            ones: _mm_setzero_si128(),
            twos: _mm_setzero_si128(),
            fours: _mm_setzero_si128(),
            eights: [_mm_setzero_si128(); 8],
            in_eights: 0,
        };
        for n in 0..blocks {
            let block: &[u8; SPAN] = bytes[16 * n..16 * n + SPAN].try_into().expect("a block");
            let mut words = [_mm_setzero_si128(); 8];
            for k in 0..4 {
                // Lane j of these holds gram 4j + k of the block.
                let mut a = word(init, block, k, mask_a);
                let mut b = if w > 4 { word(init, block, k + 4, mask_b) } else { init };
                let mut c = if w > 8 { word(init, block, k + 8, mask_c) } else { init };
                // lookup3's `final`.
                c = _mm_sub_epi32(_mm_xor_si128(c, b), rot::<14, 18>(b));
                a = _mm_sub_epi32(_mm_xor_si128(a, c), rot::<11, 21>(c));
                b = _mm_sub_epi32(_mm_xor_si128(b, a), rot::<25, 7>(a));
                c = _mm_sub_epi32(_mm_xor_si128(c, b), rot::<16, 16>(b));
                a = _mm_sub_epi32(_mm_xor_si128(a, c), rot::<4, 28>(c));
                b = _mm_sub_epi32(_mm_xor_si128(b, a), rot::<14, 18>(a));
                c = _mm_sub_epi32(_mm_xor_si128(c, b), rot::<24, 8>(b));
                // The hashes c:b as 64-bit lanes.
                words[2 * k] = _mm_unpacklo_epi32(b, c);
                words[2 * k + 1] = _mm_unpackhi_epi32(b, c);
            }
            planes.reduce(words, counts);
        }
        planes.finish(counts);
        counts.add_hash_count(16 * blocks as u64);
        16 * blocks
    }

    /// The same blocks, 32 grams at a time in 256-bit registers.
    pub(super) mod avx2 {
        use std::arch::x86_64::{
            __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_castsi256_si128,
            _mm256_extracti128_si256, _mm256_loadu_si256, _mm256_or_si256, _mm256_set1_epi32,
            _mm256_setzero_si256, _mm256_slli_epi32, _mm256_srli_epi32, _mm256_sub_epi32,
            _mm256_unpackhi_epi32, _mm256_unpacklo_epi32, _mm256_xor_si256,
        };

        use super::halves;
        use crate::accumulate::BitCounts;

        /// Bytes a block of 32 grams reads: its loads start at offsets 0 to 11 of the block.
        const SPAN: usize = 43;

        /// `x.rotate_left(L)` on eight lanes (`R = 32 - L`).
        #[inline]
        #[target_feature(enable = "avx2")]
        fn rot<const L: i32, const R: i32>(x: __m256i) -> __m256i {
            _mm256_or_si256(_mm256_slli_epi32::<L>(x), _mm256_srli_epi32::<R>(x))
        }

        /// A full adder on 256 lanes: (carry, sum) of `a + b + c`.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn csa(a: __m256i, b: __m256i, c: __m256i) -> (__m256i, __m256i) {
            let u = _mm256_xor_si256(a, b);
            (
                _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(u, c)),
                _mm256_xor_si256(u, c),
            )
        }

        /// A lookup3 word: `init` plus the 32 bytes of `block` at `at`, masked, in each lane.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn word(init: __m256i, block: &[u8; SPAN], at: usize, mask: __m256i) -> __m256i {
            let chunk: &[u8; 32] = block[at..at + 32].try_into().expect("32 bytes");
            // SAFETY: `chunk` is a reference to 32 initialised bytes, so its pointer is valid
            // for a 32-byte read; `_mm256_loadu_si256` reads exactly 32 bytes, unaligned.
            let x = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
            _mm256_add_epi32(init, _mm256_and_si256(x, mask))
        }

        /// A mask of the low `n` bytes (0 to 4) of each 32-bit lane.
        #[target_feature(enable = "avx2")]
        fn lane_mask(n: usize) -> __m256i {
            let m = if n >= 4 { u32::MAX } else { (1u32 << (8 * n)) - 1 };
            _mm256_set1_epi32(m as i32)
        }

        /// The four 64-bit quarters of `x`.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn quarters(x: __m256i) -> [u64; 4] {
            let [a, b] = halves(_mm256_castsi256_si128(x));
            let [c, d] = halves(_mm256_extracti128_si256::<1>(x));
            [a, b, c, d]
        }

        /// Carry-save counts as in the SSE2 `Planes`, four hashes to a 256-bit word.
        struct Planes {
            ones: __m256i,
            twos: __m256i,
            fours: __m256i,
            eights: [__m256i; 8],
            in_eights: u32,
        }

        impl Planes {
            #[target_feature(enable = "avx2")]
            fn flush_eights(&mut self, counts: &mut BitCounts) {
                let eights = self.eights.map(|p| quarters(p));
                for quarter in 0..4 {
                    counts.add_planes(&eights.map(|q| q[quarter]), 8);
                }
                self.eights = [_mm256_setzero_si256(); 8];
                self.in_eights = 0;
            }

            /// Folds 32 hashes (eight words) into the carry-save state.
            #[inline]
            #[target_feature(enable = "avx2")]
            fn reduce(&mut self, h: [__m256i; 8], counts: &mut BitCounts) {
                let (twos_a, ones) = csa(self.ones, h[0], h[1]);
                let (twos_b, ones) = csa(ones, h[2], h[3]);
                let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
                let (twos_a, ones) = csa(ones, h[4], h[5]);
                let (twos_b, ones) = csa(ones, h[6], h[7]);
                let (fours_b, twos) = csa(twos, twos_a, twos_b);
                let (mut carry, fours) = csa(self.fours, fours_a, fours_b);
                (self.ones, self.twos, self.fours) = (ones, twos, fours);
                for plane in &mut self.eights {
                    let next = _mm256_and_si256(*plane, carry);
                    *plane = _mm256_xor_si256(*plane, carry);
                    carry = next;
                }
                self.in_eights += 1;
                if self.in_eights == 255 {
                    self.flush_eights(counts);
                }
            }

            /// As the SSE2 `finish`, on four quarters.
            #[target_feature(enable = "avx2")]
            fn finish(self, counts: &mut BitCounts) {
                let e = self.eights.map(|p| quarters(p));
                let low = [self.ones, self.twos, self.fours].map(|p| quarters(p));
                for quarter in 0..4 {
                    let planes = [low[0], low[1], low[2], e[0], e[1], e[2], e[3], e[4]];
                    counts.add_planes(&planes.map(|p| p[quarter]), 1);
                    if self.in_eights >= 32 {
                        counts.add_planes(&[e[5][quarter], e[6][quarter], e[7][quarter]], 256);
                    }
                }
            }
        }

        /// Counts the hashes of grams `0..32 * n` into `counts` for the largest `n` whose
        /// blocks stay inside `bytes` and below `count`; returns `32 * n`.
        #[target_feature(enable = "avx2")]
        pub(in crate::grams) fn count_blocks(
            bytes: &[u8],
            w: usize,
            count: usize,
            counts: &mut BitCounts,
        ) -> usize {
            if !(1..=12).contains(&w) {
                return 0;
            }
            let blocks = count.min(bytes.len().saturating_sub(SPAN - 32)) / 32;
            if blocks == 0 {
                return 0;
            }
            let init = _mm256_set1_epi32(0xdead_beef_u32.wrapping_add(w as u32) as i32);
            let (mask_a, mask_b, mask_c) =
                (lane_mask(w), lane_mask(w.saturating_sub(4)), lane_mask(w.saturating_sub(8)));
            let mut planes = Planes {
                ones: _mm256_setzero_si256(),
                twos: _mm256_setzero_si256(),
                fours: _mm256_setzero_si256(),
                eights: [_mm256_setzero_si256(); 8],
                in_eights: 0,
            };
            for n in 0..blocks {
                let block: &[u8; SPAN] = bytes[32 * n..32 * n + SPAN].try_into().expect("a block");
                let mut words = [_mm256_setzero_si256(); 8];
                for k in 0..4 {
                    // Lane j of these holds gram 4j + k of the block.
                    let mut a = word(init, block, k, mask_a);
                    let mut b = if w > 4 { word(init, block, k + 4, mask_b) } else { init };
                    let mut c = if w > 8 { word(init, block, k + 8, mask_c) } else { init };
                    c = _mm256_sub_epi32(_mm256_xor_si256(c, b), rot::<14, 18>(b));
                    a = _mm256_sub_epi32(_mm256_xor_si256(a, c), rot::<11, 21>(c));
                    b = _mm256_sub_epi32(_mm256_xor_si256(b, a), rot::<25, 7>(a));
                    c = _mm256_sub_epi32(_mm256_xor_si256(c, b), rot::<16, 16>(b));
                    a = _mm256_sub_epi32(_mm256_xor_si256(a, c), rot::<4, 28>(c));
                    b = _mm256_sub_epi32(_mm256_xor_si256(b, a), rot::<14, 18>(a));
                    c = _mm256_sub_epi32(_mm256_xor_si256(c, b), rot::<24, 8>(b));
                    // The hashes c:b as 64-bit lanes (interleaved within each 128-bit half;
                    // the order does not matter to the count).
                    words[2 * k] = _mm256_unpacklo_epi32(b, c);
                    words[2 * k + 1] = _mm256_unpackhi_epi32(b, c);
                }
                planes.reduce(words, counts);
            }
            planes.finish(counts);
            counts.add_hash_count(32 * blocks as u64);
            32 * blocks
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
mod wide {
    use crate::accumulate::BitCounts;

    /// No wide path on this target: every gram goes through the scalar one.
    pub(super) fn count_blocks(_: &[u8], _: usize, _: usize, _: &mut BitCounts) -> usize {
        0
    }

    /// The same.
    pub(super) fn count_blocks_sse2_only(_: &[u8], _: usize, _: usize, _: &mut BitCounts) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Accumulator;
    use crate::hash::{jenkins64, jenkins64_grams};

    /// The scalar oracle: one `jenkins64` per gram, added to an `Accumulator`.
    fn oracle(bytes: &[u8], w: usize, count: usize) -> Option<crate::Fingerprint> {
        let mut acc = Accumulator::new();
        for o in 0..count {
            acc.add(jenkins64(&bytes[o..o + w], 0), 1);
        }
        acc.finish()
    }

    /// The vote through the wide path (AVX2 where the CPU has it, then SSE2) and through
    /// SSE2 alone, each finished by the scalar path; both must agree, and are returned once.
    fn counted(bytes: &[u8], w: usize, count: usize) -> Option<crate::Fingerprint> {
        let mut counts = BitCounts::new();
        count_gram_hashes(bytes, w, count, &mut counts);
        let mut sse2 = BitCounts::new();
        let done = wide::count_blocks_sse2_only(bytes, w, count, &mut sse2);
        jenkins64_grams(&bytes[done..], w, count - done, |h| sse2.add(h));
        assert_eq!(counts.majority(), sse2.majority(), "{} bytes, window {w}", bytes.len());
        counts.majority()
    }

    /// Random bytes from a fixed-seed xorshift, drawn from `alphabet`.
    fn text(n: usize, seed: u64, alphabet: &[u8]) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect()
    }

    #[test]
    fn blocks_match_the_scalar_oracle() {
        let all: Vec<u8> = (0..=255).collect();
        let utf8 = "ab é東😀\n\t\"\\".as_bytes().to_vec();
        for (a, alphabet) in [&all, &utf8, &b"ab".to_vec(), &vec![0xff]].into_iter().enumerate() {
            for len in
                (0..120).chain([255, 256, 257, 527, 528, 529, 600, 4000, 4102, 8000, 8183, 17000])
            {
                let bytes = text(len, 0x9e37_79b9 + len as u64 + a as u64, alphabet);
                for w in 1..=16 {
                    // The fork's count (the last gram skipped), every gram, and fewer.
                    let counts = [
                        len.saturating_sub(w),
                        (len + 1).saturating_sub(w),
                        len.saturating_sub(w) / 2,
                        len.saturating_sub(w + 17),
                    ];
                    for count in counts {
                        assert_eq!(
                            counted(&bytes, w, count),
                            oracle(&bytes, w, count),
                            "alphabet {a}, {len} bytes, window {w}, {count} grams"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_bit_at_its_limit() {
        // Uniform texts give the same hash for every gram: every count at 0 or at `count`,
        // across the carry-save flushes (255 blocks of 16 or 32), ties at even counts.
        for byte in [0u8, b'a', 0xff] {
            for len in (0..80).chain(1020..1060).chain(4085..4110).chain(8165..8190).chain([20000])
            {
                let bytes = vec![byte; len];
                for w in [1, 4, 5, 8, 9, 12] {
                    let count = len.saturating_sub(w);
                    assert_eq!(counted(&bytes, w, count), oracle(&bytes, w, count), "{len} {w}");
                }
            }
        }
    }

    #[test]
    fn wide_path_takes_the_blocks() {
        // The wide path must actually run where it can (on x86-64), or the tests above only
        // test the scalar path against itself.
        let bytes = text(1000, 5, b"abcdef");
        let mut counts = BitCounts::new();
        let sse2 = wide::count_blocks_sse2_only(&bytes, 5, 995, &mut counts);
        let done = wide::count_blocks(&bytes, 5, 995, &mut counts);
        if cfg!(all(target_arch = "x86_64", target_feature = "sse2")) {
            // 61 blocks of 16 (the last needs 27 bytes); with AVX2, 30 of 32, then one of 16.
            assert_eq!((sse2, done), (976, 976));
        } else {
            assert_eq!((sse2, done), (0, 0));
        }
        // Without AVX2 on the CPU running the tests, only the SSE2 path is tested.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (just detected).
            let avx2 = unsafe { wide::avx2::count_blocks(&bytes, 5, 995, &mut counts) };
            assert_eq!(avx2, 960);
        }
    }
}
