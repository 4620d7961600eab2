//! Center (star) clustering; the rule is documented on [`Mode::Star`](crate::Mode::Star).

use crate::clusters::{Clusters, NONE};
use crate::error::{ClusterError, check_document};
use crate::policy::Representative;

/// The undirected graph in compressed sparse rows, self-loops dropped.
struct Adjacency {
    /// The neighbours of `d` are `targets[starts[d]..starts[d + 1]]`.
    starts: Vec<usize>,
    targets: Vec<u32>,
}

impl Adjacency {
    fn new<I>(documents: usize, pairs: I) -> Result<Adjacency, ClusterError>
    where
        I: IntoIterator,
        I::Item: Into<(u32, u32)>,
    {
        let mut edges = Vec::new();
        let mut starts = vec![0usize; documents + 1];
        for (a, b) in pairs.into_iter().map(Into::into) {
            check_document(a, documents)?;
            check_document(b, documents)?;
            if a != b {
                edges.push((a, b));
                starts[a as usize] += 1;
                starts[b as usize] += 1;
            }
        }
        // starts[d] = the degree of d, then the end of d's row, then (after filling) its
        // start.
        let mut end = 0;
        for slot in &mut starts[..documents] {
            end += *slot;
            *slot = end;
        }
        starts[documents] = end;
        let mut targets = vec![0u32; end];
        for (a, b) in edges {
            let slot = &mut starts[a as usize];
            *slot -= 1;
            targets[*slot] = b;
            let slot = &mut starts[b as usize];
            *slot -= 1;
            targets[*slot] = a;
        }
        Ok(Adjacency { starts, targets })
    }

    fn neighbours(&self, doc: u32) -> &[u32] {
        let d = doc as usize;
        &self.targets[self.starts[d]..self.starts[d + 1]]
    }
}

/// Star clustering of `documents` documents; the policy's keys must have been checked.
pub(crate) fn star<I>(
    documents: usize,
    pairs: I,
    policy: &Representative<'_>,
) -> Result<Clusters, ClusterError>
where
    I: IntoIterator,
    I::Item: Into<(u32, u32)>,
{
    let graph = Adjacency::new(documents, pairs)?;
    // The center of each document. The outcome does not depend on the order of the
    // neighbour lists: a document joins the first center (in priority order) it meets.
    let mut center = vec![NONE; documents];
    let mut visit = |doc: u32| {
        if center[doc as usize] == NONE {
            center[doc as usize] = doc;
            for &other in graph.neighbours(doc) {
                if center[other as usize] == NONE {
                    center[other as usize] = doc;
                }
            }
        }
    };
    match policy.priority_order(documents) {
        None => (0..documents as u32).for_each(&mut visit),
        Some(order) => order.into_iter().for_each(&mut visit),
    }
    drop(graph);

    Ok(Clusters::from_centers_unchecked(center))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(clusters: &Clusters) -> Vec<Vec<u32>> {
        clusters.iter().map(<[u32]>::to_vec).collect()
    }

    macro_rules! t {
        ($n:expr, $pairs:expr, $want:expr, $reps:expr) => {
            let clusters = Clusters::star($n, $pairs, &Representative::First).unwrap();
            let want: Vec<Vec<u32>> = $want.iter().map(|c: &&[u32]| c.to_vec()).collect();
            assert_eq!(all(&clusters), want, "pairs {:?}", $pairs);
            assert_eq!(clusters.representatives(), &$reps, "pairs {:?}", $pairs);
        };
    }

    #[test]
    fn star_rule() {
        let none: [(u32, u32); 0] = [];
        t!(0, none, [] as [&[u32]; 0], [] as [u32; 0]);
        t!(2, none, [&[0][..], &[1]], [0, 1]);
        t!(2, [(1, 1), (0, 0)], [&[0][..], &[1]], [0, 1]);
        // A chain is cut into stars.
        t!(5, [(0, 1), (1, 2), (2, 3), (3, 4)], [&[0, 1][..], &[2, 3], &[4]], [0, 2, 4]);
        // A star around a late center: 0 is the first center and takes 3; 1 and 2 are
        // centers of their own.
        t!(4, [(3, 0), (3, 1), (3, 2)], [&[0, 3][..], &[1], &[2]], [0, 1, 2]);
        // A document joins the first center it is paired with, not the later one.
        t!(4, [(0, 2), (1, 2), (1, 3)], [&[0, 2][..], &[1, 3]], [0, 1]);
        // A clique is one cluster.
        t!(3, [(0, 1), (0, 2), (1, 2)], [&[0, 1, 2][..]], [0]);
        // The first member need not be the center.
        let lengths = [1, 1, 5];
        let clusters = Clusters::star(3, [(0, 2), (1, 2)], &Representative::Longest(&lengths));
        let clusters = clusters.unwrap();
        assert_eq!(all(&clusters), [vec![0, 1, 2]]);
        assert_eq!(clusters.representatives(), &[2]);
    }

    #[test]
    fn key_count_checked() {
        let err = Clusters::star(3, [(0, 1)], &Representative::Lowest(&[1, 2])).unwrap_err();
        assert_eq!(err.to_string(), "representative policy has 2 keys for 3 documents");
    }

    #[test]
    fn adjacency() {
        let graph = Adjacency::new(4, [(0, 1), (2, 2), (1, 3), (0, 1)]).unwrap();
        let mut n1 = graph.neighbours(1).to_vec();
        n1.sort_unstable();
        assert_eq!(n1, [0, 0, 3]);
        assert!(graph.neighbours(2).is_empty());
        assert!(Adjacency::new(4, [(0, 4)]).is_err());
    }
}
