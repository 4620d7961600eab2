//! Shared corpora and baselines for the simhash benchmarks.

// The README's examples compile and pass as doctests of this crate, which depends on every
// library of the workspace.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Whether this bench binary runs as a smoke test, each benchmark once: under `cargo test`
/// (cargo passes no `--bench`) or `cargo bench -- --test`. The benches then shrink their
/// inputs ([`scaled`]), so that the run checks that everything works in seconds, even
/// unoptimized.
pub fn smoke() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench")
}

/// `n` items for a benchmark: `n`, or in a [`smoke`] run a hundredth of it (at least
/// 1,000, and never more than `n`).
pub fn scaled(n: usize) -> usize {
    if smoke() { (n / 100).max(1000).min(n) } else { n }
}

/// English prose, about 60 KiB with little repetition: the Apache License 2.0 and this
/// project's own design and CLI documentation.
pub fn english() -> String {
    [
        include_str!("../../LICENSE-APACHE"),
        include_str!("../../docs/DESIGN.md"),
        include_str!("../../docs/cli.md"),
        include_str!("../../docs/cluster.md"),
    ]
    .concat()
}

/// Mixed-script text (Latin with accents, Cyrillic, Greek, CJK) of about 64 KiB.
pub fn multilingual() -> String {
    let text = include_str!("../data/multilingual.txt");
    text.repeat((64 * 1024) / text.len() + 1)
}

/// CPU seconds (user + system) of this process's waited-for children so far, from
/// `/proc/self/stat` (`None` where there is none: not Linux).
pub fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 16 and 17 of the whole line (cutime, cstime) are 13 and 14 after the name.
    let ticks: f64 = fields.get(13)?.parse::<f64>().ok()? + fields.get(14)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The resource usage of this process's waited-for children so far (`getrusage`): their
/// user and system time at microsecond resolution, and the largest one's peak RSS
/// (`ru_maxrss`, KiB).
pub fn children_rusage() -> std::io::Result<libc::rusage> {
    // SAFETY: an all-zero rusage is valid, and `usage` is valid for the call to write.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(usage)
}

/// Seconds in a `timeval`.
pub fn timeval_secs(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 * 1e-6
}

/// splitmix64: a fixed-seed generator, so every run benchmarks the same data.
#[derive(Clone, Debug)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (multiply-shift, no division).
    pub fn below(&mut self, n: usize) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }
}

/// `n` fingerprints: uniform random ones, and for one in eight a near copy of an earlier one
/// at 0 to `k + 1` bits (so some planted pairs are just out of range). Deterministic.
pub fn planted(n: usize, k: u32, seed: u64) -> Vec<simhash_core::Fingerprint> {
    use simhash_core::Fingerprint;
    let mut rng = SplitMix(seed);
    let mut fps: Vec<Fingerprint> = Vec::with_capacity(n);
    while fps.len() < n {
        let r = rng.next_u64();
        if r.is_multiple_of(8) && !fps.is_empty() {
            let of = fps[(rng.next_u64() % fps.len() as u64) as usize];
            let bits = (rng.next_u64() % u64::from(k + 2)) as u32;
            let mut x = of.0;
            let mut flipped = 0;
            while flipped < bits {
                let bit = 1u64 << (rng.next_u64() % 64);
                if x & bit == of.0 & bit {
                    x ^= bit;
                    flipped += 1;
                }
            }
            fps.push(Fingerprint(x));
        } else {
            fps.push(Fingerprint(r));
        }
    }
    fps
}

/// Peak resident set size of this process in KiB (`VmHWM` in `/proc/self/status`; 0 where
/// there is no such file).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The obvious simhash: one branch per bit per feature, counters in `i64`. The baseline the
/// accumulator is measured against.
pub fn naive_simhash(features: impl IntoIterator<Item = (u64, u32)>) -> Option<u64> {
    let mut v = [0i64; 64];
    let mut any = false;
    for (h, w) in features {
        any = true;
        for (i, c) in v.iter_mut().enumerate() {
            if (h >> i) & 1 == 1 {
                *c += i64::from(w);
            } else {
                *c -= i64::from(w);
            }
        }
    }
    any.then(|| v.iter().enumerate().filter(|(_, c)| **c > 0).fold(0, |acc, (i, _)| acc | 1 << i))
}

/// xorshift64: the dedup corpus's generator (kept so the corpus stays the same).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The end-to-end benchmarks' JSONL corpus of about `mb` megabytes in `dir`, written unless
/// it is there already: English-like documents of 100 to 700 words from the Apache
/// license's vocabulary, 20% of them near or exact copies of earlier ones. Returns its path.
pub fn dedup_corpus(dir: &Path, mb: u64) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("corpus-{mb}mb.jsonl"));
    if path.exists() {
        return Ok(path);
    }
    let vocab: Vec<&str> = include_str!("../../LICENSE-APACHE")
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let mut rng = XorShift(0x5eed);
    let mut out = std::io::BufWriter::new(std::fs::File::create(dir.join("corpus.tmp"))?);
    let mut recent: Vec<Vec<&str>> = Vec::new();
    let mut written = 0u64;
    let mut id = 0u64;
    let mut line = String::new();
    while written < mb * 1_000_000 {
        let words: Vec<&str> = if !recent.is_empty() && rng.below(5) == 0 {
            let mut copy = recent[rng.below(recent.len())].clone();
            for _ in 0..rng.below(3) {
                let at = rng.below(copy.len());
                copy[at] = vocab[rng.below(vocab.len())];
            }
            copy
        } else {
            let n = 100 + rng.below(600);
            (0..n).map(|_| vocab[rng.below(vocab.len())]).collect()
        };
        line.clear();
        let _ = write!(line, "{{\"id\":\"doc-{id}\",\"source\":\"bench\",\"text\":\"");
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                line.push(if i % 17 == 0 { '.' } else { ' ' });
                if i % 17 == 0 {
                    line.push(' ');
                }
            }
            line.push_str(w);
        }
        line.push_str("\"}\n");
        out.write_all(line.as_bytes())?;
        written += line.len() as u64;
        id += 1;
        if recent.len() < 1000 {
            recent.push(words);
        } else {
            let at = rng.below(recent.len());
            recent[at] = words;
        }
    }
    out.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()?;
    std::fs::rename(dir.join("corpus.tmp"), &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn naive_matches_accumulator() {
        let fp = simhash_core::Fingerprinter::new();
        let text = super::english();
        let mut features = Vec::new();
        fp.for_each_feature(&text, |h, w| features.push((h, w)));
        assert_eq!(
            super::naive_simhash(features.iter().copied()),
            fp.fingerprint(&text).map(simhash_core::Fingerprint::get)
        );
    }
}
