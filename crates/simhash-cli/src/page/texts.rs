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

/// Characters of a text shown; the rest is cut and the page says so.
pub const TEXT_CHARS: usize = 1500;
/// Distinct values of the `--report-group` field counted one by one; later new values
/// count as "(other)".
pub const GROUPS_TRACKED: usize = 10_000;

/// A sampled record's text as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// At most [`TEXT_CHARS`] characters.
    pub text: String,
    /// Characters in the whole text.
    pub chars: usize,
}

/// What the pass found.
#[derive(Debug, Default)]
pub struct Found {
    /// The texts of the wanted documents that could be read.
    pub texts: HashMap<u32, Text>,
    /// Per value of the group field: (documents, flagged documents).
    pub groups: BTreeMap<String, (u64, u64)>,
    /// Why texts are missing, if they are.
    pub note: Option<String>,
    /// Documents whose record has the group field (a string value).
    pub grouped: u64,
}

/// The group value of a record without the field (or whose value is not a string).
pub const NO_VALUE: &str = "(none)";
/// The group value of records past [`GROUPS_TRACKED`] distinct values.
pub const OTHER: &str = "(other)";

/// Reads the inputs again: the texts of `wanted` (sorted documents), and, with `group`,
/// each document's value of that dotted path counted with `flagged` (the documents the
/// run removed, or that are in a pair).
pub fn read(
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
    let mut pass = Pass { corpus, parser, group: group.as_ref(), wanted, next_wanted: 0, doc: 0 };
    let mut line_base = 0u64;
    for (source, &lines) in sources.iter().zip(corpus.shard_lines()) {
        let result = match source.path().filter(|p| simhash_io::is_parquet(p)) {
            Some(path) => {
                pass.parquet(path, line_base, group_columns.as_ref(), flagged, &mut found)
            }
            None => pass.source(source, line_base, max_record_bytes, flagged, &mut found),
        };
        if let Err(e) = result {
            found.note.get_or_insert(format!("{}: not read again: {e:#}", source.name));
        }
        line_base += lines;
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
    ) -> anyhow::Result<()> {
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
    /// number (1-based) after `line_base`.
    fn parquet(
        &mut self,
        path: &Path,
        line_base: u64,
        group: Option<&Columns>,
        flagged: &dyn Fn(u32) -> bool,
        found: &mut Found,
    ) -> anyhow::Result<()> {
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
                found.note.get_or_insert(format!("--report-group: {e}"));
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
                count_group(found, value.unwrap_or(NO_VALUE), flagged(doc as u32));
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
            let value = match group.parse(line) {
                Ok(record) => match record.body {
                    Body::Text(t) => {
                        found.grouped += 1;
                        t.into_owned()
                    }
                    Body::Hash(_) => NO_VALUE.to_string(),
                },
                Err(_) => NO_VALUE.to_string(),
            };
            count_group(found, &value, flagged(doc));
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

/// Counts a document under its group value (under [`OTHER`] past [`GROUPS_TRACKED`]
/// values).
fn count_group(found: &mut Found, value: &str, flagged: bool) {
    let tracked = found.groups.len() < GROUPS_TRACKED || found.groups.contains_key(value);
    let key = if tracked { value } else { OTHER };
    let entry = match found.groups.get_mut(key) {
        Some(entry) => entry,
        None => found.groups.entry(key.to_string()).or_default(),
    };
    entry.0 += 1;
    entry.1 += u64::from(flagged);
}

/// The first [`TEXT_CHARS`] characters of `text`, and how many it has.
pub fn truncate(text: &str) -> Text {
    let chars = text.chars().count();
    let end = text.char_indices().nth(TEXT_CHARS).map_or(text.len(), |(i, _)| i);
    Text { text: text[..end].to_string(), chars }
}
