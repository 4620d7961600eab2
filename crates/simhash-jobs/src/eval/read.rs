//! Reading a prediction or truth file into a [`Side`]: records, pairs and clusters
//! told apart line by line, every bad line a [`BadLine`] reported as `FILE:LINE: what`.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::Read;

use serde_json::value::RawValue;
use simhash_io::{DEFAULT_MAX_RECORD_BYTES, LineReader, LineStatus};

use crate::error::{Context, ErrorKind, JobError, Result};

/// Label fields of per-record JSONL naming a cluster: records sharing one are a cluster.
pub(super) const GROUP_KEYS: [&str; 4] = ["cluster", "cluster_id", "group", "group_id"];

/// Label fields naming another record's id: the two are one cluster.
pub(super) const POINTER_KEYS: [&str; 4] =
    ["duplicate_of", "dup_of", "canonical", "representative"];

/// The fields of a JSONL record that eval reads: none may be given twice in a record (JSON
/// readers disagree on which value counts), as in the records of every command.
const READ_KEYS: [&str; 11] = [
    "id",
    "ids",
    "members",
    GROUP_KEYS[0],
    GROUP_KEYS[1],
    GROUP_KEYS[2],
    GROUP_KEYS[3],
    POINTER_KEYS[0],
    POINTER_KEYS[1],
    POINTER_KEYS[2],
    POINTER_KEYS[3],
];

/// A JSON object's fields: the first value of each key, and the keys given again.
struct Fields<'a> {
    first: HashMap<String, &'a RawValue>,
    repeated: Vec<String>,
}

impl<'de> serde::Deserialize<'de> for Fields<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Fields<'de>, M::Error> {
                let mut fields = Fields { first: HashMap::new(), repeated: Vec::new() };
                while let Some(key) = map.next_key::<String>()? {
                    let value: &RawValue = map.next_value()?;
                    match fields.first.entry(key) {
                        Entry::Occupied(seen) => fields.repeated.push(seen.key().clone()),
                        Entry::Vacant(new) => {
                            new.insert(value);
                        }
                    }
                }
                Ok(fields)
            }
        }
        de.deserialize_map(Object)
    }
}

/// Ids interned to dense numbers, shared by the truth and the prediction.
#[derive(Default)]
pub(super) struct Ids {
    /// Each id's number.
    pub(super) index: HashMap<String, u32>,
    /// Each number's id.
    pub(super) names: Vec<String>,
}

impl Ids {
    /// The number of `id`, a new one for an id not seen.
    pub(super) fn get(&mut self, id: &str) -> Result<u32> {
        if let Some(&i) = self.index.get(id) {
            return Ok(i);
        }
        let i = u32::try_from(self.names.len()).ok().context("more than 4 billion distinct ids")?;
        self.index.insert(id.to_owned(), i);
        self.names.push(id.to_owned());
        Ok(i)
    }
}

/// A labelled pair of the truth: positive (same cluster) or negative, with its tier.
pub(super) struct LabelledPair {
    /// The first id's number.
    pub(super) a: u32,
    /// The second id's number.
    pub(super) b: u32,
    /// Same cluster (positive) or not.
    pub(super) positive: bool,
    /// The pair's tier, if the truth names one.
    pub(super) tier: Option<String>,
}

/// What one file says: ids it mentions, pairs to join, and labelled pairs (truth only).
#[derive(Default)]
pub(super) struct Side {
    /// Every id the file mentions, in order of first mention (repeats allowed).
    pub(super) mentioned: Vec<u32>,
    /// Pairs of ids in the same cluster (clusters become chains).
    pub(super) edges: Vec<(u32, u32)>,
    /// Labelled pairs from a pairs TSV with a `label` or `tier` column.
    pub(super) labelled: Vec<LabelledPair>,
}

/// How a TSV file's columns are read, decided by its first line.
pub(super) enum Columns {
    /// Pairs: the columns of the two ids, and of the label and the tier when given.
    Pairs { a: usize, b: usize, label: Option<usize>, tier: Option<usize> },
    /// Labels: the columns of the id and its cluster.
    Labels { id: usize, cluster: usize },
}

/// The columns a TSV header names (`id_a`, `id_b`, …), if the first line is one.
pub(super) fn header_columns(fields: &[&str]) -> Option<Columns> {
    let find = |name: &str| fields.iter().position(|f| f.trim().eq_ignore_ascii_case(name));
    if let (Some(a), Some(b)) = (find("id_a"), find("id_b")) {
        return Some(Columns::Pairs { a, b, label: find("label"), tier: find("tier") });
    }
    if let (Some(id), Some(cluster)) = (find("id"), find("cluster")) {
        return Some(Columns::Labels { id, cluster });
    }
    None
}

/// The text of a JSON id: strings unescaped, numbers exactly as written (`1.50`, `1e2`),
/// as the `simhash` commands write them; `None` for anything else.
pub(super) fn id_text(value: &RawValue) -> Option<String> {
    let raw = value.get();
    match raw.as_bytes().first()? {
        b'"' => serde_json::from_str::<String>(raw).ok(),
        b'-' | b'0'..=b'9' => Some(raw.to_owned()),
        _ => None,
    }
}

/// Whether a JSON value is `null`.
pub(super) fn is_null(value: &RawValue) -> bool {
    value.get() == "null"
}

/// Where a truth id was put: a cluster label, or the cluster listed on a line.
pub(super) enum Home {
    /// The cluster of this label.
    Label(String),
    /// The cluster listed on its line.
    List,
}

/// Reads one file's lines into a [`Side`].
pub(super) struct SideReader<'i> {
    ids: &'i mut Ids,
    side: Side,
    /// The first record of each cluster label.
    labels: HashMap<String, u32>,
    /// For the truth only: each labelled id's cluster and the line that put it there, so
    /// that an id in two clusters is refused.
    homes: Option<HashMap<u32, (Home, u64)>>,
    /// 1-based number of the line being read.
    line: u64,
}

/// Reads an input's lines (`name` is shown in messages). The truth (`truth` true) may not
/// put an id in two clusters.
pub(super) fn read_side(
    name: &str,
    input: impl Read,
    ids: &mut Ids,
    what: &'static str,
    truth: bool,
) -> Result<Side> {
    let mut reader = SideReader {
        ids,
        side: Side::default(),
        labels: HashMap::new(),
        homes: truth.then(HashMap::new),
        line: 0,
    };
    let mut columns: Option<Columns> = None;
    let mut lines = LineReader::new(input, DEFAULT_MAX_RECORD_BYTES);
    let mut line = Vec::new();
    let mut seen_content = false;
    loop {
        line.clear();
        let status = lines.next_line(&mut line, None).with_context(|| {
            format!("{name}:{}: read error (the {what} must be UTF-8 text)", reader.line + 1)
        })?;
        let Some(status) = status else { break };
        reader.line += 1;
        let number = reader.line;
        let text = line_text(&line, status, what)
            .map_err(|e| JobError::new(ErrorKind::Input, format!("{name}:{number}: {e}")))?;
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        let at = |msg: &dyn std::fmt::Display| {
            JobError::new(ErrorKind::Input, format!("{name}:{number}: {msg}"))
        };
        let first_byte = text.trim_start().as_bytes()[0];
        if first_byte == b'{' || first_byte == b'[' {
            seen_content = true;
        }
        match first_byte {
            b'{' => {
                let record: Fields<'_> = serde_json::from_str(text)
                    .map_err(|e| at(&format_args!("invalid JSON object: {e}")))?;
                if let Some(key) = record.repeated.iter().find(|k| READ_KEYS.contains(&k.as_str()))
                {
                    return Err(at(&format_args!("duplicate key {key:?}")));
                }
                reader.json_record(&record.first).map_err(|e| at(&e))?;
            }
            b'[' => {
                let list: Vec<&RawValue> = serde_json::from_str(text)
                    .map_err(|e| at(&format_args!("invalid JSON array: {e}")))?;
                reader.cluster(&list).map_err(|e| at(&e))?;
            }
            _ => {
                let fields: Vec<&str> = text.split('\t').collect();
                // A header is the first line with content, if it names its columns.
                if !seen_content {
                    seen_content = true;
                    if let Some(found) = header_columns(&fields) {
                        columns = Some(found);
                        continue;
                    }
                }
                reader.tsv_line(&fields, columns.as_ref()).map_err(|e| at(&e))?;
            }
        }
    }
    Ok(reader.side)
}

/// A line as text: the line reader's bytes, valid UTF-8 and within the length limit, without
/// a byte-order mark at its start.
pub(super) fn line_text<'a>(
    line: &'a [u8],
    status: LineStatus,
    what: &'static str,
) -> Result<&'a str, BadLine> {
    if let LineStatus::TooLong(n) = status {
        return Err(BadLine::TooLong(n));
    }
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    std::str::from_utf8(line).map_err(|_| BadLine::NotUtf8(what))
}

/// Why a line of a prediction or truth file cannot be read; reported as `FILE:LINE: what`.
#[derive(Debug)]
pub(super) enum BadLine {
    /// The line is longer than the limit (its length).
    TooLong(u64),
    /// The line is not UTF-8 (the file it is in: prediction or truth).
    NotUtf8(&'static str),
    /// An id that breaks the rule of every command, or one id too many.
    Id(String),
    /// A field holds something else than a string or a number: what it must be.
    NotText(&'static str),
    /// A field that must be a list of ids is not (its name).
    NotAList(&'static str),
    /// A JSON record that is neither an id with its cluster nor a list of ids.
    NoCluster,
    /// An id already in the cluster of another label (put there at `line`).
    InCluster { id: String, label: String, line: u64 },
    /// A truth id already in the cluster listed at `line`.
    InList { id: String, line: u64 },
    /// A TSV field missing or empty: its name and column.
    Missing { name: &'static str, column: usize },
    /// A line without two TAB-separated ids.
    NotTwoIds,
    /// A label other than 1 or 0.
    Label(String),
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadLine::TooLong(n) => write!(
                f,
                "line of {n} bytes is longer than the limit of {DEFAULT_MAX_RECORD_BYTES} bytes"
            ),
            BadLine::NotUtf8(what) => write!(
                f,
                "read error (the {what} must be UTF-8 text): stream did not contain valid UTF-8"
            ),
            BadLine::Id(message) => f.write_str(message),
            BadLine::NotText(what) => f.write_str(what),
            BadLine::NotAList(key) => write!(f, "\"{key}\" must be a list of ids"),
            BadLine::NoCluster => f.write_str(
                "expected {\"id\", \"cluster\"} (or another label field) or {\"ids\": [...]}",
            ),
            BadLine::InCluster { id, label, line } => {
                write!(f, "id {id:?} is already in cluster {label:?} (line {line})")
            }
            BadLine::InList { id, line } => {
                write!(f, "id {id:?} is already in the cluster of line {line}")
            }
            BadLine::Missing { name, column } => write!(f, "missing {name} (column {column})"),
            BadLine::NotTwoIds => f.write_str("expected two TAB-separated ids"),
            BadLine::Label(other) => write!(f, "label must be 1 or 0, not {other:?}"),
        }
    }
}

impl std::error::Error for BadLine {}

impl SideReader<'_> {
    /// The id's number; an error for an id that breaks the rule of every command
    /// ([`simhash_io::check_id`]).
    pub(super) fn id(&mut self, id: &str) -> Result<u32, BadLine> {
        simhash_io::check_id(id).map_err(|p| BadLine::Id(p.message))?;
        self.ids.get(id).map_err(|e| BadLine::Id(e.to_string()))
    }

    /// Reads one JSON record: a pair, or an id with its cluster.
    pub(super) fn json_record(
        &mut self,
        record: &HashMap<String, &RawValue>,
    ) -> Result<(), BadLine> {
        if let Some(id) = record.get("id") {
            let id = id_text(id).ok_or(BadLine::NotText("\"id\" must be a string or a number"))?;
            let find =
                |keys: &[&str]| keys.iter().find_map(|k| record.get(*k).filter(|v| !is_null(v)));
            if let Some(label) = find(&GROUP_KEYS) {
                let label = id_text(label)
                    .ok_or(BadLine::NotText("the cluster label must be a string or a number"))?;
                return self.label(&id, &label);
            }
            if let Some(other) = find(&POINTER_KEYS) {
                let other = id_text(other)
                    .ok_or(BadLine::NotText("the id it names must be a string or a number"))?;
                let (a, b) = (self.id(&id)?, self.id(&other)?);
                self.side.mentioned.extend([a, b]);
                self.side.edges.push((a, b));
                return Ok(());
            }
            // A record that names no cluster is a cluster of its own.
            let doc = self.id(&id)?;
            self.side.mentioned.push(doc);
            return Ok(());
        }
        for key in ["ids", "members"] {
            if let Some(value) = record.get(key) {
                let list: Vec<&RawValue> =
                    serde_json::from_str(value.get()).map_err(|_| BadLine::NotAList(key))?;
                return self.cluster(&list);
            }
        }
        Err(BadLine::NoCluster)
    }

    /// A record with a cluster label: records sharing a label are one cluster.
    pub(super) fn label(&mut self, id: &str, label: &str) -> Result<(), BadLine> {
        let doc = self.id(id)?;
        self.settle(id, doc, Home::Label(label.to_owned()))?;
        self.side.mentioned.push(doc);
        match self.labels.get(label) {
            Some(&first) => self.side.edges.push((first, doc)),
            None => {
                self.labels.insert(label.to_owned(), doc);
            }
        }
        Ok(())
    }

    /// A cluster given as the list of its members.
    pub(super) fn cluster(&mut self, list: &[&RawValue]) -> Result<(), BadLine> {
        let mut first = None;
        for value in list {
            let id = id_text(value)
                .ok_or(BadLine::NotText("cluster members must be strings or numbers"))?;
            let doc = self.id(&id)?;
            self.settle(&id, doc, Home::List)?;
            self.side.mentioned.push(doc);
            match first {
                None => first = Some(doc),
                Some(f) => self.side.edges.push((f, doc)),
            }
        }
        Ok(())
    }

    /// In the truth, records `doc`'s cluster; an error if it is already in another one.
    pub(super) fn settle(&mut self, id: &str, doc: u32, home: Home) -> Result<(), BadLine> {
        let line = self.line;
        let Some(homes) = &mut self.homes else { return Ok(()) };
        let Some((first, first_line)) = homes.get(&doc) else {
            homes.insert(doc, (home, line));
            return Ok(());
        };
        match (first, &home) {
            (Home::Label(a), Home::Label(b)) if a == b => Ok(()),
            (Home::List, Home::List) if *first_line == line => Ok(()),
            (Home::Label(a), _) => {
                Err(BadLine::InCluster { id: id.to_owned(), label: a.clone(), line: *first_line })
            }
            (Home::List, _) => Err(BadLine::InList { id: id.to_owned(), line: *first_line }),
        }
    }

    /// Reads one TSV line, by `columns` when the file has a header.
    pub(super) fn tsv_line(
        &mut self,
        fields: &[&str],
        columns: Option<&Columns>,
    ) -> Result<(), BadLine> {
        let field = |i: usize, name: &'static str| -> Result<&str, BadLine> {
            match fields.get(i) {
                Some(f) if !f.is_empty() => Ok(*f),
                _ => Err(BadLine::Missing { name, column: i + 1 }),
            }
        };
        let default = Columns::Pairs { a: 0, b: 1, label: None, tier: None };
        match *columns.unwrap_or(&default) {
            Columns::Labels { id, cluster } => {
                let (id, label) = (field(id, "id")?, field(cluster, "cluster")?);
                self.label(id, label)
            }
            Columns::Pairs { a, b, label, tier } => {
                if fields.len() < 2 {
                    return Err(BadLine::NotTwoIds);
                }
                let a = self.id(field(a, "id_a")?)?;
                let b = self.id(field(b, "id_b")?)?;
                self.side.mentioned.extend([a, b]);
                let positive = match label {
                    None => true,
                    Some(i) => match field(i, "label")?.trim() {
                        "1" | "true" => true,
                        "0" | "false" => false,
                        other => return Err(BadLine::Label(other.to_owned())),
                    },
                };
                if positive {
                    self.side.edges.push((a, b));
                }
                if label.is_some() || tier.is_some() {
                    let tier =
                        tier.map(|i| field(i, "tier")).transpose()?.map(|t| t.trim().to_owned());
                    self.side.labelled.push(LabelledPair { a, b, positive, tier });
                }
                Ok(())
            }
        }
    }
}
