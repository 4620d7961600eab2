//! Hash input: the block parser alone (MB/s per core) against the line-at-a-time reader
//! it replaces, then `simhash find-all` (and `simhash pairs --format hash`) end to end
//! against a baseline binary and simhash-cpp's `simhash-find-all`, all in one run.
//!
//! ```sh
//! cargo build --release -p simhash-cli -p benches --bin simhash --bin bench_hashin
//! ./target/release/bench_hashin --n 2000000 --dir /tmp/simhash-hashin \
//!     [--baseline /tmp/simhash-before] [--cpp /tmp/simhash-cpp/release/bin/simhash-find-all] \
//!     [--runs 3] [--threads 2] [--parser-only] [--only "find-all decimal"]
//! ```
//!
//! It writes (once) `--n` planted fingerprints (one in eight a near copy of an earlier one,
//! [`benches::planted`] with k = 3) as decimal (`dec.txt`), hex (`hex.txt`) and hash TSV
//! (`hash.tsv`). The parser's timings are the fastest of `--runs`, as wall time and as the
//! thread's CPU time (the figure per core on a loaded machine); the binaries' are the
//! minimum and median of `--runs`, wall and CPU (user + system), run interleaved (simhash-cpp
//! too), so that a burst of load on the shared machine hits each alike. `--only` keeps the
//! end-to-end jobs whose name starts with it. The outputs of the
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
    /// Only the end-to-end jobs whose name starts with this.
    only: Option<String>,
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
        only: None,
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
            "--only" => args.only = Some(value()?),
            "-h" | "--help" => {
                return Err("usage: bench_hashin [--n N] [--dir DIR] [--simhash PATH] \
                            [--baseline PATH] [--cpp PATH] [--runs R] [--threads T] [--parser-only] [--only JOB]"
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

/// The fastest of `runs` timings of `f`: wall seconds, the thread's CPU seconds (on a
/// loaded machine, the figure per core), and `f`'s result.
fn best(runs: usize, mut f: impl FnMut() -> u64) -> (f64, f64, u64) {
    let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
    let mut check = 0;
    for _ in 0..runs {
        let (start, cpu_start) = (Instant::now(), thread_cpu());
        check = std::hint::black_box(f());
        wall = wall.min(start.elapsed().as_secs_f64());
        cpu = cpu.min(thread_cpu() - cpu_start);
    }
    (wall, cpu, check)
}

/// This thread's CPU time (user and system), in seconds.
fn thread_cpu() -> f64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to write.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut t) };
    if rc != 0 {
        return f64::NAN;
    }
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The CPU time (user + system) of the children waited for so far, in seconds.
fn children_cpu() -> f64 {
    benches::children_rusage()
        .map_or(f64::NAN, |u| benches::timeval_secs(u.ru_utime) + benches::timeval_secs(u.ru_stime))
}

/// The minimum and the median of `v`.
fn min_median(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
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
        out.keys.clear();
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

/// Runs `cmd`: its wall time and CPU time (user + system), in seconds.
fn run(cmd: &mut Command) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let (start, cpu) = (Instant::now(), children_cpu());
    let status = cmd.status()?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{cmd:?} exited with {status}").into());
    }
    Ok((secs, children_cpu() - cpu))
}

/// The parsers alone, on one thread: the line-at-a-time path against the block path, on
/// the decimal, hex and hash TSV inputs.
fn parser_alone(
    runs: usize,
    [dec, hex, tsv]: [&PathBuf; 3],
) -> Result<(), Box<dyn std::error::Error>> {
    println!("parser alone, one thread, fastest of {runs} (MB/s of input):");
    for (name, path, parser) in [
        ("decimal", dec, Parser::CppHash),
        ("hex", hex, Parser::CppHash),
        ("hash TSV", tsv, Parser::Hash),
    ] {
        let data = std::fs::read(path)?;
        let mb = data.len() as f64 / 1e6;
        let format = parser.hash_format().ok_or("not a hash parser")?;
        let (old, old_cpu, a) = best(runs, || old_path(&parser, &data));
        let (new, new_cpu, b) = best(runs, || block_path(format, &data));
        if a != b {
            return Err(format!("{name}: the two paths read different hashes").into());
        }
        println!(
            "  {name:<9} {mb:>6.1} MB   line at a time {:>5.0} MB/s ({:>5.0} per CPU-s)   \
             blocks {:>5.0} MB/s ({:>5.0} per CPU-s)   {:.1}x CPU",
            mb / old,
            mb / old_cpu,
            mb / new,
            mb / new_cpu,
            old_cpu / new_cpu
        );
    }
    Ok(())
}

/// The minimum and median of the runs' wall times, and of their CPU times.
fn stats(runs: &[(f64, f64)]) -> ((f64, f64), (f64, f64)) {
    let wall: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let cpu: Vec<f64> = runs.iter().map(|r| r.1).collect();
    (min_median(&wall), min_median(&cpu))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let [dec, hex, tsv] = inputs(&args.dir, args.n)?;

    parser_alone(args.runs, [&dec, &hex, &tsv])?;

    if args.parser_only {
        return Ok(());
    }
    let threads = args.threads.to_string();
    let mut binaries = vec![("simhash", args.simhash.clone())];
    if let Some(b) = &args.baseline {
        binaries.push(("baseline", b.clone()));
    }
    println!();
    println!("end to end, -j{threads}, {} runs each:", args.runs);
    let jobs: Vec<(&str, &PathBuf, Vec<&str>)> = vec![
        ("find-all decimal", &dec, vec!["find-all", "--blocks", "6", "--distance", "3"]),
        // The same output: the planner's tables instead of simhash-cpp's six blocks.
        ("find-all decimal auto", &dec, vec!["find-all", "--blocks", "auto", "--distance", "3"]),
        ("find-all hex", &hex, vec!["find-all", "--blocks", "6", "--distance", "3"]),
        ("find-clusters decimal", &dec, vec!["find-clusters", "--distance", "3"]),
        ("pairs --format hash", &tsv, vec!["pairs", "--format", "hash", "-k", "3"]),
    ];
    // simhash-cpp's times and line count, measured once (always with its six blocks), its
    // runs interleaved with the first find-all decimal job's.
    let mut cpp_times: Option<(Vec<(f64, f64)>, usize)> = None;
    for (job, input, cmd) in &jobs {
        if !args.only.as_ref().is_none_or(|only| job.starts_with(only.as_str())) {
            continue;
        }
        let mut times: Vec<Vec<(f64, f64)>> = vec![Vec::new(); binaries.len()];
        let outs: Vec<PathBuf> =
            binaries.iter().map(|(name, _)| args.dir.join(format!("out-{name}.txt"))).collect();
        let cpp = args.cpp.as_ref().filter(|_| job.starts_with("find-all decimal"));
        let cpp_out = args.dir.join("out-cpp.txt");
        let mut cpp_runs = Vec::new();
        for _ in 0..args.runs {
            for (i, (_, bin)) in binaries.iter().enumerate() {
                times[i].push(run(Command::new(bin)
                    .args(cmd)
                    .arg(input)
                    .args(["-q", "-j", &threads, "-o"])
                    .arg(&outs[i]))?);
            }
            if let (Some(cpp), None) = (cpp, &cpp_times) {
                cpp_runs.push(run(Command::new(cpp)
                    .args(["--blocks", "6", "--distance", "3", "--input"])
                    .arg(input)
                    .arg("--output")
                    .arg(&cpp_out)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null()))?);
            }
        }
        if cpp.is_some() && cpp_times.is_none() {
            let lines = std::fs::read(&cpp_out)?.iter().filter(|&&b| b == b'\n').count();
            cpp_times = Some((cpp_runs, lines));
        }
        let first = std::fs::read(&outs[0])?;
        let lines = first.iter().filter(|&&b| b == b'\n').count();
        for out in &outs[1..] {
            if std::fs::read(out)? != first {
                return Err(format!("{job}: outputs differ from the baseline's").into());
            }
        }
        println!("  {job}: {lines} lines out (wall and CPU s, min / median of {})", args.runs);
        let ours = stats(&times[0]);
        for ((name, _), runs) in binaries.iter().zip(&times) {
            let ((w0, w1), (c0, c1)) = stats(runs);
            print!("    {name:<11} wall {w0:.3} / {w1:.3}   CPU {c0:.3} / {c1:.3}");
            if runs != &times[0] {
                print!(
                    "   {name} / simhash: wall {:.2}x / {:.2}x, CPU {:.2}x / {:.2}x",
                    w0 / ours.0.0,
                    w1 / ours.0.1,
                    c0 / ours.1.0,
                    c1 / ours.1.1
                );
            }
            println!();
        }
        if let (Some(_), Some((runs, cpp_lines))) = (cpp, &cpp_times) {
            let ((w0, w1), (c0, c1)) = stats(runs);
            println!(
                "    simhash-cpp wall {w0:.3} / {w1:.3}   CPU {c0:.3} / {c1:.3}   simhash-cpp / \
                 simhash: wall {:.1}x / {:.1}x, CPU {:.1}x / {:.1}x   ({cpp_lines} lines out)",
                w0 / ours.0.0,
                w1 / ours.0.1,
                c0 / ours.1.0,
                c1 / ours.1.1
            );
        }
    }
    Ok(())
}
