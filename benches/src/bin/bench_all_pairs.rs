//! All pairs within k bits among N random fingerprints with planted near-duplicates.
//!
//! ```text
//! cargo run --release -p benches --bin bench_all_pairs -- --n 10000000 --k 3 [--blocks 5] [--seed 1] [--threads 2]
//! ```
//!
//! Prints the plan, wall time, CPU time, pairs found and peak resident memory (`VmHWM`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Instant;

use simhash_core::Fingerprint;
use simhash_index::{Tables, all_pairs_with};

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
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => n = value.parse()?,
            "--k" => k = value.parse()?,
            "--blocks" => blocks = Some(value.parse()?),
            "--seed" => seed = value.parse()?,
            "--threads" => threads = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let plan = simhash_index::plan(n, k)?;
    let blocks = blocks.unwrap_or(plan.blocks);
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global()?;
    let tables = Tables::new(blocks, k)?;
    println!("plan: {plan:?}");

    let t = Instant::now();
    let fps = planted(n as usize, k, seed);
    println!("generated {} fingerprints in {:.2?}", fps.len(), t.elapsed());

    let (cpu0, t) = (cpu_seconds(), Instant::now());
    let mut pairs = 0u64;
    let mut by_distance = vec![0u64; k as usize + 1];
    all_pairs_with(&fps, &tables, |batch| {
        pairs += batch.len() as u64;
        for p in batch {
            by_distance[p.distance as usize] += 1;
        }
    });
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    println!(
        "n={n} k={k} blocks={blocks} tables={} threads={} wall={wall:.3}s cpu={cpu:.2}s \
         pairs={pairs} by_distance={by_distance:?} peak_rss={}MiB",
        tables.len(),
        rayon::current_num_threads(),
        peak_rss_kib() / 1024,
    );
    Ok(())
}

/// `n` fingerprints: uniform random ones, and for one in eight a near copy of an earlier one
/// at 0 to `k + 1` bits (so some planted pairs are just out of range). Deterministic.
fn planted(n: usize, k: u32, seed: u64) -> Vec<Fingerprint> {
    let mut s = seed;
    let mut next = move || {
        // splitmix64
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut fps: Vec<Fingerprint> = Vec::with_capacity(n);
    while fps.len() < n {
        let r = next();
        if r % 8 == 0 && !fps.is_empty() {
            let of = fps[(next() % fps.len() as u64) as usize];
            let bits = (next() % u64::from(k + 2)) as u32;
            let mut x = of.0;
            let mut flipped = 0;
            while flipped < bits {
                let bit = 1u64 << (next() % 64);
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

/// User plus system CPU seconds of this process, from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of the file (utime, stime); `after` starts at field 3.
    (ticks(11) + ticks(12)) / 100.0
}

/// Peak resident set size in KiB (`VmHWM` in `/proc/self/status`).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
