//! The connected components of the verified pairs, as a spanning forest of verified edges.

use std::collections::HashSet;

use rayon::prelude::*;

use simhash_cluster::UnionFind;

use super::alone::alone;
use super::buffers::trim;
use super::relation::Prepared;
use super::scan::{Collapsed, candidate_components, collapse_identical, component_rows};
use super::small::{Lookup, PROBE_MAX, SmallSets, floods};
use super::{EngineError, MatchStats, SketchStore, Templates};

/// A verified pair that joins two components.
type Edge = (u32, u32);

/// The connected components of the verified pairs: the edges that join the documents
/// (a spanning forest: at most `n - 1` pairs, each verified, so union them to get the
/// components), and the search's counts. Pairs already joined are neither verified nor
/// held: a document is compared with one member at a time of each other component it
/// shares a band with, until one verifies, so a flood of near-duplicates costs about `N`
/// verifications; in a large component, small sets meet their candidates through a
/// prefix index instead of the band buckets (see the [module](super)'s "Cost"), so short
/// documents sharing a phrase stay near-linear. Only pairs whose
/// [`Relation`](super::Relation) (the lesser of its two directions,
/// [`pair_relation_in`](super::pair_relation_in)) `templates` acts on join (never two that
/// overlap; two records whose content of their own no other record of the component has
/// are not compared). Documents with identical shingle sets and tokens are joined to
/// the first of them without a comparison (those edges come first, as `(first, doc)`).
/// The edges do not depend on the thread count.
///
/// The store must be [finished](SketchStore::finish).
pub fn components<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
    templates: Templates,
) -> Result<(Vec<(u32, u32)>, MatchStats), EngineError> {
    let Collapsed { reps, duplicates } = collapse_identical(sketches, None)?;
    let components = candidate_components(sketches, &reps)?;
    let results: Vec<Result<(Vec<Edge>, MatchStats), EngineError>> = components
        .par_iter()
        .map(|docs| components_component(sketches, docs, threshold, templates))
        .collect();
    let mut stats = MatchStats { duplicates: duplicates.len() as u64, ..MatchStats::default() };
    let mut edges: Vec<(u32, u32)> = duplicates.iter().map(|&(doc, rep)| (rep, doc)).collect();
    for result in results {
        let (e, s) = result?;
        stats.add(&s);
        edges.extend(e);
    }
    Ok((edges, stats))
}

/// One bucket's documents of one component (as it stood when last looked at).
struct Group {
    root: u32,
    members: Vec<u32>,
}

/// The buckets of a candidate component that hold two or more of its documents (only
/// those can pair anything), numbered densely: `of_doc` lists `(document, bucket)` sorted.
/// The band buckets come first (`band_buckets` of them), then, in a component with a
/// [`SmallSets`], one bucket per shingle in the prefixes of two or more of its sets that
/// the prefix index looks up: their members share a shingle, not always a band. One band at
/// a time, so memory is 8 bytes a document while it runs, then only the shared buckets'
/// entries.
struct SharedBuckets {
    buckets: usize,
    band_buckets: usize,
    of_doc: Vec<(u32, u32)>,
}

/// The [`SharedBuckets`] of a component: `rows` its band hashes, `lookup` where each
/// document's candidates are found, `prefixes` the `(shingle, document)` of the prefixes
/// of those looked up in a [`SmallSets`].
fn shared_buckets(
    rows: &[u32],
    bands: usize,
    lookup: &[Lookup],
    mut prefixes: Vec<(u64, u32)>,
) -> SharedBuckets {
    let n = lookup.len();
    let mut column: Vec<(u32, u32)> = Vec::with_capacity(n);
    let mut of_doc = Vec::new();
    let mut buckets = 0u32;
    for band in 0..bands {
        column.clear();
        column.extend(
            (0..n).filter(|&i| lookup[i].bands()).map(|i| (rows[i * bands + band], i as u32)),
        );
        column.sort_unstable();
        for group in column.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
            of_doc.extend(group.iter().map(|&(_, doc)| (doc, buckets)));
            buckets += 1;
        }
    }
    let band_buckets = buckets as usize;
    prefixes.sort_unstable();
    for group in prefixes.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
        of_doc.extend(group.iter().map(|&(_, doc)| (doc, buckets)));
        buckets += 1;
    }
    of_doc.sort_unstable();
    SharedBuckets { buckets: buckets as usize, band_buckets, of_doc }
}

/// Brings a bucket's groups up to date after merges: one group per root, sorted by root.
/// Every union of `forest` is a [`UnionFind::join_min`], so a component's root is its
/// smallest member and the order of the groups depends only on the partition.
fn merge_groups(forest: &mut UnionFind, groups: &mut Vec<Group>) {
    for g in groups.iter_mut() {
        g.root = forest.root(g.root);
    }
    if groups.len() > 1 {
        groups.sort_by_key(|g| g.root);
        let mut merged: Vec<Group> = Vec::with_capacity(groups.len());
        for g in groups.drain(..) {
            match merged.last_mut() {
                Some(last) if last.root == g.root => last.members.extend(g.members),
                _ => merged.push(g),
            }
        }
        *groups = merged;
    }
}

/// How a component's documents meet their candidates: each one's set size, whether it is
/// looked up by band or (a small set) by prefix, and the prefix shingles of those that are.
struct Lookups {
    lens: Vec<usize>,
    lookup: Vec<Lookup>,
    /// `(shingle, document)`: the prefix shingles of the documents looked up by prefix.
    prefixes: Vec<(u64, u32)>,
}

/// The [`Lookups`] of a component's documents (`rows`: their band hashes): small sets meet
/// their candidates through a prefix index when they flood the band buckets.
fn lookups<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
    rows: &[u32],
    threshold: f64,
) -> Result<Lookups, EngineError> {
    let bands = sketches.bands();
    let mut lens = Vec::with_capacity(docs.len());
    for &doc in docs {
        lens.push(sketches.set_len(doc as usize)?);
    }
    let smalls: Vec<usize> =
        (0..docs.len()).filter(|&i| (1..=PROBE_MAX).contains(&lens[i])).collect();
    let flood = floods(smalls.len(), bands, |band| {
        Ok(smalls.iter().map(|&i| rows[i * bands + band]).collect())
    })?;
    drop(smalls);
    let small = if flood { SmallSets::new(sketches, docs, threshold)? } else { None };
    let mut lookup = vec![Lookup::Bands; docs.len()];
    let mut prefixes = Vec::new();
    if let Some(small) = &small {
        let (mut set, mut prefix) = (Vec::new(), Vec::new());
        for (i, &doc) in docs.iter().enumerate() {
            lookup[i] = small.lookup(lens[i]);
            if lookup[i].prefix() {
                sketches.read_set(doc as usize, &mut set)?;
                small.prefix(&set, &mut prefix);
                prefixes.extend(prefix.iter().map(|&(_, shingle)| (shingle, i as u32)));
            }
        }
    }
    Ok(Lookups { lens, lookup, prefixes })
}

/// Whether the verified pair of records `i` (the one being placed) and `m` (placed before
/// it) joins: whether `templates` acts on
/// [`pair_relation_in`](super::pair_relation_in)`(m, i)`, read with `i`'s tokens prepared
/// once (`mine`) and the second direction only when the first does not decide it (acting
/// on a relation acts on every lesser one).
fn pair_acted<S: SketchStore + ?Sized>(
    sketches: &S,
    i: usize,
    m: usize,
    mine: &mut Option<Prepared>,
    theirs: &mut Vec<u32>,
    templates: Templates,
) -> Result<bool, EngineError> {
    if mine.is_none() {
        let mut tokens = Vec::new();
        sketches.read_tokens(i, &mut tokens)?;
        *mine = Some(Prepared::new(tokens));
    }
    let mine = mine.get_or_insert_with(Prepared::default);
    sketches.read_tokens(m, theirs)?;
    // pair_relation(m, i): `i` removed for `m` first, then the other way.
    let first = mine.relation(theirs);
    if templates.acts_on(first) {
        return Ok(true);
    }
    Ok(templates.acts_on(first.min(super::relation(theirs, mine.tokens()))))
}

/// [`components`] in one candidate component (`docs` ascending).
fn components_component<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
    threshold: f64,
    templates: Templates,
) -> Result<(Vec<Edge>, MatchStats), EngineError> {
    let bands = sketches.bands();
    let rows = component_rows(sketches, docs)?;
    let Lookups { lens, lookup, prefixes } = lookups(sketches, docs, &rows, threshold)?;
    let shared = shared_buckets(&rows, bands, &lookup, prefixes);
    let share_band = |i: u32, m: u32| {
        let (i, m) = (i as usize * bands, m as usize * bands);
        rows[i..i + bands].iter().zip(&rows[m..m + bands]).any(|(a, b)| a == b)
    };
    let mut stats = MatchStats { largest_component: docs.len() as u64, ..MatchStats::default() };
    let alone = alone(sketches, docs)?;
    let mut forest = UnionFind::new(docs.len());
    let mut buckets: Vec<Vec<Group>> = Vec::new();
    buckets.resize_with(shared.buckets, Vec::new);
    let mut edges = Vec::new();
    let (mut set, mut other) = (Vec::new(), Vec::new());
    // Members that failed to verify against the current document: not tried twice.
    let mut failed: HashSet<u32> = HashSet::new();
    let mut next = shared.of_doc.iter().peekable();
    let mut theirs = Vec::new();
    for i in 0..docs.len() as u32 {
        failed.clear();
        let mut loaded = false;
        // The record's tokens, read once for all of its relations.
        let mut mine: Option<Prepared> = None;
        let i_alone = alone.get(i as usize).copied().unwrap_or(false);
        while let Some(&&(_, bucket)) = next.peek().filter(|&&&(doc, _)| doc == i) {
            next.next();
            let groups = &mut buckets[bucket as usize];
            // Roots move as components merge.
            merge_groups(&mut forest, groups);
            for g in groups.iter() {
                if forest.root(g.root) == forest.root(i) {
                    continue;
                }
                // A prefix bucket's members share a shingle: candidates only when they
                // also share a band.
                let by_prefix = bucket as usize >= shared.band_buckets;
                for &m in &g.members {
                    // Two records each with content of its own that no other record of the
                    // component has: both directions overlap, the pair never joins.
                    if i_alone && alone.get(m as usize).copied().unwrap_or(false) {
                        stats.own_skipped += 1;
                        continue;
                    }
                    if failed.contains(&m) {
                        continue;
                    }
                    if by_prefix && !share_band(i, m) {
                        failed.insert(m);
                        continue;
                    }
                    if !loaded {
                        sketches.read_set(docs[i as usize] as usize, &mut set)?;
                        loaded = true;
                    }
                    stats.candidates += 1;
                    stats.verified += 1;
                    // Sets of sizes that cannot reach the threshold are not read.
                    if simhash_core::jaccard_min_common(set.len(), lens[m as usize], threshold)
                        .is_some()
                        && {
                            sketches.read_set(docs[m as usize] as usize, &mut other)?;
                            simhash_core::jaccard_at_least(&set, &other, threshold).is_some()
                        }
                        && {
                            let (i, m) = (docs[i as usize] as usize, docs[m as usize] as usize);
                            let acted =
                                pair_acted(sketches, i, m, &mut mine, &mut theirs, templates)?;
                            stats.spared += u64::from(!acted);
                            acted
                        }
                    {
                        stats.pairs += 1;
                        forest.join_min(i, m);
                        edges.push((docs[m as usize], docs[i as usize]));
                        break;
                    }
                    failed.insert(m);
                }
            }
            let ri = forest.root(i);
            match groups.iter_mut().find(|g| forest.root(g.root) == ri) {
                Some(g) => g.members.push(i),
                None => groups.push(Group { root: ri, members: vec![i] }),
            }
        }
    }
    trim(&mut set);
    trim(&mut other);
    Ok((edges, stats))
}
