//! Entry points for the fuzz targets in `fuzz/` that fuzz this crate's parsing, and for the
//! regression run of their corpora (`tests/fuzz_corpus.rs`). Each takes arbitrary bytes as
//! an input file, runs them through the real line reader and parsers, and panics when a
//! parser panics or breaks an invariant checked here against an independent reading
//! (serde_json's own view of a JSON line, a hand-written hash parser). Not an API: no
//! stability promise.
#![allow(missing_docs, clippy::missing_panics_doc)]

use std::fmt::Debug;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use simhash_core::Fingerprint;

use crate::lines::{LineReader, LineStatus};
use crate::problem::{Problem, Reason};
use crate::record::{self, Columns, IdValue, is_hash_header};

/// The byte-order mark that editors put at the start of a file.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Text and id paths each JSON line is read with: flat, nested, sharing a parent, one path
/// below the other's end, and both the same.
const JSON_COLUMNS: [(&str, &str); 8] = [
    ("text", "id"),
    ("a.b", "id"),
    ("a.b", "a.c"),
    ("a", "a.b"),
    ("a.b", "a"),
    ("a.b.c", "a.b.d"),
    ("a.b", "c.d"),
    ("t", "t"),
];

/// The input as a JSONL file: each line is read with every path pair of `JSON_COLUMNS`
/// and must give what serde_json's own parse of the line says (when serde_json reads it as
/// an object without repeated keys): the text at the text path, a string id unescaped, a
/// number id exactly as written, and the same reason to skip. A record that parses writes
/// back (as `{"text":..,"id":..}`) to one that parses to the same id and text.
pub fn json_record(data: &[u8]) {
    for line in lines(data) {
        let view = serde_view(&line);
        for (text, id) in JSON_COLUMNS {
            check_json_line(&line, &view, text, id);
        }
    }
}

/// The input as a hash TSV file (`id<TAB>hash`, an optional `id<TAB>hash` header): each line
/// gives the id and hash a hand-written reading gives, or the same reason to skip, and a
/// parsed record written back (hash in decimal or `0x` hex) parses to the same record.
pub fn hash_tsv(data: &[u8]) {
    for (n, line) in lines(data).iter().enumerate() {
        if n == 0 && is_hash_header(line) {
            continue;
        }
        check_hash_line(line);
    }
}

/// The input as `simhash-find-all` input (one decimal or `0x` hex hash per line, spaces
/// around allowed): each line gives the hash a hand-written reading gives or is skipped as a
/// bad hash (a line of spaces alone as a blank line), and a parsed hash written back in
/// decimal parses to the same hash.
pub fn find_all_input(data: &[u8]) {
    for line in lines(data) {
        let got = record::parse_cpp_hash(&line);
        let want = std::str::from_utf8(line.strip_prefix(BOM).unwrap_or(&line))
            .map_err(|_| Reason::InvalidUtf8)
            .and_then(|s| match s.trim_matches(char::is_whitespace) {
                "" => Err(Reason::BlankLine),
                hash => expected_hash(hash).ok_or(Reason::BadHash),
            });
        match (&got, want) {
            (Ok(fp), Ok(want)) => {
                assert_eq!(fp.0, want, "{line:?}");
                let again = record::parse_cpp_hash(fp.0.to_string().as_bytes());
                assert_eq!(again.ok(), Some(*fp));
            }
            (Err(problem), Err(reason)) => assert_eq!(problem.reason, reason, "{line:?}"),
            _ => panic!("{line:?}: got {:?}, want {want:?}", got.as_ref().map_err(|p| p.reason)),
        }
    }
}

/// The lines of `data` as the commands split them, checked against a plain split: LF or
/// CRLF ends a line, the last line needs no end, and a line over the limit is measured.
pub fn lines(data: &[u8]) -> Vec<Vec<u8>> {
    let mut reader = LineReader::new(data, u64::MAX);
    let (mut out, mut raw) = (Vec::new(), Vec::new());
    let mut line = Vec::new();
    while let Some(status) = next_line(&mut reader, &mut line, Some(&mut raw)) {
        assert_eq!(status, LineStatus::Ok);
        out.push(std::mem::take(&mut line));
    }
    assert_eq!(raw, data, "lines with their ends are the input");
    let want: Vec<&[u8]> = data
        .split_inclusive(|&b| b == b'\n')
        .map(|line| match line.strip_suffix(b"\n") {
            Some(line) => line.strip_suffix(b"\r").unwrap_or(line),
            None => line,
        })
        .collect();
    assert_eq!(out, want);
    // With a small limit, longer lines are reported by length and the rest are unchanged.
    let max = 8;
    let mut short = LineReader::new(data, max);
    for want in &out {
        line.clear();
        let status = next_line(&mut short, &mut line, None);
        if want.len() as u64 > max {
            assert!(matches!(status, Some(LineStatus::TooLong(n)) if n >= want.len() as u64));
            assert!(line.is_empty());
        } else {
            assert_eq!(status, Some(LineStatus::Ok));
            assert_eq!(&line, want);
        }
    }
    assert_eq!(next_line(&mut short, &mut line, None), None);
    out
}

fn next_line(
    reader: &mut LineReader<&[u8]>,
    line: &mut Vec<u8>,
    raw: Option<&mut Vec<u8>>,
) -> Option<LineStatus> {
    match reader.next_line(line, raw) {
        Ok(status) => status,
        Err(e) => panic!("reading from memory failed: {e}"),
    }
}

/// What serde_json's view of a line says `parse_json` must give.
#[derive(Debug)]
enum Want {
    Skip(Reason),
    /// The text and id, for a line serde_json reads as an object without repeated keys on
    /// the paths.
    Record(String, Option<WantId>),
    /// Nothing to compare (serde_json refuses what our reader may skip over).
    Unknown,
}

#[derive(Debug)]
enum WantId {
    Str(String),
    /// The number's value: the id must be text that parses to it.
    Number(serde_json::Number),
}

fn check_json_line(line: &[u8], view: &View, text_path: &str, id_path: &str) {
    let columns = Columns::new(text_path, id_path);
    let got = record::parse_json(line, &columns);
    let want = expected_json(view, text_path, id_path);
    let context = || format!("{text_path:?}/{id_path:?} {:?}", String::from_utf8_lossy(line));
    match (&got, &want) {
        (Err(problem), Want::Skip(reason)) => {
            assert_eq!(problem.reason, *reason, "{}: {}", context(), problem.message);
        }
        (Ok((id, text)), Want::Record(want_text, want_id)) => {
            assert_eq!(text, want_text, "{}", context());
            match (id, want_id) {
                (None, None) => {}
                (Some(id), Some(WantId::Str(want))) => {
                    assert!(!id.number && id.text == *want, "{}: {id:?}", context());
                }
                (Some(id), Some(WantId::Number(want))) => {
                    assert!(id.number, "{}", context());
                    check_number_text(line, &id.text, want);
                }
                _ => panic!("{}: id {id:?}, want {want_id:?}", context()),
            }
        }
        (_, Want::Unknown) => {}
        _ => panic!("{}: got {}, want {want:?}", context(), describe(&got)),
    }
    if let Ok((id, text)) = &got {
        assert!(!matches!(want, Want::Skip(_)));
        round_trip_json(id.as_ref(), text);
    }
}

fn describe<T: Debug>(got: &Result<T, Problem>) -> String {
    match got {
        Ok(v) => format!("{v:?}"),
        Err(p) => format!("{:?} ({})", p.reason, p.message),
    }
}

/// A number id is the number's text as written: JSON number syntax, in the line, and with
/// serde_json's value for it.
fn check_number_text(line: &[u8], text: &str, want: &serde_json::Number) {
    let bytes = text.as_bytes();
    assert!(bytes.first().is_some_and(|&b| b == b'-' || b.is_ascii_digit()), "{text:?}");
    assert!(
        bytes.iter().all(|&b| b.is_ascii_digit() || b"+-.eE".contains(&b)),
        "number id {text:?} is not a number's text"
    );
    assert!(line.windows(bytes.len()).any(|w| w == bytes), "{text:?} is not in the line");
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => panic!("number id {text:?} does not parse: {e}"),
    };
    assert_eq!(value, Value::Number(want.clone()), "number id {text:?}");
}

/// serde_json's view of a line.
enum View {
    /// A line any reader must skip, for this reason.
    Skip(Reason),
    /// An object without repeated keys.
    Object(Value),
    /// An object with a repeated key somewhere, and its keys as written.
    Repeated(Value, Keys),
    /// Nothing to compare (serde_json refuses what our reader may skip over).
    Unknown,
}

fn serde_view(line: &[u8]) -> View {
    let body = line.strip_prefix(BOM).unwrap_or(line);
    let Ok(s) = std::str::from_utf8(body) else { return View::Skip(Reason::InvalidUtf8) };
    if s.trim().is_empty() {
        return View::Skip(Reason::BlankLine);
    }
    // What serde_json cannot even skip over is invalid whatever the paths.
    if serde_json::from_str::<de::IgnoredAny>(s).is_err() {
        return View::Skip(Reason::InvalidJson);
    }
    let Ok(value) = serde_json::from_str::<Value>(s) else { return View::Unknown };
    if !value.is_object() {
        return View::Skip(Reason::InvalidJson);
    }
    if serde_json::from_str::<NoRepeatedKeys>(s).is_err() {
        return match serde_json::from_str::<Keys>(s) {
            Ok(keys) => View::Repeated(value, keys),
            Err(_) => View::Unknown,
        };
    }
    View::Object(value)
}

/// Whether a key of `path` is repeated in its object: the reader refuses the record then.
fn repeats(keys: &Keys, path: &str) -> bool {
    let (step, rest) = path.split_once('.').map_or((path, None), |(s, r)| (s, Some(r)));
    let mut hits = keys.0.iter().filter(|(key, _)| key == step);
    match (hits.next(), hits.next(), rest) {
        (Some(_), Some(_), _) => true,
        (Some((_, Some(inner))), None, Some(rest)) => repeats(inner, rest),
        _ => false,
    }
}

/// An object's keys as written, in order and repeats included, each with the keys of its
/// value when that is an object.
#[derive(Debug)]
struct Keys(Vec<(String, Option<Keys>)>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(KeysVisitor)?.ok_or_else(|| de::Error::custom("not an object"))
    }
}

/// Any JSON value: `Some` keys for an object.
struct KeysVisitor;

impl<'de> Deserialize<'de> for MaybeKeys {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(KeysVisitor).map(MaybeKeys)
    }
}

struct MaybeKeys(Option<Keys>);

impl<'de> Visitor<'de> for KeysVisitor {
    type Value = Option<Keys>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<Keys>, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<Keys>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<Keys>, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<Keys>, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<Keys>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<Keys>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Keys>, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Option<Keys>, M::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let MaybeKeys(inner) = map.next_value()?;
            keys.push((key, inner));
        }
        Ok(Some(Keys(keys)))
    }
}

fn expected_json(view: &View, text_path: &str, id_path: &str) -> Want {
    let value = match view {
        View::Skip(reason) => return Want::Skip(*reason),
        View::Unknown => return Want::Unknown,
        View::Repeated(_, keys) if repeats(keys, text_path) || repeats(keys, id_path) => {
            return Want::Skip(Reason::DuplicateKey);
        }
        // With a repeated key, the keys on the paths are each there once: serde_json's
        // value (which keeps the last of a repeated key) has the reader's values there.
        View::Object(value) | View::Repeated(value, _) => value,
    };
    let text = match lookup(value, text_path) {
        None => return Want::Skip(Reason::MissingText),
        Some(Value::String(text)) => text.clone(),
        Some(_) => return Want::Skip(Reason::TextNotString),
    };
    let id = match lookup(value, id_path) {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => {
            if id.is_empty() || id.contains(['\t', '\n', '\r']) || id.starts_with('\u{feff}') {
                return Want::Skip(Reason::BadId);
            }
            Some(WantId::Str(id.clone()))
        }
        Some(Value::Number(n)) => Some(WantId::Number(n.clone())),
        Some(_) => return Want::Skip(Reason::BadId),
    };
    Want::Record(text, id)
}

/// The value at a dotted path: each step must be an object holding the key.
fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(value, |v, key| v.as_object()?.get(key))
}

/// A parsed record written back as JSON parses to the same id and text.
fn round_trip_json(id: Option<&IdValue<'_>>, text: &str) {
    let mut line = String::from("{\"text\":");
    line += &Value::String(text.to_owned()).to_string();
    if let Some(id) = id {
        line += ",\"id\":";
        if id.number {
            line += &id.text;
        } else {
            line += &Value::String(id.text.to_string()).to_string();
        }
    }
    line.push('}');
    match record::parse_json(line.as_bytes(), &Columns::new("text", "id")) {
        Ok((again_id, again_text)) => {
            assert_eq!(again_text, text, "{line}");
            assert_eq!(again_id.as_ref(), id, "{line}");
        }
        Err(p) => panic!("{line}: written back, does not parse: {}", p.message),
    }
}

/// Parses any JSON value, failing on an object that repeats a key (serde_json's `Value`
/// keeps the last; the record reader may have used another).
struct NoRepeatedKeys;

impl<'de> Deserialize<'de> for NoRepeatedKeys {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(NoRepeatedKeysVisitor)
    }
}

struct NoRepeatedKeysVisitor;

impl<'de> Visitor<'de> for NoRepeatedKeysVisitor {
    type Value = NoRepeatedKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<NoRepeatedKeys, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<NoRepeatedKeys, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<NoRepeatedKeys, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<NoRepeatedKeys, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<NoRepeatedKeys, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_unit<E: de::Error>(self) -> Result<NoRepeatedKeys, E> {
        Ok(NoRepeatedKeys)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoRepeatedKeys, A::Error> {
        while seq.next_element::<NoRepeatedKeys>()?.is_some() {}
        Ok(NoRepeatedKeys)
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<NoRepeatedKeys, M::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                return Err(de::Error::custom("repeated key"));
            }
            map.next_value::<NoRepeatedKeys>()?;
        }
        Ok(NoRepeatedKeys)
    }
}

fn check_hash_line(line: &[u8]) {
    let got = record::parse_hash(line);
    let context = || format!("{:?}", String::from_utf8_lossy(line));
    let want = expected_hash_line(line);
    match (&got, &want) {
        (Ok((Some(id), fp)), Ok((want_id, want_fp))) => {
            assert!(!id.number && id.text == *want_id, "{}: {id:?}", context());
            assert_eq!(fp.map(Fingerprint::get), *want_fp, "{}", context());
            // Written back, in decimal and in hex.
            let hashes = fp.map_or_else(
                || vec![String::new()],
                |fp| vec![fp.0.to_string(), format!("{fp:#}")],
            );
            for hash in hashes {
                let again = format!("{}\t{hash}", id.text);
                match record::parse_hash(again.as_bytes()) {
                    Ok((again_id, again_fp)) => {
                        assert_eq!(again_id.as_ref(), Some(id), "{again:?}");
                        assert_eq!(again_fp, *fp, "{again:?}");
                    }
                    Err(p) => panic!("{again:?}: written back, does not parse: {}", p.message),
                }
            }
        }
        (Err(problem), Err(reason)) => {
            assert_eq!(problem.reason, *reason, "{}: {}", context(), problem.message);
        }
        _ => panic!("{}: got {}, want {want:?}", context(), describe(&got)),
    }
}

fn expected_hash_line(line: &[u8]) -> Result<(String, Option<u64>), Reason> {
    let s = std::str::from_utf8(line.strip_prefix(BOM).unwrap_or(line))
        .map_err(|_| Reason::InvalidUtf8)?;
    if s.is_empty() {
        return Err(Reason::BlankLine);
    }
    let fields: Vec<&str> = s.split('\t').collect();
    let [id, hash] = fields[..] else { return Err(Reason::BadColumns) };
    if id.is_empty() || id.contains(['\n', '\r']) || id.starts_with('\u{feff}') {
        return Err(Reason::BadId);
    }
    if hash.is_empty() {
        return Ok((id.to_owned(), None));
    }
    let fp = expected_hash(hash).ok_or(Reason::BadHash)?;
    Ok((id.to_owned(), Some(fp)))
}

/// A hash as the formats define it: a decimal `u64`, or `0x`/`0X` and 1 to 16 hex digits.
fn expected_hash(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if hex.len() > 16 => return None,
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    if digits.is_empty() {
        return None;
    }
    digits.chars().try_fold(0u64, |v, c| {
        v.checked_mul(u64::from(radix))?.checked_add(u64::from(c.to_digit(radix)?))
    })
}

/// The regression run of a fuzz target, for the `tests/fuzz_corpus.rs` of the crates whose
/// code is fuzzed: every file of `FUZZ/corpus/TARGET/` (at least `min` of them) and of
/// `FUZZ/artifacts/TARGET/` (crashes found and fixed) goes through `check`, which must not
/// panic. `fuzz` is the `fuzz/` directory of the workspace.
pub fn check_corpus(fuzz: &std::path::Path, target: &str, min: usize, check: fn(&[u8])) {
    let corpus = sorted_files(&fuzz.join("corpus").join(target));
    assert!(
        corpus.len() >= min,
        "fuzz/corpus/{target}/ has {} files, expected at least {min}",
        corpus.len()
    );
    for path in corpus.iter().chain(&sorted_files(&fuzz.join("artifacts").join(target))) {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{} fails", path.display());
    }
}

/// The files of a directory, sorted; none when it does not exist.
fn sorted_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<std::path::PathBuf> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}
