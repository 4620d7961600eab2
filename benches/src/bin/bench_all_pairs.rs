//! All pairs within k bits among N random fingerprints with planted near-duplicates.
//!
//! ```text
//! cargo run --release -p benches --bin bench_all_pairs -- --n 10000000 --k 3 [--blocks 5] [--seed 1] [--threads 2] [--baseline 6] [--copies 20000] [--memory 2G [--compare 1]]
//! ```
//!
//! `--memory SIZE` (bytes, or with a `K`, `M` or `G` suffix: powers of 1024) runs
//! `AllPairs` within that budget instead of the in-memory path, with blocks
//! and passes from `plan_with_memory`; `--compare 1` then also runs the in-memory path in the
//! same process first, checks that both give the same batches in the same order (a digest
//! of every batch), and prints the wall- and CPU-time ratios. Peak RSS is measured per run
//! (the high-water mark is reset in between through `/proc/self/clear_refs`). Neither path
//! writes to disk.
//!
//! Prints the plan, wall time, CPU time, pairs found, a digest of every batch in order (equal
//! digests: the same batches in the same order) and peak resident memory (`VmHWM`).
//! `--baseline M` first runs, in the same process, the textbook version of the same scheme
//! the way simhash-cpp's `find-all` does it (one thread; per table a comparison sort of
//! the permuted values, a scan of equal prefixes, and a hash set of pairs to drop
//! duplicates) with `M` blocks, checks that it finds the same number of pairs, and prints
//! the CPU-time ratio. `--copies C` adds `C` copies of one fingerprint (`C (C - 1) / 2`
//! pairs at distance 0), to show that a huge group streams instead of filling memory.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::Instant;

use benches::{peak_rss_kib, planted};
use simhash_core::Fingerprint;
use simhash_index::{AllPairs, Pair, Tables};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_all_pairs: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut n: u64 = 1_000_000;
    let mut k: u32 = 3;
    let mut blocks: Option<usize> = None;
    let mut seed: u64 = 1;
    let mut threads: usize = 0;
    let mut baseline_blocks: Option<usize> = None;
    let mut copies: usize = 0;
    let mut memory: Option<u64> = None;
    let mut compare = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => n = value.parse()?,
            "--k" => k = value.parse()?,
            "--blocks" => blocks = Some(value.parse()?),
            "--seed" => seed = value.parse()?,
            "--threads" => threads = value.parse()?,
            "--baseline" => baseline_blocks = Some(value.parse()?),
            "--copies" => copies = value.parse()?,
            "--memory" => memory = Some(parse_size(&value)?),
            "--compare" => compare = value != "0",
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let plan = simhash_index::plan_with_memory(n + copies as u64, k, memory)?;
    let blocks = blocks.unwrap_or(plan.blocks);
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global()?;
    let tables = Tables::new(blocks, k)?;
    println!("plan: {plan:?}");

    let t = Instant::now();
    let mut fps = planted(n as usize, k, seed);
    // One page copied many times: a group of equal prefixes with a quadratic output.
    fps.extend(std::iter::repeat_n(Fingerprint(0x0123_4567_89ab_cdef), copies));
    println!("generated {} fingerprints in {:.2?}", fps.len(), t.elapsed());

    let mut baseline_cpu = None;
    if let Some(m) = baseline_blocks {
        let (cpu0, t) = (cpu_seconds(), Instant::now());
        let pairs = baseline(&fps, &Tables::new(m, k)?);
        let cpu = cpu_seconds() - cpu0;
        println!(
            "baseline: blocks={m} wall={:.3}s cpu={cpu:.2}s pairs={pairs}",
            t.elapsed().as_secs_f64()
        );
        baseline_cpu = Some((cpu, pairs));
    }

    let mut free_run = None;
    if memory.is_some() && compare {
        free_run = Some(measure(&fps, &tables, None)?);
    }
    let r = measure(&fps, &tables, memory)?;
    let pairs = r.pairs;
    let cpu = r.cpu;
    if let Some(free) = free_run {
        if (free.pairs, free.digest) != (r.pairs, r.digest) {
            return Err("the budget run's batches differ from the in-memory run's".into());
        }
        println!(
            "same batches in the same order (digest {:016x}); budget / in-memory: wall {:.2}x, \
             CPU {:.2}x, peak RSS {:.2}x",
            r.digest,
            r.wall / free.wall,
            r.cpu / free.cpu,
            r.peak_kib as f64 / free.peak_kib as f64,
        );
    }
    if let Some((base, base_pairs)) = baseline_cpu {
        if base_pairs != pairs {
            return Err(format!("baseline found {base_pairs} pairs, the index {pairs}").into());
        }
        println!("baseline / index CPU time: {:.1}x", base / cpu);
    }
    Ok(())
}

/// One run's figures.
struct Measured {
    wall: f64,
    cpu: f64,
    pairs: u64,
    digest: u64,
    peak_kib: u64,
}

/// Runs all-pairs within `memory` (or in memory) and prints the figures of the run.
fn measure(
    fps: &[Fingerprint],
    tables: &Tables,
    memory: Option<u64>,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let k = tables.max_distance();
    // Reset the peak RSS to the current RSS, so that VmHWM is this run's (Linux >= 4.0).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let (cpu0, t) = (cpu_seconds(), Instant::now());
    let mut pairs = 0u64;
    let mut digest = 0xcbf2_9ce4_8422_2325_u64;
    let mut by_distance = vec![0u64; k as usize + 1];
    AllPairs::new(tables).budget(memory).run(fps, |batch| {
        pairs += batch.len() as u64;
        digest = mix(digest, batch.len() as u64);
        for &Pair { a, b, distance } in batch {
            by_distance[distance as usize] += 1;
            digest = mix(digest, u64::from(a) << 32 | u64::from(b));
        }
    })?;
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    let peak_kib = peak_rss_kib();
    let mode = memory.map_or("in-memory".to_string(), |m| format!("memory={m}"));
    println!(
        "{mode} n={} k={k} blocks={} tables={} threads={} wall={wall:.3}s cpu={cpu:.2}s \
         pairs={pairs} by_distance={by_distance:?} digest={digest:016x} peak_rss={}MiB{} disk=0",
        fps.len(),
        tables.blocks(),
        tables.len(),
        rayon::current_num_threads(),
        peak_kib / 1024,
        if reset { "" } else { " (process peak)" },
    );
    Ok(Measured { wall, cpu, pairs, digest, peak_kib })
}

/// One step of an order-dependent digest of the batches (FNV-1a over 64-bit words).
fn mix(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(0x0000_0100_0000_01b3)
}

/// `123`, `20G`, `512M`, `64K`: bytes, the suffixes being powers of 1024.
fn parse_size(s: &str) -> Result<u64, Box<dyn std::error::Error>> {
    let (digits, shift) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 20),
        Some(b'G' | b'g') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let v: u64 = digits.parse()?;
    v.checked_mul(1 << shift).ok_or_else(|| format!("size {s} is too large").into())
}

/// The textbook implementation, single-threaded, as simhash-cpp's `find-all` runs it.
fn baseline(fps: &[Fingerprint], tables: &Tables) -> u64 {
    let k = tables.max_distance();
    let mut seen: HashSet<(u32, u32)> = HashSet::new();
    let mut v: Vec<(u64, u32)> = Vec::with_capacity(fps.len());
    for table in tables {
        v.clear();
        v.extend(fps.iter().enumerate().map(|(i, &f)| (table.permute(f), i as u32)));
        v.sort_unstable();
        let shift = 64 - table.prefix_bits();
        for group in v.chunk_by(|a, b| a.0 >> shift == b.0 >> shift) {
            for (i, a) in group.iter().enumerate() {
                for b in &group[i + 1..] {
                    if (a.0 ^ b.0).count_ones() <= k {
                        seen.insert((a.1.min(b.1), a.1.max(b.1)));
                    }
                }
            }
        }
    }
    seen.len() as u64
}

/// User plus system CPU seconds of this process, from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of the file (utime, stime); `after` starts at field 3.
    (ticks(11) + ticks(12)) / 100.0
}
