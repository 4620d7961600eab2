//! Messages about bad records, progress bars, and the end-of-run summary.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use simhash_io::{Problem, Reason};

/// Reports bad records as `FILE:LINE: message` on stderr, counts them by reason, shows
/// progress, and times the phases of the run.
pub struct Reporter {
    strict: bool,
    quiet: bool,
    show_progress: bool,
    bar: Option<ProgressBar>,
    skipped: BTreeMap<Reason, u64>,
    empty: u64,
    phases: Vec<(&'static str, f64)>,
    phase_start: Option<(&'static str, Instant)>,
}

impl Reporter {
    /// A reporter that stops at the first bad record when `strict` and shows no progress or
    /// warnings when `quiet`.
    pub fn new(strict: bool, quiet: bool) -> Reporter {
        Reporter {
            strict,
            quiet,
            show_progress: !quiet && std::io::stderr().is_terminal(),
            bar: None,
            skipped: BTreeMap::new(),
            empty: 0,
            phases: Vec::new(),
            phase_start: None,
        }
    }

    /// Reports a bad record. With --strict it is an error that ends the run.
    pub fn problem(&mut self, file: &str, line: u64, problem: &Problem) -> anyhow::Result<()> {
        let message = problem.at(file, line).to_string();
        if self.strict {
            anyhow::bail!("{message} (stopped by --strict)");
        }
        *self.skipped.entry(problem.reason).or_default() += 1;
        self.print(&message);
        Ok(())
    }

    /// Reports an input file that cannot be read as records (its message names it), counted
    /// as one skipped record. With --strict it is an error that ends the run.
    pub fn bad_file(&mut self, problem: &Problem) -> anyhow::Result<()> {
        if self.strict {
            anyhow::bail!("{problem} (stopped by --strict)");
        }
        *self.skipped.entry(problem.reason).or_default() += 1;
        self.print(&problem.message);
        Ok(())
    }

    /// `simhash: MESSAGE` on stderr, above the progress bar if one is drawn.
    fn print(&self, message: &str) {
        let print = || {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "simhash: {}", simhash_io::printable(message));
        };
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Reports an input with no records at all (likely the wrong file): exit code 1, or an
    /// error with --strict.
    pub fn empty_input(&mut self, file: &str) -> anyhow::Result<()> {
        let message = format!("{file}: empty input, no records");
        if self.strict {
            anyhow::bail!("{message} (stopped by --strict)");
        }
        self.empty += 1;
        self.print(&message);
        Ok(())
    }

    /// Says, unless quiet, that standard input is about to be read from a terminal (a
    /// run given no input file would otherwise wait there without a word).
    pub fn reading_terminal(&mut self) {
        if !self.quiet && std::io::stdin().is_terminal() {
            self.print(
                "reading standard input from the terminal (no input file given): type or \
                 paste records, then Ctrl-D; Ctrl-C to stop",
            );
        }
    }

    /// How many input files were empty.
    pub fn empty_inputs(&self) -> u64 {
        self.empty
    }

    /// How many records were skipped, for every reason.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    /// Starts a phase: ends the previous one, and shows a spinner (or a byte bar when the
    /// total is known) while it runs.
    pub fn phase(&mut self, name: &'static str, total_bytes: Option<u64>) {
        self.end_phase();
        self.phase_start = Some((name, Instant::now()));
        if !self.show_progress {
            return;
        }
        let bar = match total_bytes {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{prefix:>9} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {msg} ({eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            ),
            // Reading a stream of unknown size: bytes so far and the rate.
            None if name == "reading" => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template(
                    "{prefix:>9} {spinner} {bytes} {bytes_per_sec} {msg} [{elapsed}]",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{prefix:>9} {spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_prefix(name);
        bar.enable_steady_tick(Duration::from_millis(120));
        self.bar = Some(bar);
    }

    /// Progress while reading: bytes and records so far.
    pub fn progress(&self, bytes: u64, records: u64) {
        if let (Some(bar), Some((_, start))) = (&self.bar, &self.phase_start) {
            bar.set_position(bytes);
            let secs = start.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{records} records, {:.0} docs/s", records as f64 / secs));
        }
    }

    /// A warning on stderr (not with --quiet): `simhash: warning: MESSAGE`.
    pub fn warning(&self, message: &str) {
        if !self.quiet {
            self.print(&format!("warning: {message}"));
        }
    }

    /// A message on the current phase's spinner.
    pub fn message(&self, msg: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(msg);
        }
    }

    /// Ends the phase running: clears its progress bar and notes its time.
    pub fn end_phase(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some((name, start)) = self.phase_start.take() {
            self.phases.push((name, start.elapsed().as_secs_f64()));
        }
    }

    /// Ends the run: the summary on stderr (unless quiet) and in the --stats file.
    pub fn finish(&mut self, mut summary: Summary, quiet: bool) -> Summary {
        self.end_phase();
        summary.skipped = self.skipped.iter().map(|(r, n)| (r.key().to_string(), *n)).collect();
        summary.records_skipped = self.skipped_total();
        summary.seconds = self.phases.iter().map(|(n, s)| ((*n).to_string(), round3(*s))).collect();
        summary.seconds_total = round3(self.phases.iter().map(|(_, s)| s).sum());
        summary.peak_memory_bytes = simhash_io::peak_memory();
        if !quiet {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "simhash: {}", summary.one_line());
        }
        summary
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A cluster over --big-cluster records: its size and the id of its kept record.
#[derive(Debug, Serialize)]
pub struct BigCluster {
    /// The cluster's size.
    pub size: u64,
    /// The id of the record kept.
    pub kept: String,
}

/// The run's counts: printed on stderr at the end and written by --stats as JSON.
#[derive(Debug, Default, Serialize)]
pub struct Summary {
    /// The command (`dedup`, `pairs`, …).
    pub command: &'static str,
    /// The inputs, as named.
    pub input: String,
    /// Bytes of input read.
    pub bytes_read: u64,
    /// Records read, valid or not.
    pub records_read: u64,
    /// Records skipped (bad records, duplicate ids).
    pub records_skipped: u64,
    /// Records skipped, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Valid records left out by `--sample`.
    pub records_not_sampled: u64,
    /// Blank lines (not records).
    pub blank_lines: u64,
    /// Documents matched.
    pub documents: u64,
    /// Documents without features (no fingerprint or sketch).
    pub featureless: u64,
    /// The fingerprinter: its preset and window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// The matching method (`simhash` or `minhash`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<&'static str>,
    /// minhash: the Jaccard threshold, the LSH bands × rows, and the work done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jaccard: Option<f64>,
    /// minhash: the LSH bands × rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lsh_bands: Option<String>,
    /// minhash: bits of the band keys the candidates were grouped by (32 or 64).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band_key_bits: Option<u32>,
    /// Pairs of identical fingerprints (or shingle sets), counted among the pairs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_duplicates: Option<u64>,
    /// minhash: candidate pairs whose set sizes allow the threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<u64>,
    /// minhash: candidates whose Jaccard similarity was computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<u64>,
    /// minhash: documents in the largest group linked by shared band hashes (the walk's
    /// and the components' unit of work).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub largest_candidate_component: Option<u64>,
    /// simhash: the blocks of the permutation tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<usize>,
    /// simhash: the most differing bits of a match (`-k`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// simhash: the permutation tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables: Option<usize>,
    /// Near-duplicate pairs found.
    pub pairs: u64,
    /// minhash: verified pairs not acted on for their relation (the document has content
    /// of its own; with `--templates keep`, or template siblings).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spared: Option<u64>,
    /// minhash: removals by relation (`same`, `template`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub removed_by_relation: Option<std::collections::BTreeMap<String, u64>>,
    /// Clusters of two or more documents.
    pub clusters: u64,
    /// Documents in those clusters.
    pub documents_in_clusters: u64,
    /// The size of the largest cluster.
    pub largest_cluster: u64,
    /// `--big-cluster`: clusters larger than this are warned about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub big_cluster_size: Option<u64>,
    /// Clusters larger than that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub big_clusters: Option<u64>,
    /// The largest clusters over --big-cluster records, and the record kept for each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub largest_clusters: Vec<BigCluster>,
    /// Records removed (`dedup`).
    pub removed: u64,
    /// Records written (with `--annotate`, the removed ones too).
    pub written: u64,
    /// `--annotate`: every record was written, the removed ones marked.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub annotated: bool,
    /// The on-disk index (`index add|query`, `dedup --against`): its documents when opened,
    /// the records that matched one of them, the records added to it, and the records it
    /// already held (the same id and the same content: a rerun's, not added again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_documents: Option<u64>,
    /// The records that matched an indexed document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_matched: Option<u64>,
    /// The records added to the index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_added: Option<u64>,
    /// The records the index already held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_already: Option<u64>,
    /// Seconds of each phase, by name.
    pub seconds: BTreeMap<String, f64>,
    /// Seconds of the whole run.
    pub seconds_total: f64,
    /// Peak resident memory of the process (Linux only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
}

impl Summary {
    /// The summary line on stderr.
    pub fn print(&self) {
        let _ = writeln!(std::io::stderr().lock(), "simhash: {}", self.one_line());
    }

    fn one_line(&self) -> String {
        let mut s = format!(
            "{} records read ({} skipped), {} documents ({} featureless)",
            self.records_read, self.records_skipped, self.documents, self.featureless
        );
        if self.records_not_sampled > 0 {
            let _ = write!(s, ", {} not sampled", self.records_not_sampled);
        }
        if let Some(n) = self.index_documents {
            let _ = write!(s, ", index of {n} documents");
        }
        if let Some(n) = self.index_matched {
            let _ = write!(s, ", {n} matched it");
        }
        if let Some(n) = self.index_added {
            let _ = write!(s, ", {n} added to it");
        }
        if let Some(n) = self.index_already.filter(|&n| n > 0) {
            let _ = write!(s, ", {n} already in it");
        }
        if matches!(self.command, "index add" | "index query") {
            return s + &format!(" in {:.2}s", self.seconds_total);
        }
        if self.command != "fingerprint" {
            let _ = write!(s, ", {} pairs", self.pairs);
        }
        if !matches!(self.command, "fingerprint" | "pairs" | "find-all") {
            let _ = write!(s, ", {} clusters (largest {})", self.clusters, self.largest_cluster);
        }
        if self.command == "dedup" && self.annotated {
            let kept = self.written.saturating_sub(self.removed);
            let _ = write!(
                s,
                ", {} removed, {kept} kept, all {} written annotated",
                self.removed, self.written
            );
        } else if self.command == "dedup" {
            let _ = write!(s, ", {} removed, {} kept", self.removed, self.written);
        }
        s + &format!(" in {:.2}s", self.seconds_total)
    }
}
