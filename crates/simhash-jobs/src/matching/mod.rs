//! Matching and clustering a corpus: the pairs of near-duplicates, and the clusters in
//! either mode with the record each keeps. The engines are the index crate's; this module
//! picks them, reports progress and notes their counts in the summary.

use simhash_cluster::{Clusters, KeepPolicy, Mode as ClusterMode, Representative};
use simhash_index::Blocks;
use simhash_index::lsh::{self, Relation, SpillStore};
use simhash_io::Score;

use simhash_index::settings::Matching;

use crate::corpus::Corpus;
use crate::error::{Context, Result, ensure};
use crate::session::Session;
use crate::settings::Grouping;
use crate::summary;

mod engines;

pub use self::engines::{Features, Steps, Walked, components, fingerprint_pairs, pairs, walk};

impl Session {
    /// The session's pool, progress, memory budget and summary, lent to a matching step
    /// ([`Steps`]). (Beside the steps, not in `session.rs`, which the steps' module would
    /// then import back.)
    pub fn steps(&mut self) -> Steps<'_> {
        Steps {
            summary: &mut self.summary,
            reporter: Some(&mut self.reporter),
            pool: Some(&self.pool),
            memory: self.memory,
        }
    }
}

/// What a pair's score measures under `matching` (the pairs TSV's third column): bits
/// apart, or the Jaccard similarity.
pub fn measure(matching: &Matching) -> simhash_io::Measure {
    match matching {
        Matching::Simhash { .. } => simhash_io::Measure::Distance,
        Matching::Minhash { .. } => simhash_io::Measure::Jaccard,
    }
}

/// What matching reads of the corpus for `matching`: its sketches (minhash) or its
/// fingerprints (simhash).
pub fn features<'a>(corpus: &'a Corpus, matching: &Matching) -> Result<Features<'a>> {
    Ok(match matching {
        Matching::Minhash { .. } => Features::Sketches(sketches_of(corpus)?),
        Matching::Simhash { .. } => Features::Fingerprints(corpus.fingerprints()),
    })
}

/// Finds the matching pairs of documents and calls `sink` with each pair of positions
/// `(a, b, score)`, `a < b`, once: [`pairs`] over the corpus's features.
pub fn match_docs(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    sink: impl FnMut(u32, u32, Score, Option<Relation>) + Send,
) -> Result<()> {
    pairs(&mut session.steps(), features(corpus, matching)?, matching, sink)
}

fn sketches_of(corpus: &Corpus) -> Result<&SpillStore> {
    corpus.sketches.as_ref().context("internal error: no MinHash sketches")
}

/// Runs the index over `fps` and calls `sink` with each pair of positions `(a, b,
/// distance)`, `a < b`, each pair once; returns the number of pairs
/// ([`fingerprint_pairs`] in the session).
pub fn match_fingerprints(
    session: &mut Session,
    fps: &[simhash_core::Fingerprint],
    distance: u32,
    blocks: Blocks,
    sink: impl FnMut(u32, u32, u32) + Send,
) -> Result<u64> {
    fingerprint_pairs(&mut session.steps(), fps, distance, blocks, sink)
}

/// Each document's place in the keep policy's priority order (0 first): input order,
/// longest text first (ties in input order), or lowest id first; the library's
/// [`Representative::ranks`] over the texts' lengths or the ids' ranks.
pub fn priority(corpus: &Corpus, keep: KeepPolicy) -> Result<Vec<u32>> {
    with_policy(corpus, keep, |policy| policy.ranks(corpus.len())).context("too many documents")
}

/// Calls `f` with the keep policy as the library's [`Representative`]: over the texts'
/// lengths, or the ids' ranks ([`id_ranks`]).
fn with_policy<R>(corpus: &Corpus, keep: KeepPolicy, f: impl FnOnce(Representative) -> R) -> R {
    match keep {
        KeepPolicy::First => f(Representative::First),
        KeepPolicy::Longest => f(Representative::Longest(corpus.lens())),
        KeepPolicy::LowestId => f(Representative::Lowest(&id_ranks(corpus))),
    }
}

/// Near-duplicate clusters, and for the star walk with minhash each removed document's
/// Jaccard similarity to its kept one.
#[derive(Debug)]
pub struct Grouped {
    /// The clusters (with the star walk, each removed document's kept one).
    pub clusters: Clusters,
    /// With the star walk and minhash: each removed document's Jaccard similarity to its kept one.
    pub jaccard: Option<Vec<f64>>,
    /// With the star walk and minhash: each removed document's relation to its kept one.
    pub relation: Option<Vec<Relation>>,
}

/// Near-duplicate clusters of the corpus, in the mode and with the representatives asked.
pub fn clusters(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    grouping: &Grouping,
) -> Result<Grouped> {
    clusters_of(session, corpus, matching, grouping, None)
}

/// [`clusters`] in star mode with the `hidden` documents passed over as if they had no
/// features (each is its own cluster): `dedup --against` hides the records that matched
/// the index, which are removed whatever the walk finds.
pub fn star_clusters_without(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    grouping: &Grouping,
    hidden: &[bool],
) -> Result<Grouped> {
    ensure!(grouping.mode == ClusterMode::Star, Internal, "internal error: hiding needs star mode");
    clusters_of(session, corpus, matching, grouping, Some(hidden))
}

fn clusters_of(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    grouping: &Grouping,
    hidden: Option<&[bool]>,
) -> Result<Grouped> {
    let opts = grouping;
    let (mut jaccard_of, mut relation_of) = (None, None);
    let features = features(corpus, matching)?;
    let clusters = match grouping.mode {
        ClusterMode::Components => {
            let uf = components(&mut session.steps(), features, matching)?;
            session.reporter.phase("clustering", None);
            with_policy(corpus, opts.keep, |policy| uf.into_clusters_with(&policy))
                .context("clustering failed")?
        }
        ClusterMode::Star => {
            let rank = priority(corpus, opts.keep)?;
            let walked = walk(&mut session.steps(), features, matching, &rank, hidden)?;
            jaccard_of = walked.jaccard;
            relation_of = walked.relation;
            session.reporter.phase("clustering", None);
            Clusters::from_centers(walked.center).context("clustering failed")?
        }
    };
    let stats = clusters.stats(opts.big_cluster);
    let s = &mut session.summary;
    s.clusters = stats.clusters as u64;
    s.documents_in_clusters = stats.clustered as u64;
    s.largest_cluster = stats.largest as u64;
    s.big_cluster_size = Some(opts.big_cluster as u64);
    s.big_clusters = Some(stats.oversized as u64);
    warn_big_clusters(session, corpus, &clusters, opts.big_cluster);
    Ok(Grouped { clusters, jaccard: jaccard_of, relation: relation_of })
}

/// How many of the largest clusters a warning names.
const BIG_CLUSTERS_NAMED: usize = 5;

/// Names the largest clusters over `big` members and their kept records, in the summary
/// (for --stats) and on stderr, so that a template flood does not vanish silently.
fn warn_big_clusters(session: &mut Session, corpus: &Corpus, clusters: &Clusters, big: usize) {
    let mut sizes: Vec<(usize, u32)> = (0..clusters.len() as u32)
        .map(|c| (clusters.size(c), c))
        .filter(|&(size, _)| size > big)
        .collect();
    if sizes.is_empty() {
        return;
    }
    let count = sizes.len();
    sizes.sort_unstable_by_key(|&(size, c)| (std::cmp::Reverse(size), c));
    sizes.truncate(BIG_CLUSTERS_NAMED);
    let named: Vec<summary::BigCluster> = sizes
        .iter()
        .map(|&(size, c)| summary::BigCluster {
            size: size as u64,
            kept: corpus.id(clusters.representative(c) as usize).into_owned(),
        })
        .collect();
    let list: Vec<String> =
        named.iter().map(|b| format!("{} records (kept: {:?})", b.size, b.kept)).collect();
    session.reporter.warning(&format!(
        "{count} cluster{} larger than {big} records (--big-cluster): {}{}",
        if count == 1 { " is" } else { "s are" },
        list.join(", "),
        if count > named.len() { ", ..." } else { "" }
    ));
    session.summary.largest_clusters = named;
}

/// Each document's rank when ids are sorted in [`KeepPolicy::key`]'s order (the one
/// `simhash-dist` sends between workers): numerically when both ids are integers, bytewise
/// otherwise (numbers before other ids), then by position.
fn id_ranks(corpus: &Corpus) -> Vec<u64> {
    if corpus.ids_are_line_numbers() {
        // Line numbers, increasing with the document: the ranks are the documents.
        return (0..corpus.len() as u64).collect();
    }
    let mut order: Vec<u32> = (0..corpus.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (id_a, id_b) = (corpus.id(a as usize), corpus.id(b as usize));
        let key = |d: u32, id| KeepPolicy::LowestId.key(u64::from(d), 0, id);
        key(a, &id_a).cmp(&key(b, &id_b))
    });
    let mut ranks = vec![0u64; corpus.len()];
    for (rank, &doc) in order.iter().enumerate() {
        ranks[doc as usize] = rank as u64;
    }
    ranks
}

/// The relation of removed document `doc` to its kept one `rep`, as `--removed` prints it:
/// the walk's, or (components) read from their tokens; none with simhash.
pub fn removal_relation(
    sketches: Option<&SpillStore>,
    relation: Option<&[Relation]>,
    doc: usize,
    rep: usize,
) -> Result<Option<Relation>> {
    Ok(match (relation, sketches) {
        (Some(relation), _) => Some(relation[doc]),
        (None, Some(sketches)) => Some(lsh::relation_in(sketches, doc, rep)?),
        (None, None) => None,
    })
}

/// The score of removed document `doc` against its kept one `rep`, as `--removed` prints
/// it: the walk's Jaccard, the Jaccard of the sketches, or the Hamming distance.
pub fn removal_score(
    corpus: &Corpus,
    sketches: Option<&SpillStore>,
    jaccard: Option<&[f64]>,
    doc: usize,
    rep: usize,
) -> Result<Score> {
    Ok(match (sketches, jaccard) {
        (_, Some(jaccard)) => Score::Jaccard(jaccard[doc]),
        (Some(sketches), None) => {
            Score::Jaccard(lsh::similarity(sketches, doc as u32, rep as u32)?)
        }
        (None, None) => Score::Distance(match (corpus.fingerprint(doc), corpus.fingerprint(rep)) {
            (Some(a), Some(b)) => a.distance(b),
            _ => 0,
        }),
    })
}
