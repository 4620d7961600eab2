//! End-to-end benchmark of `simhash dedup` on a generated JSONL corpus, against the core
//! fingerprinting throughput measured in the same run.
//!
//! ```sh
//! cargo build --release -p simhash-cli
//! cargo run --release -p benches --bin bench_cli -- --mb 1000 --dir /tmp/simhash-bench
//! ```
//!
//! It writes (once) a deterministic corpus of about `--mb` megabytes: English-like documents
//! of 100 to 700 words drawn from the Apache license's vocabulary, 20% of them near-copies
//! (a few words changed) or exact copies of earlier ones. Then it prints:
//! - the core throughput: `Fingerprinter::fingerprint` on the corpus texts, one thread;
//! - for each method (`--method simhash,minhash`) and thread count, `simhash dedup` wall
//!   time, CPU time and MB/s, its ratio to (core throughput × threads), its peak memory, and
//!   its CPU-seconds per 200k documents (the OpenMP fork needed about 190 CPU-seconds for
//!   200k documents, 423 MB, here).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use simhash_core::Fingerprinter;

struct Args {
    mb: u64,
    dir: PathBuf,
    simhash: PathBuf,
    threads: Vec<usize>,
    methods: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        mb: 1000,
        dir: std::env::temp_dir().join("simhash-bench"),
        simhash: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/simhash")),
        threads: vec![1, 2],
        methods: vec!["simhash".into(), "minhash".into()],
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--mb" => args.mb = value()?.parse().map_err(|e| format!("--mb: {e}"))?,
            "--dir" => args.dir = PathBuf::from(value()?),
            "--simhash" => args.simhash = PathBuf::from(value()?),
            "--threads" => {
                args.threads = value()?
                    .split(',')
                    .map(|t| t.parse().map_err(|e| format!("--threads: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            "--method" => args.methods = value()?.split(',').map(String::from).collect(),
            "-h" | "--help" => {
                return Err("usage: bench_cli [--mb N] [--dir DIR] [--simhash PATH] \
                            [--threads 1,2] [--method simhash,minhash]"
                    .into());
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

/// Reads the texts (outside the timed part) and fingerprints them on one thread.
fn core_throughput(path: &Path) -> std::io::Result<(f64, u64, u64)> {
    #[derive(serde::Deserialize)]
    struct Rec {
        text: String,
    }
    let mut texts = Vec::new();
    let mut bytes = 0u64;
    for line in BufReader::new(File::open(path)?).lines() {
        let line = line?;
        bytes += line.len() as u64 + 1;
        let rec: Rec = serde_json::from_str(&line).map_err(std::io::Error::other)?;
        texts.push(rec.text);
    }
    let fp = Fingerprinter::new();
    let start = Instant::now();
    let mut acc = 0u64;
    for t in &texts {
        acc ^= fp.fingerprint(t).map_or(0, simhash_core::Fingerprint::get);
    }
    let secs = start.elapsed().as_secs_f64();
    std::hint::black_box(acc);
    Ok((secs, bytes, texts.len() as u64))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    if !args.simhash.exists() {
        return Err(format!(
            "{} not found: run `cargo build --release -p simhash-cli` first, or pass --simhash",
            args.simhash.display()
        )
        .into());
    }
    let path = benches::dedup_corpus(&args.dir, args.mb)?;
    let (core_secs, bytes, docs) = core_throughput(&path)?;
    let mb = bytes as f64 / 1e6;
    let text_core = mb / core_secs;
    println!("corpus: {} ({mb:.0} MB, {docs} documents)", path.display());
    println!("core fingerprinting, 1 thread: {core_secs:.2} s, {text_core:.1} MB/s of JSONL");
    println!();
    println!(
        "{:>7} {:>7} {:>8} {:>8} {:>9} {:>16} {:>10} {:>18}",
        "method",
        "threads",
        "wall s",
        "CPU s",
        "MB/s",
        "vs core×threads",
        "peak MB",
        "CPU s per 200k docs"
    );
    for (method, &threads) in
        args.methods.iter().flat_map(|m| args.threads.iter().map(move |t| (m, t)))
    {
        let stats = args.dir.join(format!("stats-{method}-j{threads}.json"));
        let cpu_before = benches::children_cpu_seconds();
        let start = Instant::now();
        let status = Command::new(&args.simhash)
            .arg("dedup")
            .arg(&path)
            .args(["--method", method, "--output", "/dev/null", "--quiet"])
            .args(["-j", &threads.to_string(), "--stats"])
            .arg(&stats)
            .status()?;
        let wall = start.elapsed().as_secs_f64();
        if !status.success() {
            return Err(format!("simhash exited with {status}").into());
        }
        let cpu = match (cpu_before, benches::children_cpu_seconds()) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats)?)?;
        let peak = summary["peak_memory_bytes"].as_f64().unwrap_or(f64::NAN) / 1e6;
        let rate = mb / wall;
        println!(
            "{method:>7} {threads:>7} {wall:>8.2} {cpu:>8.2} {rate:>9.1} {:>16.2} {peak:>10.0} {:>18.1}",
            rate / (text_core * threads as f64),
            cpu / docs as f64 * 200_000.0
        );
        println!(
            "        phases: {}; pairs {}, removed {}",
            summary["seconds"], summary["pairs"], summary["removed"]
        );
    }
    println!();
    println!("OpenMP fork, measured here: 190 CPU s per 200k documents (423 MB)");
    Ok(())
}
