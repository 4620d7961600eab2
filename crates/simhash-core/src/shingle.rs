//! Rolling windows over token hashes: the features of a document are its shingles.

use crate::hash::folded_multiply;

/// The largest window a fingerprinter accepts; larger settings are clamped to it.
pub const MAX_WINDOW: usize = 64;

const P1: u64 = 0xa076_1d64_78bd_642f;
const P2: u64 = 0xe703_7ed1_a0b4_28db;

/// Hashes the token hashes of one shingle (oldest first) into one feature hash.
///
/// `f = h[0]`, then `f = folded_multiply(f ^ P1, h[t] ^ P2)` for each later token, where
/// `folded_multiply` XORs the two halves of the 128-bit product. Order matters: "a b c" and
/// "c b a" are different features. Part of the default preset's stability contract.
#[inline]
pub fn combine(hashes: impl IntoIterator<Item = u64>) -> u64 {
    let mut it = hashes.into_iter();
    let Some(mut f) = it.next() else { return 0 };
    for h in it {
        f = folded_multiply(f ^ P1, h ^ P2);
    }
    f
}

/// A sliding window of the last `size` token hashes: each push past the first `size - 1`
/// yields the feature of the `size` newest tokens ([`combine`] of them, oldest first).
///
/// A document with fewer tokens than the window still has one feature, all its tokens
/// together: [`Window::partial`] gives it. Never allocates.
///
/// ```
/// use simhash_core::{combine, Window};
///
/// let mut w = Window::new(2);
/// assert_eq!(w.push(1), None);
/// assert_eq!(w.partial(), Some(1));
/// assert_eq!(w.push(2), Some(combine([1, 2])));
/// assert_eq!(w.push(3), Some(combine([2, 3])));
/// assert_eq!(w.partial(), None);
/// ```
#[derive(Clone, Debug)]
pub struct Window {
    ring: [u64; MAX_WINDOW],
    size: usize,
    /// Tokens pushed since the last reset.
    seen: usize,
    /// The slot the next token goes to; once the window is full, also the oldest token's.
    next: usize,
}

impl Window {
    /// A window of `size` tokens, clamped to `1..=MAX_WINDOW`.
    pub fn new(size: usize) -> Window {
        Window { ring: [0; MAX_WINDOW], size: size.clamp(1, MAX_WINDOW), seen: 0, next: 0 }
    }

    /// The window size after clamping.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Forgets all tokens.
    pub fn reset(&mut self) {
        self.seen = 0;
        self.next = 0;
    }

    /// Adds a token hash; returns the feature of the newest `size` tokens once there are that
    /// many.
    #[inline]
    pub fn push(&mut self, token: u64) -> Option<u64> {
        let size = self.size;
        self.ring[self.next] = token;
        self.next = if self.next + 1 == size { 0 } else { self.next + 1 };
        self.seen += 1;
        if self.seen < size {
            return None;
        }
        // Oldest first: slots next..size, then 0..next (no division on this hot path).
        let mut slot = self.next;
        let mut f = self.ring[slot];
        for _ in 1..size {
            slot = if slot + 1 == size { 0 } else { slot + 1 };
            f = folded_multiply(f ^ P1, self.ring[slot] ^ P2);
        }
        Some(f)
    }

    /// When fewer than `size` (but at least one) tokens were pushed: the feature of all of
    /// them. `None` otherwise.
    pub fn partial(&self) -> Option<u64> {
        (self.seen > 0 && self.seen < self.size)
            .then(|| combine(self.ring[..self.seen].iter().copied()))
    }
}

/// `simhash-cpp`'s cyclic window: for token `i`, the feature is
/// `XOR over j in 0..size with i >= j of rotl(h[i - j], j)`, so the first `size - 1` features
/// are partial windows and there is one feature per token.
///
/// ```
/// use simhash_core::CyclicWindow;
///
/// let mut w = CyclicWindow::new(3);
/// assert_eq!(w.push(1), 1);
/// assert_eq!(w.push(4), 4 ^ (1 << 1));
/// assert_eq!(w.push(16), 16 ^ (4 << 1) ^ (1 << 2));
/// assert_eq!(w.push(0), (16 << 1) ^ (4 << 2));
/// ```
#[derive(Clone, Debug)]
pub struct CyclicWindow {
    ring: [u64; MAX_WINDOW],
    size: usize,
    seen: usize,
}

impl CyclicWindow {
    /// A window of `size` tokens, clamped to `1..=MAX_WINDOW`.
    pub fn new(size: usize) -> CyclicWindow {
        CyclicWindow { ring: [0; MAX_WINDOW], size: size.clamp(1, MAX_WINDOW), seen: 0 }
    }

    /// Forgets all tokens.
    pub fn reset(&mut self) {
        self.seen = 0;
    }

    /// Adds a token hash and returns the feature ending at it.
    #[inline]
    pub fn push(&mut self, token: u64) -> u64 {
        let i = self.seen;
        self.ring[i % self.size] = token;
        self.seen += 1;
        let mut v = 0;
        for j in 0..self.size.min(i + 1) {
            v ^= self.ring[(i - j) % self.size].rotate_left(j as u32);
        }
        v
    }
}

/// simhash-py's `shingle(tokens, window)`: the sliding windows of `window` consecutive items
/// (none when there are fewer items than that, or when `window` is 0).
///
/// ```
/// let words = ["a", "b", "c", "d"];
/// let got: Vec<_> = simhash_core::shingle(&words, 3).collect();
/// assert_eq!(got, [&["a", "b", "c"][..], &["b", "c", "d"][..]]);
/// ```
pub fn shingle<T>(items: &[T], window: usize) -> std::slice::Windows<'_, T> {
    // `windows(0)` panics; an empty slice of windows is what a zero window means.
    if window == 0 { items[..0].windows(1) } else { items.windows(window) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_matches_direct_combination() {
        let tokens: Vec<u64> = (1..=20).map(|i| i * 0x9e37_79b9).collect();
        for size in 1..=6 {
            let mut w = Window::new(size);
            let got: Vec<u64> = tokens.iter().filter_map(|&t| w.push(t)).collect();
            let want: Vec<u64> = tokens.windows(size).map(|s| combine(s.iter().copied())).collect();
            assert_eq!(got, want, "size {size}");
        }
    }

    #[test]
    fn window_is_order_sensitive_and_clamped() {
        assert_ne!(combine([1, 2, 3]), combine([3, 2, 1]));
        assert_ne!(combine([7, 7]), combine([7]));
        assert_eq!(Window::new(0).size(), 1);
        assert_eq!(Window::new(1000).size(), MAX_WINDOW);
    }

    #[test]
    fn cyclic_window_matches_definition() {
        let h: Vec<u64> =
            (0..12).map(|i: u64| i.wrapping_mul(0x0123_4567_89ab_cdef) ^ 0xff).collect();
        for size in 1..=5 {
            let mut w = CyclicWindow::new(size);
            for i in 0..h.len() {
                let mut want = 0;
                for j in 0..size {
                    if i >= j {
                        want ^= h[i - j].rotate_left(j as u32);
                    }
                }
                assert_eq!(w.push(h[i]), want, "size {size} token {i}");
            }
        }
    }

    #[test]
    fn shingle_edges() {
        let items = [1, 2];
        assert_eq!(shingle(&items, 3).count(), 0);
        assert_eq!(shingle(&items, 0).count(), 0);
        assert_eq!(shingle(&items, 2).count(), 1);
    }
}
