//! The second pass of `dedup` (and of `cluster --annotate`): the input read again, each
//! record to write copied byte for byte (JSONL, hash TSV) or row for row (Parquet), checked
//! against the first pass, optionally with annotation fields added, into one output or
//! into one output per input file (`--output-dir`, the same relative paths, formats and
//! compressions). With `--output-dir` the files are written on the job's threads, each
//! thread taking the next file in input order.
//!
//! A JSONL or hash TSV file that can be read at offsets (not compressed; standard input's
//! temporary copy) has only its wanted lines read, where the first pass found them
//! ([`Corpus::offset`]): chunks of them read, checked and annotated on the job's threads,
//! and written in order on one (`offsets.rs`'s `AtOffsets`). A compressed file is read
//! again from its start, the lines not wanted skipped without being copied. Either way each wanted line
//! is hashed and checked against the first pass's hash of it: a line that differs (or is
//! gone) is an error, and nothing is written.
//!
//! Layout: this file holds what the commands call (the records wanted, where they go, the
//! pass's inputs); `notes` the annotation fields, `copy` the JSONL and hash TSV copy,
//! `offsets` its reads at offsets, `parquet` the Parquet rows, `dir` the `--output-dir` files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use simhash_io::{InputFile, Output, ParquetCompression, Parser, Source};

use crate::corpus::Corpus;
use crate::error::{Context, Result, bail};
use crate::reporter::Reporter;

mod copy;
mod dir;
mod notes;
mod offsets;
mod parquet;

pub use notes::Notes;

use copy::Copy;
use dir::dir;
use parquet::parquet_one;

/// The records to write, in input order: the line of each (numbered over the
/// concatenation of the inputs), the hash of the line as first read, and its document.
pub type Wanted = Vec<Entry>;

/// One record to write: its line, the hash of the line as first read, its document.
pub type Entry = (u64, Option<u64>, u32);

/// The records of `docs`, in line order.
pub fn wanted(corpus: &Corpus, docs: impl Iterator<Item = usize>) -> Wanted {
    let mut wanted: Wanted =
        docs.map(|d| (corpus.line(d), corpus.line_hash(d), d as u32)).collect();
    wanted.sort_unstable();
    wanted
}

/// Drops `value` on a thread of its own: for the MinHash sketches, once nothing needs them
/// (before the second pass), since closing their temporary files frees hundreds of MB of
/// page cache, tens of milliseconds that would otherwise come at the end of the run. The
/// thread is not waited for: if the run ends first, the system closes the files.
pub fn drop_in_background<T: Send + 'static>(value: T) {
    // Without a thread, `value` was dropped with the closure.
    let _ = std::thread::Builder::new().name("drop".into()).spawn(move || drop(value));
}

/// Where the records go.
#[allow(missing_debug_implementations)]
pub enum Target<'a> {
    /// One output for every input.
    One(Output),
    /// One output per input file, at its relative path under the directory.
    Dir {
        /// The directory (`--output-dir`).
        root: &'a Path,
        /// The input files, whose relative paths the outputs take.
        files: &'a [InputFile],
    },
}

/// What the second pass reads and how.
#[allow(missing_debug_implementations)]
pub struct Pass<'a> {
    /// Reads the records (JSON or hash TSV).
    pub parser: &'a Parser,
    /// `--max-record-bytes`.
    pub max_record_bytes: u64,
    /// The input files, opened again.
    pub sources: &'a [Source],
    /// What the first pass read: lines, hashes and offsets.
    pub corpus: &'a Corpus,
    /// What `--annotate` adds.
    pub notes: &'a Notes<'a>,
    /// PassProgress and warnings.
    pub reporter: &'a Reporter,
    /// The job's threads: `--output-dir` writes its files on them.
    pub pool: &'a rayon::ThreadPool,
    /// `true`: Parquet inputs (rows copied with their schema) for one output
    /// ([`Target::One`]); [`Target::Dir`] writes each file in its own format.
    pub parquet: bool,
    /// `--parquet-compression`: the codec of the Parquet outputs.
    pub compression: ParquetCompression,
}

/// Writes the `wanted` records to `target`; returns the outputs to commit and how many
/// records were written.
pub fn write(pass: &Pass<'_>, wanted: &Wanted, target: Target<'_>) -> Result<(Vec<Output>, u64)> {
    let (result, rest) = match target {
        Target::One(out) if pass.parquet => {
            let mut rest = wanted.iter().peekable();
            let result = parquet_one(pass, &mut rest, out)?;
            (result, &wanted[wanted.len() - rest.len()..])
        }
        Target::One(out) => {
            let progress = PassProgress::default();
            let mut copy = Copy::new(pass, false, &progress);
            let mut out = out;
            let mut rest = &wanted[..];
            let mut base = 0;
            for (source, &lines) in pass.sources.iter().zip(pass.corpus.shard_lines()) {
                copy.shard(source, base, lines, &mut rest, &mut out)?;
                base += lines;
            }
            ((vec![out], copy.written), rest)
        }
        Target::Dir { root, files } => dir(pass, wanted, root, files)?,
    };
    if let Some(&(line, ..)) = rest.first() {
        bail!(Input, "the input changed while it was read (line {line} is gone)");
    }
    Ok(result)
}

type Iter<'w> = std::iter::Peekable<std::slice::Iter<'w, (u64, Option<u64>, u32)>>;

/// The outputs to commit, and how many records they hold.
type Written = (Vec<Output>, u64);

/// Bytes and lines of the second pass so far, over every file (for the progress bar).
#[derive(Default)]
struct PassProgress {
    bytes: AtomicU64,
    lines: AtomicU64,
}

impl PassProgress {
    /// Adds what a file read since its last report, and shows the totals.
    fn add(&self, reporter: &Reporter, bytes: u64, lines: u64) {
        let bytes = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let lines = self.lines.fetch_add(lines, Ordering::Relaxed) + lines;
        reporter.progress(bytes, lines);
    }
}

/// Writes a line, adding the newline a last line may lack.
fn write_line(out: &mut dyn Write, line: &[u8]) -> Result<()> {
    out.write_all(line)?;
    if line.last() != Some(&b'\n') {
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The directories `--output-dir` creates, removed again (when still empty) unless the run
/// succeeds: a failed run leaves nothing.
#[derive(Debug, Default)]
pub struct CreatedDirs {
    dirs: Vec<PathBuf>,
    keep: bool,
}

impl CreatedDirs {
    /// Creates `dir` and the directories above it that are missing, noting each.
    pub fn create(&mut self, dir: &Path) -> Result<()> {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d.to_path_buf());
            at = d.parent();
        }
        for d in missing.into_iter().rev() {
            std::fs::create_dir(&d)
                .with_context(|| format!("--output-dir: cannot create {}", d.display()))?;
            self.dirs.push(d);
        }
        Ok(())
    }

    /// The run succeeded: the directories stay.
    pub fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for CreatedDirs {
    fn drop(&mut self) {
        if !self.keep {
            for d in self.dirs.iter().rev() {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

/// Whether the inputs are Parquet files; all or none must be (`what`: why, for the error).
pub fn parquet_inputs(inputs: &simhash_io::Inputs, what: &str) -> Result<bool> {
    let files = inputs.files();
    let parquet = files.first().is_some_and(|f| simhash_io::is_parquet(&f.path));
    if let Some(other) = files.iter().find(|f| simhash_io::is_parquet(&f.path) != parquet) {
        bail!(
            Input,
            "{what}: {} and {} are not both Parquet",
            files[0].path.display(),
            other.path.display()
        );
    }
    Ok(parquet)
}
