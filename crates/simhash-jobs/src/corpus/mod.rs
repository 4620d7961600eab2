//! The documents of one run ([`Corpus`]), read by a parallel pipeline (`read.rs`: one
//! reader thread, a bounded channel of numbered batches, fingerprint workers), gathered
//! back in input order (`collect.rs`), and sampled with `--sample` (`sample.rs`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};
use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::contamination::{DocHits, EvalSets, Tally};
use simhash_index::lsh::{
    DocSketch, SPILL_CACHE_BYTES, SetPlace, SetWriter, SketchStore, Sketcher, SpillStore,
};
use simhash_io::{
    BlockLines, Body, HashLines, IdKey, IdKeys, IdTable, LineReader, LineStatus, Problem, Reason,
    Source,
};

use crate::error::{ErrorKind, JobError, Result, bail};
use crate::reporter::Reporter;

mod batch;
mod collect;
mod read;
mod sample;

use batch::Meta;
pub(crate) use read::read;

/// How a line becomes a document: its record (read by `parser`), and for text the
/// fingerprint and, with a sketcher, the MinHash sketch.
#[derive(Clone, Debug)]
pub struct Reading {
    /// Reads the line: JSON (text and id columns) or hash TSV.
    pub parser: simhash_io::Parser,
    /// Set for JSONL records: a text without one would be featureless.
    pub fingerprinter: Option<Fingerprinter>,
    /// Set for `--method minhash`: each text is also sketched.
    pub sketcher: Option<std::sync::Arc<Sketcher>>,
    /// Set for `decontaminate`: each text is also scanned for these eval sets' n-grams,
    /// on the worker threads, and the scans tallied in input order ([`Corpus::tally`]).
    pub eval: Option<std::sync::Arc<EvalSets>>,
}

impl Reading {
    /// Records that are hashes already (hash TSV, simhash-cpp's input).
    pub fn hashes(parser: simhash_io::Parser) -> Reading {
        Reading { parser, fingerprinter: None, sketcher: None, eval: None }
    }
}

/// How the input is read: the records, the threads, and what is kept.
#[allow(missing_debug_implementations)]
pub(crate) struct ReadOptions {
    /// How a line becomes a document.
    pub reading: Reading,
    /// Worker threads that parse and fingerprint.
    pub threads: usize,
    /// `--max-record-bytes`: a longer line is a bad record.
    pub max_record_bytes: u64,
    /// `--sample N` and `--seed`.
    pub sample: Option<(u64, u64)>,
    /// Keep standard input in a temporary file for a second pass.
    pub spool: bool,
    /// Keep each record's hash and nothing else (8 bytes a record): simhash-cpp's input
    /// for `find-all`, which needs no ids, lines or lengths; see [`Corpus::take_hashes`].
    pub compact: bool,
    /// Hash each record's line even when it is read once ([`Corpus::tag_line_ids`] needs
    /// the hashes); `spool` implies it.
    pub line_hashes: bool,
}

impl ReadOptions {
    fn hash_lines(&self) -> bool {
        self.spool || self.line_hashes
    }
}

/// The documents: for each, its id, fingerprint (none when featureless), line and length.
/// Memory grows with the number of documents, never with their text.
#[derive(Default)]
pub struct Corpus {
    /// The ids read from the input; empty when ids are line numbers (`generated`).
    ids: IdTable,
    /// The records have no ids: each one's id is its 0-based line number in the
    /// concatenation of the inputs, made when asked for rather than kept.
    generated: bool,
    /// With `generated`, the tag of this input ([`Corpus::tag_line_ids`]): each id is
    /// `TAG:LINE`, so that the ids of different inputs added to one index differ.
    id_tag: Option<String>,
    /// None when featureless.
    fps: Vec<Option<Fingerprint>>,
    /// Read with the compact reading ([`Session::read_hashes`](crate::Session::read_hashes)): the hashes alone, in input order, and no other
    /// per-record field (`fps`, `lines` and the rest stay empty).
    compact: Option<Vec<Fingerprint>>,
    /// The id was a JSON number (or a line number), not a string.
    numeric: Vec<bool>,
    /// Each document's line number in the concatenation of the input files (1-based).
    lines: Vec<u64>,
    lens: Vec<u64>,
    /// The lines of each input file (header and blank lines included), as first read.
    shard_lines: Vec<u64>,
    /// Each record's line hash, when the input is read twice (dedup).
    line_hashes: Vec<u64>,
    /// Each record's byte offset in its input file (decompressed), when the input is read
    /// twice: the second pass reads the records it wants there.
    offsets: Vec<u64>,
    keep_line_hashes: bool,
    /// The MinHash method's sketches, when the parser makes them.
    pub sketches: Option<SpillStore>,
    /// With [`Reading::eval`]: the scans of the documents, each numbered by its place in
    /// the corpus (0-based), for [`EvalSets::finish`].
    pub tally: Option<Tally>,
    no_features: usize,
    /// Records read (lines, bar the TSV header and blank lines), including skipped and not
    /// sampled ones.
    pub records: u64,
    /// Blank lines: not records, so neither read nor skipped, but counted.
    pub blank_lines: u64,
    /// Valid records left out by --sample.
    pub not_sampled: u64,
    /// Bytes of input read.
    pub bytes: u64,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Corpus")
            .field("documents", &self.len())
            .field("records", &self.records)
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl Corpus {
    /// How many documents.
    pub fn len(&self) -> usize {
        self.compact.as_ref().map_or(self.fps.len(), Vec::len)
    }

    /// Whether there are no documents.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hashes of a corpus read compact (8 bytes a record, as
    /// [`Session::read_hashes`](crate::Session::read_hashes) reads), in input order
    /// (records without one, which simhash-cpp's input never has, left out); empty
    /// otherwise.
    pub fn take_hashes(&mut self) -> Vec<Fingerprint> {
        self.compact.take().unwrap_or_default()
    }

    /// The document's id: as read, or its line number when records have none.
    pub fn id(&self, doc: usize) -> Cow<'_, str> {
        if self.generated {
            let line = self.lines[doc] - 1;
            Cow::Owned(match &self.id_tag {
                None => line.to_string(),
                Some(tag) => format!("{tag}:{line}"),
            })
        } else {
            Cow::Borrowed(self.ids.get(doc))
        }
    }

    /// Whether each document's id is its 0-based line number (the records had none), so
    /// that ids sort as documents do.
    pub fn ids_are_line_numbers(&self) -> bool {
        self.generated
    }

    /// The id as it appeared: a JSON number (or a line number), or a string.
    pub fn id_value(&self, doc: usize) -> simhash_io::IdValue<'_> {
        simhash_io::IdValue {
            text: self.id(doc),
            number: self.numeric[doc] && self.id_tag.is_none(),
        }
    }

    /// For a run whose records have no ids and that adds to or matches against a persistent
    /// index: each id becomes `TAG:LINE`, where `TAG` (16 hex digits) is a hash of the
    /// inputs' names (`inputs`: their absolute paths, symlinks resolved) and of every
    /// record's line in order. Ids then stay unique across the inputs added to one index
    /// (line numbers alone restart at 0 in every run), and the same files read again have
    /// the same ids, so that a rerun finds its records already indexed; the same lines in
    /// another file are another input. Needs the line hashes (a corpus read for two passes,
    /// or by [`Session::read_for_index`](crate::Session::read_for_index)); returns the tag,
    /// or none when the records have ids (or there are none).
    pub fn tag_line_ids(&mut self, inputs: &[&Path]) -> Option<&str> {
        if !self.generated || self.line_hashes.len() != self.fps.len() || self.fps.is_empty() {
            return None;
        }
        let mut bytes = Vec::with_capacity(16 * self.line_hashes.len());
        for input in inputs {
            let path = std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf());
            bytes.extend_from_slice(path.as_os_str().as_encoded_bytes());
            bytes.push(0);
        }
        for (hash, line) in self.line_hashes.iter().zip(&self.lines) {
            bytes.extend_from_slice(&hash.to_le_bytes());
            bytes.extend_from_slice(&line.to_le_bytes());
        }
        let tag = format!("{:016x}", simhash_io::line_hash(&bytes));
        Some(self.id_tag.insert(tag))
    }

    /// The document's fingerprint, None when featureless.
    pub fn fingerprint(&self, doc: usize) -> Option<Fingerprint> {
        self.fps[doc]
    }

    /// Every document's fingerprint, None when featureless.
    pub fn fingerprints(&self) -> &[Option<Fingerprint>] {
        &self.fps
    }

    /// The document's line number in the concatenation of the input files (1-based).
    pub fn line(&self, doc: usize) -> u64 {
        self.lines[doc]
    }

    /// The lines of each input file (header and blank lines included), as first read.
    pub fn shard_lines(&self) -> &[u64] {
        &self.shard_lines
    }

    /// The hash of the document's line as read ([`simhash_io::line_hash`]), if kept.
    pub fn line_hash(&self, doc: usize) -> Option<u64> {
        self.line_hashes.get(doc).copied()
    }

    /// Where the document's line starts in its input file (decompressed), if kept (with the
    /// line hashes; not for Parquet rows).
    pub fn offset(&self, doc: usize) -> Option<u64> {
        self.offsets.get(doc).copied()
    }

    /// Every document's length in bytes of text.
    pub fn lens(&self) -> &[u64] {
        &self.lens
    }

    /// Documents whose text has no features: no fingerprint, or no MinHash sketch when the
    /// run sketches.
    pub fn featureless(&self) -> usize {
        self.no_features
    }

    /// Adds records without ids (each one's id is its line number), no sketches and no
    /// line hashes, at once: the lines `lines` (plus `offset`) hold the hashes `fps`.
    fn extend_line_numbered(&mut self, lines: &[u64], fps: &[Option<Fingerprint>], offset: u64) {
        if let Some(hashes) = &mut self.compact {
            let before = hashes.len();
            hashes.extend(fps.iter().flatten());
            self.no_features += fps.len() - (hashes.len() - before);
            return;
        }
        if self.fps.is_empty() {
            self.generated = true;
        }
        debug_assert!(self.generated && !self.keep_line_hashes && self.sketches.is_none());
        self.no_features += fps.iter().filter(|fp| fp.is_none()).count();
        self.fps.extend_from_slice(fps);
        self.lines.extend(lines.iter().map(|&l| l + offset));
        let n = self.fps.len();
        self.numeric.resize(n, true);
        self.lens.resize(n, 0);
    }

    /// Adds a document; its sketch's set is in the sketch or, when `place` is given, where
    /// a worker wrote it.
    fn push(
        &mut self,
        id: &str,
        meta: Meta,
        sketch: Option<&DocSketch>,
        place: Option<SetPlace>,
    ) -> Result<()> {
        let Meta { numeric, generated, fp, line, len, line_hash, offset } = meta;
        if let Some(hashes) = &mut self.compact {
            match fp {
                Some(fp) => hashes.push(fp),
                None => self.no_features += 1,
            }
            return Ok(());
        }
        if self.keep_line_hashes {
            self.line_hashes.push(line_hash);
            self.offsets.push(offset);
        }
        if let Some(sketches) = &mut self.sketches {
            match (sketch, place) {
                (Some(sketch), Some(place)) => sketches.push_placed(sketch, place)?,
                _ => sketches.push(sketch)?,
            }
            self.no_features += usize::from(sketch.is_none());
        } else {
            self.no_features += usize::from(fp.is_none());
        }
        // The first record decides (a corpus never mixes the two kinds of ids).
        if self.fps.is_empty() {
            self.generated = generated;
        }
        if !generated {
            self.ids.push(id);
        }
        debug_assert_eq!(generated, self.generated);
        self.numeric.push(numeric);
        self.fps.push(fp);
        self.lines.push(line);
        self.lens.push(len);
        Ok(())
    }
}
