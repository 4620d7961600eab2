//! `simhash find-all` at scale (issue 17: 1B fingerprints all-pairs on one 24 GiB machine):
//! wall time, CPU time, peak resident memory and disk of one run of the binary over
//! `--n` planted decimal hashes.
//!
//! ```sh
//! cargo build --release -p simhash-cli -p benches --bin simhash --bin bench_find_all_scale
//! ./target/release/bench_find_all_scale --n 1000000000 --dir /tmp/simhash-scale \
//!     [--memory 14G] [--blocks auto] [--threads 2] [--bin ./target/release/simhash] [--keep 1] \
//!     [--zst 1]
//! ```
//!
//! It writes (once, kept for the next run) `--n` planted fingerprints ([`benches::planted`]
//! with k = 3: one in eight a near copy of an earlier one) as simhash-cpp's input, one
//! decimal hash a line (about 20 bytes a hash: 20 GB at 1B; with `--zst 1` compressed with
//! zstd at level 1, about 9 GB, which the binary decompresses as it reads), then runs
//! `simhash find-all --distance 3` over it with `--memory`, `--blocks` and `-j` as given,
//! and prints the binary's wall and CPU time, its peak RSS (`ru_maxrss` of the child), the
//! input and output bytes on disk, the lines out, and the phases of its `--stats`. The
//! output is removed afterwards unless `--keep 1` (to compare two runs with `cmp`).
//! Generating holds the fingerprints in memory (8 bytes each) and frees them before the run.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_find_all_scale: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut n: usize = 10_000_000;
    let mut dir = PathBuf::from("/tmp/simhash-scale");
    let mut memory: Option<String> = None;
    let mut blocks = String::from("auto");
    let mut threads = String::from("2");
    let mut bin = PathBuf::from("./target/release/simhash");
    let mut keep = false;
    let mut zst = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => n = value.parse()?,
            "--dir" => dir = value.into(),
            "--memory" => memory = Some(value),
            "--blocks" => blocks = value,
            "--threads" => threads = value,
            "--bin" => bin = value.into(),
            "--keep" => keep = value != "0",
            "--zst" => zst = value != "0",
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    let input = dir.join(format!("planted-{n}.txt{}", if zst { ".zst" } else { "" }));
    if !input.exists() {
        write_input(n, &input, zst)?;
    }
    let output = dir.join(format!("pairs-{n}.txt"));
    let stats = dir.join(format!("stats-{n}.json"));
    let mut cmd = Command::new(&bin);
    cmd.arg("find-all").arg("-i").arg(&input).arg("-o").arg(&output);
    cmd.args(["--distance", "3", "--blocks", &blocks, "-j", &threads, "--quiet", "--stats"]);
    cmd.arg(&stats);
    if let Some(memory) = &memory {
        cmd.args(["--memory", memory]);
    }
    println!("{cmd:?}");
    let start = Instant::now();
    let status = cmd.status()?;
    let wall = start.elapsed().as_secs_f64();
    let usage = benches::children_rusage()?;
    if !status.success() {
        return Err(format!("{} failed: {status}", bin.display()).into());
    }
    let (user, system) =
        (benches::timeval_secs(usage.ru_utime), benches::timeval_secs(usage.ru_stime));
    let in_bytes = std::fs::metadata(&input)?.len();
    let out_bytes = std::fs::metadata(&output)?.len();
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats)?)?;
    println!("fingerprints    {n}");
    println!("wall            {wall:.1} s");
    println!("CPU             {:.1} s (user {user:.1}, system {system:.1})", user + system);
    println!(
        "peak RSS        {:.0} MiB ({:.1} bytes a fingerprint)",
        usage.ru_maxrss as f64 / 1024.0,
        usage.ru_maxrss as f64 * 1024.0 / n as f64
    );
    println!("input on disk   {:.2} GB", in_bytes as f64 / 1e9);
    println!("output on disk  {:.2} GB (no other file written)", out_bytes as f64 / 1e9);
    for key in ["written", "pairs", "exact_duplicates", "blocks", "tables", "seconds"] {
        if let Some(v) = summary.get(key) {
            println!("{key:<15} {v}");
        }
    }
    if !keep {
        std::fs::remove_file(&output)?;
    }
    Ok(())
}

/// Writes `n` planted fingerprints as decimal lines to `path` (whole or not at all),
/// compressed with zstd if `zst`.
fn write_input(n: usize, path: &Path, zst: bool) -> std::io::Result<()> {
    let start = Instant::now();
    let fps = benches::planted(n, 3, 1);
    let tmp = path.with_extension("part");
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
    let file = if zst {
        let mut out = zstd::Encoder::new(file, 1)?;
        write_decimal(&fps, &mut out)?;
        out.finish()?
    } else {
        let mut out = file;
        write_decimal(&fps, &mut out)?;
        out
    };
    file.into_inner().map_err(std::io::IntoInnerError::into_error)?.sync_all()?;
    std::fs::rename(&tmp, path)?;
    eprintln!("wrote {} in {:.0} s", path.display(), start.elapsed().as_secs_f64());
    Ok(())
}

/// Writes each fingerprint as a decimal line.
fn write_decimal(fps: &[simhash_core::Fingerprint], out: &mut impl Write) -> std::io::Result<()> {
    let mut buf = itoa::Buffer::new();
    for fp in fps {
        out.write_all(buf.format(fp.0).as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()
}
