//! Hash input: the block parser alone (MB/s per core) against the line-at-a-time reader
//! it replaces, then `simhash find-all` (and `simhash pairs --format hash`) end to end
//! against a baseline binary and simhash-cpp's `simhash-find-all`, all in one run.
//!
//! ```sh
//! cargo build --release -p simhash-cli -p benches --bin simhash --bin bench_hashin
//! ./target/release/bench_hashin --n 2000000 --dir /tmp/simhash-hashin \
//!     [--baseline /tmp/simhash-before] [--cpp /tmp/simhash-cpp/release/bin/simhash-find-all] \
//!     [--runs 3] [--threads 2] [--parser-only]
//! ```
//!
//! It writes (once) `--n` planted fingerprints (one in eight a near copy of an earlier one,
//! [`benches::planted`] with k = 3) as decimal (`dec.txt`), hex (`hex.txt`) and hash TSV
//! (`hash.tsv`). Each timing is the fastest of `--runs`; the binaries are run interleaved,
//! so that a burst of load on the shared machine hits each alike. The outputs of the
//! binary under test and of the baseline must be identical (checked); simhash-cpp's is
//! compared by its number of lines (it prints `[a, b]` in hash-set order).
//! `find-all` runs twice: with simhash-cpp's `--blocks 6` (20 tables), and with
//! `--blocks auto` (the planner's tables; the same output, checked), each against simhash-cpp
//! with its six blocks.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::naive_bytecount)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use simhash_io::{HashFormat, HashLines, LineReader, LineStatus, Parser, parse_hash_lines};

struct Args {
    n: usize,
    dir: PathBuf,
    simhash: PathBuf,
    baseline: Option<PathBuf>,
    cpp: Option<PathBuf>,
    runs: usize,
    threads: usize,
    /// Only the parser, not the binaries.
    parser_only: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 2_000_000,
        dir: std::env::temp_dir().join("simhash-hashin"),
        simhash: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/simhash")),
        baseline: None,
        cpp: None,
        runs: 3,
        threads: 2,
        parser_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--n" => args.n = value()?.parse().map_err(|e| format!("--n: {e}"))?,
            "--dir" => args.dir = PathBuf::from(value()?),
            "--simhash" => args.simhash = PathBuf::from(value()?),
            "--baseline" => args.baseline = Some(PathBuf::from(value()?)),
            "--cpp" => args.cpp = Some(PathBuf::from(value()?)),
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?;
            }
            "--parser-only" => args.parser_only = true,
            "-h" | "--help" => {
                return Err("usage: bench_hashin [--n N] [--dir DIR] [--simhash PATH] \
                            [--baseline PATH] [--cpp PATH] [--runs R] [--threads T] [--parser-only]"
                    .into());
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    args.runs = args.runs.max(1);
    Ok(args)
}

/// Writes the three inputs unless they are there; returns their paths.
fn inputs(dir: &Path, n: usize) -> std::io::Result<[PathBuf; 3]> {
    std::fs::create_dir_all(dir)?;
    let paths = [dir.join(format!("dec-{n}.txt")), dir.join(format!("hex-{n}.txt")), {
        dir.join(format!("hash-{n}.tsv"))
    }];
    if paths.iter().all(|p| p.exists()) {
        return Ok(paths);
    }
    let fps = benches::planted(n, 3, 1);
    let mut dec = std::io::BufWriter::new(std::fs::File::create(&paths[0])?);
    let mut hex = std::io::BufWriter::new(std::fs::File::create(&paths[1])?);
    let mut tsv = std::io::BufWriter::new(std::fs::File::create(&paths[2])?);
    writeln!(tsv, "id\thash")?;
    for (i, fp) in fps.iter().enumerate() {
        writeln!(dec, "{}", fp.0)?;
        writeln!(hex, "0x{:x}", fp.0)?;
        writeln!(tsv, "doc-{i}\t{}", fp.0)?;
    }
    for mut w in [dec, hex, tsv] {
        w.flush()?;
    }
    Ok(paths)
}

/// The fastest of `runs` timings of `f`, in seconds.
fn best(runs: usize, mut f: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut check = 0;
    for _ in 0..runs {
        let start = Instant::now();
        check = std::hint::black_box(f());
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, check)
}

/// The line-at-a-time path: a `LineReader` and `Parser::parse` per line.
fn old_path(parser: &Parser, data: &[u8]) -> u64 {
    let mut lines = LineReader::new(data, u64::MAX);
    let mut buf = Vec::new();
    let mut acc = 0u64;
    while let Ok(Some(status)) = lines.next_line(&mut buf, None) {
        if status == LineStatus::Ok
            && !parser.skips_header(lines.line, &buf)
            && let Ok(record) = parser.parse(&buf)
            && let simhash_io::Body::Hash(Some(fp)) = record.body
        {
            acc = acc.wrapping_add(fp.0);
        }
        buf.clear();
    }
    acc
}

/// The block parser over 2 MiB blocks cut at line ends (as the reader cuts them).
fn block_path(format: HashFormat, data: &[u8]) -> u64 {
    let mut acc = 0u64;
    let mut start = 0;
    let mut out = HashLines::default();
    while start < data.len() {
        let mut end = (start + (2 << 20)).min(data.len());
        if end < data.len() {
            end = memchr_back(&data[start..end]).map_or(data.len(), |i| start + i + 1);
        }
        out.lines.clear();
        out.hashes.clear();
        out.ids = simhash_io::IdTable::default();
        out.problems.clear();
        out.count = 0;
        parse_hash_lines(format, &data[start..end], u64::MAX, start == 0, &mut out);
        acc = out.hashes.iter().flatten().fold(acc, |a, fp| a.wrapping_add(fp.0));
        start = end;
    }
    acc
}

fn memchr_back(s: &[u8]) -> Option<usize> {
    s.iter().rposition(|&b| b == b'\n')
}

/// Runs `cmd` with its output to `out`; the wall time.
fn run(cmd: &mut Command) -> Result<f64, Box<dyn std::error::Error>> {
    let start = Instant::now();
    let status = cmd.status()?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{cmd:?} exited with {status}").into());
    }
    Ok(secs)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let [dec, hex, tsv] = inputs(&args.dir, args.n)?;

    println!("parser alone, one thread, fastest of {} (MB/s of input):", args.runs);
    for (name, path, parser) in [
        ("decimal", &dec, Parser::CppHash),
        ("hex", &hex, Parser::CppHash),
        ("hash TSV", &tsv, Parser::Hash),
    ] {
        let data = std::fs::read(path)?;
        let mb = data.len() as f64 / 1e6;
        let format = parser.hash_format().ok_or("not a hash parser")?;
        let (old, a) = best(args.runs, || old_path(&parser, &data));
        let (new, b) = best(args.runs, || block_path(format, &data));
        if a != b {
            return Err(format!("{name}: the two paths read different hashes").into());
        }
        println!(
            "  {name:<9} {mb:>6.1} MB   line at a time {:>7.0} MB/s   blocks {:>7.0} MB/s   {:.1}x",
            mb / old,
            mb / new,
            old / new
        );
    }

    if args.parser_only {
        return Ok(());
    }
    let threads = args.threads.to_string();
    let mut binaries = vec![("simhash", args.simhash.clone())];
    if let Some(b) = &args.baseline {
        binaries.push(("baseline", b.clone()));
    }
    println!();
    println!("end to end, -j{threads}, fastest of {} (wall s):", args.runs);
    let jobs: Vec<(&str, &PathBuf, Vec<&str>)> = vec![
        ("find-all decimal", &dec, vec!["find-all", "--blocks", "6", "--distance", "3"]),
        // The same output: the planner's tables instead of simhash-cpp's six blocks.
        ("find-all decimal auto", &dec, vec!["find-all", "--blocks", "auto", "--distance", "3"]),
        ("find-all hex", &hex, vec!["find-all", "--blocks", "6", "--distance", "3"]),
        ("find-clusters decimal", &dec, vec!["find-clusters", "--distance", "3"]),
        ("pairs --format hash", &tsv, vec!["pairs", "--format", "hash", "-k", "3"]),
    ];
    // simhash-cpp's time and line count, measured once (always with its six blocks).
    let mut cpp_time: Option<(f64, usize)> = None;
    for (job, input, cmd) in &jobs {
        let mut times = vec![f64::INFINITY; binaries.len()];
        let outs: Vec<PathBuf> =
            binaries.iter().map(|(name, _)| args.dir.join(format!("out-{name}.txt"))).collect();
        for _ in 0..args.runs {
            for (i, (_, bin)) in binaries.iter().enumerate() {
                let secs = run(Command::new(bin)
                    .args(cmd)
                    .arg(input)
                    .args(["-q", "-j", &threads, "-o"])
                    .arg(&outs[i]))?;
                times[i] = times[i].min(secs);
            }
        }
        let first = std::fs::read(&outs[0])?;
        let lines = first.iter().filter(|&&b| b == b'\n').count();
        for out in &outs[1..] {
            if std::fs::read(out)? != first {
                return Err(format!("{job}: outputs differ from the baseline's").into());
            }
        }
        print!("  {job:<22} {lines:>9} lines out");
        for ((name, _), t) in binaries.iter().zip(&times) {
            print!("   {name} {t:.3} s");
        }
        if times.len() > 1 {
            print!("   baseline / simhash {:.2}x", times[1] / times[0]);
        }
        println!();
        if let (Some(cpp), true) = (&args.cpp, job.starts_with("find-all decimal")) {
            let (t, cpp_lines) = if let Some(done) = cpp_time {
                done
            } else {
                let out = args.dir.join("out-cpp.txt");
                let mut t = f64::INFINITY;
                for _ in 0..args.runs {
                    t = t.min(run(Command::new(cpp)
                        .args(["--blocks", "6", "--distance", "3", "--input"])
                        .arg(input)
                        .arg("--output")
                        .arg(&out)
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null()))?);
                }
                let lines = std::fs::read(&out)?.iter().filter(|&&b| b == b'\n').count();
                *cpp_time.insert((t, lines))
            };
            println!(
                "  {:<22} {cpp_lines:>9} lines out   simhash-cpp {t:.3} s   simhash-cpp / simhash {:.1}x",
                "",
                t / times[0]
            );
        }
    }
    Ok(())
}
