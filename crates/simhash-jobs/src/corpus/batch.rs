//! What the reading pipeline's stages pass each other: batches of lines as read, batches
//! of records as parsed, and what the corpus keeps of each record.

#[allow(clippy::wildcard_imports)]
use super::*;

/// What the corpus keeps of a record besides its id and sketch.
#[derive(Clone, Copy)]
pub(super) struct Meta {
    /// The id is a JSON number (or a line number).
    pub(super) numeric: bool,
    /// The id is the line number (the record has none): not kept, made when asked for.
    pub(super) generated: bool,
    /// The fingerprint, none when featureless.
    pub(super) fp: Option<Fingerprint>,
    /// The record's line number in the concatenation of the inputs.
    pub(super) line: u64,
    /// Bytes of text.
    pub(super) len: u64,
    /// A hash of the line as read, to check the second pass.
    pub(super) line_hash: u64,
    /// Where the line starts in its file.
    pub(super) offset: u64,
}

/// A run of lines as read, all from one input file.
pub(super) struct RawBatch {
    /// The batch's number: batches are collected in this order.
    pub(super) seq: u64,
    /// The input file (index into the run's sources).
    pub(super) shard: usize,
    /// Input bytes the batch covers, line endings and skipped lines included.
    pub(super) bytes: u64,
    /// Lines of its file the batch covers (header and blank lines included), when the
    /// reader counted them (not for a `span`, whose worker counts them).
    pub(super) file_lines: u64,
    /// The lines' bytes.
    pub(super) data: Vec<u8>,
    /// Per line: its number in the file, end offset in `data`, and status.
    pub(super) lines: Vec<(u64, usize, LineStatus)>,
    /// Per line: where it starts in the file.
    pub(super) starts: Vec<u64>,
    /// Rows of a Parquet file instead of lines, as decoded (the workers read their text
    /// where Arrow put it, already checked as UTF-8), and the number of the first (0-based).
    pub(super) rows: Option<(simhash_io::RowBatch, u64)>,
    /// The file cannot be read as records: reported for the whole file, which counts no
    /// line.
    pub(super) failed: Option<Problem>,
    /// Hash input: `data` holds whole lines, not yet split (`lines` is empty); the workers
    /// split and parse them all at once.
    pub(super) block: Option<HashBlock>,
    /// A block of a regular file that the worker reads itself: the lines that start in
    /// it, numbered from 1 (`data` and `lines` are empty).
    pub(super) span: Option<Span>,
}

/// A block of a regular file, for a worker to read with positional reads
/// ([`simhash_io::read_block`]): the kernel's copy of the bytes and the splitting of lines
/// happen on the worker's core, not the reader's.
pub(super) struct Span {
    /// The file.
    pub(super) file: Arc<File>,
    /// The block's first byte.
    pub(super) start: u64,
    /// The byte after its last.
    pub(super) end: u64,
}

/// Where a block of whole lines of hash input is in its file.
#[derive(Clone, Copy)]
pub(super) struct HashBlock {
    /// The number in the file of the block's first line (1-based).
    pub(super) first_line: u64,
    /// A line too long to hold follows the block's lines: its length, terminator
    /// included (its bytes were skipped).
    pub(super) too_long: Option<u64>,
}

/// A batch after parsing, in the same order.
pub(super) struct ParsedBatch {
    /// The batch's number (as read).
    pub(super) seq: u64,
    /// The worker that parsed it.
    pub(super) worker: usize,
    /// The input file (index into the run's sources).
    pub(super) shard: usize,
    /// Input bytes the batch covers.
    pub(super) bytes: u64,
    /// Lines of its file the batch covers.
    pub(super) file_lines: u64,
    /// The ids of its records, one after the other (each record's `id_end` ends its own).
    pub(super) ids: String,
    /// Per line: its number in the file (in the block, from 1, for a `span`), and the
    /// record or the problem.
    pub(super) items: Vec<(u64, Parsed)>,
    /// The items are numbered from the batch's first line, not from the file's.
    pub(super) relative: bool,
    /// A block that could not be read: the number in the block of the line that failed,
    /// and why (its items are left out; the run fails).
    pub(super) read_error: Option<(u64, std::io::Error)>,
    /// The batch's shingle sets could not be written (the run fails).
    pub(super) failed_write: Option<simhash_index::lsh::EngineError>,
    /// The file cannot be read as records.
    pub(super) failed: Option<Problem>,
    /// A block of hash input: the number in the file of its first line, and its records
    /// and problems (`items` is empty).
    pub(super) hashes: Option<(u64, HashLines)>,
}

/// Lines in a batch, at most.
pub(super) const BATCH_LINES: usize = 2048;
/// Bytes in a batch, about (a batch ends at the line that passes it).
pub(super) const BATCH_BYTES: usize = 4 << 20;

/// The size of a block of hash input: a worker's share, cut at a line end.
pub(super) const HASH_BLOCK_BYTES: usize = 1 << 20;

/// The size of a block of a regular file of records that a worker reads itself
/// ([`Span`]): it holds the lines that start in it.
pub(super) const SPAN_BYTES: u64 = 1 << 20;

/// A parsed line, or why it was skipped.
pub(super) type Parsed = Result<ParsedDoc, Problem>;

/// A record parsed: its id, fingerprint, sketch, and where its line is.
pub(super) struct ParsedDoc {
    /// The end of its id in the batch's `ids`, or none when it has no id.
    pub(super) id_end: Option<usize>,
    /// The id is a JSON number.
    pub(super) number: bool,
    /// None when featureless.
    pub(super) fp: Option<Fingerprint>,
    /// Bytes of text.
    pub(super) len: u64,
    /// The MinHash sketch, when asked for and the text has features.
    pub(super) sketch: Option<DocSketch>,
    /// Where the worker wrote the sketch's set, taken out of it ([`SetWriter`]).
    pub(super) place: Option<SetPlace>,
    /// A 64-bit hash of the line, to check that a second pass reads the same record.
    pub(super) line_hash: u64,
    /// Where the line starts in its file (0 for a Parquet row).
    pub(super) offset: u64,
    /// The eval n-grams the text contains, when the reading scans for them.
    pub(super) hits: DocHits,
}
