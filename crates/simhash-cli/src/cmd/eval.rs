//! `simhash eval`: scores predicted pairs or clusters against ground truth.
//!
//! Both sides are read into one partition of a shared set of ids (pairs are closed
//! transitively), then compared: pairwise precision, recall and F1 over the pairs of
//! documents that share a cluster, B-cubed precision and recall, and, when the truth lists
//! labelled pairs with a tier, recall per tier.
//!
//! Accepted files, told apart line by line:
//! - JSONL with an id and a cluster label (`{"id":..,"cluster":..}`; also `cluster_id`,
//!   `group`, `group_id`): records sharing a label form a cluster;
//! - JSONL with an id and the id of the record it duplicates (`duplicate_of`, `dup_of`,
//!   `canonical`, `representative`): `simhash dedup --removed` output as it is;
//! - JSONL with a list of ids (`{"ids": [..]}` or `{"members": [..]}`), or a bare JSON array
//!   (`find-clusters` output): one cluster per line;
//! - TSV: a header naming `id_a` and `id_b` means pairs (with an optional `label` column,
//!   where 0 marks a negative pair, and an optional `tier` column); a header naming `id` and
//!   `cluster` means one record per line (`simhash cluster` output); without a header the
//!   first two columns are a pair (`simhash pairs` output has a header).
//!
//! The truth must hold at least one record, and may not put an id in two clusters.
//!
//! Lines are read as every command reads them ([`simhash_io::LineReader`]): LF or CRLF ends
//! a line, a line over [`simhash_io::DEFAULT_MAX_RECORD_BYTES`] is an error, a byte-order
//! mark at the start of a line is dropped, and every id follows [`simhash_io::check_id`].

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::value::RawValue;
use simhash_cluster::UnionFind;
use simhash_io::{DEFAULT_MAX_RECORD_BYTES, LineReader, LineStatus, Output, Source};

use crate::settings::EvalSettings;

/// Label fields of per-record JSONL naming a cluster: records sharing one are a cluster.
const GROUP_KEYS: [&str; 4] = ["cluster", "cluster_id", "group", "group_id"];

/// Label fields naming another record's id: the two are one cluster.
const POINTER_KEYS: [&str; 4] = ["duplicate_of", "dup_of", "canonical", "representative"];

/// Tiers of the shared dev set, listed in this order; any other tier follows, sorted.
const TIER_ORDER: [&str; 4] = ["easy", "medium", "hard", "very-hard"];

/// Ids interned to dense numbers, shared by the truth and the prediction.
#[derive(Default)]
struct Ids {
    index: HashMap<String, u32>,
    names: Vec<String>,
}

impl Ids {
    fn get(&mut self, id: &str) -> anyhow::Result<u32> {
        if let Some(&i) = self.index.get(id) {
            return Ok(i);
        }
        let i = u32::try_from(self.names.len()).context("more than 4 billion distinct ids")?;
        self.index.insert(id.to_owned(), i);
        self.names.push(id.to_owned());
        Ok(i)
    }
}

/// A labelled pair of the truth: positive (same cluster) or negative, with its tier.
struct LabelledPair {
    a: u32,
    b: u32,
    positive: bool,
    tier: Option<String>,
}

/// What one file says: ids it mentions, pairs to join, and labelled pairs (truth only).
#[derive(Default)]
struct Side {
    /// Every id the file mentions, in order of first mention (repeats allowed).
    mentioned: Vec<u32>,
    /// Pairs of ids in the same cluster (clusters become chains).
    edges: Vec<(u32, u32)>,
    /// Labelled pairs from a pairs TSV with a `label` or `tier` column.
    labelled: Vec<LabelledPair>,
}

/// How a TSV file's columns are read, decided by its first line.
enum Columns {
    Pairs { a: usize, b: usize, label: Option<usize>, tier: Option<usize> },
    Labels { id: usize, cluster: usize },
}

fn header_columns(fields: &[&str]) -> Option<Columns> {
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
fn id_text(value: &RawValue) -> Option<String> {
    let raw = value.get();
    match raw.as_bytes().first()? {
        b'"' => serde_json::from_str::<String>(raw).ok(),
        b'-' | b'0'..=b'9' => Some(raw.to_owned()),
        _ => None,
    }
}

fn is_null(value: &RawValue) -> bool {
    value.get() == "null"
}

/// Where a truth id was put: a cluster label, or the cluster listed on a line.
enum Home {
    Label(String),
    List,
}

/// Reads one file's lines into a [`Side`].
struct SideReader<'i> {
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
fn read_side(
    name: &str,
    input: impl Read,
    ids: &mut Ids,
    what: &'static str,
    truth: bool,
) -> anyhow::Result<Side> {
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
        let text =
            line_text(&line, status, what).map_err(|e| anyhow::anyhow!("{name}:{number}: {e}"))?;
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        let at = |msg: &dyn std::fmt::Display| anyhow::anyhow!("{name}:{number}: {msg}");
        let first_byte = text.trim_start().as_bytes()[0];
        if first_byte == b'{' || first_byte == b'[' {
            seen_content = true;
        }
        match first_byte {
            b'{' => {
                let record: HashMap<String, &RawValue> = serde_json::from_str(text)
                    .map_err(|e| at(&format_args!("invalid JSON object: {e}")))?;
                reader.json_record(&record).map_err(|e| at(&e))?;
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
fn line_text<'a>(
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
enum BadLine {
    TooLong(u64),
    NotUtf8(&'static str),
    /// An id that breaks the rule of every command, or one id too many.
    Id(String),
    /// A field holds something else than a string or a number: what it must be.
    NotText(&'static str),
    NotAList(&'static str),
    NoCluster,
    InCluster {
        id: String,
        label: String,
        line: u64,
    },
    InList {
        id: String,
        line: u64,
    },
    Missing {
        name: &'static str,
        column: usize,
    },
    NotTwoIds,
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
    fn id(&mut self, id: &str) -> Result<u32, BadLine> {
        simhash_io::check_id(id).map_err(|p| BadLine::Id(p.message))?;
        self.ids.get(id).map_err(|e| BadLine::Id(e.to_string()))
    }

    fn json_record(&mut self, record: &HashMap<String, &RawValue>) -> Result<(), BadLine> {
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
    fn label(&mut self, id: &str, label: &str) -> Result<(), BadLine> {
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
    fn cluster(&mut self, list: &[&RawValue]) -> Result<(), BadLine> {
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
    fn settle(&mut self, id: &str, doc: u32, home: Home) -> Result<(), BadLine> {
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

    fn tsv_line(&mut self, fields: &[&str], columns: Option<&Columns>) -> Result<(), BadLine> {
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

/// Cluster number of every id in `0..n` after joining `edges`.
fn partition(n: usize, edges: &[(u32, u32)]) -> anyhow::Result<Vec<u32>> {
    let mut uf = UnionFind::try_new(n).context("too many ids")?;
    for &(a, b) in edges {
        uf.union(a, b).context("clustering failed")?;
    }
    let mut label = vec![0u32; n];
    for (c, members) in uf.into_clusters().iter().enumerate() {
        for &m in members {
            label[m as usize] = c as u32;
        }
    }
    Ok(label)
}

fn pairs_of(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 { 1.0 } else { num / den }
}

fn f1(p: f64, r: f64) -> f64 {
    if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) }
}

/// The scores, as printed and as written with `--json`.
#[derive(Debug, serde::Serialize)]
pub struct Scores {
    pub documents: usize,
    pub true_pairs: u64,
    pub predicted_pairs: u64,
    pub true_positive_pairs: u64,
    pub false_positive_pairs: u64,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub bcubed_precision: f64,
    pub bcubed_recall: f64,
    pub bcubed_f1: f64,
    /// Predicted edges (pairs as listed, before closing them) that join two true clusters.
    pub false_edges: u64,
    pub predicted_edges: u64,
    /// Predicted ids that the truth does not mention (scored as singletons in the truth).
    pub unknown_ids: usize,
    pub tiers: Vec<TierScore>,
    /// Labelled negative pairs that the prediction put in one cluster.
    pub negatives_merged: u64,
    pub negatives: u64,
}

#[derive(Debug, serde::Serialize)]
pub struct TierScore {
    pub tier: String,
    pub pairs: u64,
    pub found: u64,
    pub recall: f64,
}

fn score(ids: &Ids, truth: &Side, pred: &Side, known: &[bool]) -> anyhow::Result<Scores> {
    let n = ids.names.len();
    let t = partition(n, &truth.edges)?;
    let p = partition(n, &pred.edges)?;
    let mut tsize: HashMap<u32, u64> = HashMap::new();
    let mut psize: HashMap<u32, u64> = HashMap::new();
    let mut joint: HashMap<(u32, u32), u64> = HashMap::new();
    for d in 0..n {
        *tsize.entry(t[d]).or_default() += 1;
        *psize.entry(p[d]).or_default() += 1;
        *joint.entry((t[d], p[d])).or_default() += 1;
    }
    let tp: u64 = joint.values().map(|&c| pairs_of(c)).sum();
    let true_pairs: u64 = tsize.values().map(|&c| pairs_of(c)).sum();
    let predicted_pairs: u64 = psize.values().map(|&c| pairs_of(c)).sum();
    let (precision, recall) =
        (ratio(tp as f64, predicted_pairs as f64), ratio(tp as f64, true_pairs as f64));
    let (mut bp, mut br) = (0.0, 0.0);
    for d in 0..n {
        let inter = joint[&(t[d], p[d])] as f64;
        bp += inter / psize[&p[d]] as f64;
        br += inter / tsize[&t[d]] as f64;
    }
    let (bp, br) = if n == 0 { (1.0, 1.0) } else { (bp / n as f64, br / n as f64) };

    let mut tiers: HashMap<String, (u64, u64)> = HashMap::new();
    let (mut negatives, mut negatives_merged) = (0, 0);
    for pair in &truth.labelled {
        let hit = p[pair.a as usize] == p[pair.b as usize];
        if pair.positive {
            if let Some(tier) = &pair.tier {
                let e = tiers.entry(tier.clone()).or_default();
                e.0 += 1;
                e.1 += u64::from(hit);
            }
        } else {
            negatives += 1;
            negatives_merged += u64::from(hit);
        }
    }
    let mut tiers: Vec<TierScore> = tiers
        .into_iter()
        .map(|(tier, (pairs, found))| TierScore {
            recall: ratio(found as f64, pairs as f64),
            tier,
            pairs,
            found,
        })
        .collect();
    let rank = |tier: &str| TIER_ORDER.iter().position(|t| *t == tier).unwrap_or(TIER_ORDER.len());
    tiers.sort_by(|x, y| rank(&x.tier).cmp(&rank(&y.tier)).then_with(|| x.tier.cmp(&y.tier)));

    let false_edges = pred.edges.iter().filter(|&&(a, b)| t[a as usize] != t[b as usize]).count();
    let mut unknown: Vec<u32> =
        pred.mentioned.iter().copied().filter(|&d| !known[d as usize]).collect();
    unknown.sort_unstable();
    unknown.dedup();
    Ok(Scores {
        documents: n,
        true_pairs,
        predicted_pairs,
        true_positive_pairs: tp,
        false_positive_pairs: predicted_pairs - tp,
        precision,
        recall,
        f1: f1(precision, recall),
        bcubed_precision: bp,
        bcubed_recall: br,
        bcubed_f1: f1(bp, br),
        false_edges: false_edges as u64,
        predicted_edges: pred.edges.len() as u64,
        unknown_ids: unknown.len(),
        tiers,
        negatives_merged,
        negatives,
    })
}

fn render(s: &Scores) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "documents {}  true pairs {}  predicted pairs {}  (false positives {})",
        s.documents, s.true_pairs, s.predicted_pairs, s.false_positive_pairs
    );
    let _ = writeln!(
        out,
        "pairwise  precision {:.4}  recall {:.4}  F1 {:.4}",
        s.precision, s.recall, s.f1
    );
    let _ = writeln!(
        out,
        "B-cubed   precision {:.4}  recall {:.4}  F1 {:.4}",
        s.bcubed_precision, s.bcubed_recall, s.bcubed_f1
    );
    let _ = writeln!(
        out,
        "edges     {} predicted, {} join different true clusters",
        s.predicted_edges, s.false_edges
    );
    for t in &s.tiers {
        let _ = writeln!(
            out,
            "tier {:<12} recall {:.4}  ({} of {} pairs)",
            t.tier, t.recall, t.found, t.pairs
        );
    }
    if s.negatives > 0 {
        let _ = writeln!(out, "negative pairs merged: {} of {}", s.negatives_merged, s.negatives);
    }
    if s.unknown_ids > 0 {
        let _ = writeln!(
            out,
            "note: {} predicted ids are not in the truth (scored as singletons there)",
            s.unknown_ids
        );
    }
    out
}

/// Reads the prediction, the truth and the optional tiers file, and scores them.
pub fn evaluate(prediction: &Path, truth: &Path, tiers: Option<&Path>) -> anyhow::Result<Scores> {
    evaluate_with(prediction, truth, tiers, |path, what| {
        let mut source = Source::new(path);
        let reader = source.open(false).with_context(|| format!("cannot open the {what}"))?;
        Ok((source.name, reader))
    })
}

/// [`evaluate`] with inputs in memory: `(name, contents)` for each (for fuzzing).
pub(crate) fn evaluate_bytes(
    prediction: (&str, &[u8]),
    truth: (&str, &[u8]),
    tiers: Option<(&str, &[u8])>,
) -> anyhow::Result<Scores> {
    let inputs = [Some(prediction), Some(truth), tiers];
    evaluate_with(
        Path::new(prediction.0),
        Path::new(truth.0),
        tiers.map(|(name, _)| Path::new(name)),
        |path, what| {
            inputs
                .iter()
                .flatten()
                .find(|(name, _)| Path::new(name) == path)
                .map(|&(name, bytes)| (name.to_owned(), bytes))
                .with_context(|| format!("cannot open the {what}"))
        },
    )
}

/// [`evaluate`], with `open` giving an input's name and lines (in the order truth, tiers
/// file, prediction).
fn evaluate_with<R: Read>(
    prediction: &Path,
    truth: &Path,
    tiers: Option<&Path>,
    mut open: impl FnMut(&Path, &str) -> anyhow::Result<(String, R)>,
) -> anyhow::Result<Scores> {
    let mut ids = Ids::default();
    let (name, lines) = open(truth, "truth")?;
    let mut truth_side = read_side(&name, lines, &mut ids, "truth", true)?;
    if truth_side.mentioned.is_empty() {
        bail!("{name}: no labelled records");
    }
    if let Some(path) = tiers {
        let (name, lines) = open(path, "tiers file")?;
        let extra = read_side(&name, lines, &mut ids, "tiers file", false)?;
        if extra.labelled.is_empty() {
            bail!("{name}: no labelled pairs: expected a TSV header naming id_a, id_b and tier");
        }
        truth_side.mentioned.extend(extra.mentioned);
        truth_side.labelled.extend(extra.labelled);
    }
    let mut known = vec![false; ids.names.len()];
    for &d in &truth_side.mentioned {
        known[d as usize] = true;
    }
    let (name, lines) = open(prediction, "prediction")?;
    let pred = read_side(&name, lines, &mut ids, "prediction", false)?;
    known.resize(ids.names.len(), false);
    score(&ids, &truth_side, &pred, &known)
}

pub fn run(opts: &EvalSettings) -> anyhow::Result<ExitCode> {
    let mut inputs = vec![opts.prediction.as_path(), opts.truth.as_path()];
    inputs.extend(opts.tiers.as_deref());
    simhash_io::register_inputs(&inputs)?;
    let mut out = Output::create_for("--output", &opts.output)?;
    let scores = evaluate(&opts.prediction, &opts.truth, opts.tiers.as_deref())?;
    if opts.json {
        serde_json::to_writer_pretty(&mut out, &scores)?;
        out.write_all(b"\n")?;
    } else {
        out.write_all(render(&scores).as_bytes())?;
    }
    out.commit()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Truth: {a, b, c}, {d, e}, {f}.
    const TRUTH: &str = "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"b\",\"cluster\":1}\n\
        {\"id\":\"c\",\"cluster\":1}\n{\"id\":\"d\",\"cluster\":\"x\"}\n\
        {\"id\":\"e\",\"cluster\":\"x\"}\n{\"id\":\"f\",\"cluster\":7}\n";

    #[test]
    fn hand_computed_scores() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", TRUTH);
        // Predicted clusters {a, b}, {d, f}, {c}, {e}.
        let pred = write(&dir, "p.tsv", "id_a\tid_b\tdistance\na\tb\t1\nd\tf\t2\n");
        let s = evaluate(&pred, &truth, None).unwrap();
        assert_eq!((s.documents, s.true_pairs, s.predicted_pairs), (6, 4, 2));
        assert_eq!((s.true_positive_pairs, s.false_positive_pairs), (1, 1));
        assert!((s.precision - 0.5).abs() < 1e-12 && (s.recall - 0.25).abs() < 1e-12);
        // B-cubed precision: a, b: 1; c: 1; d: 1/2; e: 1; f: 1/2 → 5/6.
        // B-cubed recall: a, b: 2/3; c: 1/3; d: 1/2; e: 1/2; f: 1 → 11/3 / 6.
        assert!((s.bcubed_precision - 5.0 / 6.0).abs() < 1e-12);
        assert!((s.bcubed_recall - 11.0 / 18.0).abs() < 1e-12);
        assert_eq!((s.predicted_edges, s.false_edges), (2, 1));
        assert_eq!(s.unknown_ids, 0);
    }

    #[test]
    fn every_prediction_format_gives_the_same_partition() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", TRUTH);
        let forms = [
            // simhash pairs
            "id_a\tid_b\tdistance\na\tb\t3\nb\tc\t0\nd\te\t1\n",
            // bare pairs, no header
            "a\tb\nc\tb\n\ne\td\n",
            // simhash cluster (numeric labels that are also ids elsewhere must not join)
            "id\thash\tcluster\na\t1\t0\nb\t2\t0\nc\t3\t0\nd\t4\t1\ne\t5\t1\n",
            // simhash dedup --removed
            "{\"id\":\"b\",\"duplicate_of\":\"a\",\"distance\":2}\n\
             {\"id\":\"c\",\"duplicate_of\":\"a\",\"distance\":2}\n\
             {\"id\":\"e\",\"duplicate_of\":\"d\",\"distance\":0}\n",
            // clusters as lists
            "{\"ids\":[\"a\",\"b\",\"c\"]}\n[\"d\",\"e\"]\n",
        ];
        for (i, form) in forms.iter().enumerate() {
            let pred = write(&dir, &format!("p{i}"), form);
            let s = evaluate(&pred, &truth, None).unwrap();
            assert_eq!((s.precision, s.recall, s.bcubed_recall), (1.0, 1.0, 1.0), "form {i}");
            assert_eq!(s.false_positive_pairs, 0, "form {i}");
        }
    }

    #[test]
    fn numeric_ids_and_cluster_numbers_do_not_mix() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "t.tsv", "id_a\tid_b\n0\t1\n");
        // Records 1 and 2 are cluster 0; record 0 is alone in cluster 5.
        let pred = write(&dir, "p.tsv", "id\thash\tcluster\n1\t9\t0\n2\t9\t0\n0\t9\t5\n");
        let s = evaluate(&pred, &truth, None).unwrap();
        assert_eq!((s.true_positive_pairs, s.predicted_pairs, s.true_pairs), (0, 1, 1));
        assert_eq!(s.unknown_ids, 1);
    }

    #[test]
    fn numeric_ids_keep_their_text() {
        let dir = tempfile::tempdir().unwrap();
        // As `simhash pairs` writes them: exactly as they were in the input.
        let truth = write(
            &dir,
            "t.jsonl",
            "{\"id\":1.50,\"cluster\":0}\n{\"id\":1e2,\"cluster\":0}\n\
             {\"id\":12345678901234567890123,\"cluster\":0}\n{\"id\":\"1.5\",\"cluster\":1}\n",
        );
        let pred = write(&dir, "p.tsv", "1.50\t1e2\n1e2\t12345678901234567890123\n");
        let s = evaluate(&pred, &truth, None).unwrap();
        assert_eq!((s.precision, s.recall, s.unknown_ids), (1.0, 1.0, 0));
        // Ids with spaces are ids, not trimmed.
        let pred = write(&dir, "q.tsv", " 1.50\t1e2\n");
        assert_eq!(evaluate(&pred, &truth, None).unwrap().unknown_ids, 1);
    }

    #[test]
    fn tiers_and_negatives() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", TRUTH);
        let tiers = write(
            &dir,
            "pairs.tsv",
            "id_a\tid_b\tlabel\ttier\na\tb\t1\teasy\na\tc\t1\thard\nb\tc\t1\thard\n\
             d\te\t1\tmedium\nc\tf\t0\tnone\n",
        );
        let pred = write(&dir, "p.tsv", "a\tb\nc\tf\n");
        let s = evaluate(&pred, &truth, Some(&tiers)).unwrap();
        let got: Vec<(&str, u64, u64)> =
            s.tiers.iter().map(|t| (t.tier.as_str(), t.found, t.pairs)).collect();
        assert_eq!(got, [("easy", 1, 1), ("medium", 0, 1), ("hard", 0, 2)]);
        assert_eq!((s.negatives_merged, s.negatives), (1, 1));
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", TRUTH);
        let cases = [
            ("bad1.jsonl", "{\"id\":\"a\",\"cluster\":1}\n{\"id\": [1]}\n", ":2: \"id\" must be"),
            ("bad2.tsv", "a\tb\njust-one-column\n", ":2: expected two TAB-separated ids"),
            ("bad3.jsonl", "\n\n{not json\n", ":3: invalid JSON object"),
            ("bad4.tsv", "id_a\tid_b\tlabel\na\tb\tmaybe\n", ":2: label must be 1 or 0"),
            ("bad5.jsonl", "{\"text\":\"x\"}\n", ":1: expected {\"id\""),
        ];
        for (name, text, want) in cases {
            let pred = write(&dir, name, text);
            let err = format!("{:#}", evaluate(&pred, &truth, None).unwrap_err());
            assert!(err.contains(name) && err.contains(want), "{name}: {err}");
        }
        let missing = dir.path().join("missing.tsv");
        assert!(evaluate(&missing, &truth, None).is_err());
        let no_tiers = write(&dir, "plain.tsv", "a\tb\n");
        let err = format!("{:#}", evaluate(&no_tiers, &truth, Some(&no_tiers)).unwrap_err());
        assert!(err.contains("no labelled pairs"), "{err}");
    }

    #[test]
    fn empty_truth_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let pred = write(&dir, "p.tsv", "a\tb\n");
        for (name, text) in [
            ("empty.jsonl", ""),
            ("blank.jsonl", "\n  \n\r\n"),
            ("header.tsv", "id_a\tid_b\tlabel\n"),
            ("labels-header.tsv", "id\tcluster\n"),
        ] {
            let truth = write(&dir, name, text);
            let err = format!("{:#}", evaluate(&pred, &truth, None).unwrap_err());
            assert_eq!(err, format!("{}: no labelled records", truth.display()), "{name}");
        }
    }

    #[test]
    fn truth_id_in_two_clusters_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let pred = write(&dir, "p.tsv", "a\tb\n");
        let cases = [
            (
                "labels.jsonl",
                "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"b\",\"cluster\":1}\n\
                 {\"id\":\"a\",\"cluster\":2}\n",
                ":3: id \"a\" is already in cluster \"1\" (line 1)",
            ),
            (
                "labels.tsv",
                "id\thash\tcluster\na\t1\t0\nb\t2\t0\n\nb\t2\t5\n",
                ":5: id \"b\" is already in cluster \"0\" (line 3)",
            ),
            (
                "lists.jsonl",
                "[\"a\",\"b\"]\n{\"ids\":[\"c\",\"b\"]}\n",
                ":2: id \"b\" is already in the cluster of line 1",
            ),
            (
                "mixed.jsonl",
                "{\"id\":7,\"group\":\"x\"}\n[7,8]\n",
                ":2: id \"7\" is already in cluster \"x\" (line 1)",
            ),
        ];
        for (name, text, want) in cases {
            let truth = write(&dir, name, text);
            let err = format!("{:#}", evaluate(&pred, &truth, None).unwrap_err());
            assert_eq!(err, format!("{}{want}", truth.display()), "{name}");
        }
        // The same cluster again, an id repeated in its own list, and pairs are fine; so is
        // a prediction that puts an id in two clusters (they are merged).
        let truth = write(
            &dir,
            "ok.jsonl",
            "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"a\",\"cluster\":1}\n[\"c\",\"d\",\"c\"]\n",
        );
        assert!(evaluate(&pred, &truth, None).is_ok());
        let pairs = write(&dir, "pairs.tsv", "a\tb\nb\tc\na\tc\n");
        assert!(evaluate(&pred, &pairs, None).is_ok());
        let pred = write(
            &dir,
            "two.jsonl",
            "{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"a\",\"cluster\":2}\n",
        );
        assert!(evaluate(&pred, &truth, None).is_ok());
    }

    #[test]
    fn in_memory_inputs_read_as_files() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", TRUTH);
        let pred = write(&dir, "p.tsv", "a\tb\nd\tf\n");
        let from_files = evaluate(&pred, &truth, None).unwrap();
        let in_memory =
            evaluate_bytes(("p.tsv", b"a\tb\nd\tf\n"), ("truth.jsonl", TRUTH.as_bytes()), None)
                .unwrap();
        assert_eq!(format!("{from_files:?}"), format!("{in_memory:?}"));
        let err = evaluate_bytes(("p.tsv", b"a\n"), ("t.tsv", b"x\ty\n"), None).unwrap_err();
        assert_eq!(format!("{err:#}"), "p.tsv:1: expected two TAB-separated ids");
    }

    #[test]
    fn lines_and_ids_follow_the_rules_of_every_command() {
        let truth = ("t.jsonl", TRUTH.as_bytes());
        // A byte-order mark at the start of a line is dropped, so the header is a header.
        let bom =
            evaluate_bytes(("p.tsv", b"\xef\xbb\xbfid_a\tid_b\na\tb\n"), truth, None).unwrap();
        assert_eq!((bom.predicted_pairs, bom.unknown_ids), (1, 0));
        // Ids that no command accepts.
        for (pred, want) in [
            (&b"{\"id\":\"\",\"cluster\":1}\n"[..], "p:1: empty id"),
            (b"a\tb\n\xef\xbb\xbf\xef\xbb\xbfc\td\n", "p:2: id \"\\u{feff}c\" starts with"),
            (b"[\"a\",\"b\\rc\"]\n", "p:1: id \"b\\rc\" contains a TAB or line break"),
        ] {
            let err = format!("{:#}", evaluate_bytes(("p", pred), truth, None).unwrap_err());
            assert!(err.starts_with(want), "{err}");
        }
        // Invalid UTF-8 is named as before.
        let err = evaluate_bytes(("p", b"a\tb\n\xff\tc\n"), truth, None).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "p:2: read error (the prediction must be UTF-8 text): stream did not contain valid \
             UTF-8"
        );
    }

    #[test]
    fn a_line_over_the_limit_is_an_error() {
        let mut pred = b"a\tb\n".to_vec();
        pred.resize(pred.len() + DEFAULT_MAX_RECORD_BYTES as usize + 1, b'x');
        let err = evaluate_bytes(("p", &pred), ("t.jsonl", TRUTH.as_bytes()), None).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            format!(
                "p:2: line of {} bytes is longer than the limit of {DEFAULT_MAX_RECORD_BYTES} bytes",
                DEFAULT_MAX_RECORD_BYTES + 1
            )
        );
    }

    #[test]
    fn empty_prediction_scores_zero_recall() {
        let dir = tempfile::tempdir().unwrap();
        let truth = write(&dir, "truth.jsonl", TRUTH);
        let pred = write(&dir, "empty.tsv", "");
        let s = evaluate(&pred, &truth, None).unwrap();
        assert_eq!((s.precision, s.recall, s.f1), (1.0, 0.0, 0.0));
    }
}
