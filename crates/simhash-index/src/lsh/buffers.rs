//! Reused thread-local buffers: how much of them is kept between uses; and vectors that
//! grow to a budget without going past it.

/// Thread-local buffers larger than this are given back after use (one huge document must
/// not keep every thread's buffer huge).
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Makes room in `buf` for `extra` more items without its capacity passing `limit` items
/// (unless `extra` needs it): doubling, as `Vec` grows, until the limit is near. A vector
/// filled up to a budget by doubling may otherwise hold nearly twice the budget (a budget of
/// 56 MiB held in a 64 MiB allocation).
pub(crate) fn reserve_within<T>(buf: &mut Vec<T>, extra: usize, limit: usize) {
    let needed = buf.len() + extra;
    if buf.capacity() >= needed {
        return;
    }
    let target = (buf.capacity() * 2).max(needed).min(limit.max(needed));
    buf.reserve_exact(target - buf.len());
}

/// Gives back a reused buffer's memory when it grew past [`KEEP_BUFFER_BYTES`].
pub(crate) fn trim<T>(buf: &mut Vec<T>) {
    if buf.capacity() * std::mem::size_of::<T>() > KEEP_BUFFER_BYTES {
        *buf = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Filled to its budget a piece at a time, a vector's capacity never passes the budget
    /// (plain doubling would reach 1.6 times it here), and it still grows by doubling
    /// before that: few reallocations.
    #[test]
    fn growth_stops_at_the_budget() {
        let limit = 10_000;
        let mut buf: Vec<u64> = Vec::new();
        let (mut grown, mut capacity) = (0, 0);
        while buf.len() + 7 <= limit {
            reserve_within(&mut buf, 7, limit);
            buf.extend_from_slice(&[0; 7]);
            assert!(buf.capacity() <= limit, "{} past {limit}", buf.capacity());
            if buf.capacity() != capacity {
                (grown, capacity) = (grown + 1, buf.capacity());
            }
        }
        assert!(grown <= 14, "{grown} reallocations");
        // An item larger than what is left still fits.
        reserve_within(&mut buf, limit, limit);
        assert!(buf.capacity() >= buf.len() + limit);
    }
}
