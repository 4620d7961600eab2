//! `simhash-dist` against the single-machine `simhash` on the same corpus (generated, or
//! `--corpus FILE`): one process of T workers, and P processes of T / P workers on loopback
//! (`--threads T --processes P`, 2 and 2 by default), each run `--runs` times;
//! prints the median wall times and their ratios to `simhash --method METHOD -j T`, and
//! checks that every output is byte-identical to `simhash`'s. Each run's summary line (bytes
//! exchanged per document, peak memory per process) is echoed on stderr.
//!
//! ```sh
//! cargo build --release -p simhash-cli -p simhash-dist
//! cargo run --release -p benches --bin bench_dist -- --docs 1000000 --runs 3 --method minhash
//! # text that shares boilerplate: many candidates
//! python3 ../shared/data/gen_boilerplate_corpus.py 20000 11 /tmp/bp20k.jsonl
//! cargo run --release -p benches --bin bench_dist -- --corpus /tmp/bp20k.jsonl \
//!     --method minhash --command dedup
//! ```
//!
//! The corpus (written once per size) has documents of 20 to 80 words drawn from the Apache
//! license's vocabulary; 20% are near-copies (one to three words changed) of an earlier
//! document and 5% exact copies.
//!
//! With `--parts`, the two `simhash-dist` shapes also run with `--output-dir` (each worker
//! writes the parts of the pieces it read), and the parts, concatenated in name order, are
//! checked byte-identical to `simhash`'s output too.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use benches::SplitMix;

struct Args {
    docs: usize,
    runs: usize,
    dir: PathBuf,
    bin: PathBuf,
    command: String,
    method: String,
    parts: bool,
    /// `--corpus FILE`: this corpus instead of the generated one.
    corpus: Option<PathBuf>,
    /// `--threads T`: `simhash -j T` against `simhash-dist` with T workers in all.
    threads: usize,
    /// `--processes P`: the second shape, P processes of T / P workers.
    processes: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        docs: 1_000_000,
        runs: 3,
        dir: std::env::temp_dir().join("simhash-bench-dist"),
        bin: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release")),
        command: "cluster".into(),
        method: "simhash".into(),
        parts: false,
        corpus: None,
        threads: 2,
        processes: 2,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--docs" => args.docs = value()?.parse().map_err(|e| format!("--docs: {e}"))?,
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--dir" => args.dir = PathBuf::from(value()?),
            "--bin" => args.bin = PathBuf::from(value()?),
            "--command" => args.command = value()?,
            "--method" => args.method = value()?,
            "--parts" => args.parts = true,
            "--corpus" => args.corpus = Some(PathBuf::from(value()?)),
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?;
            }
            "--processes" => {
                args.processes = value()?.parse().map_err(|e| format!("--processes: {e}"))?;
            }
            "-h" | "--help" => {
                return Err("usage: bench_dist [--docs N | --corpus FILE] [--runs N] \
                            [--command cluster|pairs|dedup] [--method simhash|minhash] [--parts] \
                            [--threads T] [--processes P] [--dir DIR] [--bin TARGET_RELEASE_DIR]"
                    .into());
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.threads == 0 || args.processes == 0 || !args.threads.is_multiple_of(args.processes) {
        return Err("--threads must be a multiple of --processes, both at least 1".into());
    }
    Ok(args)
}

fn write_corpus(path: &Path, docs: usize) -> std::io::Result<()> {
    let text = benches::english();
    let vocab: Vec<&str> = text.split_whitespace().collect();
    let mut rng = SplitMix(0x5eed);
    let mut out = BufWriter::new(File::create(path)?);
    let mut kept: Vec<Vec<u32>> = Vec::new();
    for i in 0..docs {
        let r = rng.below(100);
        let words: Vec<u32> = if r < 20 && !kept.is_empty() {
            let mut w = kept[rng.below(kept.len()) as usize].clone();
            for _ in 0..=rng.below(3) {
                let at = rng.below(w.len()) as usize;
                w[at] = rng.below(vocab.len());
            }
            w
        } else if r < 25 && !kept.is_empty() {
            kept[rng.below(kept.len()) as usize].clone()
        } else {
            let n = 20 + rng.below(61);
            (0..n).map(|_| rng.below(vocab.len())).collect()
        };
        let body: Vec<&str> = words.iter().map(|&w| vocab[w as usize]).collect();
        let body = body.join(" ").replace(['"', '\\'], "");
        writeln!(out, "{{\"id\":\"d{i}\",\"text\":\"{body}\"}}")?;
        if kept.len() < 100_000 {
            kept.push(words);
        } else {
            let at = rng.below(kept.len()) as usize;
            kept[at] = words;
        }
    }
    out.flush()
}

fn run(cmds: &[Command]) -> Result<f64, String> {
    let start = Instant::now();
    let mut spawned = Vec::new();
    for c in cmds {
        let mut cmd = Command::new(c.get_program());
        cmd.args(c.get_args()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        spawned.push(cmd.spawn().map_err(|e| format!("{}: {e}", c.get_program().display()))?);
    }
    for child in spawned {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        if let Some(line) = err.lines().last() {
            eprintln!("    {line}");
        }
    }
    Ok(start.elapsed().as_secs_f64())
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() -> Result<(), String> {
    let args = parse_args()?;
    std::fs::create_dir_all(&args.dir).map_err(|e| e.to_string())?;
    let corpus =
        args.corpus.clone().unwrap_or_else(|| args.dir.join(format!("corpus-{}.jsonl", args.docs)));
    if !corpus.exists() {
        eprintln!("writing {}", corpus.display());
        write_corpus(&corpus, args.docs).map_err(|e| e.to_string())?;
    }
    let size = std::fs::metadata(&corpus).map_err(|e| e.to_string())?.len();
    let simhash = args.bin.join("simhash");
    let dist = args.bin.join("simhash-dist");
    let want = args.dir.join("want.out");
    let got = args.dir.join("got.out");
    let (t, procs) = (args.threads.to_string(), args.processes);
    let per_process = (args.threads / procs).to_string();
    let c = args.command.as_str();
    let m = args.method.as_str();
    let input = corpus.display().to_string();

    let single = |out: &Path| {
        let mut cmd = Command::new(&simhash);
        cmd.args([c, "--method", m, &input, "-j", &t, "-o"]).arg(out);
        vec![cmd]
    };
    // `-o FILE`, or with `parts` `--output-dir DIR`.
    let output = |cmd: &mut Command, out: &Path, parts: bool| {
        cmd.arg(if parts { "--output-dir" } else { "-o" }).arg(out);
    };
    let one_by_two = |out: &Path, parts: bool| {
        let mut cmd = Command::new(&dist);
        cmd.args([c, "--method", m, &input, "-w", &t]);
        output(&mut cmd, out, parts);
        vec![cmd]
    };
    let hostfile = args.dir.join("hosts.txt");
    let two_by_one = |out: &Path, parts: bool| -> Result<Vec<Command>, String> {
        let ports: Vec<u16> = (0..procs)
            .map(|_| TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()))
            .map(|a| a.map(|a| a.port()).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        let hosts: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let hosts = hosts.join("\n") + "\n";
        std::fs::write(&hostfile, hosts).map_err(|e| e.to_string())?;
        let n = procs.to_string();
        Ok((0..procs)
            .map(|p| {
                let mut cmd = Command::new(&dist);
                cmd.args([c, "--method", m, &input, "-n", &n, "-p", &p.to_string()])
                    .args(["-w", &per_process])
                    .arg("--hostfile")
                    .arg(&hostfile);
                output(&mut cmd, out, parts);
                cmd
            })
            .collect())
    };

    println!(
        "corpus: {}, {:.0} MB; `{c} --method {m}`; {} runs each, median wall time",
        corpus.display(),
        size as f64 / 1e6,
        args.runs
    );
    let parts = args.dir.join("parts");
    let mut times: [Vec<f64>; 5] = Default::default();
    for r in 0..args.runs {
        eprintln!("run {}", r + 1);
        times[0].push(run(&single(&want))?);
        times[1].push(run(&one_by_two(&got, false))?);
        check_same(&want, &got)?;
        times[2].push(run(&two_by_one(&got, false)?)?);
        check_same(&want, &got)?;
        if args.parts {
            let _ = std::fs::remove_dir_all(&parts);
            times[3].push(run(&one_by_two(&parts, true))?);
            check_parts(&want, &parts)?;
            std::fs::remove_dir_all(&parts).map_err(|e| e.to_string())?;
            times[4].push(run(&two_by_one(&parts, true)?)?);
            check_parts(&want, &parts)?;
            std::fs::remove_dir_all(&parts).map_err(|e| e.to_string())?;
        }
    }
    print_table(&args, &times);
    println!("every simhash-dist output was byte-identical to simhash's");
    Ok(())
}

/// The medians as a Markdown table, each with its ratio to one `simhash` process.
fn print_table(args: &Args, times: &[Vec<f64>; 5]) {
    let base = median(times[0].clone());
    let (w, p) = (args.threads, args.processes);
    let per = w / p;
    println!("| configuration | wall time (s) | ratio to `simhash -j {w}` |");
    println!("|---|---:|---:|");
    for (name, t) in [
        (format!("simhash -j {w} (one process, {w} threads)"), &times[0]),
        (format!("simhash-dist, 1 process x {w} workers"), &times[1]),
        (format!("simhash-dist, {p} processes x {per} workers (loopback)"), &times[2]),
        (format!("simhash-dist --output-dir, 1 process x {w} workers"), &times[3]),
        (format!("simhash-dist --output-dir, {p} processes x {per} workers (loopback)"), &times[4]),
    ] {
        if t.is_empty() {
            continue;
        }
        let m = median(t.clone());
        println!("| {name} | {m:.2} | {:.2} |", m / base);
    }
}

/// The parts in `dir`, concatenated in name order, are the file `want`.
fn check_parts(want: &Path, dir: &Path) -> Result<(), String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .map(|e| e.map(|e| e.path()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    names.sort();
    let mut all = Vec::new();
    for name in &names {
        all.extend(std::fs::read(name).map_err(|e| e.to_string())?);
    }
    let wanted = std::fs::read(want).map_err(|e| e.to_string())?;
    if all == wanted {
        Ok(())
    } else {
        Err(format!(
            "the {} parts in {} differ from {}",
            names.len(),
            dir.display(),
            want.display()
        ))
    }
}

fn check_same(a: &Path, b: &Path) -> Result<(), String> {
    let (x, y) = (
        std::fs::read(a).map_err(|e| e.to_string())?,
        std::fs::read(b).map_err(|e| e.to_string())?,
    );
    if x == y { Ok(()) } else { Err(format!("{} and {} differ", a.display(), b.display())) }
}
