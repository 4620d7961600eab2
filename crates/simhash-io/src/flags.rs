//! The record flags every front end shares (the `clap` feature): how records are read.

use crate::Format;

/// How records are read: every front end's `--format`, `--text-column`, `--id-column`,
/// `--strict` and `--max-record-bytes`.
#[derive(Clone, Debug, clap::Args)]
pub struct RecordFlags {
    /// Input format: json (JSONL records) or hash (TSV `id<TAB>hash`).
    ///
    /// json: one JSON object per line; the text is at --text-column and the id at
    /// --id-column. hash: TSV with the header `id<TAB>hash`, hashes in decimal or 0x hex
    /// (an empty hash is a featureless record). By default, hash for files ending in
    /// `.tsv` (before any `.gz`/`.zst`), json otherwise; several inputs must agree.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// `--text-column` and `--id-column`.
    #[command(flatten)]
    pub columns: RecordColumns,

    /// `--strict`.
    #[command(flatten)]
    pub strict: Strict,

    /// `--max-record-bytes`.
    #[command(flatten)]
    pub limit: MaxRecordBytes,
}

/// Where a JSON record's text and id are: `--text-column` and `--id-column` (a group of
/// their own, for a command that reads records but not every [`RecordFlags`] applies to).
#[derive(Clone, Debug, clap::Args)]
pub struct RecordColumns {
    /// JSON field holding the text (dotted path for nested fields, e.g. `meta.body`).
    #[arg(
        long = "text-column",
        visible_alias = "text_column",
        value_name = "FIELD",
        default_value = "text"
    )]
    pub text_column: String,

    /// JSON field holding the id; records without it get their 0-based line number (in the
    /// concatenation of the inputs).
    #[arg(
        long = "id-column",
        visible_alias = "id_column",
        value_name = "FIELD",
        default_value = "id"
    )]
    pub id_column: String,
}

/// `--max-record-bytes`.
#[derive(Clone, Debug, clap::Args)]
pub struct MaxRecordBytes {
    /// Longest record accepted, in bytes; a longer line is reported and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = crate::DEFAULT_MAX_RECORD_BYTES, hide_short_help = true)]
    pub max_record_bytes: u64,
}

/// `--strict`: a bad record stops the run.
#[derive(Clone, Debug, clap::Args)]
pub struct Strict {
    /// Stop at the first bad record (exit 2) instead of reporting it and going on.
    #[arg(long)]
    pub strict: bool,
}
