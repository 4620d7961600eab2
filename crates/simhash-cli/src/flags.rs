//! The command-line flags as the user typed them (clap derive): rg's low-level args. They
//! are converted once into validated settings by [`crate::settings`].

use std::path::PathBuf;

/// The settings' vocabulary, defined once in the libraries (their `clap` feature) and
/// shared with simhash-dist.
pub use simhash_cluster::{KeepPolicy, Mode as ClusterMode};
pub use simhash_io::Format;

use clap::{Args, Parser, Subcommand};

mod explain;
pub use explain::{ColorChoice, ExplainArgs};

const EXIT_CODES: &str = "\
Exit codes:
  0  success (also when the reader of the output goes away, as in `| head`)
  1  some records were skipped; each was reported as FILE:LINE: what was wrong
  2  error: nothing or not all was written";

/// Near-duplicate detection for text: MinHash LSH with exact Jaccard verification (the
/// default), or 64-bit simhash fingerprints within k bits.
///
/// Start with `simhash dedup corpus.jsonl -o kept.jsonl --removed removed.jsonl` (the input
/// without its near-duplicates, and why each went), `simhash pairs corpus.jsonl` (every
/// near-duplicate pair) or `simhash explain --input corpus.jsonl ID_A ID_B` (why two records
/// match or not).
///
/// Without a subcommand, `simhash` runs the OpenMP fork's job with its flags: cluster the
/// records of --input and write `id<TAB>hash<TAB>cluster` (only records in a cluster of two
/// or more, unless --singletons). That mode uses the fork's fingerprints (--preset fork)
/// unless told otherwise; the subcommands default to --preset default.
#[derive(Debug, Parser)]
#[command(
    name = "simhash",
    version,
    after_help = EXIT_CODES,
    args_conflicts_with_subcommands = true,
    max_term_width = 100
)]
pub struct Cli {
    /// The subcommand; none runs the OpenMP fork's job (`cluster` with its defaults).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The top-level command's flags: `cluster`'s.
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fingerprint each record: JSONL in, TSV `id<TAB>hash` out (what --format hash reads).
    #[command(after_help = EXIT_CODES)]
    Fingerprint(FingerprintArgs),
    /// Every near-duplicate pair: TSV `id_a<TAB>id_b<TAB>jaccard` (or `distance` with simhash).
    #[command(after_help = EXIT_CODES)]
    Pairs(PairsArgs),
    /// Write the input without its near-duplicates, each kept record byte for byte.
    #[command(after_help = EXIT_CODES)]
    Dedup(DedupArgs),
    /// Find eval-set (benchmark) text in a corpus, exactly: the hits with their spans, and
    /// the corpus without (-o), marked with (-o --annotate) or cut of (--cut) them.
    #[command(after_help = EXIT_CODES)]
    Decontaminate(DecontaminateArgs),
    /// Near-duplicate clusters: TSV `id<TAB>hash<TAB>cluster` (the default job).
    #[command(after_help = EXIT_CODES)]
    Cluster(ClusterArgs),
    /// simhash-cpp's find-all: decimal hashes in, one JSON pair `[a,b]` per line out.
    #[command(name = "find-all", after_help = EXIT_CODES)]
    FindAll(CppArgs),
    /// simhash-cpp's find-clusters: decimal hashes in, one JSON array per cluster out.
    #[command(name = "find-clusters", after_help = EXIT_CODES)]
    FindClusters(CppArgs),
    /// Score predicted pairs or clusters against ground truth (precision, recall, F1).
    #[command(after_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// A persistent index on disk: add records once, then query or dedup new data against it.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Why two records are (or are not) near-duplicates, and what dedup would do with them.
    #[command(after_help = explain::EXPLAIN_HELP)]
    Explain(ExplainArgs),
    /// How many removals were right: labels given on a --report page, as shares per
    /// similarity bucket and over the run, with 95% intervals.
    #[command(after_help = AUDIT_HELP)]
    Audit(AuditArgs),
}

const AUDIT_HELP: &str = "\
Shares are of the labelled pairs (DUP same document, TEMPLATE template sibling, DISTINCT
distinct document, UNSURE), per similarity bucket with a 95% Wilson interval, and weighted
over the run: each labelled pair stands for the bucket's pairs over the pairs labelled in it,
and the interval is Wilson's at Kish's effective sample size. Buckets without labels are
named and left out of the weighted estimate. See docs/audit.md.

Exit codes:
  0  success
  1  some lines of LABELS were left out; each was reported as FILE:LINE: what was wrong
  2  error: a file could not be read, or LABELS are of another run (both run ids named)";

/// `simhash audit`'s flags.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The page a run wrote with --report.
    #[arg(value_name = "REPORT.html")]
    pub report: PathBuf,

    /// The labels exported from that page (JSONL: run_id, id_a, id_b, label).
    #[arg(value_name = "LABELS.jsonl")]
    pub labels: PathBuf,

    /// Write the estimate as JSON.
    #[arg(long)]
    pub json: bool,

    /// Where the estimate goes.
    #[command(flatten)]
    pub output: OutputOpts,
}

const INDEX_EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  some records were skipped (bad records, or ids already in the index); each was reported
  2  error (a damaged index file is named): nothing was committed or written";

/// `simhash index ...`: a directory of immutable segment files and a manifest (see
/// docs/index-format.md). One writer at a time; readers see the last commit.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Add every record of INPUT to the index, creating it (with these settings) if missing.
    ///
    /// A record whose id is already in the index is reported and not added. The new
    /// records become visible together, when the run succeeds.
    #[command(after_help = INDEX_EXIT_CODES)]
    Add(IndexAddArgs),
    /// For every record of INPUT, the indexed records it matches: TSV
    /// `id<TAB>indexed_id<TAB>jaccard` (or `distance`).
    #[command(after_help = INDEX_EXIT_CODES)]
    Query(IndexQueryArgs),
    /// Documents, segments, bytes on disk and settings of the index.
    #[command(after_help = INDEX_EXIT_CODES)]
    Stats(IndexStatsArgs),
    /// Merge the index's segments into one (queries answer the same, faster).
    #[command(after_help = INDEX_EXIT_CODES)]
    Compact(IndexDirArgs),
    /// Check every byte of every index file against its checksum; exit 2 naming what is wrong.
    #[command(after_help = INDEX_EXIT_CODES)]
    Verify(IndexDirArgs),
}

/// The index directory.
#[derive(Debug, Args)]
#[command(mut_arg("quiet", |a| a.help(NO_SUMMARY)))]
pub struct IndexDirArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,

    /// `-q/--quiet`: no summary (these commands show no progress).
    #[command(flatten)]
    pub quiet: simhash_jobs::flags::Quiet,
}

/// simhash-cpp's default distance (its programs' `-d`).
pub const CPP_DISTANCE: &str = "3";

const CPP_INPUT: &str = "Input: one decimal (or 0x hex) 64-bit hash per line; `-` (the \
    default) is standard input. May be repeated: several files (or directories, see `simhash \
    dedup --help`) are read as if concatenated";

const NO_SUMMARY: &str = "No summary on stderr (errors are still reported)";

/// `simhash index stats`.
#[derive(Debug, Args)]
pub struct IndexStatsArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,

    /// Write the statistics as JSON.
    #[arg(long)]
    pub json: bool,

    /// Where the statistics go.
    #[command(flatten)]
    pub output: OutputOpts,
}

/// `simhash index add`.
#[derive(Debug, Args)]
pub struct IndexAddArgs {
    /// The index directory (created if missing).
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    /// The records to add.
    #[command(flatten)]
    pub input: InputArgs,
    /// Settings of a new index; for an existing one, any given must equal the index's.
    #[command(flatten)]
    pub fingerprint: FingerprintOpts,
    /// The matching flags, laid over the index's settings.
    #[command(flatten)]
    pub matching: MatchOpts,
    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// `simhash index query`.
#[derive(Debug, Args)]
pub struct IndexQueryArgs {
    /// The index directory.
    #[arg(value_name = "INDEX")]
    pub index: PathBuf,
    /// The records to query.
    #[command(flatten, next_help_heading = "Input")]
    pub input: InputArgs,
    /// Settings given must equal the index's (they are read from the index).
    #[command(flatten, next_help_heading = INDEX_FIXES)]
    pub fingerprint: FingerprintOpts,
    /// The matching flags, which must equal the index's.
    #[command(flatten, next_help_heading = INDEX_FIXES)]
    pub matching: MatchOpts,
    /// Where the matches go.
    #[command(flatten, next_help_heading = "Output and run")]
    pub output: OutputOpts,
    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// The help heading of the settings an index fixes, on `index query`.
const INDEX_FIXES: &str =
    "Index settings (the index's are used: not needed, and any given must equal them)";

const EVAL_HELP: &str = "\
Formats (of both PREDICTION and --truth, recognised line by line):
  pairs TSV      `id_a<TAB>id_b[<TAB>...]`, as `simhash pairs` writes; with a header naming
                 id_a and id_b, optional columns `label` (0 = a negative pair) and `tier`
  cluster TSV    a header naming `id` and `cluster`, as `simhash cluster` writes
  JSONL          {\"id\":..,\"cluster\":..} per record, {\"id\":..,\"duplicate_of\":..} as
                 `simhash dedup --removed` writes, or {\"ids\":[..]} per cluster
  JSON arrays    one cluster per line, as `simhash find-clusters` writes
Pairs are closed transitively. Ids that the truth does not mention are singletons there.

Exit codes:
  0  success
  2  error: a file could not be read or a line could not be understood (FILE:LINE)";

/// `simhash eval`: what is scored against what.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The predicted pairs or clusters; `-` reads standard input.
    #[arg(value_name = "PREDICTION")]
    pub prediction: PathBuf,

    /// The true pairs or clusters. For B-cubed scores and unlabelled documents to count,
    /// it should list every document (e.g. JSONL `{"id", "cluster"}` for each).
    #[arg(long, value_name = "FILE")]
    pub truth: PathBuf,

    /// Labelled pairs with a tier (TSV with a header naming id_a, id_b, tier and
    /// optionally label), for recall per tier, e.g. the dev set's `devset.pairs.tsv`.
    #[arg(long, value_name = "FILE")]
    pub tiers: Option<PathBuf>,

    /// Write the scores as JSON.
    #[arg(long)]
    pub json: bool,

    /// Where the scores go.
    #[command(flatten)]
    pub output: OutputOpts,
}

/// Where records come from and how to read them.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// INPUT... and `-i`: every front end's.
    #[command(flatten)]
    pub inputs: simhash_jobs::flags::InputPaths,

    /// --format, --text-column, --id-column, --strict and --max-record-bytes: every front
    /// end's record flags.
    #[command(flatten)]
    pub records: simhash_io::RecordFlags,

    /// Use a uniform random sample of N records (one pass, memory for N records).
    ///
    /// Records are sampled after they are read and checked, so every bad record is still
    /// reported. The sample depends only on --seed and the input, never on the thread count.
    #[arg(long, value_name = "N")]
    pub sample: Option<u64>,

    /// Seed for --sample: the same seed and input give the same sample.
    #[arg(long, value_name = "SEED", default_value_t = 0)]
    pub seed: u64,
}

/// How text becomes fingerprints (`--preset`, `--window`): the libraries' flag group.
pub use simhash_index::settings::FingerprintFlags as FingerprintOpts;

/// How records are matched: the libraries' flag group, and `--memory`.
#[derive(Clone, Debug, Args)]
pub struct MatchOpts {
    /// The matching flags every front end shares.
    #[command(flatten)]
    pub flags: simhash_index::settings::MatchFlags,

    /// simhash: memory for finding all pairs within --distance (e.g. 20G): the fingerprints
    /// and each table's sort, done in as many passes as fit [default: one pass].
    ///
    /// Bounds the matching stage of pairs, cluster and dedup --mode components; the records
    /// read are held besides it. The output is the same at any budget.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, hide_short_help = true)]
    pub memory: Option<u64>,
}

/// A size in bytes: digits, optionally followed by K, M, G or T (powers of 1024, with an
/// optional `B` or `iB`).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: u64 = number.parse().map_err(|_| format!("not a size: {text:?} (e.g. 20G)"))?;
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("not a size: {text:?} (units: K, M, G, T)")),
    };
    number.checked_mul(1 << shift).ok_or_else(|| format!("size too large: {text:?}"))
}

/// How clusters are formed and which record of each is kept.
#[derive(Clone, Debug, Args)]
pub struct ClusterOpts {
    /// star (dedup's default): records in --keep order, each kept unless it matches a
    /// record already kept, then it joins that one (every removal matches its kept record).
    /// components (cluster's default): a record joins a cluster when it matches any member,
    /// so clusters chain through templated families.
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ClusterMode>,

    /// `--keep`: every front end's.
    #[command(flatten)]
    pub keep: simhash_jobs::flags::Keep,

    /// Warn about clusters larger than N (a template flood, or chained over-merging), naming
    /// the largest and their kept records, on stderr and in --stats.
    #[arg(long, value_name = "N", default_value_t = simhash_jobs::DEFAULT_BIG_CLUSTER, hide_short_help = true)]
    pub big_cluster: usize,
}

/// Threads, progress and the summary: every front end's flags.
#[derive(Debug, Args)]
pub struct RunOpts {
    /// `-j/--threads`.
    #[command(flatten)]
    pub threads: simhash_jobs::flags::Threads,
    /// `-q/--quiet`.
    #[command(flatten)]
    pub quiet: simhash_jobs::flags::Quiet,
    /// `--stats`.
    #[command(flatten)]
    pub stats: simhash_jobs::flags::Stats,
}

/// Where the output goes (`-o`): every front end's flag.
pub use simhash_jobs::flags::OutputFile as OutputOpts;

/// How Parquet outputs are written (`--parquet-compression`): every front end's flag.
pub use simhash_jobs::flags::ParquetCodec as ParquetOpts;

/// `simhash fingerprint`'s flags.
#[derive(Debug, Args)]
pub struct FingerprintArgs {
    /// The records to fingerprint.
    #[command(flatten)]
    pub input: InputArgs,
    /// The fingerprinter.
    #[command(flatten)]
    pub fingerprint: FingerprintOpts,
    /// Where the fingerprints go.
    #[command(flatten)]
    pub output: OutputOpts,
    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// `simhash pairs`' flags.
#[derive(Debug, Args)]
pub struct PairsArgs {
    /// The records to match.
    #[command(flatten)]
    pub input: InputArgs,
    /// The fingerprinter.
    #[command(flatten)]
    pub fingerprint: FingerprintOpts,
    /// The method and its settings.
    #[command(flatten)]
    pub matching: MatchOpts,
    /// Where the pairs go.
    #[command(flatten)]
    pub output: OutputOpts,
    /// `--report`: the HTML page.
    #[command(flatten)]
    pub report: ReportOpts,

    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// `--annotate`'s help for `dedup`.
const DEDUP_ANNOTATE: &str = "Keep every record, adding \"duplicate_of\" (the kept record's id) \
    and \"similarity\" (the Jaccard with 4 decimals, or the distance with simhash), null for kept \
    records";

/// `--annotate`'s long help for `dedup`.
const DEDUP_ANNOTATE_LONG: &str = "Keep every record, adding \"duplicate_of\" (the kept record's \
    id) and \"similarity\" (the Jaccard with 4 decimals, or the distance with simhash), null for \
    kept records.

JSONL: the two fields are added before each record's closing `}`, the record otherwise byte for \
byte (a record that already has either field is an error). Parquet: two nullable columns \
appended (duplicate_of as a string; similarity a float, or an unsigned integer with simhash). \
The summary and --removed count the same records as removed as without --annotate.";

/// `--annotate`'s help for `cluster`.
const CLUSTER_ANNOTATE: &str = "Write the input records with a \"cluster\" field (the cluster \
    number the TSV would show) instead of the TSV";

/// `--annotate`'s long help for `cluster`.
const CLUSTER_ANNOTATE_LONG: &str = "Write the input records with a \"cluster\" field (the \
    cluster number the TSV would show) instead of the TSV.

Every record is written, in input order; records in no cluster get null (their own number with \
--singletons). JSONL: the field is added before each record's closing `}`, the record \
otherwise byte for byte (a record that already has one is an error). Parquet: a nullable \
unsigned integer column appended.";

/// `simhash dedup`'s flags.
#[derive(Debug, Args)]
#[command(mut_arg("annotate", |a| a.help(DEDUP_ANNOTATE).long_help(DEDUP_ANNOTATE_LONG)))]
pub struct DedupArgs {
    /// The records to deduplicate.
    #[command(flatten)]
    pub input: InputArgs,
    /// The fingerprinter.
    #[command(flatten)]
    pub fingerprint: FingerprintOpts,
    /// The method and its settings.
    #[command(flatten)]
    pub matching: MatchOpts,
    /// How clusters form and which record is kept.
    #[command(flatten)]
    pub cluster: ClusterOpts,
    /// Where the kept records go.
    #[command(flatten)]
    pub output: OutputOpts,

    /// `--removed`.
    #[command(flatten)]
    pub removed: simhash_jobs::flags::Removed,

    /// `--output-dir`.
    #[command(flatten)]
    pub output_dir: simhash_jobs::flags::OutputDir,

    /// `--annotate`, with dedup's help.
    #[command(flatten)]
    pub annotate: simhash_jobs::flags::Annotate,

    /// Also remove the records that match a record of this index (`simhash index add`):
    /// the index's records count as kept before any of the input. The settings are the
    /// index's; any given must equal them.
    #[arg(long, value_name = "INDEX")]
    pub against: Option<PathBuf>,

    /// With --against: add the kept records to the index, committed only if the run
    /// succeeds (after the output is in place).
    #[arg(long, requires = "against")]
    pub update: bool,

    /// `--parquet-compression`.
    #[command(flatten)]
    pub parquet: ParquetOpts,

    /// `--report`: the HTML page.
    #[command(flatten)]
    pub report: ReportOpts,

    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// `simhash decontaminate`'s flags. `--format` takes `json` alone: the scan reads text, and
/// fingerprints (`hash`) have none.
#[derive(Debug, Args)]
#[command(mut_arg("format", |a| a
    .value_parser(clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["json"]),
        |_| simhash_io::Format::Json,
    ))
    .help("Input format: json (JSONL records), the one decontaminate reads (it scans text)")
    .long_help(None::<&str>)))]
pub struct DecontaminateArgs {
    /// The corpus: INPUT... and `-i`.
    #[command(flatten)]
    pub inputs: simhash_jobs::flags::InputPaths,
    /// --format, --text-column, --id-column, --strict and --max-record-bytes, for the
    /// corpus and the eval sets.
    #[command(flatten)]
    pub records: simhash_io::RecordFlags,
    /// The eval sets, the matching settings and the outputs.
    #[command(flatten)]
    pub decontaminate: simhash_jobs::flags::Decontaminate,
    /// `--parquet-compression`.
    #[command(flatten)]
    pub parquet: ParquetOpts,
    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// `simhash cluster`'s flags (and the top-level command's).
#[derive(Debug, Args)]
#[command(mut_arg("annotate", |a| a.help(CLUSTER_ANNOTATE).long_help(CLUSTER_ANNOTATE_LONG)))]
pub struct ClusterArgs {
    /// The records to cluster.
    #[command(flatten)]
    pub input: InputArgs,
    /// The fingerprinter.
    #[command(flatten)]
    pub fingerprint: FingerprintOpts,
    /// The method and its settings.
    #[command(flatten)]
    pub matching: MatchOpts,
    /// How clusters form and which record is kept.
    #[command(flatten)]
    pub cluster: ClusterOpts,
    /// Where the clusters go.
    #[command(flatten)]
    pub output: OutputOpts,

    /// `--singletons`.
    #[command(flatten)]
    pub singletons: simhash_jobs::flags::Singletons,

    /// `--annotate`, with cluster's help.
    #[command(flatten)]
    pub annotate: simhash_jobs::flags::Annotate,

    /// `--parquet-compression`.
    #[command(flatten)]
    pub parquet: ParquetOpts,

    /// `--report`: the HTML page.
    #[command(flatten)]
    pub report: ReportOpts,

    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// simhash-cpp's `simhash-find-all` / `simhash-find-clusters`, with its flags.
#[derive(Debug, Parser)]
#[command(version, after_help = EXIT_CODES, max_term_width = 100)]
pub struct CppCli {
    /// simhash-cpp's flags.
    #[command(flatten)]
    pub args: CppArgs,
}

/// The flags of simhash-cpp's `find-all` and `find-clusters`: INPUT... and `-i` are every
/// front end's, with simhash-cpp's one-line help (no long help).
#[derive(Debug, Args)]
#[command(mut_arg("input", |a| a.help(CPP_INPUT).long_help(None::<&str>)))]
#[command(mut_arg("distance", |a| a
    .short('d')
    .short_alias('k')
    .default_value(CPP_DISTANCE)
    .help("Maximum Hamming distance (bits) of a pair (`-k` works too)")
    .long_help(None::<&str>)))]
#[command(mut_arg("blocks", |a| a
    .short('b')
    .default_value("auto")
    .help("Number of blocks the 64 bits are split into (more than --distance), or `auto`")
    .long_help(None::<&str>)))]
#[command(mut_arg("strict", |a| a
    .help("Stop at the first bad line (exit 2) instead of reporting it and going on")))]
#[command(mut_arg("paths", |a| a
    .help("Input files or directories (the same as -i)")
    .long_help(None::<&str>)))]
pub struct CppArgs {
    /// INPUT... and `-i`.
    #[command(flatten)]
    pub inputs: simhash_jobs::flags::InputPaths,

    /// Where the output goes.
    #[command(flatten)]
    pub output: OutputOpts,

    /// `-d/--distance` and `-b/--blocks`: the shared declarations, with simhash-cpp's
    /// names, defaults and help.
    #[command(flatten)]
    pub hamming: simhash_index::settings::HammingFlags,

    /// `--strict`: the shared declaration, with this program's help.
    #[command(flatten)]
    pub strict: simhash_io::Strict,

    /// Memory for finding the pairs (e.g. 20G): the hashes and each table's sort, done in as
    /// many passes as fit [default: one pass]. The output is the same at any budget.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<u64>,

    /// Threads, progress and the summary.
    #[command(flatten)]
    pub run: RunOpts,
}

/// `--report` and `--report-group`.
#[derive(Clone, Debug, Default, Args)]
pub struct ReportOpts {
    /// `--report FILE.html`: the shared declaration.
    #[command(flatten)]
    pub page: simhash_jobs::flags::ReportFile,

    /// With --report: count records and removals per value of this field of the records
    /// (a dotted JSON path such as meta.source, or a Parquet column), the 30 most common
    /// values shown.
    #[arg(long, value_name = "FIELD", requires = "report", hide_short_help = true)]
    pub report_group: Option<String>,

    /// With --report: the pairs the page holds per similarity bucket, to read and to label
    /// (dedup's removals, pairs' pairs; a cluster page shows clusters, not pairs).
    ///
    /// More pairs make a narrower interval in `simhash audit` and a larger page: each pair
    /// holds two texts of up to 1500 characters.
    #[arg(long, value_name = "N", default_value_t = simhash_jobs::page::PAIRS_PER_BUCKET,
          requires = "report", hide_short_help = true)]
    pub report_sample: usize,
}
