//! `--report FILE.html`: one self-contained HTML page of a run (`dedup`, `cluster`,
//! `pairs`) for a person deciding whether to trust it. During the run a [`Report`]
//! gathers what the page needs without holding texts (`collect.rs`); after the run's own
//! passes one more pass reads the texts of the sampled records and the `--report-group`
//! values (`texts.rs`); at the end the page is rendered with the run's summary
//! (`html.rs`, with `page.css` and `page.js` inlined) and put in place with the other
//! outputs, all or none. The page's sampled pairs can be labelled in the browser and the
//! labels exported; [`crate::audit`] reads them back with the page's data (its run id and
//! every bucket's count) into a precision estimate.
//!
//! The page reads its documents through [`Documents`] (their ids): a file-read [`Corpus`],
//! whose texts are read again from the input files ([`Report::finish`]), or documents a
//! front end holds in memory ([`Held`], Python's texts), whose texts the caller hands over
//! ([`Report::finish_held`]). The same ids, decisions and scores give the same page data
//! either way.

use std::borrow::Cow;
use std::path::PathBuf;

use simhash_cluster::Clusters;
use simhash_index::lsh::{Relation, SpillStore};
use simhash_index::settings::Matching;
use simhash_io::{Output, Score, Source};

use crate::against::IndexMatches;
use crate::corpus::Corpus;
use crate::error::Result;
use crate::session::Session;
use crate::settings::Input;
use crate::summary::Summary;

mod collect;
mod html;
pub(crate) use html::escape;
mod texts;

pub use collect::{PAIRS_PER_BUCKET, Scale};

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

/// What the page reads of a run's documents, numbered from 0 as the run numbers them:
/// their ids. The sample of each similarity bucket and the members shown of a cluster are
/// chosen by a hash of the ids, so the same ids give the same page.
pub trait Documents {
    /// How many documents.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Document `doc`'s id.
    fn id(&self, doc: usize) -> Cow<'_, str>;
}

impl Documents for Corpus {
    fn len(&self) -> usize {
        Corpus::len(self)
    }

    fn id(&self, doc: usize) -> Cow<'_, str> {
        Corpus::id(self, doc)
    }
}

/// Documents a front end holds in memory rather than reads from files (Python's texts):
/// their ids, and one input, named as the page names an input file. Their texts are
/// handed to [`Report::finish_held`].
#[derive(Clone, Debug)]
pub struct Held {
    len: usize,
    /// Empty: each id is the document's position.
    ids: Vec<String>,
    input: String,
}

impl Held {
    /// `len` documents whose ids are their positions (`0`, `1`, …), as a file's records
    /// without ids are named by their line, from the input named `input`.
    pub fn positions(len: usize, input: impl Into<String>) -> Held {
        Held { len, ids: Vec::new(), input: input.into() }
    }

    /// A document for each id, from the input named `input`.
    pub fn with_ids(ids: Vec<String>, input: impl Into<String>) -> Held {
        Held { len: ids.len(), ids, input: input.into() }
    }
}

impl Documents for Held {
    fn len(&self) -> usize {
        self.len
    }

    fn id(&self, doc: usize) -> Cow<'_, str> {
        match self.ids.get(doc) {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned(doc.to_string()),
        }
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
        let measure = matching.distance().map_or(Scale::Jaccard, Scale::Distance);
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
        docs: &dyn Documents,
        (a, b): (u32, u32),
        code: u32,
        relation: Option<Relation>,
    ) {
        self.pairs.add(docs, collect::Pair { a, b, code, relation });
        self.flag(a);
        self.flag(b);
    }

    /// `cluster`: the clusters, every member but the kept one flagged.
    pub fn clusters(&mut self, docs: &dyn Documents, clusters: &Clusters) {
        for doc in 0..docs.len() as u32 {
            if !clusters.is_representative(doc) {
                self.flag(doc);
            }
        }
        self.clusters = Some(collect::cluster_view(docs, clusters));
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
        self.removals(corpus, clusters, index, |doc, rep| {
            let score = crate::matching::removal_score(corpus, sketches, jaccard, doc, rep)?;
            let related = crate::matching::removal_relation(sketches, relation, doc, rep)?;
            Ok((score, related))
        })
    }

    /// `dedup` over documents held in memory ([`Held`]): each removed document (one not
    /// the kept document of its cluster) with its kept one, scored by `score(removed,
    /// kept)` as `--removed` scores it (the walk's Jaccard similarity and relation, or the
    /// bits apart), and the clusters.
    pub fn dedup_held(
        &mut self,
        docs: &dyn Documents,
        clusters: &Clusters,
        score: impl Fn(usize, usize) -> (Score, Option<Relation>),
    ) {
        // Never fails: the scores are given.
        let _ = self.removals(docs, clusters, None, |doc, rep| Ok(score(doc, rep)));
    }

    /// Each removal (a match of the index, or a document not the kept one of its
    /// cluster), in document order, and the clusters.
    fn removals(
        &mut self,
        docs: &dyn Documents,
        clusters: &Clusters,
        index: Option<&IndexMatches>,
        mut score: impl FnMut(usize, usize) -> Result<(Score, Option<Relation>)>,
    ) -> Result<()> {
        for doc in 0..docs.len() {
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
            let (score, related) = score(doc, rep)?;
            self.pairs.add_score(docs, (doc as u32, rep as u32), score, related);
            self.flag(doc as u32);
        }
        self.clusters = Some(collect::cluster_view(docs, clusters));
        Ok(())
    }

    /// The documents whose texts the page shows, sorted: both of each sampled pair, and
    /// the kept record and members shown of each of the largest clusters.
    pub fn wanted(&self) -> Vec<u32> {
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
        wanted
    }

    /// After a run over documents held in memory: the page with `texts`, the text of each
    /// document of [`Report::wanted`] that can be shown (others are shown as not read),
    /// and with a group ([`ReportSettings::report_group`], its name) each document's value
    /// of it in `groups` (`None`: no value), waiting for the run's summary
    /// ([`Pending::write`]).
    pub fn finish_held(
        self,
        docs: &Held,
        texts: impl IntoIterator<Item = (u32, String)>,
        groups: Option<&[Option<String>]>,
    ) -> Pending {
        let mut found = texts::Found::default();
        found.texts = texts.into_iter().map(|(d, t)| (d, texts::truncate(&t))).collect();
        if let (Some(name), Some(values)) = (&self.group, groups) {
            let flagged = |d: u32| self.flagged.get(d as usize).copied().unwrap_or(false);
            texts::count_held_groups(&mut found, values, &flagged);
            if found.grouped == 0 && !found.groups.is_empty() {
                found.note.get_or_insert(format!(
                    "{name}: no record has a value; every record is counted as {}",
                    texts::NO_VALUE
                ));
            }
        }
        let shard = vec![0; docs.len];
        let names = [docs.input.clone()];
        self.render(docs, (&shard, &names), found)
    }

    /// The page of the run's documents (`shards`: each document's input and the inputs'
    /// names) with the texts `found`, waiting for the summary.
    fn render(
        self,
        docs: &dyn Documents,
        shards: (&[u32], &[String]),
        found: texts::Found,
    ) -> Pending {
        let sample = self.pairs.sample();
        let wanted = self.wanted();
        let data = html::Data::new(html::Parts {
            command: self.command,
            docs,
            shard: shards.0,
            shard_names: shards.1,
            pairs: &self.pairs,
            sample: &sample,
            clusters: self.clusters.as_ref(),
            flagged: &self.flagged,
            index_removed: self.index_removed,
            group: self.group.as_deref(),
            found,
            wanted: &wanted,
        });
        Pending { out: self.out, data }
    }

    /// After the run's passes: reads the sampled texts (and groups), and leaves the page
    /// with the session, which writes it with the summary at the end.
    pub fn finish(self, session: &mut Session, corpus: &Corpus, sources: &[Source], input: &Input) {
        session.reporter.phase("report", None);
        let wanted = self.wanted();
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
        let shard = collect::shard_of_docs(corpus);
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        let pending = self.render(corpus, (&shard, &names), found);
        session.page = Some(Box::new(move |summary| pending.write(summary)));
    }
}

#[cfg(test)]
mod tests {
    use simhash_index::Blocks;

    use super::*;

    /// The page's JSON data.
    fn data_of(page: &str) -> serde_json::Value {
        let start = page.find("id=\"data\">").unwrap() + "id=\"data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        serde_json::from_str(&page[start..end]).unwrap()
    }

    /// A run held in memory: the removals sampled and scored as given, the documents shown
    /// those of the pairs and clusters with the texts handed over (hostile ones as text),
    /// named by the held input; ids as positions when none are given.
    #[test]
    fn held_run_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        let settings =
            ReportSettings { report: Some(path.clone()), report_group: None, pairs_per_bucket: 2 };
        let matching = Matching::Simhash { distance: 3, blocks: Blocks::Auto };
        // 0 keeps 1; 2 keeps 3 and 4; 5 alone.
        let clusters = Clusters::from_centers(vec![0, 0, 2, 2, 2, 5]).unwrap();
        let distance = [0, 1, 0, 3, 3, 0];
        for (docs, ids) in [
            (
                Held::with_ids(["a", "b", "c", "d", "e", "f"].map(String::from).to_vec(), "mem"),
                "abcde",
            ),
            (Held::positions(6, "mem"), "01234"),
        ] {
            simhash_io::run::begin();
            let mut report = Report::open(&settings, "dedup", &matching).unwrap().unwrap();
            report.dedup_held(&docs, &clusters, |d, _| (Score::Distance(distance[d]), None));
            assert_eq!(report.wanted(), [0, 1, 2, 3, 4]);
            let texts = report.wanted().into_iter().map(|d| (d, format!("</script><b>{d}")));
            let out = report.finish_held(&docs, texts, None).write(&Summary::default()).unwrap();
            simhash_io::commit_all([out]).unwrap();
            let page = std::fs::read_to_string(&path).unwrap();
            assert!(!page.contains("</script><b>"));
            let data = data_of(&page);
            let shown: String = data["docs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["id"].as_str().unwrap())
                .collect();
            assert_eq!(shown, ids);
            for (i, doc) in data["docs"].as_array().unwrap().iter().enumerate() {
                assert_eq!(doc["text"], format!("</script><b>{i}"));
                assert_eq!(doc["shard"], "mem");
            }
            // One pair at 1 bit, two at 3 (bucket 3 holds 2), largest distance first.
            let pairs: Vec<(u64, u64, String)> = data["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap(), p[2].to_string()))
                .collect();
            assert_eq!(
                pairs,
                [(3, 2, "\"3\"".into()), (4, 2, "\"3\"".into()), (1, 0, "\"1\"".into())]
            );
            assert_eq!(data["clusters"][0]["size"], 3);
        }
    }

    /// `--report-group` of a run held in memory: every document counted under its value
    /// (none: `(none)`), with whether it was removed.
    #[test]
    fn held_run_groups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        let settings = ReportSettings {
            report: Some(path.clone()),
            report_group: Some("lang".into()),
            pairs_per_bucket: 2,
        };
        let matching = Matching::Simhash { distance: 3, blocks: Blocks::Auto };
        let clusters = Clusters::from_centers(vec![0, 0, 2, 2, 2, 5]).unwrap();
        let docs = Held::positions(6, "mem");
        let mut report = Report::open(&settings, "dedup", &matching).unwrap().unwrap();
        report.dedup_held(&docs, &clusters, |_, _| (Score::Distance(1), None));
        let groups = ["en", "en", "fr", "", "fr", "fr"].map(|g| (!g.is_empty()).then(|| g.into()));
        let out = report.finish_held(&docs, [], Some(&groups)).write(&Summary::default()).unwrap();
        simhash_io::commit_all([out]).unwrap();
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.contains("per value of lang"));
        // Removed: 1, 3 and 4.
        for row in ["<td>fr</td><td>3</td><td>1</td>", "<td>en</td><td>2</td><td>1</td>"] {
            assert!(page.contains(row), "{row}");
        }
        assert!(page.contains("<td>(none)</td><td>1</td><td>1</td>"));
    }
}
