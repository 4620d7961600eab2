//! `simhash explain`'s flags: two texts, or two ids of an input, and every matching
//! setting `dedup` takes (the same structs, so that the two can never read them apart).

use std::path::PathBuf;

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

/// `simhash explain A B`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The first record: its text, or with --input its id.
    #[arg(value_name = "A")]
    pub a: String,

    /// The second record: its text, or with --input its id.
    #[arg(value_name = "B")]
    pub b: String,

    /// Read A and B as ids of the records of these files or directories (may be repeated).
    ///
    /// Any input `dedup` reads: JSONL (plain, .gz, .zst) and Parquet files, directories of
    /// them. Ids are matched as the input writes them (a number's digits as written);
    /// a record without an id is its 0-based line number in the concatenation of the
    /// inputs. An id that is missing, or found twice, and a bad record are errors.
    #[arg(short = 'i', long, value_name = "FILE")]
    pub input: Vec<PathBuf>,

    /// JSON field holding the text (dotted path for nested fields, e.g. `meta.body`).
    #[arg(
        long = "text-column",
        visible_alias = "text_column",
        value_name = "FIELD",
        default_value = "text"
    )]
    pub text_column: String,

    /// JSON field holding the id.
    #[arg(
        long = "id-column",
        visible_alias = "id_column",
        value_name = "FIELD",
        default_value = "id"
    )]
    pub id_column: String,

    /// Longest record accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = simhash_io::DEFAULT_MAX_RECORD_BYTES, hide_short_help = true)]
    pub max_record_bytes: u64,

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
