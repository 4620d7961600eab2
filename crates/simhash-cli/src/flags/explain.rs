//! `simhash explain`'s flags: two texts, or two ids of an input, and every matching
//! setting `dedup` takes (the same structs, so that the two can never read them apart).

use clap::{Args, ValueEnum};

use super::{ClusterOpts, FingerprintOpts, MatchOpts};

/// `simhash explain --help`'s text after the flags: examples, and what the decision is.
pub(super) const EXPLAIN_HELP: &str = "\
Examples:
  simhash explain \"the text of one\" \"the text of the other\"
  simhash explain --input corpus.jsonl d17 d204 --keep longest
  simhash explain --input shards/ 17 204 --method simhash -k 3 --json

The decision is the one `simhash dedup` makes over the two records alone, with the same
settings: dedup's engine is run on them. In a larger input another record may come between
them (B removed as a copy of C, or A itself removed first).

Exit codes:
  0  explained (whatever the decision)
  2  error: an unknown or repeated id, a bad record, bad settings";

/// `-i`'s help here.
const INPUT_HELP: &str =
    "Read A and B as ids of the records of these files or directories (may be repeated)";
const INPUT_LONG_HELP: &str = concat!(
    "Read A and B as ids of the records of these files or directories (may be repeated).\n\n",
    "Any input `dedup` reads: JSONL (plain, .gz, .zst) and Parquet files, directories of them. ",
    "Ids are matched as the input writes them (a number's digits as written); a record without ",
    "an id is its 0-based line number in the concatenation of the inputs. An id that is ",
    "missing, or found twice, and a bad record are errors."
);

/// `simhash explain A B`.
#[derive(Debug, Args)]
#[command(mut_arg("input", |a| a.help(INPUT_HELP).long_help(INPUT_LONG_HELP)))]
#[command(mut_arg("id_column", |a| a.help("JSON field holding the id").long_help(None::<&str>)))]
#[command(mut_arg("max_record_bytes", |a| a.help("Longest record accepted, in bytes")))]
pub struct ExplainArgs {
    /// The first record: its text, or with --input its id.
    #[arg(value_name = "A")]
    pub a: String,

    /// The second record: its text, or with --input its id.
    #[arg(value_name = "B")]
    pub b: String,

    /// `-i/--input`: the shared flag, with explain's help.
    #[command(flatten)]
    pub input: simhash_jobs::flags::InputFiles,

    /// `--text-column` and `--id-column`: the shared flags.
    #[command(flatten)]
    pub columns: simhash_io::RecordColumns,

    /// `--max-record-bytes`: the shared flag, with explain's help.
    #[command(flatten)]
    pub limit: simhash_io::MaxRecordBytes,

    /// The fingerprinter.
    #[command(flatten)]
    pub fingerprint: FingerprintOpts,
    /// The method and its settings.
    #[command(flatten)]
    pub matching: MatchOpts,
    /// How clusters form and which record is kept.
    #[command(flatten)]
    pub cluster: ClusterOpts,

    /// Print one JSON object (its fields: docs/explain.md) instead of the text report.
    #[arg(long)]
    pub json: bool,

    /// Shingles listed per group (shared, only in A, only in B).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub shingles: usize,

    /// Colour the text report: auto (when standard output is a terminal and NO_COLOR is
    /// unset), always or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
}

/// When the text report is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When standard output is a terminal and `NO_COLOR` is unset or empty.
    Auto,
    /// Always (ANSI escapes).
    Always,
    /// Never.
    Never,
}
