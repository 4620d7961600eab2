//! The flags of a job's inputs, outputs and run, declared once for every command-line front
//! end (`simhash` and `simhash-dist` flatten them; with the `clap` feature).
//!
//! Each group holds one or two flags, so that a command takes the ones it has. The help is
//! `simhash`'s; a front end whose flag means more (`simhash-dist`'s `--output-dir` writes
//! one part per worker's piece) says so with clap's `mut_arg` on its own command, keeping
//! the one declaration.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::Args;

/// The inputs: positional INPUTs, or `-i`.
#[derive(Clone, Debug, Default, Args)]
pub struct InputPaths {
    /// Input files or directories; `-` reads standard input. Several are read as one input.
    ///
    /// Several inputs are read one after the other as if concatenated: a record without an
    /// id gets its 0-based line number in the concatenation, and messages name the file and
    /// the line in it. A directory means the files below it, recursively, in the byte order
    /// of their paths, skipping hidden names (starting with `.`); only files ending in
    /// `.jsonl`, `.json`, `.ndjson` or `.tsv`, optionally followed by `.gz` or `.zst`, are
    /// read from a directory (the others are listed on stderr). A file named on the command
    /// line is read whatever its name. `.gz` and `.zst` files are decompressed. No input
    /// means standard input; the same file twice is an error.
    #[arg(value_name = "INPUT", conflicts_with = "input")]
    pub paths: Vec<PathBuf>,

    /// `-i`.
    #[command(flatten)]
    pub files: InputFiles,
}

impl InputPaths {
    /// The inputs as given: `-i`'s, or the positional ones (clap refuses both together).
    pub fn given(&self) -> &[PathBuf] {
        if self.files.input.is_empty() { &self.paths } else { &self.files.input }
    }
}

/// `-i/--input` alone, for a command whose positional arguments are not inputs.
#[derive(Clone, Debug, Default, Args)]
pub struct InputFiles {
    /// Input file or directory (the same as a positional INPUT; may be repeated).
    ///
    /// `-` (the default) reads standard input. Files ending in `.gz` or `.zst` are
    /// decompressed.
    #[arg(short = 'i', long, value_name = "FILE")]
    pub input: Vec<PathBuf>,
}

/// Where the output goes (`-o`).
#[derive(Clone, Debug, Args)]
pub struct OutputFile {
    /// Output file; `-` (the default) writes standard output. Written whole or not at all.
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
}

/// `--output-dir`: several outputs instead of `-o`'s one.
#[derive(Clone, Debug, Default, Args)]
pub struct OutputDir {
    /// Write one output per input file, at its path relative to its input argument under DIR.
    ///
    /// Each output has its input's format and compression (`.gz` and `.zst` are compressed
    /// again; Parquet keeps the input's schema and codec, or --parquet-compression's); a
    /// file with nothing kept gets an empty output. All are put in place together, or none. DIR may not be, contain or be
    /// inside an input; two inputs with the same relative path are an error.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub output_dir: Option<PathBuf>,
}

/// `--removed`: dedup's list of what it dropped.
#[derive(Clone, Debug, Default, Args)]
pub struct Removed {
    /// Also write one JSON line per dropped record: {"id", "duplicate_of", "jaccard",
    /// "relation"} (or {"id", "duplicate_of", "distance"} with simhash).
    #[arg(long, value_name = "FILE")]
    pub removed: Option<PathBuf>,
}

/// `--keep`: which record of a group of near-duplicates is kept.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Keep {
    /// Which record of a cluster is kept: first (in input order), longest text, lowest id.
    #[arg(long, value_enum, value_name = "POLICY", default_value = "first")]
    pub keep: simhash_cluster::KeepPolicy,
}

/// `--singletons`: cluster's records in no cluster.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Singletons {
    /// Also print records that are in no cluster (each is a cluster of its own).
    #[arg(long)]
    pub singletons: bool,
}

/// How Parquet outputs are written (`--parquet-compression`).
#[derive(Clone, Debug, Default, Args)]
pub struct ParquetCodec {
    /// Codec of the Parquet output: mirror (the input's), zstd, snappy, lz4 or none.
    ///
    /// mirror (the default) writes each output with the codec of its input (of the first
    /// Parquet input, for one output). zstd is level 1 (Arrow's default); lz4 is Parquet's
    /// LZ4_RAW codec; none stores the pages uncompressed (no compression cost, the largest
    /// files). The rows are the same whatever the codec. Only for Parquet input, whose
    /// output is Parquet (dedup, and cluster --annotate).
    #[arg(long, value_name = "CODEC", hide_short_help = true)]
    pub parquet_compression: Option<simhash_io::ParquetCompression>,
}

/// `-j/--threads`: the threads a run uses.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Threads {
    /// Number of threads [default: all cores]. The output does not depend on it.
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,
}

/// `-q/--quiet`: no progress and no summary.
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Quiet {
    /// No progress bars and no summary on stderr (errors are still reported).
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--annotate`: `-o` keeps every record, each marked with what the command found, instead
/// of fewer records. One switch with one meaning in every command; each command names its
/// fields in its help (clap's `mut_arg`).
#[derive(Clone, Copy, Debug, Default, Args)]
pub struct Annotate {
    /// Write every record to the output, each marked with what was found, instead of fewer
    /// records.
    #[arg(long)]
    pub annotate: bool,
}

/// `--stats`: the run's figures as JSON.
#[derive(Clone, Debug, Default, Args)]
pub struct Stats {
    /// Write a JSON summary of the run (counts, skipped records by reason, seconds per phase).
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
}

/// `decontaminate`'s own flags: the eval sets, the matching settings and the outputs.
#[derive(Clone, Debug, Default, Args)]
#[command(mut_arg("report", |a| a
    .help(DECONTAMINATE_REPORT)
    .long_help(None::<&str>)
    .hide_short_help(false)))]
#[command(mut_arg("annotate", |a| a
    .help(DECONTAMINATE_ANNOTATE)
    .long_help(DECONTAMINATE_ANNOTATE_LONG)
    .requires("output")))]
pub struct Decontaminate {
    /// An eval set: a file or directory of records (anything the corpus may be), named by
    /// its file's stem, or NAME=PATH. Repeatable.
    ///
    /// Each record is an item: its text is the --eval-field fields (the text column by
    /// default) joined by a line break, its id the --id-column (its 0-based line number
    /// when it has none). A directory's files make one set. Two sets with one name are an
    /// error.
    #[arg(long = "eval", value_name = "[NAME=]PATH", required = true)]
    pub evals: Vec<String>,

    /// A field of the eval records to match (repeatable: a question and its answer)
    /// [default: the text column].
    ///
    /// A dotted path reads a nested field (`meta.question`). An item missing one of the
    /// fields is a bad record (reported as FILE:LINE and skipped).
    #[arg(long = "eval-field", value_name = "FIELD")]
    pub eval_fields: Vec<String>,

    /// Words in an n-gram (1 to 64) [default: 10].
    ///
    /// An item of fewer words matches only whole. 10 found every planted item, whole or
    /// cut to half, with fewer incidental matches than 8 (docs/decontamination.md).
    #[arg(long, value_name = "N")]
    pub ngram: Option<usize>,

    /// The share of an item's n-grams a document must contain to be contaminated by it,
    /// from 0 to 1 [default: 0.2].
    #[arg(long, value_name = "SHARE")]
    pub min_overlap: Option<f64>,

    /// Drop eval n-grams found in more corpus documents than this: a count (1000), a share
    /// of the documents (0.01) or none [default: 1000].
    ///
    /// Boilerplate (licenses, navigation, "all rights reserved") then neither counts for
    /// nor against an item; the summary says how many n-grams each set lost.
    #[arg(long, value_name = "LIMIT")]
    pub max_df: Option<simhash_index::contamination::MaxDf>,

    /// Write one JSON line per contaminated (document, item): {"id", "eval", "item",
    /// "overlap", "longest", "spans", "matched", "ngrams"}; `-` is standard output (the
    /// default when no other output is asked for).
    ///
    /// Lines are in document order, then eval set and item in the order read. "spans" are
    /// [start, end) character offsets (Unicode code points) into the document's text.
    #[arg(long, value_name = "FILE")]
    pub hits: Option<PathBuf>,

    /// Write the corpus without its contaminated documents, each kept record byte for
    /// byte (as dedup's -o).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// `--annotate`, with this command's help: `-o` keeps every record, marked.
    #[command(flatten)]
    pub annotate: Annotate,

    /// Write every record of the corpus with the matched spans cut out of its text (JSONL
    /// only): the objects that hold the text written compactly, every other value as it
    /// was, and the record's line end (a record with nothing cut is copied byte for byte).
    #[arg(long, value_name = "FILE")]
    pub cut: Option<PathBuf>,

    /// With --cut: also cut this many characters on each side of every span.
    #[arg(long, value_name = "W", default_value_t = 0, requires = "cut")]
    pub cut_window: usize,

    /// `--report FILE.html`: the shared declaration, with this command's help.
    #[command(flatten)]
    pub page: ReportFile,
}

/// `--annotate`'s help for `decontaminate`.
const DECONTAMINATE_ANNOTATE: &str = "With -o: keep every record, adding a \"contamination\" \
    field: the list of its hits ({\"eval\", \"item\", \"overlap\", \"longest\", \"spans\"}), null \
    for a clean record (as dedup's --annotate marks what it would remove)";

/// `--annotate`'s long help for `decontaminate`.
const DECONTAMINATE_ANNOTATE_LONG: &str = "With -o: keep every record, adding a \
    \"contamination\" field: the list of its hits ({\"eval\", \"item\", \"overlap\", \"longest\", \
    \"spans\"}), null for a clean record (as dedup's --annotate marks what it would remove).

JSONL: the field is added before each record's closing `}`, the record otherwise byte for byte \
(a record that already has one is an error). Parquet: a nullable string column of that JSON \
appended. The summary counts the same documents as removed as without --annotate.";

/// `--report`'s help for `decontaminate`.
const DECONTAMINATE_REPORT: &str = "Also write an HTML page: each eval set's figures and \
    contaminated items (those in most documents first, up to 200), each with up to 3 documents \
    and their matching passages. Self-contained, loads nothing";

/// `--report FILE.html`: an HTML page of the run, written with its other outputs.
#[derive(Clone, Debug, Default, Args)]
pub struct ReportFile {
    /// Also write an HTML page of the run (figures, charts, sampled removals beside their
    /// kept records, the largest clusters): one self-contained file that loads nothing.
    ///
    /// The page holds samples, not every removal: up to 30 pairs per similarity bucket
    /// (--report-sample; chosen by a hash of the ids, so the page is the same at any thread
    /// count), the 20 largest clusters with 5 members each, texts cut at 1500 characters.
    /// The pairs can be labelled on the page and the labels read by `simhash audit`.
    /// Written whole or not at all, with the other outputs.
    #[arg(long, value_name = "FILE.html", hide_short_help = true)]
    pub report: Option<PathBuf>,
}
