//! `give_back_large_buffers`: a large buffer freed after a larger one was is given back to
//! the system (glibc's default would keep it in its heap). Its own test binary: the
//! setting is process-wide, and no other test may allocate while the memory is read.
#![cfg(all(target_os = "linux", target_env = "gnu"))]

/// This process's resident memory in bytes (`VmRSS`).
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    let kb: u64 = line.split_whitespace().nth(1).and_then(|k| k.parse().ok()).expect("kB");
    kb * 1024
}

#[test]
fn a_freed_large_buffer_is_given_back() {
    simhash_io::give_back_large_buffers();
    // Freeing a 24 MiB buffer raises glibc's default threshold to 24 MiB...
    drop(std::hint::black_box(vec![1u8; 24 << 20]));
    // ...so that, by default, a 16 MiB buffer comes from the heap and stays held when freed.
    // (Buffers allocated after it keep it from the top of the heap, which glibc may trim.)
    let buffer = std::hint::black_box(vec![1u8; 16 << 20]);
    let after_it: Vec<Vec<u8>> = (0..64).map(|_| std::hint::black_box(vec![1u8; 4096])).collect();
    let with = resident();
    drop(buffer);
    let after = resident();
    drop(std::hint::black_box(after_it));
    assert!(
        with.saturating_sub(after) >= 12 << 20,
        "resident {with} bytes with the buffer, {after} after it was freed"
    );
}
