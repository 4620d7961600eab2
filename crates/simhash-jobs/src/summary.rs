//! The run's figures: printed on stderr at the end (one line) and written by `--stats` as
//! JSON; the `--report` page lists them too.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

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
    /// The records whose id the index holds with other content: reported (`FILE:LINE`),
    /// never added, and otherwise decided as the others; counted among the documents, not
    /// the skipped records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_ids_taken: Option<u64>,
    /// Seconds of each phase, by name.
    pub seconds: BTreeMap<String, f64>,
    /// Seconds of the whole run.
    pub seconds_total: f64,
    /// Peak resident memory of the process (Linux only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// `decontaminate`: the settings, the hits, and each eval set's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decontamination: Option<Decontamination>,
}

/// What `decontaminate` found: its settings and totals, and each eval set's figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Decontamination {
    /// Words in an n-gram.
    pub ngram: usize,
    /// The minimum overlap.
    pub min_overlap: f64,
    /// The document-frequency limit, as `--max-df` reads it (`none`, a count, a share).
    pub max_df: String,
    /// Contaminated (document, item) pairs.
    pub hits: u64,
    /// Documents with at least one hit.
    pub documents_hit: u64,
    /// Distinct eval n-grams.
    pub ngrams: u64,
    /// Distinct eval n-grams dropped for their document frequency.
    pub ngrams_dropped: u64,
    /// Records of the eval sets reported as bad and left out (not counted in the corpus's
    /// skipped records).
    pub eval_records_skipped: u64,
    /// Each eval set, in the order given.
    pub evals: Vec<EvalFigures>,
}

impl Decontamination {
    /// The per-eval table a front end prints after a run: a header line, then a line per
    /// eval set (items, items found, documents hit, n-grams dropped of the set's).
    pub fn table(&self) -> Vec<String> {
        let row = |a: &str, b: &str, c: &str, d: &str, e: &str| {
            format!("{a:<20} {b:>8} {c:>12} {d:>14} {e:>16}")
        };
        let mut lines =
            vec![row("eval set", "items", "items found", "documents hit", "n-grams dropped")];
        for e in &self.evals {
            lines.push(row(
                &e.name,
                &e.items.to_string(),
                &e.items_found.to_string(),
                &e.documents_hit.to_string(),
                &format!("{} of {}", e.ngrams_dropped, e.ngrams),
            ));
        }
        lines
    }
}

/// One eval set's part of [`Decontamination`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct EvalFigures {
    /// The set's name.
    pub name: String,
    /// Its items.
    pub items: u64,
    /// Its items found in at least one document.
    pub items_found: u64,
    /// Documents that contain at least one of its items.
    pub documents_hit: u64,
    /// Its distinct n-grams.
    pub ngrams: u64,
    /// Those dropped for their document frequency.
    pub ngrams_dropped: u64,
    /// Its items that can match nothing (no words, or every n-gram dropped).
    pub unmatchable: u64,
}

impl Summary {
    /// Notes the method (and the Jaccard threshold).
    pub fn note_matching(&mut self, matching: &simhash_index::settings::Matching) {
        self.method = Some(matching.method());
        if let simhash_index::settings::Matching::Minhash { jaccard, .. } = *matching {
            self.jaccard = Some(jaccard);
        }
    }

    /// The summary line a command line prints on stderr at the end (after `simhash: `).
    pub fn line(&self) -> String {
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
        if let Some(n) = self.index_ids_taken {
            let _ = write!(s, ", {n} with an id it holds with other content");
        }
        if let Some(d) = &self.decontamination {
            let _ = write!(
                s,
                ", {} hits in {} documents, {} of {} eval n-grams dropped",
                d.hits, d.documents_hit, d.ngrams_dropped, d.ngrams
            );
            if d.eval_records_skipped > 0 {
                let _ = write!(s, ", {} eval records skipped", d.eval_records_skipped);
            }
            if self.annotated {
                let _ = write!(
                    s,
                    ", {} contaminated, all {} written annotated",
                    self.removed, self.written
                );
            } else if self.written > 0 || self.removed > 0 {
                let _ = write!(s, ", {} removed", self.removed);
            }
            return s + &format!(" in {:.2}s", self.seconds_total);
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
