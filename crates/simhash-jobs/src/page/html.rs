//! The page itself: static HTML for the figures and the charts (inline SVG, readable
//! without scripts), the sampled records as JSON in a `<script type="application/json">`
//! element, and `page.js` to show them (the pairs view with its filters and word diffs,
//! the clusters view). A Content-Security-Policy forbids every load from the network.
//! Texts are user data: the JSON escapes `<`, `>`, `&` and U+2028/9, and the script only
//! ever sets them as `textContent`.

use std::fmt::Write as _;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;
use simhash_index::lsh;

use super::Documents;
use super::collect::{self, ClusterView, Pair, PairSample, Scale};
use super::texts::{self, Found};
use crate::error::Result;
use crate::summary::Summary;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");
/// Shards and group values listed one by one; the rest are summed as "(other)".
const ROWS_SHOWN: usize = 30;

/// What the page is made of, gathered by [`super::Report`].
pub(super) struct Parts<'a> {
    /// The command the page reports (`dedup`, `pairs`, `cluster`).
    pub command: &'static str,
    /// The documents.
    pub docs: &'a dyn Documents,
    /// Each document's input (an index into `shard_names`).
    pub shard: &'a [u32],
    /// The inputs' names (the input files').
    pub shard_names: &'a [String],
    /// The similarity histogram and its sample.
    pub pairs: &'a PairSample,
    /// The pairs whose texts the page shows.
    pub sample: &'a [Pair],
    /// The clusters, when the command forms them.
    pub clusters: Option<&'a ClusterView>,
    /// Per document: removed or in a cluster.
    pub flagged: &'a [bool],
    /// Records removed because they matched the index (`--against`).
    pub index_removed: u64,
    /// `--report-group`: the field the removals are counted by.
    pub group: Option<&'a str>,
    /// The texts of the wanted documents, read again.
    pub found: Found,
    /// The documents whose texts were asked for, sorted.
    pub wanted: &'a [u32],
}

/// A row of the shard and group tables: name, records, flagged records.
type Row = (String, u64, u64);

/// A sampled record in the page's JSON.
#[derive(Serialize)]
struct Doc {
    /// The id as shown (cut past [`texts::cut_label`]'s length).
    id: String,
    /// The whole id when `id` is cut and it has at most [`FULL_ID_BYTES`]: what a labels
    /// file names the record by.
    #[serde(skip_serializing_if = "Option::is_none")]
    full: Option<String>,
    /// None when it could not be read.
    text: Option<String>,
    chars: usize,
    shard: String,
}

#[derive(Serialize)]
struct Json {
    command: &'static str,
    measure: &'static str,
    /// What the pairs are: `removals` (dedup) or `pairs`.
    what: &'static str,
    /// Indices into `docs`, the score as `--removed` prints it, the relation (minhash), and
    /// the pair's similarity bucket (an index into `buckets`' `bucket`).
    pairs: Vec<(usize, usize, String, Option<&'static str>, usize)>,
    /// Every similarity bucket with a pair: how many the run has, how many the sample was
    /// drawn from, how many the page holds. What `simhash audit` weights the labels by.
    buckets: Vec<JsonBucket>,
    /// The order in which the pairs are labelled (indices into `pairs`).
    order: Vec<usize>,
    clusters: Vec<JsonCluster>,
    docs: Vec<Doc>,
    text_chars: usize,
}

/// A similarity bucket in the page's JSON.
#[derive(Serialize)]
struct JsonBucket {
    /// Its number (0 the least similar).
    bucket: usize,
    /// Its label, as the chart shows it (`0.40–0.45`, `3 bits`).
    label: String,
    /// Every pair of the run in it (the chart's count).
    total: u64,
    /// Of those, the pairs never sampled (removals that matched the index).
    unsampled: u64,
    /// The pairs of it the page holds.
    sampled: usize,
}

#[derive(Serialize)]
struct JsonCluster {
    size: usize,
    kept: usize,
    members: Vec<usize>,
}

/// The page, all but the summary.
pub(super) struct Data {
    command: &'static str,
    measure: Scale,
    json: String,
    histogram: Vec<(String, u64)>,
    /// Minhash: the pairs of each relation.
    relations: Vec<(String, u64)>,
    total_pairs: u64,
    sampled_pairs: usize,
    per_bucket: usize,
    size_classes: Vec<(String, u64)>,
    shards: Vec<Row>,
    groups: Option<(String, Vec<Row>)>,
    index_removed: u64,
    notes: Vec<String>,
}

impl Data {
    /// The page's data, made from its parts.
    pub(super) fn new(parts: Parts<'_>) -> Data {
        let Parts { command, shard, shard_names, pairs, sample, clusters, flagged, .. } = parts;
        let json = page_json(&parts);
        // Jaccard: from the first bucket with a pair (those below the threshold are empty).
        let first = match pairs.measure {
            Scale::Jaccard => pairs.counts.iter().position(|&n| n > 0).unwrap_or(0),
            Scale::Distance(_) => 0,
        };
        let histogram = (first..pairs.measure.buckets())
            .map(|b| (bucket_label(pairs.measure, b), pairs.counts[b]))
            .collect();
        let relations = match pairs.measure {
            Scale::Jaccard if pairs.total() > 0 => lsh::Relation::ALL
                .iter()
                .zip(pairs.relations)
                .filter(|&(&r, n)| n > 0 || r != lsh::Relation::Overlap)
                .map(|(r, n)| (r.name().to_string(), n))
                .collect(),
            _ => Vec::new(),
        };
        let size_classes = clusters.map_or_else(Vec::new, |v| {
            v.size_classes
                .iter()
                .enumerate()
                .map(|(i, &n)| {
                    let (lo, hi) =
                        if i == 0 { (2, 2) } else { ((1usize << i) + 1, 1usize << (i + 1)) };
                    (if lo == hi { lo.to_string() } else { format!("{lo}–{hi}") }, n)
                })
                .collect()
        });
        let mut per_shard = vec![(0u64, 0u64); shard_names.len().max(1)];
        for (d, &s) in shard.iter().enumerate() {
            let s = (s as usize).min(per_shard.len() - 1);
            per_shard[s].0 += 1;
            per_shard[s].1 += u64::from(flagged.get(d).copied().unwrap_or(false));
        }
        let shards = top_rows(
            per_shard
                .into_iter()
                .enumerate()
                .map(|(i, (n, f))| {
                    (shard_names.get(i).map_or_else(String::new, |s| texts::cut_label(s)), n, f)
                })
                .collect(),
        );
        let groups = parts.group.map(|field| {
            let rows = parts.found.groups.iter().map(|(g, &(n, f))| (g.label(), n, f)).collect();
            (field.to_string(), top_rows(rows))
        });
        let mut notes: Vec<String> = parts.found.note.into_iter().collect();
        if sample.iter().any(|p| !parts.found.texts.contains_key(&p.a)) && notes.is_empty() {
            notes.push("some sampled records could not be read again".into());
        }
        Data {
            command,
            measure: pairs.measure,
            json,
            histogram,
            relations,
            total_pairs: pairs.total(),
            sampled_pairs: sample.len(),
            per_bucket: pairs.per_bucket,
            size_classes,
            shards,
            groups,
            index_removed: parts.index_removed,
            notes,
        }
    }
}

/// The longest id a page holds whole beside the one it shows cut (labels name records by
/// it); longer ones are named by the cut id alone, so that the page's size stays bounded.
const FULL_ID_BYTES: usize = 4096;

/// The sampled records, pairs and clusters as the JSON the script reads, escaped for a
/// `<script>` element.
fn page_json(parts: &Parts<'_>) -> String {
    let Parts { command, docs: corpus, shard, shard_names, pairs, sample, clusters, .. } = *parts;
    let shard_name = |d: u32| {
        shard_names
            .get(shard[d as usize] as usize)
            .map_or_else(String::new, |s| texts::cut_label(s))
    };
    let index = |d: u32| parts.wanted.binary_search(&d).unwrap_or(0);
    let docs = parts
        .wanted
        .iter()
        .map(|&d| {
            let text = parts.found.texts.get(&d);
            let id = corpus.id(d as usize);
            let shown = texts::cut_label(&id);
            Doc {
                full: (shown != *id && id.len() <= FULL_ID_BYTES).then(|| id.to_string()),
                id: shown,
                text: text.map(|t| t.text.clone()),
                chars: text.map_or(0, |t| t.chars),
                shard: shard_name(d),
            }
        })
        .collect();
    let score = |code: u32| match pairs.measure {
        Scale::Distance(_) => code.to_string(),
        Scale::Jaccard => format!("{}.{:04}", code / 10_000, code % 10_000),
    };
    let bucket = |p: &Pair| pairs.measure.bucket(p.code);
    let mut sampled = vec![0usize; pairs.measure.buckets()];
    for p in sample {
        sampled[bucket(p)] += 1;
    }
    let buckets = (0..pairs.measure.buckets())
        .filter(|&b| pairs.counts[b] > 0 || sampled[b] > 0)
        .map(|b| JsonBucket {
            bucket: b,
            label: bucket_label(pairs.measure, b),
            total: pairs.counts[b],
            unsampled: pairs.unsampled[b],
            sampled: sampled[b],
        })
        .collect();
    let json = Json {
        command,
        measure: match pairs.measure {
            Scale::Distance(_) => "distance",
            Scale::Jaccard => "jaccard",
        },
        what: if command == "dedup" { "removals" } else { "pairs" },
        pairs: sample
            .iter()
            .map(|p| {
                let relation = p.relation.map(lsh::Relation::name);
                (index(p.a), index(p.b), score(p.code), relation, bucket(p))
            })
            .collect(),
        buckets,
        order: pairs.labelling_order(sample),
        clusters: clusters.map_or_else(Vec::new, |v| {
            v.largest
                .iter()
                .map(|c| JsonCluster {
                    size: c.size,
                    kept: index(c.kept),
                    members: c.members.iter().map(|&m| index(m)).collect(),
                })
                .collect()
        }),
        docs,
        text_chars: texts::TEXT_CHARS,
    };
    script_json(&serde_json::to_string(&json).unwrap_or_else(|_| "{}".into()))
}

/// The rows with the most records first (ties by name), the ones past [`ROWS_SHOWN`]
/// summed as "(other)".
fn top_rows(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if rows.len() > ROWS_SHOWN {
        let rest = rows.split_off(ROWS_SHOWN - 1);
        let other = rest.iter().fold((0, 0), |(n, f), r| (n + r.1, f + r.2));
        rows.push((format!("(other: {} more)", rest.len()), other.0, other.1));
    }
    rows
}

fn bucket_label(measure: Scale, b: usize) -> String {
    match measure {
        Scale::Distance(_) => format!("{b} bits"),
        Scale::Jaccard => {
            let w = 100 / collect::JACCARD_BUCKETS;
            format!(
                "{}.{:02}–{}",
                b * w / 100,
                b * w % 100,
                if b + 1 == collect::JACCARD_BUCKETS {
                    "1".to_string()
                } else {
                    format!("{}.{:02}", (b + 1) * w / 100, (b + 1) * w % 100)
                }
            )
        }
    }
}

/// JSON that can sit inside a `<script>` element: no `<`, `>` or `&` (so no `</script>`
/// or `<!--`), and no U+2028/U+2029 (line ends to older JavaScript). serde_json writes
/// these characters only inside strings, where the escapes mean the same.
pub(super) fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text as HTML (element content or a quoted attribute): every page of the crate's.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The summary's figures that a rerun of the same command on the same input may change:
/// timings, memory, and the matching's work counters. The run id leaves them out.
const FIGURES_OF_THE_MACHINE: [&str; 6] = [
    "seconds",
    "seconds_total",
    "peak_memory_bytes",
    "candidates",
    "verified",
    "largest_candidate_component",
];

/// The run's id: a hash of the page's data (the sampled pairs and their texts, the
/// buckets' counts, the clusters) and the summary but for its timings and work counters
/// (the command, the settings it notes, the inputs' names, bytes, records, and the
/// results). The same command on the same input gives the same id, at any thread count;
/// labels are kept under it and `simhash audit` refuses labels of another.
pub(super) fn run_id(json: &str, summary: &Summary) -> String {
    let mut figures = serde_json::to_value(summary).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut figures {
        for key in FIGURES_OF_THE_MACHINE {
            map.remove(key);
        }
    }
    let mut bytes = json.as_bytes().to_vec();
    bytes.push(0);
    bytes.extend_from_slice(figures.to_string().as_bytes());
    format!("{:016x}", simhash_io::line_hash(&bytes))
}

/// The page's JSON with its run id as the first field.
fn with_run_id(json: &str, run_id: &str) -> String {
    match json.strip_prefix('{') {
        Some("}") | None => format!("{{\"run_id\":\"{run_id}\"}}"),
        Some(rest) => format!("{{\"run_id\":\"{run_id}\",{rest}"),
    }
}

/// Writes the page.
pub(super) fn write(out: &mut impl Write, data: &Data, summary: &Summary) -> Result<()> {
    let run_id = run_id(&data.json, summary);
    let json = with_run_id(&data.json, &run_id);
    let mut page = String::with_capacity(json.len() + 64 * 1024);
    let title = format!("simhash {}: {}", data.command, summary.input);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{}</title>\n<style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    page.push_str(
        "<nav><a href=\"#figures\">figures</a> · <a href=\"#charts\">charts</a> · \
         <a href=\"#sampling\">what the page holds</a> · <a href=\"#pairs\">sampled pairs</a> · \
         <a href=\"#clusters\">largest clusters</a></nav>\n",
    );
    headline(&mut page, data, summary);
    figures(&mut page, summary);
    charts(&mut page, data);
    sampling(&mut page, data, &run_id);
    page.push_str(
        "<section id=\"pairs\"><h2>Sampled pairs</h2><noscript><p>The pairs and clusters \
         views need JavaScript; the figures above do not.</p></noscript>\
         <p class=\"keys\" id=\"label-keys\">Label each pair: <kbd>1</kbd> same document (the \
         same text, or a version, revision or copy of it), <kbd>2</kbd> template sibling \
         (different entities; beyond names, numbers or a few words filled in, one has no \
         content of its own), <kbd>3</kbd> distinct document (it has substantial content of \
         its own), <kbd>4</kbd> unsure, <kbd>0</kbd> no label. <kbd>j</kbd>/<kbd>k</kbd> \
         next/previous pair, <kbd>n</kbd> next unlabelled, <kbd>s</kbd> show or hide the \
         similarity and the tool's relation (hidden until a pair is labelled). Labels are \
         kept in this browser; <b>export</b> saves them as a labels file for <code>simhash \
         audit</code>.</p>\
         <div id=\"label-controls\"></div>\
         <div id=\"pairs-controls\"></div><div id=\"pairs-list\"></div></section>\n\
         <section id=\"clusters\"><h2>Largest clusters</h2><div id=\"clusters-list\"></div></section>\n",
    );
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"data\">{json}</script>\n<script>{JS}</script>\n</body></html>\n"
    );
    out.write_all(page.as_bytes())?;
    Ok(())
}

fn headline(page: &mut String, data: &Data, s: &Summary) {
    let pct = |n: u64| if s.documents == 0 { 0.0 } else { 100.0 * n as f64 / s.documents as f64 };
    page.push_str("<p class=\"headline\">");
    let _ = write!(
        page,
        "{} records read, {} skipped, {} documents. ",
        s.records_read, s.records_skipped, s.documents
    );
    match data.command {
        "dedup" => {
            let kept = s.documents.saturating_sub(s.removed);
            let _ =
                write!(page, "<b>{} removed ({:.1}%)</b>, {kept} kept", s.removed, pct(s.removed));
            if data.index_removed > 0 {
                let _ = write!(page, " ({} of the removals matched the index)", data.index_removed);
            }
        }
        "pairs" => {
            let _ = write!(page, "<b>{} pairs</b>", s.pairs);
        }
        _ => {
            let _ = write!(
                page,
                "<b>{} clusters</b> holding {} documents ({:.1}%), the largest of {}",
                s.clusters,
                s.documents_in_clusters,
                pct(s.documents_in_clusters),
                s.largest_cluster
            );
        }
    }
    page.push_str(".</p>\n");
}

/// A figure of the summary: its key, label and meaning.
type Figure = (&'static str, &'static str, &'static str);

/// The figures of the summary (what `--stats` writes) the page lists, by section: each
/// key, its label and what it means. A figure not listed here is shown under "Other".
const FIGURES: [(&str, &[Figure]); 3] = [
    (
        "Results",
        &[
            ("documents", "documents", "valid records matched"),
            ("removed", "removed", "records removed (dedup)"),
            ("written", "written", "records written to the output"),
            ("pairs", "pairs", "near-duplicate pairs found (those acted on)"),
            ("removed_by_relation", "removed by relation", "same text, or template siblings"),
            (
                "spared",
                "spared",
                "verified pairs not acted on: the document has content of its own",
            ),
            (
                "exact_duplicates",
                "exact duplicates",
                "pairs of identical fingerprints or shingle sets",
            ),
            ("clusters", "clusters", "clusters of two or more documents"),
            ("documents_in_clusters", "in clusters", "documents in those clusters"),
            ("largest_cluster", "largest cluster", "documents in the largest cluster"),
            ("big_clusters", "big clusters", "clusters larger than --big-cluster"),
            ("index_documents", "index documents", "documents in the index when opened"),
            ("index_matched", "index matches", "records that matched an indexed document"),
            ("index_added", "added to the index", "records added to the index"),
            ("index_already", "already indexed", "records the index already held (a rerun's)"),
        ],
    ),
    (
        "Input",
        &[
            ("input", "input", "the inputs, as named"),
            ("bytes_read", "bytes read", "bytes of input read"),
            ("records_read", "records read", "records read, valid or not"),
            ("records_skipped", "skipped", "records skipped (bad records, duplicate ids)"),
            ("skipped", "skipped by reason", "each reason's count"),
            ("records_not_sampled", "not sampled", "valid records left out by --sample"),
            ("blank_lines", "blank lines", "blank lines (not records)"),
            ("featureless", "featureless", "documents with no features: never matched"),
        ],
    ),
    (
        "Settings and work",
        &[
            ("command", "command", ""),
            ("method", "method", "simhash or minhash"),
            ("preset", "preset", "the fingerprinter's preset and window"),
            ("jaccard", "Jaccard threshold", "pairs at least this similar are verified matches"),
            ("lsh_bands", "LSH bands", "bands × rows of the MinHash signature"),
            ("band_key_bits", "band key bits", "bits of the band keys candidates are grouped by"),
            ("distance", "distance", "the most differing bits of a match (-k)"),
            ("blocks", "blocks", "blocks of the permutation tables"),
            ("tables", "tables", "permutation tables searched"),
            ("big_cluster_size", "--big-cluster", "clusters larger than this are warned of"),
            (
                "candidates",
                "candidates",
                "candidate pairs (sharing a band) whose set sizes allow the threshold",
            ),
            ("verified", "verified", "candidates whose exact Jaccard similarity was computed"),
            (
                "largest_candidate_component",
                "largest component",
                "documents in the largest group linked by shared bands: the unit of work",
            ),
            ("seconds", "seconds by phase", ""),
            ("seconds_total", "seconds", "the whole run"),
            ("peak_memory_bytes", "peak memory", "the process's peak resident memory"),
        ],
    ),
];

/// Figures of the summary the page leaves out: shown elsewhere on it.
const FIGURES_ELSEWHERE: [&str; 2] = ["largest_clusters", "annotated"];

/// The figures of the summary (what `--stats` writes), in sections, each explained.
fn figures(page: &mut String, summary: &Summary) {
    let Ok(Value::Object(map)) = serde_json::to_value(summary) else { return };
    page.push_str("<section id=\"figures\"><h2>Figures of the run</h2>\n");
    let listed = |key: &str| {
        FIGURES_ELSEWHERE.contains(&key)
            || FIGURES.iter().any(|(_, rows)| rows.iter().any(|(k, _, _)| *k == key))
    };
    let other: Vec<(&str, &str, &str)> =
        map.keys().filter(|k| !listed(k)).map(|k| (k.as_str(), k.as_str(), "")).collect();
    let sections = FIGURES.iter().map(|&(title, rows)| (title, rows.to_vec()));
    for (title, rows) in sections.chain(std::iter::once(("Other", other))) {
        let rows: Vec<_> = rows
            .into_iter()
            .filter_map(|(key, label, meaning)| Some((key, label, meaning, map.get(key)?)))
            .filter(|(_, _, _, v)| !v.is_null())
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = write!(page, "<table class=\"figures\"><caption>{}</caption>", escape(title));
        for (key, label, meaning, value) in rows {
            let shown = match value {
                Value::Object(inner) if inner.is_empty() => "none".to_string(),
                Value::Object(inner) => inner
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", plain(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
                Value::Number(n) if key == "peak_memory_bytes" => {
                    format!("{:.1} MiB", n.as_f64().unwrap_or(0.0) / (1024.0 * 1024.0))
                }
                v => plain(v),
            };
            let _ = writeln!(
                page,
                "<tr><th>{}</th><td>{}</td><td class=\"meaning\">{}</td></tr>",
                escape(&label.replace('_', " ")),
                escape(&texts::cut_label(&shown)),
                escape(meaning)
            );
        }
        page.push_str("</table>\n");
    }
    page.push_str("</section>\n");
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join("; "),
        Value::Object(inner) => {
            inner.iter().map(|(k, v)| format!("{k} {}", plain(v))).collect::<Vec<_>>().join(" ")
        }
        v => v.to_string(),
    }
}

fn charts(page: &mut String, data: &Data) {
    page.push_str("<section id=\"charts\"><h2>Charts</h2><div class=\"charts\">\n");
    let (what, unit) = match data.command {
        "dedup" => ("removals", "removed"),
        "pairs" => ("pairs", "in a pair"),
        _ => ("members beside the kept record", "not kept"),
    };
    if data.command != "cluster" {
        let measure = match data.measure {
            Scale::Distance(_) => "Hamming distance",
            Scale::Jaccard => "Jaccard similarity",
        };
        let of_index = if data.index_removed > 0 {
            format!(", {} of them matches of the index", data.index_removed)
        } else {
            String::new()
        };
        bars(
            page,
            &format!("{what} by {measure} ({} in all{of_index})", data.total_pairs),
            &data.histogram,
            false,
        );
    }
    if !data.relations.is_empty() {
        // `overlap` only in components mode: a record joined through others.
        let kinds = if data.relations.iter().any(|(name, _)| name == "overlap") {
            "same text, template siblings, content of its own joined through a component"
        } else {
            "same text, template siblings"
        };
        let title = format!("{what} by relation ({kinds})");
        bars(page, &title, &data.relations, false);
    }
    if !data.size_classes.is_empty() {
        bars(page, "clusters by size (log scale)", &data.size_classes, true);
    }
    let rows = |rows: &[Row]| -> Vec<(String, u64)> {
        rows.iter().map(|(name, _, f)| (name.clone(), *f)).collect()
    };
    bars(page, &format!("records {unit}, per input shard"), &rows(&data.shards), false);
    table(page, "per input shard", &data.shards, unit);
    if let Some((field, groups)) = &data.groups {
        bars(page, &format!("records {unit}, per value of {field}"), &rows(groups), false);
        table(page, &format!("per value of {field}"), groups, unit);
    }
    page.push_str("</div></section>\n");
}

/// A horizontal bar chart in SVG.
fn bars(page: &mut String, title: &str, bars: &[(String, u64)], log: bool) {
    const ROW: usize = 18;
    const LABEL: usize = 190;
    const WIDTH: usize = 600;
    let max = bars.iter().map(|b| b.1).max().unwrap_or(0).max(1);
    let scale = |n: u64| -> f64 {
        if log { (n as f64 + 1.0).ln() / (max as f64 + 1.0).ln() } else { n as f64 / max as f64 }
    };
    let height = ROW * bars.len() + 8;
    let _ = write!(
        page,
        "<figure class=\"chart\"><figcaption>{}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{height}\" role=\"img\">",
        escape(title)
    );
    for (i, (label, n)) in bars.iter().enumerate() {
        let y = i * ROW + 4;
        let w = (scale(*n) * (WIDTH - LABEL - 80) as f64).round();
        let short: String = label.chars().take(30).collect();
        let short = if short.len() < label.len() { format!("{short}…") } else { short };
        let _ = write!(
            page,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{LABEL}\" y=\"{y}\" width=\"{w}\" height=\"{}\"><title>{}: {n}</title></rect>\
             <text x=\"{}\" y=\"{}\">{n}</text>",
            LABEL - 6,
            y + 13,
            escape(&short),
            ROW - 4,
            escape(label),
            LABEL as f64 + w + 4.0,
            y + 13
        );
    }
    page.push_str("</svg></figure>\n");
}

fn table(page: &mut String, title: &str, rows: &[Row], unit: &str) {
    let _ = write!(
        page,
        "<table class=\"counts\"><caption>{}</caption><tr><th></th><th>records</th><th>{}</th><th>%</th></tr>",
        escape(title),
        escape(unit)
    );
    for (name, n, f) in rows {
        let pct = if *n == 0 { 0.0 } else { 100.0 * *f as f64 / *n as f64 };
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{n}</td><td>{f}</td><td>{pct:.1}</td></tr>",
            escape(name)
        );
    }
    page.push_str("</table>\n");
}

fn sampling(page: &mut String, data: &Data, run_id: &str) {
    page.push_str("<section id=\"sampling\"><h2>What the page holds</h2><ul>");
    let _ = write!(
        page,
        "<li>{} of {} pairs are shown: up to {} per similarity bucket above, chosen by a \
         hash of the two ids (the same page at any thread count); for labelling, the \
         buckets in turn and each one's pairs in the order of that hash, or by \
         similarity.</li>",
        data.sampled_pairs, data.total_pairs, data.per_bucket
    );
    if data.index_removed > 0 {
        let _ = write!(
            page,
            "<li>The {} removals that matched the index are counted in the charts, not shown: \
             their kept records are in the index, not in this run's input.</li>",
            data.index_removed
        );
    }
    let _ = write!(
        page,
        "<li>The {} largest clusters, each with its kept record and up to {} other members \
         (chosen by a hash of their ids).</li><li>Texts are cut at {} characters (the page \
         says where); ids, file names and group values at {}.</li><li>Shards and group values: the {} with the most records, the \
         rest summed.</li>",
        collect::LARGEST_CLUSTERS,
        collect::MEMBERS_SHOWN,
        texts::TEXT_CHARS,
        texts::LABEL_CHARS,
        ROWS_SHOWN
    );
    let _ = write!(
        page,
        "<li>Run id <code id=\"run-id\">{run_id}</code>: the labels given on this page are \
         kept in this browser under it, and <code>simhash audit</code> reads a labels file \
         exported here only with this page (a rerun of the same command on the same input \
         has the same id).</li>"
    );
    for note in &data.notes {
        let _ = write!(page, "<li class=\"note\">{}</li>", escape(note));
    }
    page.push_str("</ul></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_has_no_markup() {
        let hostile = "</script><img src=x onerror=alert(1)><!-- \u{2028}\u{2029} & '\"";
        let json = serde_json::to_string(&serde_json::json!({ "text": hostile })).unwrap();
        let safe = script_json(&json);
        for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            assert!(!safe.contains(bad), "{safe}");
        }
        let back: Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["text"], hostile);
    }

    #[test]
    fn escape_markup() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn top_rows_sum_the_rest() {
        let rows: Vec<Row> = (0..40).map(|i| (format!("s{i:02}"), 100 - i, i % 3)).collect();
        let total: (u64, u64) = rows.iter().fold((0, 0), |a, r| (a.0 + r.1, a.1 + r.2));
        let top = top_rows(rows);
        assert_eq!(top.len(), ROWS_SHOWN);
        assert_eq!(top[0].0, "s00");
        assert_eq!(top.iter().fold((0, 0), |a, r| (a.0 + r.1, a.1 + r.2)), total);
        assert!(top[ROWS_SHOWN - 1].0.starts_with("(other: 11 more)"));
    }
}
