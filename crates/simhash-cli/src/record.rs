//! Turning one input line into a record: its id and text (JSONL) or id and hash (TSV).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use simhash_core::Fingerprint;

/// Why a record was skipped: the key in the summary's `skipped` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    InvalidJson,
    InvalidUtf8,
    MissingText,
    TextNotString,
    BadId,
    BadHash,
    BadColumns,
    BlankLine,
    TooLong,
    DuplicateId,
    /// A record with an id in a corpus whose first record has none, or the reverse.
    MixedIds,
}

impl Reason {
    pub fn key(self) -> &'static str {
        match self {
            Reason::InvalidJson => "invalid_json",
            Reason::InvalidUtf8 => "invalid_utf8",
            Reason::MissingText => "missing_text",
            Reason::TextNotString => "text_not_string",
            Reason::BadId => "bad_id",
            Reason::BadHash => "bad_hash",
            Reason::BadColumns => "bad_columns",
            Reason::BlankLine => "blank_line",
            Reason::TooLong => "too_long",
            Reason::DuplicateId => "duplicate_id",
            Reason::MixedIds => "mixed_ids",
        }
    }
}

/// A bad record: why, and a message for `FILE:LINE: message`.
#[derive(Debug)]
pub struct Problem {
    pub reason: Reason,
    pub message: String,
}

impl Problem {
    fn new(reason: Reason, message: impl Into<String>) -> Problem {
        Problem { reason, message: message.into() }
    }

    pub fn too_long(bytes: u64, max: u64) -> Problem {
        Problem::new(
            Reason::TooLong,
            format!("record of {bytes} bytes is longer than --max-record-bytes {max}"),
        )
    }
}

/// A record's id as it appeared: a JSON string (unescaped) or the text of a JSON number.
/// `None` means the record has no id; it then gets its 0-based line number.
pub type Id<'a> = Option<IdValue<'a>>;

#[derive(Debug, PartialEq, Eq)]
pub struct IdValue<'a> {
    pub text: Cow<'a, str>,
    /// A JSON number (written back as a number).
    pub number: bool,
}

/// What the fields of a JSONL record are called.
#[derive(Clone, Debug)]
pub struct Columns {
    text: Vec<String>,
    text_name: String,
    id: Vec<String>,
    id_name: String,
}

impl Columns {
    /// Dotted paths: `meta.body` is the field `body` of the object in field `meta`.
    pub fn new(text: &str, id: &str) -> Columns {
        Columns {
            text: text.split('.').map(str::to_string).collect(),
            text_name: text.to_string(),
            id: id.split('.').map(str::to_string).collect(),
            id_name: id.to_string(),
        }
    }
}

/// Reads the id and text of a JSONL line.
pub fn parse_json<'a>(
    line: &'a [u8],
    columns: &Columns,
) -> Result<(Id<'a>, Cow<'a, str>), Problem> {
    let line = utf8(line)?;
    if line.trim().is_empty() {
        return Err(Problem::new(Reason::BlankLine, "blank line"));
    }
    let mut found = Found::default();
    let mut de = serde_json::Deserializer::from_str(line);
    Walk { text: Some(&columns.text), id: Some(&columns.id), found: &mut found }
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| Problem::new(Reason::InvalidJson, invalid_json(&e)))?;

    let text = match found.text {
        None => {
            return Err(Problem::new(
                Reason::MissingText,
                format!("missing text field {:?}", columns.text_name),
            ));
        }
        Some(Text::Str(text)) => text,
        Some(Text::Invalid(e)) => return Err(Problem::new(Reason::InvalidJson, e)),
        Some(Text::Other(kind)) => {
            return Err(Problem::new(
                Reason::TextNotString,
                format!("text field {:?} is {kind}, not a string", columns.text_name),
            ));
        }
    };
    let id = match found.id {
        None => None,
        Some(raw) if raw.get() == "null" => None,
        Some(raw) => {
            let s = raw.get();
            if s.starts_with('"') {
                let text = string_value(raw).map_err(|e| {
                    Problem::new(Reason::BadId, format!("id field {:?}: {e}", columns.id_name))
                })?;
                Some(IdValue { text, number: false })
            } else if s.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                Some(IdValue { text: Cow::Borrowed(s), number: true })
            } else {
                return Err(Problem::new(
                    Reason::BadId,
                    format!(
                        "id field {:?} is {}, not a string or number",
                        columns.id_name,
                        kind(s)
                    ),
                ));
            }
        }
    };
    if let Some(id) = &id {
        check_id(&id.text)?;
    }
    Ok((id, text))
}

/// Reads a line `id<TAB>hash` of the hash TSV format. An empty hash is a featureless record.
pub fn parse_hash(line: &[u8]) -> Result<(Id<'_>, Option<Fingerprint>), Problem> {
    let line = utf8(line)?;
    if line.is_empty() {
        return Err(Problem::new(Reason::BlankLine, "blank line"));
    }
    let mut cols = line.split('\t');
    let (Some(id), Some(hash), None) = (cols.next(), cols.next(), cols.next()) else {
        let n = line.split('\t').count();
        return Err(Problem::new(
            Reason::BadColumns,
            format!("expected 2 TAB-separated columns (id, hash), found {n}"),
        ));
    };
    check_id(id)?;
    let id = Some(IdValue { text: Cow::Borrowed(id), number: false });
    if hash.is_empty() {
        return Ok((id, None));
    }
    let fp = Fingerprint::from_decimal(hash)
        .map_err(|e| Problem::new(Reason::BadHash, format!("bad hash: {e}")))?;
    Ok((id, Some(fp)))
}

/// Reads a line of simhash-cpp's input: one decimal (or 0x hex) hash.
pub fn parse_seed_hash(line: &[u8]) -> Result<Fingerprint, Problem> {
    let line = utf8(line)?;
    Fingerprint::from_decimal(line.trim())
        .map_err(|e| Problem::new(Reason::BadHash, format!("bad hash: {e}")))
}

/// The line as text, without a byte-order mark (which editors put on the first line).
fn utf8(line: &[u8]) -> Result<&str, Problem> {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    std::str::from_utf8(line).map_err(|e| {
        Problem::new(Reason::InvalidUtf8, format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1))
    })
}

/// serde_json's message, with its position as a column (the line is always 1 here).
fn invalid_json(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = message.rfind(" at line ").map_or(message.as_str(), |at| &message[..at]);
    if e.column() > 0 {
        format!("invalid JSON at column {}: {message}", e.column())
    } else {
        format!("invalid JSON: {message}")
    }
}

/// Ids are printed in TSV, so they may not hold TABs or line breaks, nor start with a
/// byte-order mark (U+FEFF), which the TSV reader drops from the start of a line.
fn check_id(id: &str) -> Result<(), Problem> {
    if id.is_empty() {
        return Err(Problem::new(Reason::BadId, "empty id"));
    }
    if id.contains(['\t', '\n', '\r']) {
        return Err(Problem::new(Reason::BadId, format!("id {id:?} contains a TAB or line break")));
    }
    if id.starts_with('\u{feff}') {
        return Err(Problem::new(
            Reason::BadId,
            format!("id {id:?} starts with a byte-order mark (U+FEFF)"),
        ));
    }
    Ok(())
}

fn kind(raw: &str) -> &'static str {
    match raw.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        Some(b'"') => "a string",
        _ => "a number",
    }
}

/// The string a raw JSON string value holds, borrowed when it has no escapes; an error for
/// an escape that is not a character (a lone surrogate such as `\ud800`).
fn string_value(raw: &RawValue) -> Result<Cow<'_, str>, String> {
    struct Str;
    impl<'de> Visitor<'de> for Str {
        type Value = Cow<'de, str>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(Cow::Borrowed(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v.to_string()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(Cow::Owned(v))
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_str(Str).map_err(|e| invalid_json(&e))
}

#[derive(Default)]
struct Found<'a> {
    text: Option<Text<'a>>,
    id: Option<&'a RawValue>,
}

/// The value at the text path: a string (borrowed when it has no escapes), or what it was
/// instead.
enum Text<'a> {
    Str(Cow<'a, str>),
    Other(&'static str),
    Invalid(String),
}

impl<'a> Text<'a> {
    fn from_raw(raw: &'a RawValue) -> Text<'a> {
        if !raw.get().starts_with('"') {
            return Text::Other(kind(raw.get()));
        }
        string_value(raw).map_or_else(Text::Invalid, Text::Str)
    }
}

/// Reads the text value in one pass, whatever its type (a non-string is consumed and named).
struct TextSeed;

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = Text<'de>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Text<'de>, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TextSeed {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text::Str(Cow::Owned(v)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Text<'de>, E> {
        Ok(Text::Other("a boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Text<'de>, E> {
        Ok(Text::Other("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Text<'de>, E> {
        Ok(Text::Other("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Text<'de>, E> {
        Ok(Text::Other("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Text<'de>, E> {
        Ok(Text::Other("null"))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Text<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Text::Other("an array"))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Text<'de>, M::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text::Other("an object"))
    }
}

/// Walks one JSON object, keeping the raw values at the wanted paths and skipping the rest.
struct Walk<'p, 'f, 'a> {
    text: Option<&'p [String]>,
    id: Option<&'p [String]>,
    found: &'f mut Found<'a>,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for Walk<'_, '_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for Walk<'_, '_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let (text_rest, id_rest) = (step(self.text, &key), step(self.id, &key));
            match (text_rest, id_rest) {
                (None, None) => {
                    map.next_value::<IgnoredAny>()?;
                }
                // The common case: the text, read in one pass.
                (Some([]), None) => self.found.text = Some(map.next_value_seed(TextSeed)?),
                (Some([]), _) | (_, Some([])) => {
                    let raw: &'de RawValue = map.next_value()?;
                    if text_rest == Some(&[]) {
                        self.found.text = Some(Text::from_raw(raw));
                    }
                    if id_rest == Some(&[]) {
                        self.found.id = Some(raw);
                    }
                    // A path that goes on below a value held at the other's end: look inside.
                    let (t, i) =
                        (text_rest.filter(|r| !r.is_empty()), id_rest.filter(|r| !r.is_empty()));
                    if t.is_some() || i.is_some() {
                        let mut de = serde_json::Deserializer::from_str(raw.get());
                        let _ = Walk { text: t, id: i, found: self.found }.deserialize(&mut de);
                    }
                }
                (t, i) => {
                    // Only nested paths go through this key.
                    map.next_value_seed(Nested { text: t, id: i, found: self.found })?;
                }
            }
        }
        Ok(())
    }
}

/// An object key, borrowed from the line unless it has escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Cow<'de, str>, D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }
}

/// The rest of `path` after `key`, if the path goes through `key`.
fn step<'p>(path: Option<&'p [String]>, key: &str) -> Option<&'p [String]> {
    path.and_then(|p| p.split_first()).filter(|(first, _)| *first == key).map(|(_, rest)| rest)
}

/// The value under a key that a path goes through: an object is walked, anything else
/// skipped (the field is then missing).
struct Nested<'p, 'f, 'a> {
    text: Option<&'p [String]>,
    id: Option<&'p [String]>,
    found: &'f mut Found<'a>,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for Nested<'_, '_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        let raw: &'de RawValue = serde::Deserialize::deserialize(de)?;
        if raw.get().starts_with('{') {
            let mut inner = serde_json::Deserializer::from_str(raw.get());
            Walk { text: self.text, id: self.id, found: self.found }
                .deserialize(&mut inner)
                .map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(line: &str) -> Result<(Option<String>, String), String> {
        json_with(line, "text", "id")
    }

    fn json_with(line: &str, text: &str, id: &str) -> Result<(Option<String>, String), String> {
        parse_json(line.as_bytes(), &Columns::new(text, id))
            .map(|(id, text)| (id.map(|id| id.text.into_owned()), text.into_owned()))
            .map_err(|p| format!("{}: {}", p.reason.key(), p.message))
    }

    #[test]
    fn reads_text_and_id() {
        assert_eq!(json(r#"{"id":"a","text":"hi"}"#), Ok((Some("a".into()), "hi".into())));
        assert_eq!(json(r#"{"text":"hi","id":42}"#), Ok((Some("42".into()), "hi".into())));
        assert_eq!(json(r#"{"text":"hi","id":-1.5e3}"#), Ok((Some("-1.5e3".into()), "hi".into())));
        assert_eq!(json(r#"{"text":"a\nb \u00e9"}"#), Ok((None, "a\nb é".into())));
        assert_eq!(json(r#"{"text":"x","id":null}"#), Ok((None, "x".into())));
        assert_eq!(json(r#"{"other":{"text":1},"text":"x"}"#), Ok((None, "x".into())));
        assert_eq!(json("  {\"text\" : \"x\"}  "), Ok((None, "x".into())));
    }

    #[test]
    fn nested_paths() {
        let line = r#"{"meta":{"id":"m1","lang":"en"},"body":{"text":"deep"}}"#;
        assert_eq!(json_with(line, "body.text", "meta.id"), Ok((Some("m1".into()), "deep".into())));
        assert!(
            json_with(r#"{"body":"flat"}"#, "body.text", "id")
                .unwrap_err()
                .starts_with("missing_text")
        );
        let same_parent = r#"{"doc":{"id":7,"text":"t"}}"#;
        assert_eq!(
            json_with(same_parent, "doc.text", "doc.id"),
            Ok((Some("7".into()), "t".into()))
        );
    }

    #[test]
    fn bad_records_say_what_is_wrong() {
        let cases = [
            (r#"{"text":"x""#, "invalid_json"),
            (r#"{"text":"x"} trailing"#, "invalid_json"),
            ("[1,2]", "invalid_json"),
            (r#"{"id":"a"}"#, "missing_text"),
            (r#"{"text":42}"#, "text_not_string"),
            (r#"{"text":null}"#, "text_not_string"),
            (r#"{"text":"x","id":[1]}"#, "bad_id"),
            (r#"{"text":"x","id":"a\tb"}"#, "bad_id"),
            (r#"{"text":"x","id":""}"#, "bad_id"),
            ("", "blank_line"),
            ("  ", "blank_line"),
            (r#"{"text":"x","id":"\ud800"}"#, "bad_id"),
            (r#"{"doc":{"text":"\ud800","id":1}}"#, "missing_text"),
        ];
        for (line, want) in cases {
            let got = json(line).unwrap_err();
            assert!(got.starts_with(want), "{line:?}: {got}");
        }
        let invalid = parse_json(b"{\"text\":\"\xff\"}", &Columns::new("text", "id")).unwrap_err();
        assert_eq!(invalid.reason, Reason::InvalidUtf8);
        assert_eq!(invalid.message, "invalid UTF-8 at byte 10");
    }

    #[test]
    fn hash_lines() {
        assert_eq!(
            parse_hash(b"a\t255").unwrap(),
            (Some(IdValue { text: Cow::Borrowed("a"), number: false }), Some(Fingerprint(255)))
        );
        assert_eq!(parse_hash(b"a\t0xff").unwrap().1, Some(Fingerprint(255)));
        assert_eq!(parse_hash(b"a\t").unwrap().1, None);
        for (line, want) in [
            (&b"a"[..], Reason::BadColumns),
            (b"a\t1\t2", Reason::BadColumns),
            (b"a\tx", Reason::BadHash),
            (b"a\t18446744073709551616", Reason::BadHash),
            (b"\t1", Reason::BadId),
            (b"", Reason::BlankLine),
        ] {
            assert_eq!(parse_hash(line).unwrap_err().reason, want, "{line:?}");
        }
    }

    /// Found by the hash_tsv fuzz target: a line's leading byte-order mark is dropped, so an
    /// id starting with U+FEFF (after one) was read back from written TSV as another id.
    #[test]
    fn ids_may_not_start_with_a_byte_order_mark() {
        let bom = "\u{feff}";
        assert_eq!(parse_hash(format!("{bom}a\t1").as_bytes()).unwrap().0.unwrap().text, "a");
        let err = parse_hash(format!("{bom}{bom}a\t1").as_bytes()).unwrap_err();
        assert_eq!(err.reason, Reason::BadId);
        assert_eq!(err.message, "id \"\\u{feff}a\" starts with a byte-order mark (U+FEFF)");
        for line in
            [format!(r#"{{"id":"{bom}a","text":"x"}}"#), r#"{"id":"\ufeffa","text":"x"}"#.into()]
        {
            assert!(json(&line).unwrap_err().starts_with("bad_id"), "{line}");
        }
        // Elsewhere in an id it is an ordinary character.
        assert_eq!(
            json(r#"{"id":"a\ufeff","text":"x"}"#),
            Ok((Some(format!("a{bom}")), "x".into()))
        );
    }
}
