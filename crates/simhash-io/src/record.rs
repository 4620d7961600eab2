//! Turning one input line into a record: its id and text (JSONL), id and hash (hash TSV),
//! or hash (simhash-cpp's decimal hashes).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use simhash_core::Fingerprint;

use crate::problem::{Problem, Reason};

/// A record's id as it appeared, or `None` when the record has none (it then gets its
/// 0-based line number).
pub type Id<'a> = Option<IdValue<'a>>;

/// An id as it appeared: a JSON string (unescaped), or the text of a JSON number exactly as
/// written (`1.50` stays `1.50`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdValue<'a> {
    /// The id's text.
    pub text: Cow<'a, str>,
    /// A JSON number (written back as a number).
    pub number: bool,
}

/// What the fields of a JSONL record are called.
#[derive(Clone, Debug)]
pub struct Columns {
    pub(crate) text: Vec<String>,
    pub(crate) text_name: String,
    pub(crate) id: Vec<String>,
    pub(crate) id_name: String,
}

impl Columns {
    /// The text's field, as given (`meta.body`).
    pub fn text_name(&self) -> &str {
        &self.text_name
    }

    /// The id's field, as given.
    pub fn id_name(&self) -> &str {
        &self.id_name
    }

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
///
/// A key on the text or id path that appears twice in its object makes the record bad
/// ([`Reason::DuplicateKey`]): JSON readers disagree on which value counts, so none is
/// taken. Other keys, which the record is not read by, may repeat.
///
/// ```
/// use simhash_io::{Columns, Reason, parse_json};
///
/// let columns = Columns::new("meta.body", "id");
/// let (id, text) = parse_json(br#"{"id":7,"meta":{"body":"hello"}}"#, &columns)?;
/// assert_eq!((id.unwrap().text.as_ref(), text.as_ref()), ("7", "hello"));
/// let problem = parse_json(br#"{"id":7}"#, &columns).unwrap_err();
/// assert_eq!(problem.reason, Reason::MissingText);
/// assert_eq!(problem.message, r#"missing text field "meta.body""#);
/// let twice = parse_json(br#"{"id":7,"meta":{"body":"a","body":"b"}}"#, &columns).unwrap_err();
/// assert_eq!((twice.reason, twice.message.as_str()), (Reason::DuplicateKey, r#"duplicate key "meta.body""#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
        .map_err(|e| Problem::new(Reason::InvalidJson, invalid_json_in(line, &e)))?;
    if let Some(repeat) = found.duplicate {
        return Err(repeat.problem(columns));
    }

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
        Some(raw) => json_id(raw, &columns.id_name)?,
    };
    Ok((id, text))
}

/// The id a JSON value holds (`field` names it in messages): a string (unescaped) or a
/// number (as written), checked with [`check_id`]; `None` for `null`.
///
/// ```
/// use serde_json::value::RawValue;
/// use simhash_io::json_id;
///
/// let raw: &RawValue = serde_json::from_str("1.50")?;
/// assert_eq!(json_id(raw, "id")?.unwrap().text, "1.50");
/// let raw: &RawValue = serde_json::from_str("true")?;
/// assert_eq!(
///     json_id(raw, "id").unwrap_err().message,
///     r#"id field "id" is a boolean, not a string or number"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn json_id<'a>(raw: &'a RawValue, field: &str) -> Result<Id<'a>, Problem> {
    let s = raw.get();
    let id = if s == "null" {
        return Ok(None);
    } else if s.starts_with('"') {
        let text = string_value(raw)
            .map_err(|e| Problem::new(Reason::BadId, format!("id field {field:?}: {e}")))?;
        IdValue { text, number: false }
    } else if s.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        IdValue { text: Cow::Borrowed(s), number: true }
    } else {
        return Err(Problem::new(
            Reason::BadId,
            format!("id field {field:?} is {}, not a string or number", kind(s)),
        ));
    };
    check_id(&id.text)?;
    Ok(Some(id))
}

/// Reads a line `id<TAB>hash` of the hash TSV format (the hash in decimal or `0x` hex). An
/// empty hash is a featureless record.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_io::parse_hash;
///
/// let (id, fp) = parse_hash(b"doc-1\t0xff")?;
/// assert_eq!((id.unwrap().text.as_ref(), fp), ("doc-1", Some(Fingerprint(255))));
/// assert_eq!(parse_hash(b"doc-2\t")?.1, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    if let Some(v) = crate::parse_u64_fast(hash.as_bytes()) {
        return Ok((id, Some(Fingerprint(v))));
    }
    let fp = Fingerprint::from_decimal(hash)
        .map_err(|e| Problem::new(Reason::BadHash, format!("bad hash: {e}")))?;
    Ok((id, Some(fp)))
}

/// Reads a line of simhash-cpp's input: one decimal (or `0x` hex) hash, spaces around
/// allowed. A line of spaces alone is a blank line ([`Reason::BlankLine`]), not a record.
pub fn parse_cpp_hash(line: &[u8]) -> Result<Fingerprint, Problem> {
    // A line of digits alone, the common case, reads the same through the fast reader.
    if let Some(v) = crate::parse_u64_fast(line) {
        return Ok(Fingerprint(v));
    }
    let line = utf8(line)?;
    if line.trim().is_empty() {
        return Err(Problem::new(Reason::BlankLine, "blank line"));
    }
    Fingerprint::from_decimal(line.trim())
        .map_err(|e| Problem::new(Reason::BadHash, format!("bad hash: {e}")))
}

/// The line as text, without a byte-order mark (which editors put on the first line).
pub(crate) fn utf8(line: &[u8]) -> Result<&str, Problem> {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    std::str::from_utf8(line).map_err(|e| {
        Problem::new(Reason::InvalidUtf8, format!("invalid UTF-8 at byte {}", e.valid_up_to() + 1))
    })
}

/// [`invalid_json`], saying what is wrong in the user's terms where serde_json's words
/// are its parser's: a `\uD800`-`\uDFFF` escape not in a high-low pair is half of a
/// character (serde_json: "unexpected end of hex escape", "lone leading surrogate").
fn invalid_json_in(line: &str, e: &serde_json::Error) -> String {
    let message = e.to_string();
    if (message.contains("hex escape") || message.contains("surrogate"))
        && let Some(escape) = lone_surrogate(line)
    {
        return format!(
            "invalid JSON at column {}: the escape {escape} is half of a UTF-16 surrogate pair \
             with no other half, not a character (text must be valid Unicode: write the \
             character itself, or both halves \\uD83D\\uDE00)",
            e.column()
        );
    }
    invalid_json(e)
}

/// The first `\uXXXX` escape of `line` that is a surrogate not in a high-low pair.
fn lone_surrogate(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let escape_at = |i: usize| -> Option<u16> {
        let hex = bytes.get(i..i + 6)?;
        if &hex[..2] != b"\\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if let Some(unit) = escape_at(i) {
                if (0xD800..0xDC00).contains(&unit) {
                    if escape_at(i + 6).is_some_and(|low| (0xDC00..0xE000).contains(&low)) {
                        i += 12;
                        continue;
                    }
                    return Some(line[i..i + 6].to_string());
                }
                if (0xDC00..0xE000).contains(&unit) {
                    return Some(line[i..i + 6].to_string());
                }
                i += 6;
                continue;
            }
            // Any other escape: skip the backslash and the escaped character.
            i += 2;
            continue;
        }
        i += 1;
    }
    None
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

/// The rule for every id: ids are printed in TSV, so they may not be empty, hold TABs or
/// line breaks, nor start with a byte-order mark (U+FEFF), which the TSV reader drops from
/// the start of a line.
///
/// ```
/// assert!(simhash_io::check_id("doc 1").is_ok());
/// assert_eq!(simhash_io::check_id("").unwrap_err().message, "empty id");
/// ```
pub fn check_id(id: &str) -> Result<(), Problem> {
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
    de.deserialize_str(Str).map_err(|e| invalid_json_in(raw.get(), &e))
}

#[derive(Default)]
struct Found<'a> {
    text: Option<Text<'a>>,
    id: Option<&'a RawValue>,
    /// The first key on a path seen twice in its object.
    duplicate: Option<Repeat>,
}

/// A key on the text path (or else the id path) seen twice in its object: the key is the
/// path's step with `rest` steps after it.
#[derive(Clone, Copy)]
struct Repeat {
    text: bool,
    rest: usize,
}

impl Repeat {
    fn problem(self, columns: &Columns) -> Problem {
        let path = if self.text { &columns.text } else { &columns.id };
        let key = path[..path.len() - self.rest].join(".");
        Problem::new(Reason::DuplicateKey, format!("duplicate key {key:?}"))
    }
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
        // Whether the key of each path's next step was seen in this object.
        let (mut text_seen, mut id_seen) = (false, false);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let (text_rest, id_rest) = (step(self.text, &key), step(self.id, &key));
            let repeat = match (text_rest, id_rest) {
                (Some(rest), _) if text_seen => Some(Repeat { text: true, rest: rest.len() }),
                (_, Some(rest)) if id_seen => Some(Repeat { text: false, rest: rest.len() }),
                _ => None,
            };
            if let Some(repeat) = repeat {
                // The first repeat is the one reported (unless the line is not JSON: the
                // walk goes on to its end, to say so).
                self.found.duplicate.get_or_insert(repeat);
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            text_seen |= text_rest.is_some();
            id_seen |= id_rest.is_some();
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

/// The top-level keys of a JSON object, looked up in `names`.
struct Keys<'a, 'n> {
    names: &'a [&'n str],
    found: Option<&'n str>,
}
impl<'de> Visitor<'de> for &mut Keys<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            map.next_value::<IgnoredAny>()?;
            if self.found.is_none() {
                self.found = self.names.iter().find(|n| **n == key).copied();
            }
        }
        Ok(())
    }
}

/// The first of `names` that is a top-level field of the JSON object `line` (keys compared
/// unescaped), if any: an annotation must not add a field the record has. A line that is
/// not a JSON object has none.
///
/// ```
/// use simhash_io::json_fields;
///
/// let names = ["duplicate_of", "similarity"];
/// assert_eq!(json_fields(br#"{"text":"duplicate_of","similarity":1}"#, &names), Some("similarity"));
/// assert_eq!(json_fields(br#"{"meta":{"duplicate_of":1}}"#, &names), None);
/// assert_eq!(json_fields(br#"{"duplicate\u005fof":1}"#, &names), Some("duplicate_of"));
/// ```
pub fn json_fields<'n>(line: &[u8], names: &[&'n str]) -> Option<&'n str> {
    // Most lines name none of them and have no \u escape that could spell one: no parse.
    let finder = |needle: &[u8]| memchr::memmem::find(line, needle).is_some();
    if !finder(b"\\u") && !names.iter().any(|n| finder(n.as_bytes())) {
        return None;
    }
    let mut keys = Keys { names, found: None };
    let mut de = serde_json::Deserializer::from_slice(line);
    de.deserialize_map(&mut keys).ok()?;
    keys.found
}

/// The header line `id<TAB>hash` of the hash TSV format (any second column named `hash`).
pub fn is_hash_header(line: &[u8]) -> bool {
    line.split(|&b| b == b'\t').nth(1).is_some_and(|c| c.trim_ascii() == b"hash")
}

/// The hash of a record's line that a second pass checks each line against (XXH3, 64 bits:
/// a change goes unnoticed with probability 2^-64 a line).
pub fn line_hash(line: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(line)
}

/// How the lines of an input are read into records.
///
/// ```
/// use simhash_io::{Body, Columns, Parser};
///
/// let parser = Parser::Json(Columns::new("text", "id"));
/// let record = parser.parse(br#"{"id":"a","text":"hello"}"#)?;
/// assert_eq!(record.id.unwrap().text, "a");
/// assert!(matches!(record.body, Body::Text(t) if t == "hello"));
/// assert!(Parser::Hash.skips_header(1, b"id\thash"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub enum Parser {
    /// JSONL records: the text and id at these paths.
    Json(Columns),
    /// Hash TSV `id<TAB>hash`, with a header line.
    Hash,
    /// simhash-cpp's input: one hash per line, no ids.
    CppHash,
}

/// What a line holds besides its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// The text of a JSONL record, borrowed from the line unless it has escapes.
    Text(Cow<'a, str>),
    /// A hash read as it is (`None`: the empty hash of a featureless record).
    Hash(Option<Fingerprint>),
}

/// One record as read from a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// The id (`None`: the record has none).
    pub id: Id<'a>,
    /// The text or hash.
    pub body: Body<'a>,
}

impl Parser {
    /// Reads one line (without its terminator) into a record, or says why it is skipped.
    pub fn parse<'a>(&self, line: &'a [u8]) -> Result<Record<'a>, Problem> {
        Ok(match self {
            Parser::Json(columns) => {
                let (id, text) = parse_json(line, columns)?;
                Record { id, body: Body::Text(text) }
            }
            Parser::Hash => {
                let (id, fp) = parse_hash(line)?;
                Record { id, body: Body::Hash(fp) }
            }
            Parser::CppHash => Record { id: None, body: Body::Hash(Some(parse_cpp_hash(line)?)) },
        })
    }

    /// Whether line `number` (1-based) of an input is a header to skip, not a record: the
    /// first line of a hash TSV input, when it is `id<TAB>hash`.
    pub fn skips_header(&self, number: u64, line: &[u8]) -> bool {
        matches!(self, Parser::Hash) && number == 1 && is_hash_header(line)
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

    /// A surrogate escape without its other half is named as what it is, not in serde_json's
    /// parser words; a pair, an escaped backslash before `u`, and other bad escapes keep
    /// their messages.
    #[test]
    fn lone_surrogates_are_named() {
        for (line, escape) in [
            (r#"{"text":"bad \ud800 x"}"#, r"\ud800"),
            (r#"{"text":"low \udc00 first"}"#, r"\udc00"),
            (r#"{"text":"cut \ud83d"}"#, r"\ud83d"),
            (r#"{"text":"ok \u00e9 \ud83d\ude00 then \uD801 x"}"#, r"\uD801"),
            (r#"{"id":"\udfff","text":"in the id"}"#, r"\udfff"),
        ] {
            let err = json(line).unwrap_err();
            assert!(err.contains("invalid JSON at column"), "{err}");
            assert!(err.contains(&format!("the escape {escape} is half of a UTF-16")), "{err}");
        }
        assert_eq!(json(r#"{"text":"pair \ud83d\ude00"}"#).unwrap().1, "pair \u{1f600}");
        assert_eq!(json(r#"{"text":"not one \\ud800"}"#).unwrap().1, r"not one \ud800");
        let err = json(r#"{"text":"short \u12"}"#).unwrap_err();
        assert!(err.contains("invalid escape") || err.contains("hex escape"), "{err}");
        assert!(!err.contains("surrogate pair"), "{err}");
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

    /// A key the record is read by, twice in its object: JSON readers disagree on which
    /// value counts (serde_json's `Value` takes the last, others the first), so the record
    /// is bad, whatever the values. Keys off the paths may repeat.
    #[test]
    fn repeated_keys_on_the_paths_are_bad_records() {
        let cases = [
            (r#"{"text":5,"text":"x"}"#, "text", "id", "text"),
            (r#"{"text":"x","text":"y"}"#, "text", "id", "text"),
            (r#"{"text":"x","te\u0078t":"y"}"#, "text", "id", "text"),
            (r#"{"id":1,"text":"x","id":2}"#, "text", "id", "id"),
            (r#"{"id":[1],"id":2,"text":"x"}"#, "text", "id", "id"),
            (r#"{"meta":{"id":1,"id":2},"text":"x"}"#, "text", "meta.id", "meta.id"),
            (r#"{"meta":{"id":1},"meta":{"id":2},"text":"x"}"#, "text", "meta.id", "meta"),
            (r#"{"meta":5,"meta":{"id":2},"text":"x"}"#, "text", "meta.id", "meta"),
            (r#"{"b":{"t":"x","t":"y"}}"#, "b.t", "id", "b.t"),
            // The text's object is read for the id below it too.
            (r#"{"doc":{"id":1,"id":2}}"#, "doc", "doc.id", "doc.id"),
            (r#"{"doc":{"text":"x","id":1,"id":2}}"#, "doc.text", "doc.id", "doc.id"),
            // A repeat comes before what is wrong with the values.
            (r#"{"text":"x","text":"y","id":[]}"#, "text", "id", "text"),
            (r#"{"text":"x","id":1,"id":{},"text":7}"#, "text", "id", "id"),
        ];
        for (line, text, id, key) in cases {
            let problem = parse_json(line.as_bytes(), &Columns::new(text, id)).unwrap_err();
            assert_eq!(problem.reason, Reason::DuplicateKey, "{line}: {}", problem.message);
            assert_eq!(problem.message, format!("duplicate key {key:?}"), "{line}");
        }
        let fine = [
            (r#"{"x":1,"x":2,"text":"t"}"#, "text", "id"),
            (r#"{"meta":{"lang":"en","lang":"fr"},"text":"t","id":1}"#, "text", "id"),
            (r#"{"meta":{"id":1,"x":0,"x":1},"text":"t"}"#, "text", "meta.id"),
            (r#"{"other":{"text":1,"text":2},"text":"t"}"#, "text", "id"),
            (r#"{"meta":{"text":1,"text":2},"text":"t"}"#, "text", "meta.id"),
        ];
        for (line, text, id) in fine {
            assert!(json_with(line, text, id).is_ok(), "{line}: {:?}", json_with(line, text, id));
        }
        // A line that is not JSON says so, repeats or not.
        let broken = json(r#"{"text":"x","text":"y","id":}"#).unwrap_err();
        assert!(broken.starts_with("invalid_json"), "{broken}");
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

    /// The readers before the fast path: what `parse_cpp_hash` and `parse_hash` must still
    /// answer, messages included.
    fn cpp_slow(line: &[u8]) -> Result<Fingerprint, Problem> {
        let line = utf8(line)?;
        if line.trim().is_empty() {
            return Err(Problem::new(Reason::BlankLine, "blank line"));
        }
        Fingerprint::from_decimal(line.trim())
            .map_err(|e| Problem::new(Reason::BadHash, format!("bad hash: {e}")))
    }

    #[test]
    fn hash_readers_match_the_slow_path() {
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for v in [0, 1, 255, u64::MAX - 1, u64::MAX, 10_000_000_000_000_000_000] {
            for s in [v.to_string(), format!("0x{v:x}"), format!("0X{v:X}")] {
                for wrap in ["{}", " {}", "{} ", "\t{}", "{}\r", "\u{feff}{}", "+{}", "-{}", "0{}"]
                {
                    lines.push(wrap.replace("{}", &s).into_bytes());
                }
            }
        }
        for extra in ["", " ", "18446744073709551616", "0x", "0x10000000000000000", "1 2", "ff"] {
            lines.push(extra.as_bytes().to_vec());
        }
        lines.push(b"12\xff".to_vec());
        for line in &lines {
            let shown = String::from_utf8_lossy(line);
            assert_eq!(parse_cpp_hash(line), cpp_slow(line), "{shown:?}");
            let mut tsv = b"id\t".to_vec();
            tsv.extend_from_slice(line);
            let slow = std::str::from_utf8(line)
                .map(|h| Fingerprint::from_decimal(h).map_err(|e| format!("bad hash: {e}")));
            // A TAB in the hash makes a third column, a different error.
            if let (Ok(slow), false) = (slow, line.contains(&b'\t')) {
                let fast = parse_hash(&tsv).map(|(_, fp)| fp).map_err(|p| p.message);
                let slow = if line.is_empty() { Ok(None) } else { slow.map(Some) };
                assert_eq!(fast, slow, "{shown:?}");
            }
        }
    }
}
