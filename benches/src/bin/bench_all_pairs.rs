//! All pairs within k bits among N random fingerprints with planted near-duplicates.
//!
//! ```text
//! cargo run --release -p benches --bin bench_all_pairs -- --n 10000000 --k 3 [--blocks 5] [--seed 1] [--threads 2] [--baseline 6] [--copies 20000]
//! ```
//!
//! Prints the plan, wall time, CPU time, pairs found and peak resident memory (`VmHWM`).
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
    let mut baseline_blocks: Option<usize> = None;
    let mut copies: usize = 0;
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
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    let plan = simhash_index::plan(n, k)?;
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
    if let Some((base, base_pairs)) = baseline_cpu {
        if base_pairs != pairs {
            return Err(format!("baseline found {base_pairs} pairs, the index {pairs}").into());
        }
        println!("baseline / index CPU time: {:.1}x", base / cpu);
    }
    Ok(())
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
