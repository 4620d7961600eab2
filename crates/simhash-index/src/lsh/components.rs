//! The connected components of the verified pairs, as a spanning forest of verified edges.

use std::collections::HashSet;

use rayon::prelude::*;

use super::scan::{Collapsed, candidate_components, collapse_identical, component_rows, find};
use super::store::trim;
use super::{EngineError, MatchStats, SketchStore};

/// A verified pair that joins two components.
type Edge = (u32, u32);

/// The connected components of the verified pairs: the edges that join the documents
/// (a spanning forest: at most `n - 1` pairs, each verified, so union them to get the
/// components), and the search's counts. Pairs already joined are neither verified nor
/// held: a document is compared with one member at a time of each other component it
/// shares a band with, until one verifies, so a flood of near-duplicates costs about `N`
/// verifications. Documents with identical shingle sets are joined to the first of them
/// without a comparison (those edges come first, as `(first, doc)`). The edges do not
/// depend on the thread count.
///
/// The store must be [finished](SketchStore::finish).
pub fn components<S: SketchStore + ?Sized>(
    sketches: &S,
    threshold: f64,
) -> Result<(Vec<(u32, u32)>, MatchStats), EngineError> {
    let Collapsed { reps, duplicates } = collapse_identical(sketches, None)?;
    let components = candidate_components(sketches, &reps)?;
    let results: Vec<Result<(Vec<Edge>, MatchStats), EngineError>> =
        components.par_iter().map(|docs| components_component(sketches, docs, threshold)).collect();
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

/// The band buckets of a candidate component that hold two or more of its documents (only
/// those can pair anything), numbered densely: `of_doc` lists `(document, bucket)` sorted.
/// One band at a time, so memory is 8 bytes a document while it runs, then only the shared
/// buckets' entries.
struct SharedBuckets {
    buckets: usize,
    of_doc: Vec<(u32, u32)>,
}

fn shared_buckets(rows: &[u32], bands: usize, n: usize) -> SharedBuckets {
    let mut column: Vec<(u32, u32)> = Vec::with_capacity(n);
    let mut of_doc = Vec::new();
    let mut buckets = 0u32;
    for band in 0..bands {
        column.clear();
        column.extend((0..n).map(|i| (rows[i * bands + band], i as u32)));
        column.sort_unstable();
        for group in column.chunk_by(|x, y| x.0 == y.0).filter(|g| g.len() > 1) {
            of_doc.extend(group.iter().map(|&(_, doc)| (doc, buckets)));
            buckets += 1;
        }
    }
    of_doc.sort_unstable();
    SharedBuckets { buckets: buckets as usize, of_doc }
}

/// Brings a bucket's groups up to date after merges: one group per root.
fn merge_groups(parent: &mut [u32], groups: &mut Vec<Group>) {
    for g in groups.iter_mut() {
        g.root = find(parent, g.root);
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

/// [`components`] in one candidate component (`docs` ascending).
fn components_component<S: SketchStore + ?Sized>(
    sketches: &S,
    docs: &[u32],
    threshold: f64,
) -> Result<(Vec<Edge>, MatchStats), EngineError> {
    let bands = sketches.bands();
    let shared = shared_buckets(&component_rows(sketches, docs)?, bands, docs.len());
    let mut stats = MatchStats { largest_component: docs.len() as u64, ..MatchStats::default() };
    let mut parent: Vec<u32> = (0..docs.len() as u32).collect();
    let mut buckets: Vec<Vec<Group>> = Vec::new();
    buckets.resize_with(shared.buckets, Vec::new);
    let mut edges = Vec::new();
    let (mut set, mut other) = (Vec::new(), Vec::new());
    // Members that failed to verify against the current document: not tried twice.
    let mut failed: HashSet<u32> = HashSet::new();
    let mut next = shared.of_doc.iter().peekable();
    for i in 0..docs.len() as u32 {
        failed.clear();
        let mut loaded = false;
        while let Some(&&(_, bucket)) = next.peek().filter(|&&&(doc, _)| doc == i) {
            next.next();
            let groups = &mut buckets[bucket as usize];
            // Roots move as components merge.
            merge_groups(&mut parent, groups);
            for g in groups.iter() {
                if find(&mut parent, g.root) == find(&mut parent, i) {
                    continue;
                }
                for &m in &g.members {
                    if failed.contains(&m) {
                        continue;
                    }
                    if !loaded {
                        sketches.read_set(docs[i as usize] as usize, &mut set)?;
                        loaded = true;
                    }
                    sketches.read_set(docs[m as usize] as usize, &mut other)?;
                    stats.candidates += 1;
                    stats.verified += 1;
                    if simhash_core::jaccard(&set, &other) >= threshold {
                        stats.pairs += 1;
                        let (ri, rm) = (find(&mut parent, i), find(&mut parent, m));
                        parent[ri.max(rm) as usize] = ri.min(rm);
                        edges.push((docs[m as usize], docs[i as usize]));
                        break;
                    }
                    failed.insert(m);
                }
            }
            let ri = find(&mut parent, i);
            match groups.iter_mut().find(|g| find(&mut parent, g.root) == ri) {
                Some(g) => g.members.push(i),
                None => groups.push(Group { root: ri, members: vec![i] }),
            }
        }
    }
    trim(&mut set);
    trim(&mut other);
    Ok((edges, stats))
}
