//! What `--annotate` adds to each record: JSON members, or Parquet columns.

use std::io::Write;

use simhash_io::{ExtraColumn, ExtraKind, ExtraRows, ExtraValue, IdValue, Score};

use crate::decontaminate_marks::{Annotations, Cuts};
use crate::error::{Result, bail, ensure};

/// What `--annotate` adds to each record written.
#[allow(missing_debug_implementations)]
pub enum Notes<'a> {
    /// Nothing: the records are copied as they are.
    None,
    /// dedup: `duplicate_of` and `similarity`, for each document (`None`: kept).
    Dedup {
        /// Each removed document's kept record (its id) and score; `None`: kept.
        of: Vec<Option<(IdValue<'a>, Score)>>,
        /// Scores are Jaccard similarities (a float column), not distances.
        jaccard: bool,
    },
    /// cluster: `cluster`, for each document (`None`: in no cluster that is written).
    Cluster(Vec<Option<u64>>),
    /// decontaminate: `contamination`, each document's hits (null: none).
    Contamination(Annotations),
    /// decontaminate `--cut`: no field added; the contaminated documents' texts cut (JSONL
    /// only).
    Cut(Cuts),
}

impl Notes<'_> {
    /// The fields added.
    pub(super) fn names(&self) -> &'static [&'static str] {
        match self {
            Notes::None | Notes::Cut(_) => &[],
            Notes::Dedup { .. } => &["duplicate_of", "similarity"],
            Notes::Cluster(_) => &["cluster"],
            Notes::Contamination(_) => &["contamination"],
        }
    }

    /// Appends the fields of `doc` as JSON members, each after a comma.
    pub(super) fn json(&self, doc: usize, out: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            Notes::None | Notes::Cut(_) => {}
            Notes::Dedup { of, .. } => match &of[doc] {
                None => out.extend_from_slice(b",\"duplicate_of\":null,\"similarity\":null"),
                Some((id, score)) => {
                    out.extend_from_slice(b",\"duplicate_of\":");
                    simhash_io::write_json_id(out, id)?;
                    write!(out, ",\"similarity\":{score}")?;
                }
            },
            Notes::Cluster(numbers) => match numbers[doc] {
                None => out.extend_from_slice(b",\"cluster\":null"),
                Some(n) => write!(out, ",\"cluster\":{n}")?,
            },
            Notes::Contamination(hits) => {
                out.extend_from_slice(b",\"contamination\":");
                out.extend_from_slice(hits.get(doc).unwrap_or("null").as_bytes());
            }
        }
        Ok(())
    }

    /// The Parquet columns added.
    pub(super) fn columns(&self) -> Vec<ExtraColumn> {
        let column = |name: &str, kind| ExtraColumn { name: name.into(), kind };
        match self {
            Notes::None | Notes::Cut(_) => Vec::new(),
            Notes::Dedup { jaccard, .. } => vec![
                column("duplicate_of", ExtraKind::Text),
                column("similarity", if *jaccard { ExtraKind::Float } else { ExtraKind::Unsigned }),
            ],
            Notes::Cluster(_) => vec![column("cluster", ExtraKind::Unsigned)],
            // The hits as JSON text.
            Notes::Contamination(_) => vec![column("contamination", ExtraKind::Text)],
        }
    }

    /// Pushes the Parquet values of `doc`.
    pub(super) fn push(&self, doc: usize, row: &mut ExtraRows) {
        match self {
            Notes::None | Notes::Cut(_) => {}
            Notes::Dedup { of, .. } => match &of[doc] {
                None => {
                    row.push(ExtraValue::Null);
                    row.push(ExtraValue::Null);
                }
                Some((id, score)) => {
                    row.push(ExtraValue::Text(&id.text));
                    row.push(match *score {
                        Score::Distance(d) => ExtraValue::Unsigned(u64::from(d)),
                        // The value --removed prints (4 decimals).
                        Score::Jaccard(_) => ExtraValue::Float(f64::from(score.code()) / 10_000.0),
                    });
                }
            },
            Notes::Cluster(numbers) => {
                row.push(numbers[doc].map_or(ExtraValue::Null, ExtraValue::Unsigned));
            }
            Notes::Contamination(hits) => {
                row.push(hits.get(doc).map_or(ExtraValue::Null, ExtraValue::Text));
            }
        }
    }
}

/// Appends one record to `out`: the line `raw` as it is (with a newline if it has none),
/// or with the annotation fields of `doc` before its closing `}`. `number`: the line's
/// number in the file named `name`, for messages.
pub(super) fn record(
    notes: &Notes<'_>,
    name: &str,
    number: u64,
    doc: usize,
    raw: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    if matches!(notes, Notes::None) {
        out.extend_from_slice(raw);
    } else if let Notes::Cut(cuts) = notes {
        if let Err(why) = cuts.record(doc, raw, out) {
            bail!(Input, "{name}:{number}: cannot cut this record: {why}; nothing was written");
        }
    } else {
        let buf = simhash_io::line_content(raw);
        if let Some(field) = simhash_io::json_fields(buf, notes.names()) {
            bail!(
                Input,
                "{name}:{number}: the record already has a field {field:?}: --annotate would \
                 write it twice (rename the field first); nothing was written",
            );
        }
        // The record parsed as a JSON object: its last byte that is not white space is `}`.
        let end = buf.iter().rposition(|b| !b.is_ascii_whitespace()).unwrap_or(0);
        ensure!(
            buf.get(end) == Some(&b'}'),
            Input,
            "{name}:{number}: not a JSON object: cannot annotate it",
        );
        out.extend_from_slice(&buf[..end]);
        notes.json(doc, out)?;
        out.extend_from_slice(&raw[end..]);
    }
    if out.last() != Some(&b'\n') {
        out.push(b'\n');
    }
    Ok(())
}
