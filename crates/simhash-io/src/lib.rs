//! Reading and writing for the simhash tools: where records come from, how a line becomes
//! a record (or a reported problem), and how results are written, so that `simhash`,
//! `simhash-dist` and `simhash eval` read and write the same bytes the same way.
//!
//! # Overview
//!
//! * [`Inputs`] expands the paths of the command line (files, directories, `-`) into
//!   the input files of a run, in a fixed order, each once.
//! * [`Source`] opens an input: a file, standard input (`-`), `.gz` or `.zst` by
//!   extension; compressed data without the extension is refused
//!   ([`refuse_compressed`]); standard input can be spooled for a second pass.
//! * [`ParquetRows`] reads the text and id columns of a Parquet file a batch of rows at
//!   a time; [`ParquetCopy`] writes the rows a run keeps with the input's schema, in the
//!   input's codec or another ([`ParquetCompression`]).
//! * [`LineReader`] splits it into numbered lines with a length limit, never holding more
//!   than the limit in memory.
//! * [`Parser`] turns a line into a [`Record`] (JSONL at dotted paths with [`Columns`],
//!   hash TSV, simhash-cpp's decimal hashes), or into a [`Problem`] with a [`Reason`],
//!   reported as `FILE:LINE: message` with [`Problem::at`]. [`parse_hash_lines`] reads a
//!   block of whole lines of hash input at once, as the two would line by line. [`IdTable`] stores ids compactly
//!   and [`IdSet`] finds duplicates ([`Problem::duplicate_id`]).
//! * [`Output`] writes a file whole or not at all (a temporary file renamed by
//!   [`commit_all`]), never over an input of the run ([`check_paths`], and the `run`
//!   feature's `run` module: the run's inputs, commit and signals, for front ends);
//!   [`PairsTsv`], [`ClustersTsv`], [`HashTsv`], [`write_removed`],
//!   [`write_hash_pair`] and [`write_hash_list`] are the output formats; [`Encoded`]
//!   compresses an output as its name says; [`json_fields`] finds a record's top-level
//!   fields, for annotations that must not repeat one.
//!
//! Errors are [`Error`]s: a message naming the file, an [`ErrorKind`], and the
//! [`std::io::Error`] behind it as the source. [`is_broken_pipe`] tells a closed output pipe
//! (which the tools count as success) anywhere in an error's chain.
//!
//! # Examples
//!
//! Read records from a file, reporting bad lines as `FILE:LINE: message`:
//!
//! ```
//! use simhash_io::{Body, Columns, LineReader, LineStatus, Parser, Problem, Source};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("in.jsonl");
//! std::fs::write(&path, "{\"id\":\"a\",\"text\":\"hello\"}\n{\"id\":\"b\"}\n")?;
//!
//! let mut source = Source::new(&path);
//! let mut lines = LineReader::new(source.open(false)?, 1 << 20);
//! let parser = Parser::Json(Columns::new("text", "id"));
//! let (mut line, mut texts, mut problems) = (Vec::new(), Vec::new(), Vec::new());
//! while let Some(status) = lines.next_line(&mut line, None)? {
//!     let record = match status {
//!         LineStatus::TooLong(n) => Err(Problem::too_long(n, 1 << 20)),
//!         LineStatus::Ok => parser.parse(&line),
//!     };
//!     match record {
//!         Ok(record) => {
//!             if let Body::Text(text) = record.body {
//!                 texts.push(text.into_owned());
//!             }
//!         }
//!         Err(problem) => problems.push(problem.at(&source.name, lines.line).to_string()),
//!     }
//!     line.clear();
//! }
//! assert_eq!(texts, ["hello"]);
//! assert_eq!(problems, [format!("{}:2: missing text field \"text\"", path.display())]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Write a pairs TSV atomically: the file appears, complete, only on commit.
//!
//! ```
//! use simhash_io::{Measure, Output, PairsTsv};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("pairs.tsv");
//! let mut tsv = PairsTsv::new(Output::create_for("--output", &path)?, Measure::Distance)?;
//! tsv.pair("a", "b", 2)?;
//! assert!(!path.exists());
//! tsv.into_inner().commit()?;
//! assert_eq!(std::fs::read_to_string(&path)?, "id_a\tid_b\tdistance\na\tb\t2\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod digits;
mod encode;
mod error;
#[cfg(feature = "clap")]
mod flags;
mod format;
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod hashlines;
mod ids;
mod inputs;
mod lines;
mod output;
mod parquet;
mod parquet_compression;
mod paths;
mod problem;
mod process;
mod record;
#[cfg(feature = "run")]
pub mod run;
mod source;
#[cfg(test)]
mod test_rng;

/// The default length limit of a record, in bytes (256 MiB): `--max-record-bytes`.
pub const DEFAULT_MAX_RECORD_BYTES: u64 = 256 << 20;

pub use crate::digits::parse_u64_fast;
pub use crate::encode::Encoded;
pub use crate::error::{Error, ErrorKind, is_broken_pipe};
#[cfg(feature = "clap")]
pub use crate::flags::{MaxRecordBytes, RecordColumns, RecordFlags, Strict};
pub use crate::format::{
    ClustersTsv, Format, HashTsv, Measure, MixedFormats, PairsTsv, Score, write_hash_list,
    write_hash_pair, write_json_id, write_removed,
};
pub use crate::hashlines::{HashFormat, HashLines, parse_hash_lines};
pub use crate::ids::{IdKey, IdKeys, IdSet, IdTable};
pub use crate::inputs::{InputFile, Inputs, RECORD_EXTENSIONS, SkippedFile, is_record_file};
pub use crate::lines::{
    BlockLines, LineAt, LineReader, LineStatus, LinesAt, ReadAt, line_content, read_at, read_block,
};
pub use crate::output::{Output, commit_all};
pub use crate::parquet::{
    ExtraColumn, ExtraKind, ExtraRows, ExtraValue, ParquetCopy, ParquetRows, RowBatch, is_parquet,
};
pub use crate::parquet_compression::{ParquetCompression, UnknownParquetCompression};
pub use crate::paths::{WritePlan, check_paths, resolve};
pub use crate::problem::{Located, Problem, Reason, printable};
pub use crate::process::{give_back_large_buffers, peak_memory};
pub use crate::record::{
    Body, Columns, Id, IdValue, Parser, Record, check_id, is_hash_header, json_fields, json_id,
    line_hash, parse_cpp_hash, parse_hash, parse_json,
};
pub use crate::source::{
    Compression, Source, closed_stdout_error, compression, refuse_compressed,
    refuse_compressed_file, stdin_was_closed, stdout_was_closed, temp_file,
};
