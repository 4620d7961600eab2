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
