//! Short documents that share one phrase: `simhash dedup`, `pairs` and `cluster` on
//! `{"text": "doc I alpha beta gamma J"}` (`J = I % 5000`) at several corpus sizes, to
//! show that the cost grows linearly with the count (it once grew with its square).
//!
//! ```sh
//! cargo build --release -p simhash-cli
//! cargo run --release -p benches --bin bench_flood -- --sizes 50000,100000,200000
//! # and simhash-dist (1 process x 2 workers) after each command:
//! cargo build --release -p simhash-dist
//! cargo run --release -p benches --bin bench_flood -- --dist target/release/simhash-dist
//! ```
//!
//! Each document has four word 3-gram shingles: two its own, one shared with the
//! documents of the same `J` (Jaccard 1/3 with them) and the phrase's, shared with all
//! (Jaccard 1/7): no pair reaches the default Jaccard of 0.4, yet at the default LSH
//! threshold of 0.3 about a tenth of all pairs share a band. Per size and command it
//! prints the wall time, the time per 1,000 documents (flat when linear), the candidates
//! verified and the peak memory from the run's `--stats`.
//!
//! `--shape own` writes another flood instead: documents that share a 60-word boilerplate,
//! each with a 20-word sentence of its own (words of letters drawn from 20,000). Every pair
//! verifies (Jaccard about 0.6) and is `overlap`, so `dedup` keeps every document, each kept
//! for content of its own; `dedup` only by default (`pairs` would list every pair).
//!
//! ```sh
//! cargo run --release -p benches --bin bench_flood -- --shape own --sizes 20000,40000,80000
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;

#[path = "../../../crates/simhash-index/tests/support/own_flood.rs"]
mod own_flood;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

struct Args {
    sizes: Vec<usize>,
    dir: PathBuf,
    simhash: PathBuf,
    commands: Vec<String>,
    threads: usize,
    /// `simhash-dist`, run after `simhash` with as many workers as threads.
    dist: Option<PathBuf>,
    /// The documents: `phrase` (short, sharing a phrase) or `own` (a boilerplate and a
    /// sentence of their own).
    shape: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sizes: vec![50_000, 100_000, 200_000],
        dir: std::env::temp_dir().join("simhash-bench-flood"),
        simhash: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/simhash")),
        commands: vec!["dedup".into(), "pairs".into(), "cluster".into()],
        threads: 2,
        dist: None,
        shape: "phrase".into(),
    };
    let mut commands_given = false;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--sizes" => {
                args.sizes = value()?
                    .split(',')
                    .map(|t| t.parse().map_err(|e| format!("--sizes: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            "--dir" => args.dir = PathBuf::from(value()?),
            "--simhash" => args.simhash = PathBuf::from(value()?),
            "--commands" => {
                args.commands = value()?.split(',').map(String::from).collect();
                commands_given = true;
            }
            "--shape" => {
                args.shape = value()?;
                if !["phrase", "own"].contains(&args.shape.as_str()) {
                    return Err(format!("--shape: phrase or own, not {}", args.shape));
                }
            }
            "-j" => args.threads = value()?.parse().map_err(|e| format!("-j: {e}"))?,
            "--dist" => args.dist = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                return Err("usage: bench_flood [--sizes 50000,100000,200000] [--dir DIR] \
                            [--simhash PATH] [--commands dedup,pairs,cluster] [-j 2] \
                            [--dist PATH] [--shape phrase|own]"
                    .into());
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.shape == "own" && !commands_given {
        args.commands = vec!["dedup".into()];
    }
    Ok(args)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args().map_err(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    })?;
    std::fs::create_dir_all(&args.dir)?;
    println!(
        "{:>8} {:>8} {:>8} {:>12} {:>14} {:>8} {:>8}",
        "docs", "command", "wall s", "ms/1k docs", "candidates", "pairs", "peak MB"
    );
    for &n in &args.sizes {
        let path = args.dir.join(format!("flood-{}-{n}.jsonl", args.shape));
        if !path.exists() {
            let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
            if args.shape == "own" {
                write_own_content(&mut out, n)?;
            } else {
                for i in 0..n {
                    writeln!(out, "{{\"text\": \"doc {i} alpha beta gamma {}\"}}", i % 5000)?;
                }
            }
            out.flush()?;
        }
        for command in &args.commands {
            let stats = args.dir.join(format!("stats-{command}-{n}.json"));
            let start = Instant::now();
            let status = Command::new(&args.simhash)
                .arg(command)
                .arg(&path)
                .args(["--output", "/dev/null", "--quiet", "-j", &args.threads.to_string()])
                .arg("--stats")
                .arg(&stats)
                .status()?;
            let wall = start.elapsed().as_secs_f64();
            if !status.success() {
                return Err(format!("simhash {command} exited with {status}").into());
            }
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&stats)?)?;
            let peak = summary["peak_memory_bytes"].as_f64().unwrap_or(f64::NAN) / 1e6;
            println!(
                "{n:>8} {command:>8} {wall:>8.2} {:>12.2} {:>14} {:>8} {peak:>8.0}",
                wall * 1e6 / n as f64,
                summary["candidates"],
                summary["pairs"],
            );
            if let Some(dist) = &args.dist {
                run_dist(dist, command, &path, &stats, n, args.threads)?;
            }
        }
    }
    Ok(())
}

/// `n` documents of `--shape own`: one 60-word boilerplate, and 20 words of their own.
fn write_own_content(out: &mut impl Write, n: usize) -> std::io::Result<()> {
    let mut flood = own_flood::OwnFlood::new();
    for _ in 0..n {
        writeln!(out, "{{\"text\": \"{}\"}}", flood.document())?;
    }
    Ok(())
}

/// `simhash-dist COMMAND` on one process of `workers` workers: its line of the table, with
/// the candidates and pairs of its summary and the peak memory of its `--stats`.
fn run_dist(
    dist: &std::path::Path,
    command: &str,
    path: &std::path::Path,
    stats: &std::path::Path,
    n: usize,
    workers: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let out = Command::new(dist)
        .arg(command)
        .arg(path)
        .args(["--output", "/dev/null", "-w", &workers.to_string(), "--stats"])
        .arg(stats)
        .output()?;
    let wall = start.elapsed().as_secs_f64();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("simhash-dist {command} exited with {}: {err}", out.status).into());
    }
    let summary = String::from_utf8_lossy(&out.stderr);
    // The count before `what` in the summary line ("-" for a method that has none).
    let count = |what: &str| {
        summary
            .split(what)
            .next()
            .and_then(|head| head.rsplit([' ', '(']).next())
            .filter(|n| n.parse::<u64>().is_ok())
            .unwrap_or("-")
            .to_string()
    };
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(stats)?)?;
    let peak = json["measured"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["peak_rss_bytes"].as_f64())
        .fold(f64::NAN, f64::max);
    println!(
        "{n:>8} {:>8} {wall:>8.2} {:>12.2} {:>14} {:>8} {:>8.0}",
        format!("dist {command}"),
        wall * 1e6 / n as f64,
        count(" candidates,"),
        count(" pairs"),
        peak / 1e6,
    );
    Ok(())
}
