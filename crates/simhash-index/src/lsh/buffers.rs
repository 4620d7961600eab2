//! Reused thread-local buffers: how much of them is kept between uses.

/// Thread-local buffers larger than this are given back after use (one huge document must
/// not keep every thread's buffer huge).
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Gives back a reused buffer's memory when it grew past [`KEEP_BUFFER_BYTES`].
pub(crate) fn trim<T>(buf: &mut Vec<T>) {
    if buf.capacity() * std::mem::size_of::<T>() > KEEP_BUFFER_BYTES {
        *buf = Vec::new();
    }
}
