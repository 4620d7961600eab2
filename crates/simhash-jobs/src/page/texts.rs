//! The page's second look at the input: the texts of the sampled records (only those,
//! truncated) and, with `--report-group FIELD`, each record's value of the field (a dotted
//! JSON path, or a Parquet column), read in one sequential pass over the inputs after the
//! run's own passes (two over a Parquet file with a group: the text column, then the
//! group's). A record whose line
//! no longer hashes as it did in the first pass is not shown (the input changed).

use std::collections::{BTreeMap, HashMap};

use std::path::Path;

use simhash_io::{Body, Columns, LineReader, LineStatus, ParquetRows, Parser, Source};

use crate::corpus::Corpus;
use crate::error::Result;

/// Characters of a text shown; the rest is cut and the page says so.
pub(super) const TEXT_CHARS: usize = 1500;
/// Characters of an id, a file name or a `--report-group` value shown; the rest is cut
/// and the page says how long it was, so that neither the page nor the run's memory grows
/// with them.
pub(super) const LABEL_CHARS: usize = 200;
/// Distinct values of the `--report-group` field counted one by one; later new values
/// count as "(other)".
pub(super) const GROUPS_TRACKED: usize = 10_000;

/// A sampled record's text as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Text {
    /// At most [`TEXT_CHARS`] characters.
    pub text: String,
    /// Characters in the whole text.
    pub chars: usize,
}

/// What a record is counted under in the `--report-group` table: every record under
/// exactly one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Group {
    /// The field's string value.
    Value(String),
    /// A value longer than [`LABEL_CHARS`]: its first characters, its length in
    /// characters and a hash of the whole (so that distinct values stay apart).
    Long(String, usize, u64),
    /// No string value: the field is missing, null, or not a string.
    Missing,
    /// The record could not be read again (the input changed, or a read failed).
    Unread,
    /// Past [`GROUPS_TRACKED`] distinct values.
    Other,
}

impl Group {
    /// The group of a record whose value is `value`.
    fn of(value: &str) -> Group {
        match label_end(value) {
            None => Group::Value(value.to_string()),
            Some(end) => Group::Long(
                value[..end].to_string(),
                value.chars().count(),
                simhash_io::line_hash(value.as_bytes()),
            ),
        }
    }

    /// Its row's name on the page: a value as it is (quoted when it starts with `(`, so
    /// that it never reads as one of the rows that are not a value), a long value cut.
    pub(super) fn label(&self) -> String {
        match self {
            Group::Value(v) if v.starts_with('(') => {
                serde_json::to_string(v).unwrap_or_else(|_| v.clone())
            }
            Group::Value(v) => v.clone(),
            Group::Long(start, chars, hash) => {
                format!("{start}… ({chars} characters, #{:08x})", hash >> 32)
            }
            Group::Missing => NO_VALUE.to_string(),
            Group::Unread => UNREAD.to_string(),
            Group::Other => OTHER.to_string(),
        }
    }
}

/// What the pass found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// The texts of the wanted documents that could be read.
    pub texts: HashMap<u32, Text>,
    /// Per group of the group field: (documents, flagged documents).
    pub groups: BTreeMap<Group, (u64, u64)>,
    /// Why texts are missing, if they are.
    pub note: Option<String>,
    /// Documents whose record has the group field (a string value).
    pub grouped: u64,
    /// With a group field, the documents counted so far (a bit each), so that each is
    /// counted once and those no pass reached are counted as [`Group::Unread`].
    counted: Vec<u64>,
}

/// The row of records without a value of the group field (or whose value is not a
/// string).
pub(super) const NO_VALUE: &str = "(none)";
/// The row of records past [`GROUPS_TRACKED`] distinct values.
pub(super) const OTHER: &str = "(other)";
/// The row of records that could not be read again.
pub(super) const UNREAD: &str = "(not read again)";

/// `text` cut to [`LABEL_CHARS`] characters, saying how many it had.
pub(super) fn cut_label(text: &str) -> String {
    match label_end(text) {
        None => text.to_string(),
        Some(end) => format!("{}… ({} characters)", &text[..end], text.chars().count()),
    }
}

/// Where `text` is cut as a label (the byte after its first [`LABEL_CHARS`] characters);
/// `None` when it is not longer.
fn label_end(text: &str) -> Option<usize> {
    text.char_indices().nth(LABEL_CHARS).map(|(end, _)| end)
}

/// Reads the inputs again: the texts of `wanted` (sorted documents), and, with `group`,
/// each document's value of that dotted path counted with `flagged` (the documents the
/// run removed, or that are in a pair).
pub(super) fn read(
    sources: &[Source],
    corpus: &Corpus,
    parser: &Parser,
    max_record_bytes: u64,
    wanted: &[u32],
    group: Option<&str>,
    flagged: &dyn Fn(u32) -> bool,
) -> Found {
    let mut found = Found::default();
    let Parser::Json(_) = parser else {
        found.note = Some("the inputs are hashes: no texts to show".into());
        return found;
    };
    let group_columns = group.map(|g| Columns::new(g, "\u{1}no id"));
    let group = group_columns.clone().map(Parser::Json);
    if group.is_some() {
        found.counted = vec![0; corpus.len().div_ceil(64)];
    }
    let mut pass = Pass { corpus, parser, group: group.as_ref(), wanted, next_wanted: 0, doc: 0 };
    let mut line_base = 0u64;
    for (source, &lines) in sources.iter().zip(corpus.shard_lines()) {
        let result = match source.path().filter(|p| simhash_io::is_parquet(p)) {
            Some(path) => {
                pass.parquet(path, (line_base, lines), group_columns.as_ref(), flagged, &mut found)
            }
            None => pass.source(source, line_base, max_record_bytes, flagged, &mut found),
        };
        if let Err(e) = result {
            found.note.get_or_insert(format!("{}: not read again: {e:#}", source.name));
        }
        line_base += lines;
    }
    if group.is_some() {
        // Every record in exactly one row: those no pass counted (a read that failed, a
        // record that changed) under their own.
        let mut unread = 0u64;
        for doc in 0..corpus.len() {
            if found.counted[doc / 64] & (1 << (doc % 64)) == 0 {
                count_group(&mut found, doc as u32, Group::Unread, flagged(doc as u32));
                unread += 1;
            }
        }
        if unread > 0 {
            found.note.get_or_insert(format!(
                "{unread} records could not be read again for --report-group: counted as {UNREAD}"
            ));
        }
    }
    found
}

struct Pass<'a> {
    corpus: &'a Corpus,
    parser: &'a Parser,
    group: Option<&'a Parser>,
    wanted: &'a [u32],
    next_wanted: usize,
    /// The next document, in line order.
    doc: usize,
}

impl Pass<'_> {
    fn source(
        &mut self,
        source: &Source,
        line_base: u64,
        max: u64,
        flagged: &dyn Fn(u32) -> bool,
        found: &mut Found,
    ) -> Result<()> {
        let mut lines = LineReader::new(source.reopen()?, max);
        let mut buf = Vec::new();
        loop {
            while self.wanted.get(self.next_wanted).is_some_and(|&w| (w as usize) < self.doc) {
                self.next_wanted += 1;
            }
            let next = line_base + lines.line + 1;
            let is_doc = self.doc < self.corpus.len() && self.corpus.line(self.doc) == next;
            let needed = is_doc
                && (self.group.is_some()
                    || self.wanted.get(self.next_wanted).is_some_and(|&w| w as usize == self.doc));
            if !needed {
                if lines.skip_line()?.is_none() {
                    return Ok(());
                }
                self.doc += usize::from(is_doc);
                continue;
            }
            buf.clear();
            let Some(status) = lines.next_line(&mut buf, None)? else { return Ok(()) };
            let doc = self.doc as u32;
            self.doc += 1;
            if status == LineStatus::Ok {
                self.record(doc, &buf, flagged, found);
            }
        }
    }

    /// A Parquet file: the text column's rows for the wanted documents, then (with a
    /// group) the group column's for every document. A document's line is its row's
    /// number (1-based) after `line_base`; the file has `lines` rows.
    fn parquet(
        &mut self,
        path: &Path,
        (line_base, lines): (u64, u64),
        group: Option<&Columns>,
        flagged: &dyn Fn(u32) -> bool,
        found: &mut Found,
    ) -> Result<()> {
        let Parser::Json(columns) = self.parser else { return Ok(()) };
        let first = self.first_doc_after(line_base);
        let mut doc = first;
        let mut rows = ParquetRows::open(path, columns)?;
        while let Some(batch) = rows.next_batch()? {
            let start = line_base + rows.rows_read() - batch.len() as u64;
            for row in 0..batch.len() {
                if doc >= self.corpus.len() || self.corpus.line(doc) != start + row as u64 + 1 {
                    continue;
                }
                let d = doc as u32;
                doc += 1;
                while self.wanted.get(self.next_wanted).is_some_and(|&w| w < d) {
                    self.next_wanted += 1;
                }
                if self.wanted.get(self.next_wanted) == Some(&d)
                    && let Ok(text) = batch.text(row)
                {
                    found.texts.insert(d, truncate(text));
                }
            }
        }
        self.doc = doc;
        let Some(group) = group else { return Ok(()) };
        let mut doc = first;
        let mut rows = match ParquetRows::open(path, group) {
            Ok(rows) => Some(rows),
            Err(e) => {
                // No such column, or not one of strings: no record of the file has a
                // string value.
                found.note.get_or_insert(format!("--report-group: {e}"));
                while doc < self.corpus.len() && self.corpus.line(doc) <= line_base + lines {
                    count_group(found, doc as u32, Group::Missing, flagged(doc as u32));
                    doc += 1;
                }
                None
            }
        };
        while let Some(batch) = rows.as_mut().map(ParquetRows::next_batch).transpose()?.flatten() {
            let start =
                line_base + rows.as_ref().map_or(0, ParquetRows::rows_read) - batch.len() as u64;
            for row in 0..batch.len() {
                if doc >= self.corpus.len() || self.corpus.line(doc) != start + row as u64 + 1 {
                    continue;
                }
                let value = batch.text(row).ok();
                found.grouped += u64::from(value.is_some());
                let g = value.map_or(Group::Missing, Group::of);
                count_group(found, doc as u32, g, flagged(doc as u32));
                doc += 1;
            }
        }
        Ok(())
    }

    /// The first document whose line is after `line`.
    fn first_doc_after(&self, line: u64) -> usize {
        let (mut lo, mut hi) = (0, self.corpus.len());
        while lo < hi {
            let mid = usize::midpoint(lo, hi);
            if self.corpus.line(mid) <= line {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    fn record(&mut self, doc: u32, line: &[u8], flagged: &dyn Fn(u32) -> bool, found: &mut Found) {
        if let Some(group) = self.group {
            let g = match group.parse(line) {
                Ok(record) => match record.body {
                    Body::Text(t) => {
                        found.grouped += 1;
                        Group::of(&t)
                    }
                    Body::Hash(_) => Group::Missing,
                },
                Err(_) => Group::Missing,
            };
            count_group(found, doc, g, flagged(doc));
        }
        while self.wanted.get(self.next_wanted).is_some_and(|&w| w < doc) {
            self.next_wanted += 1;
        }
        if self.wanted.get(self.next_wanted) != Some(&doc) {
            return;
        }
        self.next_wanted += 1;
        let same =
            self.corpus.line_hash(doc as usize).is_none_or(|h| h == simhash_io::line_hash(line));
        if !same {
            found.note.get_or_insert("a record changed since the run read it: not shown".into());
            return;
        }
        if let Ok(record) = self.parser.parse(line)
            && let Body::Text(text) = record.body
        {
            found.texts.insert(doc, truncate(&text));
        }
    }
}

/// The groups of documents held in memory: document `d`'s value is `values[d]` (`None`:
/// no value), counted with `flagged` (whether the run removed it).
pub(super) fn count_held_groups(
    found: &mut Found,
    values: &[Option<String>],
    flagged: &dyn Fn(u32) -> bool,
) {
    for (doc, value) in values.iter().enumerate() {
        let group = match value {
            Some(value) => {
                found.grouped += 1;
                Group::of(value)
            }
            None => Group::Missing,
        };
        count_group(found, doc as u32, group, flagged(doc as u32));
    }
}

/// Counts document `doc` under its group (under [`Group::Other`] past [`GROUPS_TRACKED`]
/// values), once.
fn count_group(found: &mut Found, doc: u32, group: Group, flagged: bool) {
    let (word, bit) = (doc as usize / 64, 1u64 << (doc % 64));
    match found.counted.get_mut(word) {
        Some(w) if *w & bit != 0 => return,
        Some(w) => *w |= bit,
        None => {}
    }
    let tracked = found.groups.len() < GROUPS_TRACKED || found.groups.contains_key(&group);
    let entry = found.groups.entry(if tracked { group } else { Group::Other }).or_default();
    entry.0 += 1;
    entry.1 += u64::from(flagged);
}

/// The first [`TEXT_CHARS`] characters of `text`, and how many it has.
pub(super) fn truncate(text: &str) -> Text {
    let chars = text.chars().count();
    let end = text.char_indices().nth(TEXT_CHARS).map_or(text.len(), |(i, _)| i);
    Text { text: text[..end].to_string(), chars }
}
