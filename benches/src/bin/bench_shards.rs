//! `simhash dedup` on the same corpus as one JSONL file, as `.jsonl.zst` shards and as
//! Parquet shards, timed in one run: the throughput of each, and its ratio to the one
//! JSONL file.
//!
//! ```sh
//! cargo build --release -p simhash-cli
//! cargo run --release -p benches --bin bench_shards -- --mb 200 --shards 20 --dir /tmp/simhash-bench
//! ```
//!
//! The corpus is `bench_cli`'s ([`benches::dedup_corpus`]). The shards are written once
//! (outside the timed part): lines cut into `--shards` files of equal line counts,
//! compressed with zstd level 3, and the same records as Parquet (columns `id`, `source`,
//! `text`; snappy, as pyarrow writes by default; row groups of 64k rows). Each dedup writes
//! its own format (JSONL, or Parquet for Parquet input) to a file in `--dir`.
//!
//! `--baseline PATH` times another `simhash` binary (an older build) on each input in the
//! same run, alternating with the first, checks that both write the same records (the same
//! bytes; for Parquet, the same schema, codecs and values), and adds its figures to the
//! table. `--runs N` runs each N times, going round every input and binary in turn, and
//! keeps the fastest wall time and, apart, the least CPU time (user + system, of the child
//! process; the machine is shared: the minimum is the least disturbed run). Ratios are to the first row, the one
//! JSONL file: above 1 is faster than it.
//!
//! `--output-dir` writes each input's outputs with `dedup --output-dir` (one output per
//! input file, into a directory in `--dir`) instead of `-o` (one output for all); the two
//! binaries' outputs are then compared file by file.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

struct Args {
    mb: u64,
    shards: usize,
    threads: usize,
    dir: PathBuf,
    simhash: PathBuf,
    baseline: Option<PathBuf>,
    runs: usize,
    /// `dedup --output-dir` instead of `-o`.
    output_dir: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        mb: 200,
        shards: 20,
        threads: 2,
        dir: std::env::temp_dir().join("simhash-bench"),
        simhash: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/simhash")),
        baseline: None,
        runs: 1,
        output_dir: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--mb" => args.mb = value()?.parse().map_err(|e| format!("--mb: {e}"))?,
            "--shards" => args.shards = value()?.parse().map_err(|e| format!("--shards: {e}"))?,
            "--threads" => {
                args.threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?;
            }
            "--dir" => args.dir = PathBuf::from(value()?),
            "--simhash" => args.simhash = PathBuf::from(value()?),
            "--baseline" => args.baseline = Some(PathBuf::from(value()?)),
            "--output-dir" => args.output_dir = true,
            "--runs" => {
                args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?;
                args.runs = args.runs.max(1);
            }
            _ => {
                return Err("usage: bench_shards [--mb N] [--shards N] [--threads N] [--dir DIR] \
                            [--simhash PATH] [--baseline PATH] [--runs N] [--output-dir]"
                    .into());
            }
        }
    }
    Ok(args)
}

/// The corpus's lines.
fn lines(path: &Path) -> std::io::Result<Vec<String>> {
    BufReader::new(File::open(path)?).lines().collect()
}

/// Writes the shards into `dir/name/` unless there; returns the directory.
fn shards(
    dir: &Path,
    name: &str,
    lines: &[String],
    n: usize,
    write: impl Fn(&Path, &[String]) -> Result<(), Box<dyn std::error::Error>>,
) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let out = dir.join(name);
    if out.exists() {
        return Ok(out);
    }
    let tmp = dir.join(format!("{name}.tmp"));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    let per = lines.len().div_ceil(n);
    for (i, chunk) in lines.chunks(per).enumerate() {
        write(&tmp.join(format!("part-{i:05}")), chunk)?;
    }
    std::fs::rename(&tmp, &out)?;
    Ok(out)
}

fn write_zst(path: &Path, lines: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let file = File::create(path.with_extension("jsonl.zst"))?;
    let mut z = zstd::Encoder::new(file, 3)?.auto_finish();
    for line in lines {
        z.write_all(line.as_bytes())?;
        z.write_all(b"\n")?;
    }
    Ok(())
}

fn write_parquet(path: &Path, lines: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let mut cols: [Vec<String>; 3] = Default::default();
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line)?;
        for (col, key) in cols.iter_mut().zip(["id", "source", "text"]) {
            col.push(v[key].as_str().unwrap_or_default().to_string());
        }
    }
    let [id, source, text] = cols;
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(StringArray::from(id)) as ArrayRef),
        ("source", Arc::new(StringArray::from(source)) as ArrayRef),
        ("text", Arc::new(StringArray::from(text)) as ArrayRef),
    ])?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(65536))
        .build();
    let mut writer = ArrowWriter::try_new(
        File::create(path.with_extension("parquet"))?,
        batch.schema(),
        Some(props),
    )?;
    writer.write(&batch)?;
    writer.close()?;
    Ok(())
}

fn dir_bytes(path: &Path) -> std::io::Result<u64> {
    if path.is_file() {
        return Ok(std::fs::metadata(path)?.len());
    }
    let mut total = 0;
    for entry in std::fs::read_dir(path)? {
        total += entry?.metadata()?.len();
    }
    Ok(total)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    eprintln!("corpus of {} MB in {} ...", args.mb, args.dir.display());
    let corpus = benches::dedup_corpus(&args.dir, args.mb)?;
    let jsonl_bytes = std::fs::metadata(&corpus)?.len();
    let all = lines(&corpus)?;
    let n = args.shards;
    let zst = shards(&args.dir, &format!("zst-{}mb-{n}", args.mb), &all, n, write_zst)?;
    let pq = shards(&args.dir, &format!("parquet-{}mb-{n}", args.mb), &all, n, write_parquet)?;
    drop(all);
    println!(
        "simhash dedup of the bench corpus (JSONL of {:.0} MB), -j{}, minhash (the default), \
         {}, fastest of {} runs",
        jsonl_bytes as f64 / 1e6,
        args.threads,
        if args.output_dir { "--output-dir" } else { "-o" },
        args.runs
    );
    let mut bins = vec![("", &args.simhash)];
    if let Some(baseline) = &args.baseline {
        println!("baseline: {}", baseline.display());
        bins.push((" (baseline)", baseline));
    }
    println!(
        "| input | bytes on disk | wall s | CPU s | MB/s (of the JSONL) | wall vs one JSONL | \
         CPU vs one JSONL |"
    );
    println!("|---|---|---|---|---|---|---|");
    let inputs = [
        ("one JSONL file", corpus.clone(), "out.jsonl"),
        (".jsonl.zst shards", zst, "out-zst.jsonl"),
        ("Parquet shards", pq, "out.parquet"),
    ];
    // Fastest wall and least CPU of each input and binary; the runs go round all of them
    // in turn (input by input, each binary on it), so that a change in the machine's load
    // falls on every row alike.
    let mut best = vec![vec![(f64::INFINITY, f64::INFINITY); bins.len()]; inputs.len()];
    for run in 0..args.runs {
        for ((label, input, out), best) in inputs.iter().zip(&mut best) {
            let outs: Vec<PathBuf> =
                (0..bins.len()).map(|b| args.dir.join(format!("{b}-{out}"))).collect();
            for ((_, bin), (best, out)) in bins.iter().zip(best.iter_mut().zip(&outs)) {
                remove(out);
                let (wall, cpu) = dedup(bin, input, out, args.threads, args.output_dir)
                    .map_err(|e| format!("{label}: {e}"))?;
                *best = (best.0.min(wall), best.1.min(cpu));
            }
            if run == 0 && outs.len() > 1 {
                same_outputs(&outs[0], &outs[1]).map_err(|e| format!("{label}: {e}"))?;
            }
            for out in &outs {
                remove(out);
            }
        }
    }
    let mut baseline = None;
    for ((label, input, _), best) in inputs.iter().zip(&best) {
        for ((name, _), &(wall, cpu)) in bins.iter().zip(best) {
            let (base_wall, base_cpu) = *baseline.get_or_insert((wall, cpu));
            println!(
                "| {label}{name} | {:.0} MB | {wall:.2} | {cpu:.2} | {:.1} | {:.2}x | {:.2}x |",
                dir_bytes(input)? as f64 / 1e6,
                jsonl_bytes as f64 / 1e6 / wall,
                base_wall / wall,
                base_cpu / cpu,
            );
        }
    }
    Ok(())
}

/// Removes an output file or directory, if there.
fn remove(out: &Path) {
    if out.is_dir() {
        let _ = std::fs::remove_dir_all(out);
    } else {
        let _ = std::fs::remove_file(out);
    }
}

/// [`same_output`] of two output files, or of each file of two `--output-dir` directories
/// (which must hold files of the same names).
fn same_outputs(a: &Path, b: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if !a.is_dir() {
        return same_output(a, b);
    }
    let names = |dir: &Path| -> std::io::Result<Vec<std::ffi::OsString>> {
        let mut names: Vec<_> =
            std::fs::read_dir(dir)?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>()?;
        names.sort();
        Ok(names)
    };
    let (left, right) = (names(a)?, names(b)?);
    if left != right || left.is_empty() {
        return Err("the two binaries wrote different files".into());
    }
    for name in &left {
        same_output(&a.join(name), &b.join(name))
            .map_err(|e| format!("{}: {e}", Path::new(name).display()))?;
    }
    Ok(())
}

/// Checks that two outputs hold the same records: the same bytes, or for Parquet (whose
/// bytes may differ between builds that write other encodings or statistics) the same Arrow
/// schema, the same compression codec of every column chunk, and the same values.
fn same_output(a: &Path, b: &Path) -> Result<(), Box<dyn std::error::Error>> {
    if std::fs::read(a)? == std::fs::read(b)? {
        return Ok(());
    }
    if a.extension().is_none_or(|e| e != "parquet") {
        return Err("the two binaries wrote different outputs".into());
    }
    let read = |path: &Path| -> Result<_, Box<dyn std::error::Error>> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
        let schema = builder.schema().clone();
        let codecs: std::collections::BTreeSet<String> = builder
            .metadata()
            .row_groups()
            .iter()
            .flat_map(|g| g.columns().iter().map(|c| format!("{:?}", c.compression())))
            .collect();
        let batches = builder.build()?.collect::<Result<Vec<_>, _>>()?;
        Ok((schema.clone(), codecs, arrow_select::concat::concat_batches(&schema, &batches)?))
    };
    let (a, b) = (read(a)?, read(b)?);
    if a.0 != b.0 {
        return Err("the two binaries wrote Parquet of different schemas".into());
    }
    if a.1 != b.1 {
        return Err(
            format!("the two binaries wrote Parquet with codecs {:?} and {:?}", a.1, b.1).into()
        );
    }
    if a.2 != b.2 {
        return Err("the two binaries wrote Parquet of different values".into());
    }
    Ok(())
}

/// Runs `simhash dedup` on `input` into `out` (a directory with `output_dir`); returns its wall and CPU (user + system)
/// seconds (CPU `NaN` where they cannot be read).
fn dedup(
    simhash: &Path,
    input: &Path,
    out: &Path,
    threads: usize,
    output_dir: bool,
) -> Result<(f64, f64), String> {
    let cpu_before = benches::children_cpu_seconds();
    let start = Instant::now();
    let status = Command::new(simhash)
        .args(["dedup", "-q", "-j", &threads.to_string()])
        .arg(input)
        .arg(if output_dir { "--output-dir" } else { "-o" })
        .arg(out)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", simhash.display()))?;
    let secs = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("{} dedup failed: {status}", simhash.display()));
    }
    let cpu = match (cpu_before, benches::children_cpu_seconds()) {
        (Some(before), Some(after)) => after - before,
        _ => f64::NAN,
    };
    Ok((secs, cpu))
}
