//! Facts about this process that the tools report.

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
