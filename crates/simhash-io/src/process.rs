//! Facts about this process that the tools report, and its allocator's one setting.

/// The peak resident memory of this process in bytes (`VmHWM` in `/proc/self/status`);
/// `None` where that is not available (systems other than Linux).
///
/// ```
/// if cfg!(target_os = "linux") {
///     assert!(simhash_io::peak_memory().is_some_and(|bytes| bytes > 0));
/// }
/// ```
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Has the C allocator give large buffers back to the system when they are freed: a
/// binary calls it first thing, before any thread starts. Where it matters (glibc's
/// `malloc`), a buffer of 1 MiB or more gets its own mapping, given back when freed. By
/// default glibc raises that threshold each time such a buffer is freed, up to 32 MiB, so
/// that the large buffers of a later phase (such as the dedup walk's, freed as each
/// candidate component is done) come from its heap and stay resident after they are
/// freed: on 500 MB of real text, `simhash dedup -j2` peaked at 174 MiB with the default
/// and 158 MiB with the threshold fixed, in about the same time (`docs/performance.md`).
/// Elsewhere it does nothing.
pub fn give_back_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // 1 MiB: smaller buffers stay on the heap, where allocating them is cheap.
        const THRESHOLD: libc::c_int = 1 << 20;
        // SAFETY: mallopt only sets a parameter of glibc's allocator, which it reads under
        // its own lock; a threshold within its range (at most 32 MiB on 64-bit systems) is
        // accepted. Its result (0 when refused) changes nothing here: the default stays.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD);
        }
    }
}
