//! Command-line flags: the `simhash` binary's (for `pairs` and `cluster`) plus timely's
//! (`-w`, `-n`, `-p`, `--hostfile`), parsed with clap and turned into a timely `Config` here
//! rather than by timely's own argument parser (whose `-h` would shadow `--help`).

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use simhash_core::Fingerprinter;
use simhash_index::lsh::Sketcher;
pub(crate) use simhash_index::settings::Matching;
use simhash_jobs::flags;

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  some records were skipped; each was reported as FILE:LINE: what was wrong
  2  error (a bad flag, an unreadable input, a failed worker or process, a stopped or
     unreachable process: --peer-timeout, --strict): no output was written, unless the
     message says what this process had committed
  129, 130, 143  stopped by SIGHUP, SIGINT or SIGTERM: nothing committed, unless the
     message says what was";

/// The `simhash` job on timely-dataflow, across worker threads, processes and hosts.
///
/// Every process runs the same command line with its own -p; worker i of all the workers
/// reads its share of the input and fingerprints or sketches it; MinHash band keys are
/// exchanged by (band, key) and candidates verified by exact Jaccard, or the simhash
/// block-permutation tables are matched one per epoch over an exchange keyed by (table,
/// prefix). Process 0 writes the output, byte for byte what `simhash pairs`, `simhash
/// cluster` or `simhash dedup` writes for the same input and flags.
#[derive(Debug, Parser)]
#[command(name = "simhash-dist", version, after_help = EXIT_CODES, max_term_width = 100)]
pub(crate) struct Cli {
    /// The job to run.
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The jobs, as `simhash`'s commands of the same names.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Every near-duplicate pair: TSV `id_a<TAB>id_b<TAB>jaccard|distance` (as `simhash pairs`).
    #[command(after_help = EXIT_CODES)]
    Pairs(JobArgs),
    /// Near-duplicate clusters (connected components): TSV `id<TAB>hash<TAB>cluster` (as
    /// `simhash cluster`).
    #[command(after_help = EXIT_CODES)]
    Cluster(ClusterArgs),
    /// The input without its near-duplicates, each kept record byte for byte (as `simhash
    /// dedup`: records in --keep order, each kept unless it matches a record already kept).
    #[command(after_help = EXIT_CODES)]
    Dedup(DedupArgs),
    /// Eval-set (benchmark) text in a corpus, exactly: the hits with their spans, and the
    /// corpus without them (as `simhash decontaminate`: --hits and -o).
    #[command(after_help = EXIT_CODES)]
    Decontaminate(DecontaminateArgs),
}

/// `decontaminate`'s flags: `simhash decontaminate`'s declarations (the corpus, its
/// records, the eval sets, the matching settings and the outputs), the run's, and the
/// processes'. Of the outputs, this front end writes `--hits` and `-o`.
#[derive(Debug, Args)]
#[command(mut_arg("stats", |a| a.help(STATS).hide_short_help(true)))]
#[command(mut_arg("quiet", |a| a.help(QUIET)))]
#[command(mut_arg("format", |a| a
    .value_parser(clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["json"]),
        |_| Format::Json,
    ))
    .help("Input format: json (JSONL records), the one decontaminate reads (it scans text)")
    .long_help(None::<&str>)))]
#[command(mut_arg("output", |a| a.help(DECONTAMINATE_OUTPUT).long_help(None::<&str>)))]
#[command(mut_arg("annotate", |a| a.hide(true)))]
#[command(mut_arg("cut", |a| a.hide(true)))]
#[command(mut_arg("cut_window", |a| a.hide(true)))]
#[command(mut_arg("report", |a| a.hide(true)))]
pub(crate) struct DecontaminateArgs {
    /// The corpus (its records' flags are the eval sets' too).
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,

    /// The eval sets, the matching settings and the outputs, as `simhash decontaminate`
    /// declares them (its `--annotate`, `--cut` and `--report` are refused here, hidden).
    #[command(flatten)]
    pub(crate) decontaminate: flags::Decontaminate,

    /// `--stats`.
    #[command(flatten)]
    pub(crate) stats: flags::Stats,

    /// `-q`.
    #[command(flatten)]
    pub(crate) quiet: flags::Quiet,

    /// The processes and workers, and the test hooks.
    #[command(flatten)]
    pub(crate) timely: TimelyArgs,
}

const DECONTAMINATE_OUTPUT: &str = "Write the corpus without its contaminated documents, each     kept record byte for byte (JSONL; written whole by process 0, with --hits)";

/// `dedup`'s own flags: `simhash`'s declarations (`simhash_jobs::flags`), with this
/// front end's help where the flag means more here.
#[derive(Debug, Args)]
#[command(mut_arg("removed", |a| a.help(REMOVED)))]
#[command(mut_arg("keep", |a| a.help(KEEP)))]
#[command(mut_arg("parquet_compression", |a| a
    .help("Codec of the Parquet parts: mirror (each input's), zstd, snappy, lz4 or none.")
    .long_help(PARQUET_COMPRESSION)))]
pub(crate) struct DedupArgs {
    /// The flags every job has.
    #[command(flatten)]
    pub(crate) job: JobArgs,

    /// `--removed`.
    #[command(flatten)]
    pub(crate) removed: flags::Removed,

    /// `--keep`.
    #[command(flatten)]
    pub(crate) keep: flags::Keep,

    /// `--parquet-compression`.
    #[command(flatten)]
    pub(crate) parquet_compression: flags::ParquetCodec,
}

const REMOVED: &str = "Also write one JSON line per dropped record: {\"id\", \"duplicate_of\", \
    \"jaccard\", \"relation\"} (or \"distance\" for \"jaccard\" and \"relation\" with \
    simhash). Written whole by process 0, with the output";
const KEEP: &str = "Which record of a group of near-duplicates is kept: first (in input order), \
    longest text, lowest id (numeric if both are numbers, else bytewise)";
const PARQUET_COMPRESSION: &str = "Codec of the Parquet parts: mirror (each input's), zstd, \
    snappy, lz4 or none.

As `simhash dedup --parquet-compression`, so that each part is still byte for byte the file \
`simhash dedup --output-dir` writes: mirror (the default) writes each part with its input \
file's codec; zstd is level 1, lz4 Parquet's LZ4_RAW codec, none no compression. Only for \
Parquet input.";

/// The corpus every job reads: INPUT... and `-i`, and --format, --text-column,
/// --id-column, --strict and --max-record-bytes, as `simhash` reads them, with this front
/// end's help for the inputs.
#[derive(Debug, Args)]
#[command(mut_arg("paths", |a| a.help(PATHS_HELP).long_help(PATHS)))]
#[command(mut_arg("input", |a| a
    .help("Input file (the same as a positional INPUT; may be repeated)")
    .long_help("Input file (the same as a positional INPUT; may be repeated)")))]
pub(crate) struct CorpusArgs {
    /// INPUT... and `-i`.
    #[command(flatten)]
    pub(crate) inputs: flags::InputPaths,

    /// --format, --text-column, --id-column, --strict and --max-record-bytes.
    #[command(flatten)]
    pub(crate) records: simhash_io::RecordFlags,
}

/// What `pairs` and `cluster` share: `simhash`'s declarations (`simhash_jobs::flags`, and
/// the libraries' flag groups), with this front end's help where the flag means more here.
#[derive(Debug, Args)]
#[command(mut_arg("stats", |a| a.help(STATS).hide_short_help(true)))]
#[command(mut_arg("output", |a| a.help(OUTPUT)))]
#[command(mut_arg("output_dir", |a| a.help(OUTPUT_DIR_HELP).long_help(OUTPUT_DIR)))]
#[command(mut_arg("quiet", |a| a.help(QUIET)))]
pub(crate) struct JobArgs {
    /// The corpus.
    #[command(flatten)]
    pub(crate) corpus: CorpusArgs,

    /// `--preset` and `--window`, as `simhash` reads them.
    #[command(flatten)]
    pub(crate) fingerprint: simhash_index::settings::FingerprintFlags,

    /// The matching flags, as `simhash` reads them.
    #[command(flatten)]
    pub(crate) matching: simhash_index::settings::MatchFlags,

    /// `--stats`.
    #[command(flatten)]
    pub(crate) stats: flags::Stats,

    /// `-o`.
    #[command(flatten)]
    pub(crate) output: flags::OutputFile,

    /// `--output-dir`.
    #[command(flatten)]
    pub(crate) output_dir: flags::OutputDir,

    /// `-q`.
    #[command(flatten)]
    pub(crate) quiet: flags::Quiet,

    /// The processes and workers, and the test hooks.
    #[command(flatten)]
    pub(crate) timely: TimelyArgs,

    /// The input files, directories expanded ([`JobArgs::expand`]).
    #[arg(skip)]
    pub(crate) files: Vec<PathBuf>,
}

const PATHS_HELP: &str = "Input files or directories; `-` reads standard input. Several \
    files are shards of one input";
const PATHS: &str = "Input files or directories; `-` reads standard input. Several files are \
    shards of one input.

A directory stands for the record files below it (`.jsonl`, `.json`, `.ndjson`, `.tsv`, \
optionally `.gz` or `.zst`, and `.parquet`), in the byte order of their paths, as `simhash` \
reads it. A Parquet file's rows are records (its text and id columns, by --text-column and \
--id-column); it is read whole by one worker.

Shards are read as if concatenated, in the order given (a record without an id gets its \
0-based line number in the concatenation; messages name the shard and the line in it); every \
process must see the same files with the same sizes (a shared file system or identical \
copies). Uncompressed files are split into line-aligned byte ranges, one per worker; a `.gz` \
or `.zst` file or standard input is read whole by one worker.";
const STATS: &str = "Write the job's figures as JSON to FILE (process 0): per worker, the \
    records it read and the bytes it sent and received in each kind of exchange \
    (deterministic), then the peak memory of its process (measured)";
const OUTPUT: &str = "Output file; `-` (the default) writes standard output. Written whole or \
    not at all, by process 0 only";
const OUTPUT_DIR_HELP: &str = "Write the output as one file per piece of the input, each by the \
    worker that read it";
const OUTPUT_DIR: &str = "Write the output as one file per piece of the input, each by the \
    worker that read it.

DIR/part-00000.tsv, part-00001.tsv, ... (`.jsonl` or `.tsv` for dedup, as the input), one per \
piece of the input (a worker's byte range of a file, or a file read whole), numbered in input \
order: concatenated in the order of their names they are byte for byte the output -o writes \
(the header is in the first part only). dedup of Parquet writes one `.parquet` part per input \
file, the file `simhash dedup --output-dir` writes for it. Each process writes its own \
workers' parts into DIR on its host, and creates DIR; a DIR that holds part-* files already \
is refused. The parts are written to temporary files and renamed into place only when every \
worker has written all of its own: a failed job leaves none.";
const QUIET: &str = "No summary on stderr (errors are still reported)";

/// `cluster`'s own flags.
#[derive(Debug, Args)]
pub(crate) struct ClusterArgs {
    /// The flags every job has.
    #[command(flatten)]
    pub(crate) job: JobArgs,

    /// `--singletons`.
    #[command(flatten)]
    pub(crate) singletons: flags::Singletons,
}

/// timely's own flags, with timely's short names; `--hostfile` has no `-h`, which is help.
/// `--threads` is `simhash`'s flag with timely's `-w` and one worker by default.
#[derive(Debug, Args)]
#[command(mut_arg("threads", |a| a.short('w').default_value("1").help(THREADS)))]
pub(crate) struct TimelyArgs {
    /// `-w/--threads`.
    #[command(flatten)]
    pub(crate) threads: flags::Threads,

    /// Number of processes in the job (each runs this command with its own -p).
    #[arg(short = 'n', long = "processes", value_name = "N", default_value = "1")]
    pub(crate) processes: NonZeroUsize,

    /// This process's index, 0 to N-1. Process 0 writes the output.
    #[arg(short = 'p', long = "process", value_name = "I", default_value_t = 0)]
    pub(crate) process: usize,

    /// A file of `host:port` lines, one per process, in process order (timely's -h).
    ///
    /// By default, with -n above 1, process i listens on localhost:2101+i.
    #[arg(long, value_name = "FILE")]
    pub(crate) hostfile: Option<PathBuf>,

    /// Seconds to wait for every process to connect before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 60, hide_short_help = true)]
    pub(crate) connect_timeout: u64,

    /// Seconds without a sign of life from another process before the job fails; 0 waits
    /// for ever.
    ///
    /// Every process sends each other one a heartbeat (every second, or a fifth of the
    /// other's timeout if less) on a connection of its own, from a thread of its own, so a
    /// long computation never misses one: silence means the process is stopped (SIGSTOP, a
    /// paused VM, a frozen host) or unreachable. After SECS of it, every process that
    /// notices exits 2 naming it, and the others follow. Each process applies its own
    /// value; they need not agree.
    #[arg(long, value_name = "SECS", default_value_t = crate::heartbeat::DEFAULT_PEER_TIMEOUT, hide_short_help = true)]
    pub(crate) peer_timeout: u64,

    /// Test hook: make global worker N fail with an error after reading its share.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) inject_error: Option<usize>,

    /// Test hook: make global worker N fail after writing its parts (--output-dir, or its
    /// share of -o's output), before they are committed.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) inject_write_error: Option<usize>,

    /// Test hook: make global worker N panic at the start of the table phase.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) inject_panic: Option<usize>,

    /// Test hook: make global worker N stop working, for good, before the last round (after
    /// process 0 committed the output), its process alive: a hung worker.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) inject_stall: Option<usize>,

    /// Test hook: the most records one worker's spanning forest numbers (default and at
    /// most 4,294,967,295), so tests can reach the limit.
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) forest_capacity: Option<u64>,

    /// Test hook: the bytes of the output (and of `--removed`) that worker 0 receives in
    /// one round with -o (default 64 MiB), so tests can cut a small output into many rounds.
    #[arg(long, value_name = "BYTES", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) output_window: Option<u64>,

    /// Test hook: the bytes of other workers' shingle sets a worker receives in one
    /// verification round of `--method minhash` (default 256 MiB), so tests can cut a small
    /// verification into many rounds.
    #[arg(long, value_name = "BYTES", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) verify_round_bytes: Option<u64>,

    /// Test hook: the band groups of `pairs --method minhash` larger than N records are
    /// searched whole by the engine rather than listed pair by pair (default 1,024), so
    /// tests can flood small corpora.
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) flood_group: Option<u64>,
}

/// How this process runs its workers.
#[derive(Debug)]
pub(crate) enum Launch {
    /// One process: `threads` workers exchanging through memory.
    Process { threads: usize },
    /// Process `process` of `addresses.len()`, each with `threads` workers, over TCP.
    Cluster {
        threads: usize,
        process: usize,
        addresses: Vec<String>,
        /// `--connect-timeout`.
        timeout: std::time::Duration,
        /// `--peer-timeout`: `None` when 0 (no heartbeats watched).
        peer_timeout: Option<std::time::Duration>,
    },
}

const THREADS: &str =
    "Worker threads in this process; keep it at most the cores the process may use";

/// `dedup --keep` and `--format`: the settings' vocabulary, defined once in the
/// libraries (their `clap` feature), as `simhash` reads them.
pub(crate) use simhash_cluster::KeepPolicy as Keep;
pub(crate) use simhash_io::Format;

impl JobArgs {
    /// The input files: each directory given replaced by the record files below it, as
    /// `simhash` expands it ([`simhash_io::Inputs`]), `-` for standard input when none is
    /// given. Call it once, before [`JobArgs::paths`]; returns the files of the
    /// directories that are not read.
    pub(crate) fn expand(&mut self) -> anyhow::Result<Vec<simhash_io::SkippedFile>> {
        let inputs = simhash_io::Inputs::expand(self.corpus.inputs.given())?;
        self.files = inputs.files().iter().map(|f| f.path.clone()).collect();
        if self.corpus.records.format.is_none() {
            // Names that imply different formats are refused, as `simhash` refuses them.
            self.corpus.records.format = Some(Format::of_files(&self.paths())?);
        }
        Ok(inputs.skipped().to_vec())
    }

    /// The input files ([`JobArgs::expand`]), `-` for standard input when none is given.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        if self.files.is_empty() { vec![PathBuf::from("-")] } else { self.files.clone() }
    }

    /// The format: given, or inferred from the files' names by [`JobArgs::expand`]
    /// ([`simhash_io::Format::of_files`]; from the first file's name before it).
    pub(crate) fn format(&self) -> Format {
        self.corpus.records.format.unwrap_or_else(|| {
            let first = self.paths().into_iter().next().unwrap_or_default();
            Format::infer(&first)
        })
    }

    /// The fingerprinter for JSON input (`None` for hash input).
    pub(crate) fn fingerprinter(&self) -> Option<Fingerprinter> {
        (self.format() == Format::Json).then(|| {
            Fingerprinter::with_settings(
                self.fingerprint.preset.unwrap_or_default(),
                self.fingerprint.window.map(usize::from),
            )
        })
    }

    /// The method (`auto` resolved as `simhash` resolves it) and its checked settings, with
    /// the MinHash sketcher `simhash` builds for the same flags (none for simhash; its seed
    /// is [`DEFAULT_SEED`](simhash_index::lsh::DEFAULT_SEED), which `simhash` has no flag
    /// for); `fingerprints`: the sketcher also computes the simhash fingerprint (the output
    /// shows it). The messages are `simhash`'s.
    pub(crate) fn matching(
        &self,
        fingerprints: bool,
    ) -> anyhow::Result<(Matching, Option<Arc<Sketcher>>)> {
        let asked = self.matching.asked(
            self.fingerprint.preset,
            self.format() == Format::Hash,
            false,
            false,
        );
        let resolved = asked.resolve()?;
        let sketcher = resolved.sketcher(fingerprints)?.map(Arc::new);
        Ok((resolved, sketcher))
    }

    /// How this process joins the job ([`TimelyArgs::launch`]).
    pub(crate) fn launch(&self) -> anyhow::Result<Launch> {
        self.timely.launch()
    }
}

impl TimelyArgs {
    /// How this process joins the job: alone with `-w` threads, or as one of `-n` processes.
    pub(crate) fn launch(&self) -> anyhow::Result<Launch> {
        let t = self;
        let (threads, processes) =
            (t.threads.threads.map_or(1, NonZeroUsize::get), t.processes.get());
        anyhow::ensure!(
            t.process < processes,
            "-p/--process ({}) must be less than -n/--processes ({processes})",
            t.process
        );
        if processes == 1 {
            return Ok(Launch::Process { threads });
        }
        let addresses = match &t.hostfile {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("{}: cannot read the hostfile", path.display()))?;
                let lines: Vec<String> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(str::to_string)
                    .collect();
                anyhow::ensure!(
                    lines.len() >= processes,
                    "{}: {} addresses for -n {processes} processes",
                    path.display(),
                    lines.len()
                );
                lines.into_iter().take(processes).collect()
            }
            None => (0..processes).map(|i| format!("localhost:{}", 2101 + i)).collect(),
        };
        Ok(Launch::Cluster {
            threads,
            process: t.process,
            addresses,
            timeout: std::time::Duration::from_secs(t.connect_timeout),
            peer_timeout: Some(std::time::Duration::from_secs(t.peer_timeout))
                .filter(|d| !d.is_zero()),
        })
    }
}
