//! `simhash audit REPORT.html LABELS.jsonl`: how many of a run's removals were right, from
//! the pairs a person labelled on the run's `--report` page.
//!
//! The page embeds, in its JSON (`<script type="application/json" id="data">`), its run id,
//! the sampled pairs with their similarity bucket and the tool's relation, and each
//! bucket's count of pairs (removals for `dedup`). The labels file is what the page
//! exports: one JSON object a line, `{"run_id", "id_a", "id_b", "label"}`, the label one of
//! `DUP`, `TEMPLATE`, `DISTINCT`, `UNSURE` (`../shared/data/JUDGING.md`'s).
//!
//! The estimate (see `docs/audit.md`):
//! - per bucket, the share of each label among the bucket's labelled pairs, with a 95%
//!   Wilson score interval; a bucket without labels has no share, and its interval is the
//!   one from zero pairs, 0 to 1;
//! - weighted over the buckets with labels, the stratified estimate
//!   `p = Σ N_h p_h / Σ N_h` (`N_h` the pairs of bucket `h` the sample was drawn from,
//!   `p_h` its share), each labelled pair standing for `N_h / n_h` pairs of the run (`n_h`
//!   labelled of the bucket); its interval is Wilson's at p with Kish's effective sample
//!   size `n_eff = (Σ N_h)² / Σ (N_h² / n_h)`, which is `n` when every pair weighs the same.
//!   Deterministic: no resampling;
//! - the documents lost as distinct: `Σ N_h` times the weighted share of `DISTINCT`, with
//!   the interval scaled alike;
//! - the confusion matrix of the tool's relation against the labels: labelled pairs, and
//!   the pairs of the run they stand for.
//!
//! Buckets without labels and removals never sampled (`dedup --against`'s matches of the
//! index) are outside the weighted estimate, and it says how many pairs that leaves out.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Context as _, ErrorKind, JobError, Result};

/// The 97.5% quantile of the standard normal distribution: a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A label of a pair, as `JUDGING.md` defines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Label {
    /// The same document: a copy, version, revision or edition of the same text.
    Dup,
    /// Template siblings: different entities, one text the other with names, numbers or a
    /// few words filled in, and no content of its own beyond them.
    Template,
    /// Distinct documents: the removed one has substantial content of its own.
    Distinct,
    /// Cannot tell from what is shown.
    Unsure,
}

impl Label {
    /// The four, in order.
    pub const ALL: [Label; 4] = [Label::Dup, Label::Template, Label::Distinct, Label::Unsure];

    /// Its name in a labels file: `DUP`, `TEMPLATE`, `DISTINCT`, `UNSURE`.
    pub fn name(self) -> &'static str {
        match self {
            Label::Dup => "DUP",
            Label::Template => "TEMPLATE",
            Label::Distinct => "DISTINCT",
            Label::Unsure => "UNSURE",
        }
    }

    /// What it means, as the page's buttons say.
    pub fn meaning(self) -> &'static str {
        match self {
            Label::Dup => "same document",
            Label::Template => "template sibling",
            Label::Distinct => "distinct document",
            Label::Unsure => "unsure",
        }
    }

    /// The label of a name (any case).
    pub fn from_name(name: &str) -> Option<Label> {
        Label::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(name))
    }
}

/// A 95% Wilson score interval for a share `p` of `n` pairs (`n` may be an effective
/// size); from zero pairs, 0 to 1. The bounds are exact at the ends: 0 when `p` is 0, 1
/// when it is 1.
pub fn wilson(p: f64, n: f64) -> (f64, f64) {
    if n <= 0.0 || !p.is_finite() {
        return (0.0, 1.0);
    }
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    let low = if p <= 0.0 { 0.0 } else { (center - half).max(0.0) };
    let high = if p >= 1.0 { 1.0 } else { (center + half).min(1.0) };
    (low, high)
}

/// What `simhash audit` reads of a page.
#[derive(Clone, Debug)]
pub struct Page {
    /// The run's id.
    pub run_id: String,
    /// The command the page reports.
    pub command: String,
    /// `jaccard` or `distance`.
    pub measure: String,
    /// What the pairs are: `removals` (dedup) or `pairs`.
    pub what: String,
    /// The buckets with a pair, least similar first.
    pub buckets: Vec<Bucket>,
    /// The sampled pairs.
    pub pairs: Vec<PagePair>,
}

/// A similarity bucket of a page.
#[derive(Clone, Debug, Deserialize)]
pub struct Bucket {
    /// Its number.
    pub bucket: usize,
    /// Its label (`0.40–0.45`, `3 bits`).
    pub label: String,
    /// Every pair of the run in it.
    pub total: u64,
    /// Of those, the pairs never sampled (matches of the index).
    pub unsampled: u64,
    /// The pairs of it the page holds.
    pub sampled: u64,
}

/// A sampled pair of a page.
#[derive(Clone, Debug)]
pub struct PagePair {
    /// The removed (or first) record's id, as the page shows it.
    pub id_a: String,
    /// The kept (or second) record's id.
    pub id_b: String,
    /// Its score, as `--removed` prints it.
    pub score: String,
    /// The tool's relation (minhash).
    pub relation: Option<String>,
    /// Its bucket's number.
    pub bucket: usize,
}

#[derive(Deserialize)]
struct PageJson {
    #[serde(default)]
    run_id: Option<String>,
    command: String,
    measure: String,
    #[serde(default)]
    what: Option<String>,
    #[serde(default)]
    buckets: Option<Vec<Bucket>>,
    pairs: Vec<serde_json::Value>,
    docs: Vec<DocJson>,
}

#[derive(Deserialize)]
struct DocJson {
    id: String,
    /// The whole id, when `id` was cut for showing.
    #[serde(default)]
    full: Option<String>,
}

impl DocJson {
    /// The id a labels file names the record by.
    fn id(&self) -> &str {
        self.full.as_deref().unwrap_or(&self.id)
    }
}

/// The element that holds the page's JSON.
const DATA_OPEN: &str = r#"<script type="application/json" id="data">"#;

/// Reads a `--report` page's embedded data.
pub fn read_page(path: &Path) -> Result<Page> {
    let name = path.display();
    let html = std::fs::read_to_string(path)
        .map_err(|e| JobError::wrap(ErrorKind::Input, e))
        .with_context(|| format!("cannot read the report {name}"))?;
    parse_page(&html).with_context(|| format!("{name}"))
}

/// A page's embedded data, from its HTML.
pub fn parse_page(html: &str) -> Result<Page> {
    let bad = |what: &str| JobError::new(ErrorKind::Input, what.to_string());
    let start =
        html.find(DATA_OPEN).ok_or_else(|| bad("not a simhash --report page (no data element)"))?
            + DATA_OPEN.len();
    let end = html[start..]
        .find("</script>")
        .ok_or_else(|| bad("not a simhash --report page (its data element is not closed)"))?;
    let json: PageJson = serde_json::from_str(&html[start..start + end])
        .map_err(|e| JobError::new(ErrorKind::Input, format!("the page's data: {e}")))?;
    let (Some(run_id), Some(buckets)) = (json.run_id, json.buckets) else {
        return Err(bad("the page has no run id and bucket counts: made by a simhash without \
             labelling; run the command again"));
    };
    let mut pairs = Vec::with_capacity(json.pairs.len());
    for p in &json.pairs {
        let doc = |i: usize| {
            p.get(i).and_then(serde_json::Value::as_u64).and_then(|d| json.docs.get(d as usize))
        };
        let (Some(a), Some(b), Some(bucket)) =
            (doc(0), doc(1), p.get(4).and_then(serde_json::Value::as_u64))
        else {
            return Err(bad("the page's data: a pair without its records or bucket"));
        };
        pairs.push(PagePair {
            id_a: a.id().to_string(),
            id_b: b.id().to_string(),
            score: p.get(2).and_then(serde_json::Value::as_str).unwrap_or("").to_string(),
            relation: p.get(3).and_then(serde_json::Value::as_str).map(str::to_string),
            bucket: bucket as usize,
        });
    }
    if let Some(p) = pairs.iter().find(|p| !buckets.iter().any(|b| b.bucket == p.bucket)) {
        return Err(bad(&format!("the page's data: a pair of bucket {}, not listed", p.bucket)));
    }
    // Counts that agree with each other and with the pairs held, so that the estimate's
    // weights and sums are what they say (a page edited by hand is refused, not believed).
    let mut all = 0u64;
    for (i, b) in buckets.iter().enumerate() {
        if buckets[..i].iter().any(|earlier| earlier.bucket == b.bucket) {
            return Err(bad(&format!("the page's data: bucket {} listed twice", b.bucket)));
        }
        let held = pairs.iter().filter(|p| p.bucket == b.bucket).count() as u64;
        let population = b.total.checked_sub(b.unsampled);
        if population.is_none_or(|n| b.sampled > n) || b.sampled != held {
            return Err(bad(&format!(
                "the page's data: bucket {} counts {} pairs, {} never sampled and {} sampled, \
                 and holds {held}",
                b.bucket, b.total, b.unsampled, b.sampled
            )));
        }
        all = all
            .checked_add(b.total)
            .ok_or_else(|| bad("the page's data: more pairs than can be counted"))?;
    }
    let what = json
        .what
        .unwrap_or_else(|| if json.command == "dedup" { "removals" } else { "pairs" }.to_string());
    Ok(Page { run_id, command: json.command, measure: json.measure, what, buckets, pairs })
}

/// A labels file of another run than the report's: `simhash audit` refuses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtherRun {
    /// Where: `FILE:LINE` of the first label of another run.
    pub at: String,
    /// The labels' run id.
    pub labels: String,
    /// The report's run id.
    pub report: String,
    /// The report, as named.
    pub report_name: String,
}

impl std::fmt::Display for OtherRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let OtherRun { at, labels, report, report_name } = self;
        write!(
            f,
            "{at}: labels of run {labels}, not of run {report} ({report_name}): audit them with \
             the report of run {labels}"
        )
    }
}

impl std::error::Error for OtherRun {}

/// The labels of a labels file, matched to a page's pairs.
#[derive(Clone, Debug)]
pub struct Labels {
    /// The file, as named.
    pub name: String,
    /// Per pair of the page (in its order), the label given.
    pub of_pair: Vec<Option<Label>>,
    /// Lines that were labels of the page's pairs.
    pub read: u64,
    /// The lines that were not, each as `FILE:LINE: what`.
    pub problems: Vec<String>,
}

#[derive(Deserialize)]
struct LabelLine {
    run_id: Option<String>,
    id_a: Option<String>,
    id_b: Option<String>,
    label: Option<String>,
}

/// Reads a labels file against `page`. A line that is not a label of one of its pairs is a
/// problem (`FILE:LINE: what`), counted and left out; a line of another run is an error
/// that names both runs.
pub fn read_labels(path: &Path, page: &Page, report_name: &str) -> Result<Labels> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| JobError::wrap(ErrorKind::Input, e))
        .with_context(|| format!("cannot read the labels {name}"))?;
    // A line that is not UTF-8 is a bad line like any other (read as empty, then named).
    let mut not_text = Vec::new();
    let lines: Vec<&str> = bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| {
            std::str::from_utf8(line).unwrap_or_else(|_| {
                not_text.push(i + 1);
                ""
            })
        })
        .collect();
    let mut labels = parse_labels(&name, &lines.join("\n"), page, report_name)?;
    if !not_text.is_empty() {
        let line_of = |problem: &str| {
            problem[name.len() + 1..].split(':').next().and_then(|n| n.parse::<usize>().ok())
        };
        labels.problems.extend(not_text.iter().map(|n| format!("{name}:{n}: not UTF-8 text")));
        labels.problems.sort_by_key(|p| line_of(p));
    }
    Ok(labels)
}

/// [`read_labels`] of a file's text.
pub fn parse_labels(name: &str, text: &str, page: &Page, report_name: &str) -> Result<Labels> {
    let mut of_pair: Vec<Option<Label>> = vec![None; page.pairs.len()];
    let mut line_of: Vec<usize> = vec![0; page.pairs.len()];
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, p) in page.pairs.iter().enumerate() {
        index.entry((p.id_a.as_str(), p.id_b.as_str())).or_insert(i);
    }
    let mut labels =
        Labels { name: name.to_string(), of_pair: Vec::new(), read: 0, problems: vec![] };
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() {
            continue;
        }
        let mut problem = |what: String| labels.problems.push(format!("{name}:{n}: {what}"));
        let parsed: LabelLine = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => {
                problem(format!("not a label: {e}"));
                continue;
            }
        };
        match parsed.run_id.as_deref() {
            Some(id) if id == page.run_id => {}
            Some(id) => {
                return Err(JobError::wrap(
                    ErrorKind::Input,
                    OtherRun {
                        at: format!("{name}:{n}"),
                        labels: id.to_string(),
                        report: page.run_id.clone(),
                        report_name: report_name.to_string(),
                    },
                ));
            }
            None => {
                problem("no \"run_id\"".into());
                continue;
            }
        }
        let (Some(a), Some(b)) = (parsed.id_a.as_deref(), parsed.id_b.as_deref()) else {
            problem("no \"id_a\" and \"id_b\"".into());
            continue;
        };
        let Some(label) = parsed.label.as_deref().and_then(Label::from_name) else {
            problem(format!(
                "not a label: {} (DUP, TEMPLATE, DISTINCT or UNSURE)",
                parsed.label.as_deref().map_or("none".into(), |l| format!("{l:?}"))
            ));
            continue;
        };
        let Some(&i) = index.get(&(a, b)) else {
            problem(format!("the pair {a:?}, {b:?} is not on the page"));
            continue;
        };
        if of_pair[i].is_some() {
            problem(format!("the pair {a:?}, {b:?} was labelled on line {} already", line_of[i]));
            continue;
        }
        of_pair[i] = Some(label);
        line_of[i] = n;
        labels.read += 1;
    }
    labels.of_pair = of_pair;
    Ok(labels)
}

/// A label's share, with its 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Share {
    /// The label.
    pub label: &'static str,
    /// Pairs labelled so.
    pub count: u64,
    /// Their share (weighted, for the whole run); none without labels.
    pub share: Option<f64>,
    /// The interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

/// A bucket's estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketEstimate {
    /// The bucket's label.
    pub bucket: String,
    /// Every pair of the run in it.
    pub total: u64,
    /// The pairs the sample was drawn from (the total less the pairs never sampled).
    pub population: u64,
    /// The pairs of it the page holds.
    pub sampled: u64,
    /// The pairs of it labelled.
    pub labelled: u64,
    /// The pairs of the run each labelled pair stands for: population / labelled.
    pub weight: Option<f64>,
    /// Each label's share.
    pub shares: Vec<Share>,
}

/// The estimate over the buckets with labels.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Weighted {
    /// The pairs of the run the estimate covers (of the buckets with labels).
    pub population: u64,
    /// Every pair of the run (the chart's count).
    pub total: u64,
    /// The pairs labelled.
    pub labelled: u64,
    /// Kish's effective sample size; none without labels.
    pub effective_n: Option<f64>,
    /// Each label's weighted share.
    pub shares: Vec<Share>,
}

/// An estimated number of pairs, with its 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Count {
    /// The estimate; none without labels.
    pub estimate: Option<f64>,
    /// The interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// Out of how many pairs.
    pub of: u64,
}

/// The tool's relation against the labels.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Confusion {
    /// The rows: the relations of the labelled pairs (`none` without one: simhash).
    pub relations: Vec<String>,
    /// The columns.
    pub labels: Vec<&'static str>,
    /// Labelled pairs in each cell.
    pub pairs: Vec<Vec<u64>>,
    /// The pairs of the run they stand for (the sum of their weights).
    pub weighted: Vec<Vec<f64>>,
}

/// What `simhash audit` prints.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// The report, as named.
    pub report: String,
    /// The labels file, as named.
    pub labels_file: String,
    /// The run's id.
    pub run_id: String,
    /// The command the report is of.
    pub command: String,
    /// What its pairs are: `removals` or `pairs`.
    pub what: String,
    /// The labels, in the order of every list of shares.
    pub labels: Vec<&'static str>,
    /// Label lines read.
    pub labels_read: u64,
    /// Lines left out, each `FILE:LINE: what`.
    pub bad_lines: Vec<String>,
    /// The interval's method.
    pub interval: &'static str,
    /// Per bucket.
    pub buckets: Vec<BucketEstimate>,
    /// Over the buckets with labels.
    pub weighted: Weighted,
    /// Pairs labelled `DISTINCT`, as pairs of the run: for dedup, the documents lost.
    pub lost_as_distinct: Count,
    /// The buckets without labels, outside the weighted estimate.
    pub buckets_without_labels: Vec<String>,
    /// Pairs of the run outside the weighted estimate: those of buckets without labels,
    /// and those never sampled.
    pub not_covered: u64,
    /// Of those, the pairs never sampled (`dedup --against`: matches of the index).
    pub unsampled: u64,
    /// The tool's relation against the labels.
    pub confusion: Confusion,
}

/// Reads the report and the labels and estimates: what `simhash audit` does.
pub fn audit(report: &Path, labels: &Path) -> Result<Estimate> {
    let page = read_page(report)?;
    let name = report.display().to_string();
    let labels = read_labels(labels, &page, &name)?;
    Ok(estimate(&page, &labels, &name))
}

/// The estimate from a page and its labels.
pub fn estimate(page: &Page, labels: &Labels, report_name: &str) -> Estimate {
    let share = |label: Label, count: u64, p: Option<f64>, n: f64| {
        let (low, high) = p.map_or((0.0, 1.0), |p| wilson(p, n));
        Share { label: label.name(), count, share: p, low, high }
    };
    let mut buckets = Vec::new();
    let mut without = Vec::new();
    let (mut covered, mut labelled_all, mut kish) = (0u64, 0u64, 0.0f64);
    let mut weighted_sum = [0.0f64; 4];
    let mut counts_all = [0u64; 4];
    let mut weight_of_bucket: HashMap<usize, f64> = HashMap::new();
    for b in &page.buckets {
        let mut counts = [0u64; 4];
        for (p, l) in page.pairs.iter().zip(&labels.of_pair) {
            if let (true, Some(l)) = (p.bucket == b.bucket, l) {
                counts[*l as usize] += 1;
            }
        }
        let n: u64 = counts.iter().sum();
        let population = b.total.saturating_sub(b.unsampled);
        let weight = (n > 0).then(|| population as f64 / n as f64);
        if let Some(w) = weight {
            weight_of_bucket.insert(b.bucket, w);
            covered += population;
            labelled_all += n;
            kish += (population as f64) * (population as f64) / n as f64;
            for l in 0..4 {
                weighted_sum[l] += population as f64 * counts[l] as f64 / n as f64;
                counts_all[l] += counts[l];
            }
        } else if population > 0 {
            without.push(b.label.clone());
        }
        let shares = Label::ALL
            .iter()
            .map(|&l| {
                let k = counts[l as usize];
                share(l, k, (n > 0).then(|| k as f64 / n as f64), n as f64)
            })
            .collect();
        buckets.push(BucketEstimate {
            bucket: b.label.clone(),
            total: b.total,
            population,
            sampled: b.sampled,
            labelled: n,
            weight,
            shares,
        });
    }
    let total: u64 = page.buckets.iter().map(|b| b.total).sum();
    let unsampled: u64 = page.buckets.iter().map(|b| b.unsampled).sum();
    let effective_n = (covered > 0).then(|| (covered as f64) * (covered as f64) / kish);
    let n_eff = effective_n.unwrap_or(0.0);
    let p = |l: Label| (covered > 0).then(|| weighted_sum[l as usize] / covered as f64);
    let shares: Vec<Share> =
        Label::ALL.iter().map(|&l| share(l, counts_all[l as usize], p(l), n_eff)).collect();
    let distinct = &shares[Label::Distinct as usize];
    let lost_as_distinct = Count {
        estimate: distinct.share.map(|s| s * covered as f64),
        low: distinct.low * covered as f64,
        high: distinct.high * covered as f64,
        of: covered,
    };
    // The confusion matrix: the relations that labelled pairs have, in the tool's order.
    let names = ["same", "template", "overlap", "none"];
    let row = |p: &PagePair| {
        names.iter().position(|&r| Some(r) == p.relation.as_deref()).unwrap_or(names.len() - 1)
    };
    let mut pairs = vec![vec![0u64; 4]; names.len()];
    let mut weighted = vec![vec![0.0f64; 4]; names.len()];
    for (p, l) in page.pairs.iter().zip(&labels.of_pair) {
        if let Some(l) = l {
            pairs[row(p)][*l as usize] += 1;
            weighted[row(p)][*l as usize] +=
                weight_of_bucket.get(&p.bucket).copied().unwrap_or(0.0);
        }
    }
    let kept: Vec<usize> = (0..names.len()).filter(|&r| pairs[r].iter().any(|&n| n > 0)).collect();
    let confusion = Confusion {
        relations: kept.iter().map(|&r| names[r].to_string()).collect(),
        labels: Label::ALL.iter().map(|l| l.name()).collect(),
        pairs: kept.iter().map(|&r| pairs[r].clone()).collect(),
        weighted: kept.iter().map(|&r| weighted[r].clone()).collect(),
    };
    Estimate {
        report: report_name.to_string(),
        labels_file: labels.name.clone(),
        run_id: page.run_id.clone(),
        command: page.command.clone(),
        what: page.what.clone(),
        labels: Label::ALL.iter().map(|l| l.name()).collect(),
        labels_read: labels.read,
        bad_lines: labels.problems.clone(),
        interval: "95% Wilson score; weighted: Wilson at Kish's effective sample size",
        buckets,
        weighted: Weighted {
            population: covered,
            total,
            labelled: labelled_all,
            effective_n,
            shares,
        },
        lost_as_distinct,
        buckets_without_labels: without,
        not_covered: total - covered,
        unsampled,
        confusion,
    }
}

impl Estimate {
    /// The estimate as `simhash audit --json` prints it (and `simhash_rs.audit` reads it).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into()) + "\n"
    }

    /// The estimate as `simhash audit` prints it.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let what = self.what.as_str();
        let _ = writeln!(
            s,
            "audit of {} ({}, run {}): {} labels from {}{}",
            self.report,
            self.command,
            self.run_id,
            self.labels_read,
            self.labels_file,
            match self.bad_lines.len() {
                0 => String::new(),
                n => format!(", {n} bad lines left out"),
            }
        );
        let _ = writeln!(
            s,
            "shares of the labelled pairs in %, with 95% Wilson intervals; weight: {what} of the \
             bucket per pair labelled\n"
        );
        let _ = write!(
            s,
            "{:<16}{:>10}{:>9}{:>10}{:>9}",
            "bucket", what, "on page", "labelled", "weight"
        );
        for l in Label::ALL {
            let _ = write!(s, "  {:<21}", l.meaning());
        }
        s.push('\n');
        for b in &self.buckets {
            let weight = b.weight.map_or("-".to_string(), |w| format!("{w:.2}"));
            let _ = write!(
                s,
                "{:<16}{:>10}{:>9}{:>10}{:>9}",
                b.bucket, b.population, b.sampled, b.labelled, weight
            );
            if b.labelled == 0 {
                let _ = write!(
                    s,
                    "  no labels: each share is unknown, 0–100 (an interval from zero pairs)"
                );
            } else {
                for share in &b.shares {
                    let _ = write!(s, "  {:<21}", cell(share));
                }
            }
            s.push('\n');
        }
        let w = &self.weighted;
        let sampled: u64 = self.buckets.iter().map(|b| b.sampled).sum();
        let _ = write!(
            s,
            "{:<16}{:>10}{:>9}{:>10}{:>9}",
            "all (weighted)", w.population, sampled, w.labelled, ""
        );
        match w.effective_n {
            None => {
                let _ = write!(
                    s,
                    "  no labels: each share is unknown, 0–100 (an interval from zero pairs)"
                );
            }
            Some(n) => {
                for share in &w.shares {
                    let _ = write!(s, "  {:<21}", cell(share));
                }
                let _ = write!(s, "  (effective n {n:.1})");
            }
        }
        s.push_str("\n\n");
        let lost = &self.lost_as_distinct;
        let noun = if self.command == "dedup" {
            "documents lost as distinct"
        } else {
            "pairs of distinct documents"
        };
        match lost.estimate {
            Some(e) => {
                let _ = writeln!(
                    s,
                    "{noun}: {e:.0} of {} {what} (95%: {:.0}–{:.0})",
                    lost.of, lost.low, lost.high
                );
            }
            None => {
                let _ = writeln!(s, "{noun}: unknown, no labels");
            }
        }
        if self.not_covered > 0 {
            let mut parts = Vec::new();
            let without = self.not_covered - self.unsampled;
            if without > 0 {
                parts.push(format!(
                    "{without} in buckets without labels ({})",
                    self.buckets_without_labels.join(", ")
                ));
            }
            if self.unsampled > 0 {
                parts.push(format!("{} that matched the index (never sampled)", self.unsampled));
            }
            let _ = writeln!(
                s,
                "not in the estimate: {} of {} {what}: {}",
                self.not_covered,
                w.total,
                parts.join("; ")
            );
        }
        if !self.confusion.relations.is_empty() {
            let _ = write!(
                s,
                "\nthe tool's relation against the labels: pairs labelled (the {what} they stand for)\n{:<10}",
                "relation"
            );
            for l in Label::ALL {
                let _ = write!(s, "  {:<18}", l.meaning());
            }
            s.push('\n');
            for (r, relation) in self.confusion.relations.iter().enumerate() {
                let _ = write!(s, "{relation:<10}");
                for l in 0..Label::ALL.len() {
                    let c = format!(
                        "{} ({:.0})",
                        self.confusion.pairs[r][l], self.confusion.weighted[r][l]
                    );
                    let _ = write!(s, "  {c:<18}");
                }
                s.push('\n');
            }
        }
        s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
    }
}

/// A share as the table shows it: `50.0 (15.0–85.0)`.
fn cell(share: &Share) -> String {
    match share.share {
        Some(p) => format!("{:.1} ({:.1}–{:.1})", 100.0 * p, 100.0 * share.low, 100.0 * share.high),
        None => "-".to_string(),
    }
}

#[cfg(test)]
mod tests;
