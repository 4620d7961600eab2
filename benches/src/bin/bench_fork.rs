//! The fork's own command line: `simhash` (no subcommand) against the OpenMP fork's binary,
//! alternated in one run, wall and CPU time, with a check that both found the same clusters.
//!
//! ```sh
//! cargo build --release -p simhash-cli -p benches --bin simhash --bin bench_fork
//! ./target/release/bench_fork --source /tmp/real/real.jsonl --mb 39 --dir /tmp/simhash-fork \
//!     [--fork /tmp/fork-cpp/bin/simhash] [--runs 5] [--stride 15]
//! ```
//!
//! Both binaries get the fork's exact flags: `--input F --format json --text_column=text
//! --id_column=id --window=5 --blocks 5 --distance 3 --output OUT`.
//!
//! The corpus (written once to `--dir`) is every `--stride`-th record of `--source` (any JSONL
//! with a string `text`; without one, the generated corpus of `bench_cli`) until `--mb`
//! megabytes, rewritten as `{"id":N,"text":...}` with integer ids and only texts longer than
//! the window: the fork reads `int index = j3["id"]` and fails on a text shorter than its
//! window. If `--fork` is not given or not there, only `simhash` is timed.
//!
//! The outputs are compared as sets of clusters (sets of ids), not bytes: the fork prints in
//! hash-set order. The fork collapses identical hashes before its search, so records whose
//! texts share one fingerprint form a cluster only if some other fingerprint is within reach;
//! `simhash` also reports a cluster of records with one fingerprint. The check is therefore:
//! the fork's clusters are exactly `simhash`'s clusters with two or more distinct hashes.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

struct Args {
    source: PathBuf,
    mb: u64,
    stride: usize,
    dir: PathBuf,
    simhash: PathBuf,
    fork: Option<PathBuf>,
    runs: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        source: PathBuf::from("/tmp/real/real.jsonl"),
        mb: 39,
        stride: 15,
        dir: std::env::temp_dir().join("simhash-fork"),
        simhash: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/simhash")),
        fork: None,
        runs: 5,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--source" => args.source = PathBuf::from(value()?),
            "--mb" => args.mb = value()?.parse().map_err(|e| format!("--mb: {e}"))?,
            "--stride" => {
                args.stride = value()?.parse().map_err(|e| format!("--stride: {e}"))?;
            }
            "--dir" => args.dir = PathBuf::from(value()?),
            "--simhash" => args.simhash = PathBuf::from(value()?),
            "--fork" => args.fork = Some(PathBuf::from(value()?)),
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "-h" | "--help" => {
                return Err("usage: bench_fork [--source JSONL] [--mb N] [--stride S] \
                            [--dir DIR] [--simhash PATH] [--fork PATH] [--runs R]"
                    .into());
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    args.runs = args.runs.max(1);
    args.stride = args.stride.max(1);
    Ok(args)
}

/// The fork's window: texts of at most this many bytes are left out of the corpus.
const WINDOW: usize = 5;

/// Writes the corpus unless it is there; returns its path.
fn corpus(args: &Args) -> Result<PathBuf, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&args.dir)?;
    let (source, stride) = if args.source.exists() {
        (args.source.clone(), args.stride)
    } else {
        eprintln!("{} is not there: using the generated corpus", args.source.display());
        (benches::dedup_corpus(&args.dir, args.mb)?, 1)
    };
    let stem = source.file_stem().and_then(|s| s.to_str()).unwrap_or("source");
    let path = args.dir.join(format!("{stem}-{}mb-{stride}.jsonl", args.mb));
    if path.exists() {
        return Ok(path);
    }
    let tmp = args.dir.join("corpus.tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    let mut written = 0u64;
    let mut id = 0u64;
    for (i, line) in BufReader::new(std::fs::File::open(&source)?).lines().enumerate() {
        let line = line?;
        if i % stride != 0 {
            continue;
        }
        let Ok(record) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
        let Some(text) = record.get("text").and_then(|t| t.as_str()) else { continue };
        if text.len() <= WINDOW {
            continue;
        }
        let mut row = serde_json::to_vec(&serde_json::json!({ "id": id, "text": text }))?;
        row.push(b'\n');
        out.write_all(&row)?;
        written += row.len() as u64;
        id += 1;
        if written >= args.mb * 1_000_000 {
            break;
        }
    }
    out.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// One run of `bin` with the fork's flags: wall and CPU seconds.
fn run(bin: &Path, input: &Path, output: &Path) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let cpu0 = benches::children_cpu_seconds().unwrap_or(0.0);
    let start = Instant::now();
    let status = Command::new(bin)
        .arg("--input")
        .arg(input)
        .args([
            "--format",
            "json",
            "--text_column=text",
            "--id_column=id",
            "--window=5",
            "--blocks",
            "5",
            "--distance",
            "3",
            "--output",
        ])
        .arg(output)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let wall = start.elapsed().as_secs_f64();
    let cpu = benches::children_cpu_seconds().unwrap_or(0.0) - cpu0;
    if !status.success() {
        return Err(format!("{} exited with {status}", bin.display()).into());
    }
    Ok((wall, cpu))
}

/// The clusters of an `id<TAB>hash<TAB>cluster` file (header first): for each cluster, its
/// set of ids and its number of distinct hashes.
type Clusters = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

fn clusters(path: &Path) -> Result<Clusters, Box<dyn std::error::Error>> {
    let mut out = Clusters::new();
    for line in BufReader::new(std::fs::File::open(path)?).lines().skip(1) {
        let line = line?;
        let mut cols = line.split('\t');
        let (Some(id), Some(hash), Some(cluster)) = (cols.next(), cols.next(), cols.next()) else {
            return Err(format!("{}: not id, hash, cluster: {line:?}", path.display()).into());
        };
        let entry = out.entry(cluster.to_string()).or_default();
        entry.0.insert(id.to_string());
        entry.1.insert(hash.to_string());
    }
    Ok(out)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let input = corpus(&args)?;
    let bytes = std::fs::metadata(&input)?.len();
    let records = BufReader::new(std::fs::File::open(&input)?).lines().count();
    println!("corpus: {} ({:.1} MB, {records} records)", input.display(), bytes as f64 / 1e6);

    let mut binaries = vec![("simhash", args.simhash.clone())];
    match &args.fork {
        Some(fork) if fork.exists() => binaries.push(("fork", fork.clone())),
        Some(fork) => println!("{} is not there: the fork is skipped", fork.display()),
        None => println!("no --fork: the fork is skipped"),
    }
    let outs: Vec<PathBuf> =
        binaries.iter().map(|(name, _)| args.dir.join(format!("out-{name}.tsv"))).collect();
    let mut walls = vec![Vec::new(); binaries.len()];
    let mut cpus = vec![Vec::new(); binaries.len()];
    for r in 0..args.runs {
        // Alternate the order, so that a burst of load on the shared machine hits each alike.
        let order: Vec<usize> = if r % 2 == 0 {
            (0..binaries.len()).collect()
        } else {
            (0..binaries.len()).rev().collect()
        };
        for i in order {
            let (wall, cpu) = run(&binaries[i].1, &input, &outs[i])?;
            walls[i].push(wall);
            cpus[i].push(cpu);
        }
    }

    println!("{} runs each, alternated (seconds):", args.runs);
    let mut summary = Vec::new();
    for (i, (name, bin)) in binaries.iter().enumerate() {
        let (wmin, cmin) = (
            walls[i].iter().copied().fold(f64::INFINITY, f64::min),
            cpus[i].iter().copied().fold(f64::INFINITY, f64::min),
        );
        let (wmed, cmed) = (median(&mut walls[i]), median(&mut cpus[i]));
        println!(
            "  {name:<8} wall min {wmin:.3} median {wmed:.3}   CPU min {cmin:.3} median {cmed:.3}   \
             {:.0} MB/s   ({})",
            bytes as f64 / 1e6 / wmin,
            bin.display()
        );
        summary.push((wmin, wmed, cmin, cmed));
    }
    if let [ours, fork] = summary[..] {
        println!(
            "  fork / simhash: wall {:.1}x (min) {:.1}x (median)   CPU {:.1}x (min) {:.1}x (median)",
            fork.0 / ours.0,
            fork.1 / ours.1,
            fork.2 / ours.2,
            fork.3 / ours.3
        );
        let ours = clusters(&outs[0])?;
        let fork = clusters(&outs[1])?;
        let ours_multi: BTreeSet<&BTreeSet<String>> =
            ours.values().filter(|(_, hashes)| hashes.len() > 1).map(|(ids, _)| ids).collect();
        let fork_all: BTreeSet<&BTreeSet<String>> = fork.values().map(|(ids, _)| ids).collect();
        let one_hash = ours.len() - ours_multi.len();
        if ours_multi == fork_all {
            println!(
                "  clusters: the same {} clusters of two or more hashes (simhash also reports \
                 {one_hash} clusters of records with one hash)",
                fork_all.len()
            );
        } else {
            return Err(format!(
                "the clusters differ: simhash {} of two or more hashes, fork {}, {} in common",
                ours_multi.len(),
                fork_all.len(),
                ours_multi.intersection(&fork_all).count()
            )
            .into());
        }
    }
    Ok(())
}
