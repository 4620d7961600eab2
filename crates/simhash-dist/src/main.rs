//! `simhash-dist`: the `simhash pairs`, `cluster`, `dedup` and `decontaminate` jobs on
//! timely-dataflow, across worker threads, processes and hosts, with output byte-identical
//! to the single-machine `simhash` binary's for the same input, at any number of processes
//! and workers.
//!
//! Records never travel: each worker reads and fingerprints its own share of the input
//! ([`share`]), and then runs the same fixed sequence of rounds ([`job`]), one module each
//! under [`rounds`], whose docs say what crosses the network: positions, fingerprints and id
//! hashes, and to worker 0 only the pairs and the ids it prints. In the table round, records
//! `(table, position, fingerprint)` are exchanged by a well-mixed hash of (table, prefix),
//! and each group sharing a prefix is paired by [`simhash_index::pair_group`], the same
//! kernel (and the same "first table owns the pair" rule) the single-machine index runs.
//! With `--method minhash` (`auto`'s choice for text), band keys are exchanged by (band,
//! key), each group keeps the pairs its band owns ([`simhash_index::lsh::band_owns`], the
//! engine's "first common band owns the pair" rule), and each candidate's two shingle sets
//! are brought together (the smaller to the larger's reader) for the exact Jaccard test.
//! See `docs/scale-out.md` for launching on several hosts, the failure model and a capacity
//! plan.
//!
//! The other modules: [`args`] (the flags), [`net`] (connecting the processes),
//! [`heartbeat`] (noticing a stopped one), [`failure`] (how a process ends when the job
//! cannot finish), [`forest`] (the spanning forest `cluster` sends instead of every pair).
//!
//! Failure model: fail-stop. A worker that cannot read its share reports it to all the
//! others, and every process exits 2 with the message; a worker that panics, or a process
//! that dies, takes every process down with exit code 2 (timely's channels to it break); a
//! process that stops (SIGSTOP, a frozen host) does after `--peer-timeout` seconds without
//! its heartbeat. No output is left behind: process 0 writes a temporary file and renames
//! it only when complete. Rerun the job.

#![warn(missing_docs)]

mod args;
mod decontaminate;
mod failure;
mod forest;
mod heartbeat;
mod job;
mod net;
mod plan;
mod rounds;
mod share;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser as _;
use simhash_index::lsh::Sketcher;
use simhash_io::{Columns, WritePlan};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::{Hooks, WorkerGuards};

use crate::args::{Cli, Command, JobArgs, Launch, Matching};
use crate::job::Job;
use crate::plan::{End, Mode};
use crate::share::Reading;

fn main() -> ExitCode {
    simhash_io::give_back_large_buffers();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let message = format!("{err:#}");
            let _ = writeln!(
                std::io::stderr().lock(),
                "simhash-dist: {}",
                simhash_io::printable(&message)
            );
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let (mut args, mode, removed, compression) = match cli.command {
        Command::Decontaminate(d) => return decontaminate::run(&d),
        Command::Pairs(args) => (args, Mode::Pairs, None, None),
        Command::Cluster(c) => {
            (c.job, Mode::Cluster { singletons: c.singletons.singletons }, None, None)
        }
        Command::Dedup(d) => (
            d.job,
            Mode::Dedup { keep: d.keep.keep },
            d.removed.removed,
            d.parquet_compression.parquet_compression,
        ),
    };
    let skipped = args.expand()?;
    warn_skipped(&skipped, args.timely.process);
    let matching = args.matching(matches!(mode, Mode::Cluster { .. }))?;
    // Before any process starts: the output may not be an input (every process checks, and
    // fails alike on a shared filesystem).
    let paths = args.paths();
    let inputs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    if matches!(mode, Mode::Dedup { .. }) {
        check_parquet_dedup(&inputs, args.output_dir.output_dir.is_some(), compression.is_some())?;
    }
    let mut plan = WritePlan::new();
    plan.inputs(&inputs);
    match &args.output_dir.output_dir {
        None => {
            plan.output("--output", &args.output.output);
        }
        // The directory holds the parts and nothing else (they are concatenated).
        Some(dir) => {
            plan.forbid_dir("the --output-dir", dir);
        }
    }
    if let Some(removed) = &removed {
        plan.output("--removed", removed);
    }
    if let Some(stats) = &args.stats.stats {
        plan.output("--stats", stats);
    }
    plan.check()?;
    // Every output created from here on is checked against the inputs (the parts).
    simhash_io::run::register_inputs(&inputs)?;
    if let Some(dir) = &args.output_dir.output_dir {
        rounds::parts::prepare(dir)?;
    }
    let launch = args.launch()?;
    let compression = compression.unwrap_or_default();
    let job = build_job(&args, mode, matching, (removed, compression));
    execute(job, launch, &args.timely, args.quiet.quiet)
}

/// Warns (process 0) of the files in the input directories that are not read.
fn warn_skipped(skipped: &[simhash_io::SkippedFile], process: usize) {
    if process != 0 {
        return;
    }
    let mut err = std::io::stderr().lock();
    for file in skipped.iter().take(20) {
        let _ =
            writeln!(err, "simhash-dist: warning: {}: not read: {}", file.path.display(), file.why);
    }
    if skipped.len() > 20 {
        let _ = writeln!(
            err,
            "simhash-dist: warning: {} more files in the input directories not read",
            skipped.len() - 20
        );
    }
}

/// Runs `job` on this process's workers, joined to the other processes as `launch` says,
/// and ends as the job did: its exit code, or 2 with its messages.
fn execute(
    job: Job,
    launch: Launch,
    timely: &args::TimelyArgs,
    quiet: bool,
) -> anyhow::Result<ExitCode> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let threads = timely.threads.threads.map_or(1, std::num::NonZero::get);
    if threads > cores {
        let _ = writeln!(
            std::io::stderr().lock(),
            "simhash-dist: warning: -w {threads} workers on {cores} cores: workers will share cores"
        );
    }
    let process = timely.process;
    let job = Arc::new(job);
    failure::install();
    let (guards, heartbeat) = start(launch, move |worker| job::run(worker, &job))?;
    let joined = join(guards);
    // Every process's workers are done (or failed alike): this one's exit is no failure.
    if let Some(heartbeat) = heartbeat {
        heartbeat.finish();
    }
    let code = match joined {
        Ok(code) => code,
        Err(messages) => {
            let mut err = std::io::stderr().lock();
            for message in &messages {
                let _ = writeln!(err, "simhash-dist: {}", simhash_io::printable(message));
            }
            return Ok(ExitCode::from(2));
        }
    };
    if !quiet && process > 0 {
        let _ = writeln!(
            std::io::stderr().lock(),
            "simhash-dist: process {process} done; peak memory {} MiB",
            peak_memory_mib()
        );
    }
    Ok(ExitCode::from(code))
}

/// `dedup` copies Parquet rows into Parquet parts, one per input file (`--output-dir`):
/// Parquet files cannot be concatenated into one output byte for byte. The inputs are all
/// Parquet or none, as `simhash dedup` requires; `--parquet-compression` (`compression`:
/// given) is refused unless they are Parquet, with `simhash dedup`'s message.
fn check_parquet_dedup(
    inputs: &[&std::path::Path],
    output_dir: bool,
    compression: bool,
) -> anyhow::Result<()> {
    let parquet = inputs.first().is_some_and(|p| simhash_io::is_parquet(p));
    if let Some(other) = inputs.iter().find(|p| simhash_io::is_parquet(p) != parquet) {
        anyhow::bail!(
            "dedup writes its inputs' format: {} and {} are not both Parquet",
            inputs[0].display(),
            other.display()
        );
    }
    anyhow::ensure!(
        parquet || !compression,
        "--parquet-compression applies to Parquet output only: no input is Parquet, and the \
         output has the inputs' format"
    );
    anyhow::ensure!(
        !parquet || output_dir,
        "dedup of Parquet input needs --output-dir (one Parquet part per input file, with its \
         schema): Parquet files cannot be joined into one output"
    );
    Ok(())
}

/// `dedup --removed` and `--parquet-compression`.
type DedupOutputs = (Option<PathBuf>, simhash_io::ParquetCompression);

/// What every worker of this process runs, from the flags.
fn build_job(
    args: &JobArgs,
    mode: Mode,
    (matching, sketcher): (Matching, Option<Arc<Sketcher>>),
    dedup: DedupOutputs,
) -> Job {
    let (removed, parquet_compression) = dedup;
    let fingerprinter = args.fingerprinter();
    let parser = match fingerprinter {
        Some(_) => simhash_io::Parser::Json(Columns::new(
            &args.corpus.records.columns.text_column,
            &args.corpus.records.columns.id_column,
        )),
        None => simhash_io::Parser::Hash,
    };
    let reading = Reading {
        parser,
        fingerprinter,
        sketcher,
        spool: matches!(mode, Mode::Dedup { .. }),
        eval: None,
    };
    let mut job = new_job(mode, args.paths(), reading, &args.corpus.records, &args.timely);
    job.matching = Some(matching);
    job.output.clone_from(&args.output.output);
    job.output_dir.clone_from(&args.output_dir.output_dir);
    job.removed = removed;
    job.parquet_compression = parquet_compression;
    job.quiet = args.quiet.quiet;
    job.stats.clone_from(&args.stats.stats);
    job
}

/// A job of `mode` over `paths`, read as `reading` says with the record flags, run as the
/// timely flags say (this process, the test hooks); no method, no output but standard
/// output, not quiet, no `--stats`: the caller sets what its command has.
fn new_job(
    mode: Mode,
    paths: Vec<PathBuf>,
    reading: Reading,
    records: &simhash_io::RecordFlags,
    t: &args::TimelyArgs,
) -> Job {
    Job {
        mode,
        paths,
        reading,
        max_record_bytes: records.limit.max_record_bytes,
        strict: records.strict.strict,
        matching: None,
        decontaminate: None,
        output: PathBuf::from("-"),
        output_dir: None,
        removed: None,
        parquet_compression: simhash_io::ParquetCompression::default(),
        quiet: false,
        stats: None,
        process: t.process,
        inject_error: t.inject_error,
        inject_panic: t.inject_panic,
        inject_write_error: t.inject_write_error,
        inject_stall: t.inject_stall,
        forest_capacity: t
            .forest_capacity
            .map_or(forest::CAPACITY, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        output_window: t.output_window.unwrap_or(rounds::stream::WINDOW),
        verify_round_bytes: t.verify_round_bytes.unwrap_or(rounds::bands::VERIFY_ROUND_BYTES),
        flood_group: t
            .flood_group
            .map_or(rounds::floods::FLOOD_GROUP, |n| usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// Waits for this process's workers: the job's exit code, or the messages of its failure
/// (each once, in the order the workers gave them).
fn join(guards: WorkerGuards<End>) -> Result<u8, Vec<String>> {
    let mut code = 0u8;
    let mut messages: Vec<String> = Vec::new();
    let mut failed = false;
    for result in guards.join() {
        match result {
            Ok(End::Done(c)) => code = code.max(c),
            Ok(End::Failed(m)) => {
                failed = true;
                for message in m {
                    if !messages.contains(&message) {
                        messages.push(message);
                    }
                }
            }
            Err(panic) => {
                failed = true;
                messages.push(format!("a worker failed: {panic}"));
            }
        }
    }
    if !failed {
        return Ok(code);
    }
    if messages.is_empty() {
        messages.push("the job failed: process 0 reports why".to_string());
    }
    Err(messages)
}

/// Starts this process's workers: in memory, or connected to the other processes first,
/// with heartbeats between them.
fn start<F>(
    launch: Launch,
    work: F,
) -> anyhow::Result<(WorkerGuards<End>, Option<heartbeat::Heartbeat>)>
where
    F: Fn(&mut timely::worker::Worker) -> End + Send + Sync + 'static,
{
    let mut heartbeat = None;
    let (builders, others): (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>) = match launch {
        Launch::Process { threads } => {
            let hooks = Hooks::default();
            let builders = ProcessBuilder::new_typed_vector(threads, hooks.refill, hooks.spill)
                .into_iter()
                .map(AllocatorBuilder::Process)
                .collect();
            (builders, Box::new(()))
        }
        Launch::Cluster { threads, process, addresses, timeout, peer_timeout } => {
            let every = heartbeat::every(peer_timeout);
            let connected = net::connect(&addresses, process, threads, timeout, every)?;
            heartbeat = Some(
                heartbeat::start(connected.beats, peer_timeout, timeout)
                    .context("cannot start the heartbeats")?,
            );
            let sockets = connected.data;
            let hooks = Hooks::default();
            let allocators = ProcessBuilder::new_typed_vector(
                threads,
                hooks.refill.clone(),
                hooks.spill.clone(),
            );
            let (builders, guard) =
                initialize_networking_from_sockets(allocators, sockets, process, threads, hooks)
                    .context("cannot start the network threads")?;
            (builders.into_iter().map(AllocatorBuilder::Tcp).collect(), Box::new(guard))
        }
    };
    let guards =
        timely::execute::execute_from(builders, others, timely::WorkerConfig::default(), work)
            .map_err(anyhow::Error::msg)
            .context("cannot start the workers")?;
    Ok((guards, heartbeat))
}

/// This process's peak resident memory in MiB, as the messages show it
/// ([`simhash_io::peak_memory`]; 0 where it is not known).
pub(crate) fn peak_memory_mib() -> u64 {
    simhash_io::peak_memory().map_or(0, |bytes| bytes >> 20)
}
