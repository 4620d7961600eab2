//! What `decontaminate` adds to or cuts from the records it writes again: the
//! `contamination` field of `--annotate`, and the spans `--cut` takes out of each text.
//! Apart from [`crate::decontaminate`] so that the second pass (`rewrite`) can use them
//! without a module circle.

use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// `--annotate`: each contaminated document's `contamination` value (a JSON array of its
/// hits), by document number.
#[derive(Debug, Default)]
pub struct Annotations {
    /// Ascending by document.
    pub(crate) docs: Vec<(u32, String)>,
}

impl Annotations {
    /// The annotations of `docs`: (document, JSON array) ascending by document.
    pub fn new(docs: Vec<(u32, String)>) -> Annotations {
        debug_assert!(docs.windows(2).all(|w| w[0].0 < w[1].0));
        Annotations { docs }
    }

    /// The document's hits as a JSON array, or none when it has none.
    pub(crate) fn get(&self, doc: usize) -> Option<&str> {
        let at = self.docs.binary_search_by_key(&doc, |d| d.0 as usize).ok()?;
        Some(&self.docs[at].1)
    }
}

/// `--cut`: the spans (code points of the text) to cut out of each contaminated document,
/// widened by a window, and where the text is in a record.
#[derive(Debug)]
pub struct Cuts {
    /// The text column's path (`meta.body`: `["meta", "body"]`).
    path: Vec<String>,
    /// The record reader, for the text.
    columns: simhash_io::Columns,
    /// Characters cut on each side of a span.
    window: usize,
    /// Ascending by document: the spans to cut.
    docs: Vec<(u32, Vec<Range<usize>>)>,
}

impl Cuts {
    /// Cuts of `docs` (ascending by document), each span widened by `window` characters,
    /// from the text at `columns`' text path.
    pub fn new(
        columns: simhash_io::Columns,
        window: usize,
        docs: Vec<(u32, Vec<Range<usize>>)>,
    ) -> Cuts {
        debug_assert!(docs.windows(2).all(|w| w[0].0 < w[1].0));
        let path = columns.text_name().split('.').map(str::to_string).collect();
        Cuts { path, columns, window, docs }
    }

    /// Appends the record `raw` (a line as read) to `out`: as it is when its document has
    /// no span to cut, else its text without the spans (the JSON written compactly, every
    /// other value byte for byte), with its line end (LF, or CRLF as it had).
    pub(crate) fn record(&self, doc: usize, raw: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        let Ok(at) = self.docs.binary_search_by_key(&doc, |d| d.0 as usize) else {
            out.extend_from_slice(raw);
            if out.last() != Some(&b'\n') {
                out.push(b'\n');
            }
            return Ok(());
        };
        let line = simhash_io::line_content(raw);
        let (_, text) = simhash_io::parse_json(line, &self.columns).map_err(|p| p.message)?;
        let kept = cut_text(&text, &self.docs[at].1, self.window);
        let json = std::str::from_utf8(line).map_err(|e| e.to_string())?;
        replace_field(json, &self.path, &kept, out)?;
        // The record's own line end (CRLF stays CRLF), as the records not cut keep theirs.
        out.extend_from_slice(if raw.ends_with(b"\r\n") { b"\r\n" } else { b"\n" });
        Ok(())
    }
}

/// `text` without the characters of `spans` (code points, end exclusive), each widened by
/// `window` characters on both sides.
pub fn cut_text(text: &str, spans: &[Range<usize>], window: usize) -> String {
    let mut wide: Vec<Range<usize>> = spans
        .iter()
        .map(|s| s.start.saturating_sub(window)..s.end.saturating_add(window))
        .collect();
    wide.sort_unstable_by_key(|r| (r.start, r.end));
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(wide.len());
    for r in wide {
        match merged.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let mut kept = String::with_capacity(text.len());
    let mut cuts = merged.iter().peekable();
    for (i, c) in text.chars().enumerate() {
        while cuts.peek().is_some_and(|r| r.end <= i) {
            cuts.next();
        }
        if cuts.peek().is_none_or(|r| r.start > i) {
            kept.push(c);
        }
    }
    kept
}

/// A JSON object's members in order, each value as written.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        de.deserialize_map(Object)
    }
}

/// Appends the JSON object `json` with the string at `path` replaced by `value`: its
/// members in order, compactly, every other value as written.
fn replace_field(
    json: &str,
    path: &[String],
    value: &str,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let Members(members) = serde_json::from_str(json).map_err(|e| e.to_string())?;
    out.push(b'{');
    for (i, (key, raw)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, key).map_err(|e| e.to_string())?;
        out.push(b':');
        match path {
            [name] if name == key => {
                serde_json::to_writer(&mut *out, value).map_err(|e| e.to_string())?;
            }
            [name, rest @ ..] if name == key => replace_field(raw.get(), rest, value, out)?,
            _ => out.extend_from_slice(raw.get().as_bytes()),
        }
    }
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn cut_text_widens_merges_and_clamps() {
        let text = "héllo brave new world";
        assert_eq!(cut_text(text, &[6..12], 0), "héllo new world");
        assert_eq!(cut_text(text, &[6..12], 1), "hélloew world");
        // Overlapping once widened; clamped at both ends.
        assert_eq!(cut_text(text, &[0..2, 4..5, 19..21], 2), "rave new w");
        assert_eq!(cut_text(text, &[], 3), text);
        assert_eq!(cut_text(text, &[0..21], 0), "");
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn a_cut_record_keeps_its_other_members_as_written() {
        let columns = simhash_io::Columns::new("meta.body", "id");
        let cuts = Cuts::new(columns, 0, vec![(1, vec![2..5])]);
        let raw =
            br#"{"id": 7, "x": [1, 2], "meta": {"k": 1.50, "body": "a bcd e\u00e9"}, "z": null}"#;
        let mut out = Vec::new();
        cuts.record(0, raw, &mut out).unwrap();
        assert_eq!(out, [&raw[..], b"\n"].concat());
        out.clear();
        cuts.record(
            1,
            b"{\"id\":1,\"meta\":{\"k\":1.50,\"body\":\"a bcd e\\u00e9\"},\"z\":null}\r\n",
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"id\":1,\"meta\":{\"k\":1.50,\"body\":\"a  e\u{e9}\"},\"z\":null}\r\n"
        );
    }
}
