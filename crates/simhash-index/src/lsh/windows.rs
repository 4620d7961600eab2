//! The 3-token windows the [relation](super::Relation) reads texts by, as hashes: what
//! [`relation`](super::relation) and the walk's filter of kept windows
//! ([`KeptWindows`](super::own::KeptWindows)) both compute.

/// Tokens a window holds: the shingles' width under the default settings.
pub(super) const WINDOW: usize = 3;

/// Calls `f` with the hash of each window of `tokens` in text order (one window, the whole
/// text, when it is shorter than a window; none when it is empty).
pub(super) fn for_each_window_hash(tokens: &[u32], mut f: impl FnMut(u64)) {
    if tokens.len() < WINDOW {
        if !tokens.is_empty() {
            f(window_hash(tokens));
        }
    } else {
        tokens.windows(WINDOW).for_each(|w| f(window_hash(w)));
    }
}

/// The hash of one window's tokens.
pub(super) fn window_hash(w: &[u32]) -> u64 {
    let mut h = w.len() as u64;
    for &x in w {
        h = (h.rotate_left(23) ^ u64::from(x)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^ (h >> 31)
}

/// A text's distinct windows by hash, numbered in the order first seen: an open-addressing
/// table (linear probing, at most half full) keyed by the window hashes themselves, whose
/// top bits are well mixed (see [`window_hash`]).
#[derive(Clone, Debug, Default)]
pub(super) struct WindowIds {
    /// Per slot, a window's hash and its number plus one (0: an empty slot).
    slots: Vec<(u64, u32)>,
    /// `64 - log2(slots)`.
    shift: u32,
    len: usize,
}

impl WindowIds {
    /// A table for up to `windows` distinct windows.
    pub(super) fn with_capacity(windows: usize) -> WindowIds {
        let slots = (windows.max(1) * 2).next_power_of_two();
        WindowIds { slots: vec![(0, 0); slots], shift: 64 - slots.trailing_zeros(), len: 0 }
    }

    /// The number of distinct windows held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    fn slot(&self, h: u64) -> usize {
        // `shift` is 64 for a single slot, past what a shift takes.
        h.checked_shr(self.shift).unwrap_or(0) as usize
    }

    /// The number of window `h`, numbered next when it is new (the table must have room:
    /// at most the capacity asked).
    pub(super) fn number(&mut self, h: u64) -> u32 {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(h);
        loop {
            let (key, id) = self.slots[i];
            if id == 0 {
                self.len += 1;
                self.slots[i] = (h, self.len as u32);
                return self.len as u32 - 1;
            }
            if key == h {
                return id - 1;
            }
            i = (i + 1) & mask;
        }
    }

    /// The number of window `h`, if held.
    pub(super) fn get(&self, h: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = self.slot(h);
        loop {
            let (key, id) = self.slots[i];
            if id == 0 {
                return None;
            }
            if key == h {
                return Some(id - 1);
            }
            i = (i + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers in the order first seen, found again, absent ones absent, at any load up
    /// to the capacity (colliding top bits included).
    #[test]
    fn window_ids_number_and_find() {
        for n in [0usize, 1, 2, 3, 7, 100, 1000] {
            let mut ids = WindowIds::with_capacity(n);
            // Half of them share their top bits with another (same slot).
            let keys: Vec<u64> = (0..n as u64)
                .map(|i| if i % 2 == 0 { i << 40 } else { (i - 1) << 40 | i })
                .collect();
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(ids.number(k), i as u32);
                assert_eq!(ids.number(k), i as u32);
            }
            assert_eq!(ids.len(), n);
            for (i, &k) in keys.iter().enumerate() {
                assert_eq!(ids.get(k), Some(i as u32));
            }
            assert_eq!(ids.get(u64::MAX), None);
            assert_eq!(ids.get(7 << 50 | 3), None);
        }
    }
}
