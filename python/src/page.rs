//! [`DedupRun`]: what `DedupResult.report(path)` needs of a `dedup` run to write the page
//! `simhash dedup --report` writes ([`simhash_jobs::page`]): the settings, each document's
//! kept document, score and relation, the run's figures, and a hash of each text as the
//! run read it (so that texts handed back later are known to be the same).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use simhash_cluster::Clusters;
use simhash_index::lsh::Relation;
use simhash_index::settings::Matching;
use simhash_io::Score;
use simhash_jobs::Summary;
use simhash_jobs::page::{Held, Report, ReportSettings};

/// `--big-cluster`'s default: the clusters the page's figures count as big.
const BIG_CLUSTER: usize = simhash_jobs::DEFAULT_BIG_CLUSTER;

/// A `dedup` run, kept by its `DedupResult` for `report()`.
#[pyclass(module = "simhash_rs._native", frozen)]
pub(crate) struct DedupRun {
    matching: Matching,
    /// Each document's kept document (itself when kept).
    center: Vec<u32>,
    /// Each removed document's score against its kept one as [`Score::code`] (4 bytes a
    /// text rather than 16; the kept ones': unused).
    codes: Vec<u32>,
    /// minhash: each removed document's relation to its kept one.
    relation: Option<Vec<Relation>>,
    /// Each text's hash ([`simhash_io::line_hash`] of its UTF-8) as the run read it.
    hashes: Vec<u64>,
    /// The run's figures, as `--stats` would write them.
    summary: Summary,
}

/// What the matcher knew of the run beside the walk: for the figures.
pub(crate) struct Figures {
    /// The fingerprinter's preset and window, as `--stats` names them.
    pub preset: String,
    /// minhash: the LSH bands × rows, and the band keys' bits.
    pub lsh: Option<(String, u32)>,
    /// Bytes of text (UTF-8).
    pub bytes: u64,
    /// Texts without features.
    pub featureless: u64,
    /// When the matcher was made.
    pub started: Instant,
}

impl DedupRun {
    /// The run of `walked` (its scores computed by the caller: `scores[d]` for each removed
    /// `d`) over texts whose hashes are `hashes`; `summary` holds what the matching steps
    /// noted.
    pub(crate) fn new(
        matching: Matching,
        walked: simhash_jobs::matching::Walked,
        scores: Vec<Score>,
        hashes: Vec<u64>,
        mut summary: Summary,
        figures: &Figures,
    ) -> PyResult<DedupRun> {
        let n = walked.center.len();
        let clusters =
            Clusters::from_centers(walked.center.clone()).map_err(crate::errors::value)?;
        let s = &mut summary;
        s.command = "dedup";
        s.input = input_name(n);
        s.note_matching(&matching);
        s.bytes_read = figures.bytes;
        s.records_read = n as u64;
        s.documents = n as u64;
        s.featureless = figures.featureless;
        s.preset = Some(figures.preset.clone());
        if let Some((bands, bits)) = &figures.lsh {
            s.lsh_bands = Some(bands.clone());
            s.band_key_bits = Some(*bits);
        }
        let stats = clusters.stats(BIG_CLUSTER);
        s.clusters = stats.clusters as u64;
        s.documents_in_clusters = stats.clustered as u64;
        s.largest_cluster = stats.largest as u64;
        s.big_cluster_size = Some(BIG_CLUSTER as u64);
        s.big_clusters = Some(stats.oversized as u64);
        let removed: Vec<usize> = walked
            .center
            .iter()
            .enumerate()
            .filter(|&(d, &c)| c as usize != d)
            .map(|(d, _)| d)
            .collect();
        s.removed = removed.len() as u64;
        s.written = (n - removed.len()) as u64;
        s.removed_by_relation = walked.relation.as_ref().map(|relation| {
            let mut counts = BTreeMap::new();
            for &d in &removed {
                *counts.entry(relation[d].name().to_string()).or_default() += 1;
            }
            counts
        });
        s.seconds_total = figures.started.elapsed().as_secs_f64();
        Ok(DedupRun {
            matching,
            center: walked.center,
            codes: scores.into_iter().map(Score::code).collect(),
            relation: walked.relation,
            hashes,
            summary,
        })
    }
}

impl DedupRun {
    /// Document `d`'s score, from its code: the distance, or the Jaccard similarity to
    /// the 4 decimals that `--removed` prints (whose code is the same).
    fn score(&self, d: usize) -> Score {
        match self.matching.distance() {
            None => Score::Jaccard(f64::from(self.codes[d]) / 10_000.0),
            Some(_) => Score::Distance(self.codes[d]),
        }
    }
}

/// The name the page gives the input of a run over `n` texts from Python.
fn input_name(n: usize) -> String {
    format!("{n} texts from Python")
}

#[pymethods]
impl DedupRun {
    /// Writes the page to `path` (atomically: a temporary file renamed over it): the
    /// removals sampled by a hash of `ids` (`None`: positions), `sample` per similarity
    /// bucket, with the texts `text_at(position)` returns for the sampled documents, each
    /// checked against the text the run read; with `group`, its name and each text's
    /// value, the records and removals counted by value (`--report-group`).
    #[pyo3(signature = (path, ids, text_at, sample, group=None))]
    fn report(
        &self,
        path: PathBuf,
        ids: Option<Vec<String>>,
        text_at: &Bound<'_, PyAny>,
        sample: usize,
        group: Option<(String, Vec<Option<String>>)>,
    ) -> PyResult<()> {
        let n = self.center.len();
        if let Some(ids) = &ids
            && ids.len() != n
        {
            return Err(PyValueError::new_err(format!("{} ids for a run of {n} texts", ids.len())));
        }
        if let Some((_, values)) = &group
            && values.len() != n
        {
            return Err(PyValueError::new_err(format!(
                "{} group values for a run of {n} texts",
                values.len()
            )));
        }
        if sample == 0 {
            return Err(PyValueError::new_err("sample must be at least 1"));
        }
        // The outputs of an earlier call are not this one's (the check that an output is
        // not written twice is per run).
        simhash_io::run::begin();
        let (report_group, values) = group.unzip();
        let settings =
            ReportSettings { report: Some(path), report_group, pairs_per_bucket: sample };
        let mut report = Report::open(&settings, "dedup", &self.matching)
            .map_err(crate::errors::job)?
            .ok_or_else(|| PyValueError::new_err("no path"))?;
        let docs = match ids {
            Some(ids) => Held::with_ids(ids, input_name(n)),
            None => Held::positions(n, input_name(n)),
        };
        let clusters = Clusters::from_centers(self.center.clone()).map_err(crate::errors::value)?;
        report.dedup_held(&docs, &clusters, |d, _| {
            (self.score(d), self.relation.as_ref().map(|r| r[d]))
        });
        let mut texts = Vec::new();
        for d in report.wanted() {
            let item = text_at.call1((d,))?;
            let Ok(text) = item.extract::<String>() else {
                let kind =
                    item.get_type().name().map_or_else(|_| "?".to_owned(), |n| n.to_string());
                return Err(PyTypeError::new_err(format!("texts[{d}] is {kind}, not str")));
            };
            if simhash_io::line_hash(text.as_bytes()) != self.hashes[d as usize] {
                return Err(PyValueError::new_err(format!(
                    "texts[{d}] is not the text dedup read: pass the texts the run was given, \
                     in the same order"
                )));
            }
            texts.push((d, text));
        }
        let out = report
            .finish_held(&docs, texts, values.as_deref())
            .write(&self.summary)
            .map_err(crate::errors::job)?;
        simhash_io::commit_all([out]).map_err(|e| PyOSError::new_err(e.to_string()))
    }
}
