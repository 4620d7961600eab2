//! `--report FILE.html`: one self-contained HTML page of a run (`dedup`, `cluster`,
//! `pairs`) for a person deciding whether to trust it. During the run a [`Report`]
//! gathers what the page needs without holding texts (`collect.rs`); after the run's own
//! passes one more pass reads the texts of the sampled records and the `--report-group`
//! values (`texts.rs`); at the end the page is rendered with the run's summary
//! (`html.rs`, with `page.css` and `page.js` inlined) and put in place with the other
//! outputs, all or none. The page's sampled pairs can be labelled in the browser and the
//! labels exported; [`crate::audit`] reads them back with the page's data (its run id and
//! every bucket's count) into a precision estimate.

use std::path::PathBuf;

use simhash_cluster::Clusters;
use simhash_index::lsh::{Relation, SpillStore};
use simhash_index::settings::Matching;
use simhash_io::{Output, Source};

use crate::against::IndexMatches;
use crate::corpus::Corpus;
use crate::error::Result;
use crate::session::Session;
use crate::settings::Input;
use crate::summary::Summary;

mod collect;
mod html;
mod texts;

pub use collect::{Measure, PAIRS_PER_BUCKET};

/// `--report FILE.html`, `--report-group FIELD` and `--report-sample N`.
#[derive(Clone, Debug)]
pub struct ReportSettings {
    /// Where the page goes (none: no page).
    pub report: Option<PathBuf>,
    /// The field whose values the page counts records and removals by.
    pub report_group: Option<String>,
    /// Pairs the page holds per similarity bucket (to read and to label).
    pub pairs_per_bucket: usize,
}

impl Default for ReportSettings {
    /// No page; [`PAIRS_PER_BUCKET`] pairs per bucket when there is one.
    fn default() -> ReportSettings {
        ReportSettings { report: None, report_group: None, pairs_per_bucket: PAIRS_PER_BUCKET }
    }
}

/// Adds `--report` to the run's outputs, so that it can be neither an input nor another
/// output.
pub fn plan(plan: &mut simhash_io::WritePlan, opts: &ReportSettings) {
    if let Some(path) = &opts.report {
        plan.output("--report", path);
    }
}

/// The page being gathered during a run.
#[allow(missing_debug_implementations)]
pub struct Report {
    out: Output,
    group: Option<String>,
    command: &'static str,
    pairs: collect::PairSample,
    clusters: Option<collect::ClusterView>,
    /// Removed (dedup), not kept (cluster) or in a pair (pairs).
    flagged: Vec<bool>,
    /// dedup --against: records removed as matches of the index (not sampled).
    index_removed: u64,
}

/// The rendered page waiting for the summary (see [`Session::finish`]).
#[allow(missing_debug_implementations)]
pub struct Pending {
    out: Output,
    data: html::Data,
}

impl Pending {
    /// Writes the page with the run's summary; returns the output to commit.
    pub fn write(self, summary: &Summary) -> Result<Output> {
        let mut out = self.out;
        html::write(&mut out, &self.data, summary)?;
        Ok(out)
    }
}

impl Report {
    /// The page's output, created now so that a bad path fails before any work; `None`
    /// without `--report`.
    pub fn open(
        opts: &ReportSettings,
        command: &'static str,
        matching: &Matching,
    ) -> Result<Option<Report>> {
        let Some(path) = &opts.report else { return Ok(None) };
        let measure = match *matching {
            Matching::Simhash { distance, .. } => Measure::Distance(distance),
            Matching::Minhash { .. } => Measure::Jaccard,
        };
        Ok(Some(Report {
            out: Output::create_for("--report", path)?,
            group: opts.report_group.clone(),
            command,
            pairs: collect::PairSample::new(measure, opts.pairs_per_bucket),
            clusters: None,
            flagged: Vec::new(),
            index_removed: 0,
        }))
    }

    fn flag(&mut self, doc: u32) {
        let doc = doc as usize;
        if self.flagged.len() <= doc {
            self.flagged.resize(doc + 1, false);
        }
        self.flagged[doc] = true;
    }

    /// `pairs`: a pair found, both records flagged.
    pub fn pair(
        &mut self,
        corpus: &Corpus,
        (a, b): (u32, u32),
        code: u32,
        relation: Option<Relation>,
    ) {
        self.pairs.add(corpus, collect::Pair { a, b, code, relation });
        self.flag(a);
        self.flag(b);
    }

    /// `cluster`: the clusters, every member but the kept one flagged.
    pub fn clusters(&mut self, corpus: &Corpus, clusters: &Clusters) {
        for doc in 0..corpus.len() as u32 {
            if !clusters.is_representative(doc) {
                self.flag(doc);
            }
        }
        self.clusters = Some(collect::cluster_view(corpus, clusters));
    }

    /// `dedup`: each removed record with its kept one, scored as `--removed` scores it, and
    /// the clusters.
    pub fn dedup(
        &mut self,
        corpus: &Corpus,
        sketches: Option<&SpillStore>,
        clusters: &Clusters,
        (jaccard, relation): (Option<&[f64]>, Option<&[Relation]>),
        index: Option<&IndexMatches>,
    ) -> Result<()> {
        for doc in 0..corpus.len() {
            if let Some(m) = index.and_then(|m| m.first[doc].as_ref()) {
                self.index_removed += 1;
                self.pairs.count(m.score, m.relation);
                self.flag(doc as u32);
                continue;
            }
            let rep = clusters.representative(clusters.cluster_of(doc as u32)) as usize;
            if rep == doc {
                continue;
            }
            let score = crate::matching::removal_score(corpus, sketches, jaccard, doc, rep)?;
            let related = crate::matching::removal_relation(sketches, relation, doc, rep)?;
            self.pairs.add_score(corpus, (doc as u32, rep as u32), score, related);
            self.flag(doc as u32);
        }
        self.clusters = Some(collect::cluster_view(corpus, clusters));
        Ok(())
    }

    /// After the run's passes: reads the sampled texts (and groups), and leaves the page
    /// with the session, which writes it with the summary at the end.
    pub fn finish(self, session: &mut Session, corpus: &Corpus, sources: &[Source], input: &Input) {
        session.reporter.phase("report", None);
        let sample = self.pairs.sample();
        let mut wanted: Vec<u32> = sample.iter().flat_map(|p| [p.a, p.b]).collect();
        if let Some(view) = &self.clusters {
            for c in &view.largest {
                wanted.push(c.kept);
                wanted.extend(&c.members);
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let flagged = |d: u32| self.flagged.get(d as usize).copied().unwrap_or(false);
        let mut found = texts::read(
            sources,
            corpus,
            &input.reading.parser,
            input.max_record_bytes,
            &wanted,
            self.group.as_deref(),
            &flagged,
        );
        // A group field no record has (a typo): every record would count as "(none)".
        if let Some(group) = &self.group
            && found.grouped == 0
            && !found.groups.is_empty()
        {
            let message = format!(
                "--report-group {group}: no record has a string field {group:?}; every record \
                 is counted as {}",
                texts::NO_VALUE
            );
            session.reporter.warning(&message);
            found.note.get_or_insert(message);
        }
        let data = html::Data::new(html::Parts {
            command: self.command,
            corpus,
            sources,
            pairs: &self.pairs,
            sample: &sample,
            clusters: self.clusters.as_ref(),
            flagged: &self.flagged,
            index_removed: self.index_removed,
            group: self.group.as_deref(),
            found,
            wanted: &wanted,
        });
        let pending = Pending { out: self.out, data };
        session.page = Some(Box::new(move |summary| pending.write(summary)));
    }
}
