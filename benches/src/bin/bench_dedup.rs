//! `simhash dedup` (minhash, the default) against `simhash fingerprint` on the same file, for
//! two binaries in one run: a baseline and the new one.
//!
//! ```sh
//! cargo build --release -p simhash-cli -p benches --bin simhash --bin bench_dedup
//! python3 scripts/bench/make_real_corpus.py /tmp/real/real.jsonl
//! ./target/release/bench_dedup --input /tmp/real/real.jsonl \
//!     --baseline /tmp/simhash-main-baseline/simhash --runs 4 --dir /tmp/dd2-bench
//! ```
//!
//! First a check: each binary runs `dedup --annotate` and `dedup --removed --stats` once, and
//! the kept records, the annotated records, the `--removed` file and the `--stats` counts
//! (every field but the timings and peak memory) must be the same bytes for both. Then
//! `--runs` rounds, the binaries alternating which goes first: `fingerprint -q -j 2 -o
//! /dev/null`, `dedup -q -j 2 -o /dev/null --stats` and `dedup -q -j 1 -o /dev/null
//! --stats`, each timed (wall and CPU). It prints each round's times, the dedup /
//! fingerprint wall ratio (both from the same round) and the reading phase's speedup from 1
//! to 2 threads (`--stats` `seconds.reading`), then the medians, then each binary's minimum
//! times (the least disturbed runs on a loaded machine) and its dedup / fingerprint CPU
//! ratio. `--baseline` is needed; `--dir` defaults to a directory of its own per run.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Args {
    input: PathBuf,
    baseline: PathBuf,
    new: PathBuf,
    dir: PathBuf,
    runs: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        input: PathBuf::from("/tmp/real/real.jsonl"),
        baseline: PathBuf::new(),
        new: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/simhash")),
        // Its own directory per run: engineers share /tmp.
        dir: std::env::temp_dir().join(format!("simhash-bench-dedup-{}", std::process::id())),
        runs: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--input" => args.input = PathBuf::from(value()?),
            "--baseline" => args.baseline = PathBuf::from(value()?),
            "--new" => args.new = PathBuf::from(value()?),
            "--dir" => args.dir = PathBuf::from(value()?),
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "-h" | "--help" => {
                return Err("usage: bench_dedup --baseline PATH [--input FILE] [--new PATH] \
                            [--dir DIR] [--runs N]"
                    .into());
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.baseline.as_os_str().is_empty() {
        return Err("--baseline PATH is needed: the simhash binary to compare with".into());
    }
    Ok(args)
}

/// Runs `bin args`, which must succeed; returns wall and CPU seconds.
fn timed(bin: &Path, args: &[&str]) -> Result<(f64, f64), String> {
    let cpu_before = benches::children_cpu_seconds();
    let start = Instant::now();
    let status =
        Command::new(bin).args(args).status().map_err(|e| format!("{}: {e}", bin.display()))?;
    let wall = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{} {args:?}: {status}", bin.display()));
    }
    let cpu = match (cpu_before, benches::children_cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => f64::NAN,
    };
    Ok((wall, cpu))
}

/// A 64-bit digest of a file's bytes (SipHash with fixed keys: the same in one run).
fn digest(path: &Path) -> Result<u64, String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hasher = std::hash::DefaultHasher::new();
    let mut buf = vec![0; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            return Ok(hasher.finish());
        }
        hasher.write(&buf[..n]);
    }
}

fn stats(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `--stats` counts: everything but the timings, the peak memory and `band_key_bits`
/// (which a baseline built before 64-bit band keys does not write).
fn counts(path: &Path) -> Result<String, String> {
    let mut s = stats(path)?;
    if let Some(map) = s.as_object_mut() {
        for key in ["seconds", "seconds_total", "peak_memory_bytes", "band_key_bits"] {
            map.remove(key);
        }
    }
    Ok(s.to_string())
}

/// The outputs' digests and the stats counts of one binary.
fn outputs(bin: &Path, input: &str, dir: &Path, name: &str) -> Result<Vec<String>, String> {
    let file = |what: &str| dir.join(format!("{name}-{what}"));
    let (kept, removed, annotated, s) =
        (file("kept.jsonl"), file("removed.jsonl"), file("annotated.jsonl"), file("stats.json"));
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let (kept_s, removed_s, annotated_s, stats_s) =
        (path(&kept), path(&removed), path(&annotated), path(&s));
    timed(
        bin,
        &[
            "dedup",
            input,
            "-q",
            "-j",
            "2",
            "-o",
            &kept_s,
            "--removed",
            &removed_s,
            "--stats",
            &stats_s,
        ],
    )?;
    timed(bin, &["dedup", input, "-q", "-j", "2", "-o", &annotated_s, "--annotate"])?;
    Ok(vec![
        format!("kept {:016x}", digest(&kept)?),
        format!("removed {:016x}", digest(&removed)?),
        format!("annotated {:016x}", digest(&annotated)?),
        format!("stats counts {:016x}", {
            let mut h = std::hash::DefaultHasher::new();
            h.write(counts(&s)?.as_bytes());
            h.finish()
        }),
    ])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

/// One binary's times in one round.
#[derive(Clone, Copy)]
struct Round {
    fp: (f64, f64),
    dedup: (f64, f64),
    dedup1: (f64, f64),
    reading2: f64,
    reading1: f64,
    matching2: f64,
}

fn round(bin: &Path, input: &str, dir: &Path) -> Result<Round, String> {
    let s = dir.join("round-stats.json");
    let s_str = s.to_string_lossy().into_owned();
    let fp = timed(bin, &["fingerprint", input, "-q", "-j", "2", "-o", "/dev/null"])?;
    let dedup =
        timed(bin, &["dedup", input, "-q", "-j", "2", "-o", "/dev/null", "--stats", &s_str])?;
    let st = stats(&s)?;
    let (reading2, matching2) = (
        st["seconds"]["reading"].as_f64().unwrap_or(f64::NAN),
        st["seconds"]["matching"].as_f64().unwrap_or(f64::NAN),
    );
    let dedup1 =
        timed(bin, &["dedup", input, "-q", "-j", "1", "-o", "/dev/null", "--stats", &s_str])?;
    let reading1 = stats(&s)?["seconds"]["reading"].as_f64().unwrap_or(f64::NAN);
    Ok(Round { fp, dedup, dedup1, reading2, reading1, matching2 })
}

/// Each binary's medians over the rounds, then its minimum wall times and CPU ratio.
fn medians_and_minimums(names: [&str; 2], all: &[Vec<Round>]) {
    println!("medians:");
    for (b, rounds) in all.iter().enumerate() {
        let m = |f: &dyn Fn(&Round) -> f64| median(rounds.iter().map(f).collect());
        println!(
            "{:<9} fp wall {:.2} s, dedup wall {:.2} s (CPU {:.2} s), dedup/fp {:.2}, \
             -j1 dedup wall {:.2} s, reading -j2 {:.2} s, matching -j2 {:.2} s, \
             reading speedup 1→2 threads {:.2}×",
            names[b],
            m(&|x| x.fp.0),
            m(&|x| x.dedup.0),
            m(&|x| x.dedup.1),
            m(&|x| x.dedup.0 / x.fp.0),
            m(&|x| x.dedup1.0),
            m(&|x| x.reading2),
            m(&|x| x.matching2),
            m(&|x| x.reading1 / x.reading2),
        );
    }
    // Under a shared machine's load the least disturbed run is the fastest: each binary's
    // minimum wall times, and the CPU (user + system) ratio, which load moves less.
    println!("minimums and CPU:");
    for (b, rounds) in all.iter().enumerate() {
        let min = |f: &dyn Fn(&Round) -> f64| rounds.iter().map(f).fold(f64::INFINITY, f64::min);
        let m = |f: &dyn Fn(&Round) -> f64| median(rounds.iter().map(f).collect());
        println!(
            "{:<9} min fp wall {:.2} s, min dedup wall {:.2} s, their ratio {:.2}; \
             min reading -j2 {:.2} s, -j1 {:.2} s (ratio {:.2}), min matching -j2 {:.2} s; \
             dedup CPU / fp CPU (median) {:.2}",
            names[b],
            min(&|x| x.fp.0),
            min(&|x| x.dedup.0),
            min(&|x| x.dedup.0) / min(&|x| x.fp.0),
            min(&|x| x.reading2),
            min(&|x| x.reading1),
            min(&|x| x.reading1) / min(&|x| x.reading2),
            min(&|x| x.matching2),
            m(&|x| x.dedup.1 / x.fp.1),
        );
    }
}

fn main() -> Result<(), String> {
    let args = parse_args()?;
    std::fs::create_dir_all(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let input = args.input.to_string_lossy().into_owned();
    let bins = [("baseline", &args.baseline), ("new", &args.new)];

    let base_out = outputs(&args.baseline, &input, &args.dir, "baseline")?;
    let new_out = outputs(&args.new, &input, &args.dir, "new")?;
    for (b, n) in base_out.iter().zip(&new_out) {
        println!("{b:<32} new: {n} {}", if b == n { "same" } else { "DIFFERENT" });
    }
    if base_out != new_out {
        return Err("the outputs differ".into());
    }

    println!(
        "{:<9} {:>5} {:>8} {:>7} {:>9} {:>8} {:>7} {:>9} {:>9} {:>10} {:>10}",
        "binary",
        "round",
        "fp wall",
        "fp CPU",
        "dd wall",
        "dd CPU",
        "dd/fp",
        "read -j2",
        "match -j2",
        "read -j1",
        "read 1→2"
    );
    let mut all: Vec<Vec<Round>> = vec![Vec::new(), Vec::new()];
    for r in 0..args.runs {
        let order = if r % 2 == 0 { [0, 1] } else { [1, 0] };
        for b in order {
            let (name, bin) = bins[b];
            let x = round(bin, &input, &args.dir)?;
            println!(
                "{name:<9} {r:>5} {:>8.2} {:>7.2} {:>9.2} {:>8.2} {:>7.2} {:>9.2} {:>9.2} {:>10.2} {:>10.2}",
                x.fp.0,
                x.fp.1,
                x.dedup.0,
                x.dedup.1,
                x.dedup.0 / x.fp.0,
                x.reading2,
                x.matching2,
                x.reading1,
                x.reading1 / x.reading2
            );
            all[b].push(x);
        }
    }
    medians_and_minimums([bins[0].0, bins[1].0], &all);
    let ratio = |f: &dyn Fn(&Round) -> f64| {
        median(all[1].iter().zip(&all[0]).map(|(n, b)| f(n) / f(b)).collect())
    };
    println!(
        "new / baseline (median of same-round ratios): dedup wall {:.2}, dedup CPU {:.2}, \
         reading -j2 {:.2}, matching -j2 {:.2}",
        ratio(&|x| x.dedup.0),
        ratio(&|x| x.dedup.1),
        ratio(&|x| x.reading2),
        ratio(&|x| x.matching2),
    );
    Ok(())
}
