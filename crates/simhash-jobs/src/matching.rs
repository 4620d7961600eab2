//! Matching and clustering a corpus: the pairs of near-duplicates, and the clusters in
//! either mode with the record each keeps. The engines are the index crate's; this module
//! picks them, reports progress and notes their counts in the summary.

use simhash_cluster::{Clusters, KeepPolicy, Mode as ClusterMode, Representative, UnionFind};
use simhash_core::Fingerprint;
use simhash_index::lsh::{self, Masked, Relation, SpillStore};
use simhash_index::{AllPairs, Blocks, DedupWalk, Tables};
use simhash_io::Score;

use simhash_index::settings::Matching;

use crate::corpus::Corpus;
use crate::error::{Context, Result, ensure};
use crate::session::Session;
use crate::settings::Grouping;
use crate::summary::{self, Summary};

/// The tables for `n` fingerprints: the planner's choice for `--blocks auto`.
fn tables(k: u32, blocks: Blocks, n: usize, summary: &mut Summary) -> Result<Tables> {
    let tables = simhash_index::settings::tables(k, blocks, n)?;
    summary.blocks = Some(tables.blocks());
    summary.distance = Some(k);
    summary.tables = Some(tables.len());
    Ok(tables)
}

/// Finds the matching pairs of documents and calls `sink` with each pair of positions
/// `(a, b, score)`, `a < b`, once. Documents with identical fingerprints (simhash) or
/// identical shingle sets (minhash) are collapsed first: each is listed once with the
/// first of its group, and the pairs of distinct texts are listed between the groups'
/// first members only (every other pair they imply is not repeated), so a flood of
/// identical documents gives one line per document, not one per pair. With minhash, each
/// pair comes with its relation, and only the pairs `--templates` acts on (never two that
/// both have content of their own: [`lsh::related_matches`]).
pub fn match_docs(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    mut sink: impl FnMut(u32, u32, Score, Option<Relation>) + Send,
) -> Result<()> {
    match *matching {
        Matching::Simhash { distance, blocks } => {
            let identical = simhash_index::collapse_identical(corpus.fingerprints(), None);
            let (reps, duplicates) = (identical.representatives, identical.duplicates);
            for &(doc, rep) in &duplicates {
                sink(rep, doc, Score::Distance(0), None);
            }
            let fps = fingerprints_of(corpus, &reps);
            let found = match_fingerprints(session, &fps, distance, blocks, |a, b, d| {
                sink(reps[a as usize], reps[b as usize], Score::Distance(d), None);
            })?;
            session.summary.exact_duplicates = Some(duplicates.len() as u64);
            session.summary.pairs = found + duplicates.len() as u64;
            Ok(())
        }
        Matching::Minhash { jaccard, templates, .. } => {
            let sketches = sketches_of(corpus)?;
            session.reporter.phase("matching", None);
            let (found, stats) =
                session.pool.install(|| lsh::related_matches(sketches, jaccard, templates))?;
            for (a, b, j, relation) in found {
                sink(a, b, Score::Jaccard(j), Some(relation));
            }
            note_match_stats(&mut session.summary, &stats);
            Ok(())
        }
    }
}

fn sketches_of(corpus: &Corpus) -> Result<&SpillStore> {
    corpus.sketches.as_ref().context("internal error: no MinHash sketches")
}

/// The MinHash search's counts in the summary: matches are exact duplicates and verified
/// pairs.
fn note_match_stats(s: &mut Summary, stats: &lsh::MatchStats) {
    s.exact_duplicates = Some(stats.duplicates);
    s.candidates = Some(stats.candidates);
    s.verified = Some(stats.verified);
    s.pairs = stats.duplicates + stats.pairs;
    s.spared = Some(stats.spared);
    if stats.largest_component > 0 {
        s.largest_candidate_component = Some(stats.largest_component);
    }
}

fn fingerprints_of(corpus: &Corpus, docs: &[u32]) -> Vec<Fingerprint> {
    docs.iter().map(|&d| corpus.fingerprint(d as usize).unwrap_or_default()).collect()
}

/// Runs the index over `fps` and calls `sink` with each pair of positions `(a, b,
/// distance)`, `a < b`, each pair once; returns the number of pairs.
pub fn match_fingerprints(
    session: &mut Session,
    fps: &[Fingerprint],
    distance: u32,
    blocks: Blocks,
    mut sink: impl FnMut(u32, u32, u32) + Send,
) -> Result<u64> {
    let tables = tables(distance, blocks, fps.len(), &mut session.summary)?;
    session.reporter.phase("matching", None);
    let mut count = 0u64;
    let reporter = &session.reporter;
    let (n, total, memory) = (fps.len(), tables.len(), session.memory);
    session
        .pool
        .install(|| {
            AllPairs::new(&tables)
                .budget(memory)
                .progress(|t| {
                    reporter.message(format!("{n} fingerprints, table {} of {total}", t + 1));
                })
                .run(fps, |batch| {
                    count += batch.len() as u64;
                    for p in batch {
                        sink(p.a, p.b, p.distance);
                    }
                })
        })
        .context("invalid --memory")?;
    Ok(count)
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

/// The simhash dedup walk ([`DedupWalk`]): documents in priority order, each kept unless
/// an already kept one is within `distance` bits. Returns each document's center.
fn simhash_walk(
    session: &mut Session,
    fps: &[Option<Fingerprint>],
    distance: u32,
    blocks: Blocks,
    rank: &[u32],
) -> Result<Vec<u32>> {
    let Session { pool, reporter, summary, .. } = session;
    let walk = pool.install(|| DedupWalk::new(fps, rank));
    let tables = tables(distance, blocks, walk.distinct(), summary)?;
    reporter.phase("matching", None);
    let reporter = &*reporter;
    let outcome = pool.install(|| {
        walk.run(&tables, |kept, distinct| {
            reporter.message(format!("{kept} of {distinct} fingerprints"));
        })
    });
    summary.exact_duplicates = Some(outcome.exact_duplicates);
    summary.pairs = outcome.matched + outcome.exact_duplicates;
    Ok(outcome.center)
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
    let clusters = match grouping.mode {
        ClusterMode::Components => {
            let mut uf = UnionFind::try_new(corpus.len()).context("too many documents")?;
            match *matching {
                Matching::Minhash { jaccard, templates, .. } => {
                    let sketches = sketches_of(corpus)?;
                    session.reporter.phase("matching", None);
                    let (edges, stats) =
                        session.pool.install(|| lsh::components(sketches, jaccard, templates))?;
                    note_match_stats(&mut session.summary, &stats);
                    uf.union_all(edges).context("clustering failed")?;
                }
                Matching::Simhash { .. } => {
                    // Copies join their group's first; the other pairs join the firsts.
                    let mut error = None;
                    match_docs(session, corpus, matching, |a, b, _, _| {
                        if let Err(e) = uf.union(a, b) {
                            error.get_or_insert(e);
                        }
                    })?;
                    if let Some(e) = error {
                        return Err(e).context("clustering failed");
                    }
                }
            }
            session.reporter.phase("clustering", None);
            with_policy(corpus, opts.keep, |policy| uf.into_clusters_with(&policy))
                .context("clustering failed")?
        }
        ClusterMode::Star => {
            let rank = priority(corpus, opts.keep)?;
            let center = match *matching {
                Matching::Minhash { jaccard, templates, .. } => {
                    let sketches = sketches_of(corpus)?;
                    session.reporter.phase("matching", None);
                    let (walk, stats) = session.pool.install(|| match hidden {
                        None => lsh::walk(sketches, jaccard, &rank, templates),
                        Some(hidden) => {
                            let masked = Masked { inner: sketches, hidden };
                            lsh::walk(&masked, jaccard, &rank, templates)
                        }
                    })?;
                    note_match_stats(&mut session.summary, &stats);
                    jaccard_of = Some(walk.jaccard);
                    relation_of = Some(walk.relation);
                    walk.center
                }
                Matching::Simhash { distance, blocks } => match hidden {
                    None => simhash_walk(session, corpus.fingerprints(), distance, blocks, &rank)?,
                    Some(hidden) => {
                        let fps: Vec<Option<Fingerprint>> = corpus
                            .fingerprints()
                            .iter()
                            .zip(hidden)
                            .map(|(&fp, &h)| if h { None } else { fp })
                            .collect();
                        simhash_walk(session, &fps, distance, blocks, &rank)?
                    }
                },
            };
            session.reporter.phase("clustering", None);
            Clusters::from_centers(center).context("clustering failed")?
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
