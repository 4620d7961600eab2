use std::cmp::Reverse;

use crate::error::ClusterError;

/// Which member of a cluster is its representative: the document to keep when the others
/// are dropped as near-duplicates.
///
/// Every policy breaks ties by input order (the smaller position wins), so the choice never
/// depends on the order of the pairs or the number of threads. The policies that need a
/// value per document borrow a slice indexed by document position; its length must equal
/// the number of documents, or building fails with a [`ClusterError`].
///
/// In [star mode](crate::Mode::Star) the policy also sets the order in which documents
/// become centers; see [`Mode::Star`](crate::Mode::Star).
///
/// To pick the document with the lowest external id when ids are strings, pass their ranks:
/// sort the positions by id and give each document its place in that order.
///
/// # Example
///
/// ```
/// use simhash_cluster::{Clusters, Representative};
///
/// let lengths = [120, 4000, 4000, 80];
/// let edges = [(0, 1), (1, 2), (2, 3)];
/// let first = Clusters::components(4, edges)?;
/// assert_eq!(first.representative(0), 0);
///
/// let longest = Clusters::builder()
///     .representative(Representative::Longest(&lengths))
///     .build(4, edges)?;
/// assert_eq!(longest.representative(0), 1); // 1 and 2 tie: the first wins
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Representative<'a> {
    /// The member that comes first in input order (the smallest position).
    #[default]
    First,
    /// The member with the largest length, given as one length per document (for example
    /// its size in bytes).
    Longest(&'a [u64]),
    /// The member with the smallest key, given as one key per document (for example a
    /// numeric id, or a rank).
    Lowest(&'a [u64]),
}

impl Representative<'_> {
    /// The per-document slice, if the policy has one.
    fn keys(&self) -> Option<&[u64]> {
        match *self {
            Representative::First => None,
            Representative::Longest(keys) | Representative::Lowest(keys) => Some(keys),
        }
    }

    /// Fails unless the policy has a key for each of `documents` documents.
    pub(crate) fn check(&self, documents: usize) -> Result<(), ClusterError> {
        match self.keys() {
            Some(keys) if keys.len() != documents => {
                Err(ClusterError::key_count(keys.len(), documents))
            }
            _ => Ok(()),
        }
    }

    /// Whether document `a` is strictly preferred over document `b`, where `a > b` in
    /// input order (so ties keep `b`). Positions must have been checked against the keys.
    #[inline]
    pub(crate) fn beats_earlier(&self, a: u32, b: u32) -> bool {
        match *self {
            Representative::First => false,
            Representative::Longest(keys) => keys[a as usize] > keys[b as usize],
            Representative::Lowest(keys) => keys[a as usize] < keys[b as usize],
        }
    }

    /// All documents in priority order: most preferred first, ties in input order. `None`
    /// means input order (the [`First`](Representative::First) policy), without allocating.
    pub(crate) fn priority_order(&self, documents: usize) -> Option<Vec<u32>> {
        let all = || (0..documents as u32).collect::<Vec<u32>>();
        match *self {
            Representative::First => None,
            Representative::Longest(keys) => {
                let mut order = all();
                order.sort_unstable_by_key(|&d| (Reverse(keys[d as usize]), d));
                Some(order)
            }
            Representative::Lowest(keys) => {
                let mut order = all();
                order.sort_unstable_by_key(|&d| (keys[d as usize], d));
                Some(order)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_lengths() {
        assert!(Representative::First.check(3).is_ok());
        assert!(Representative::Longest(&[1, 2, 3]).check(3).is_ok());
        assert!(Representative::Lowest(&[1, 2]).check(3).is_err());
        assert!(Representative::Longest(&[1, 2, 3, 4]).check(3).is_err());
    }

    #[test]
    fn beats_earlier() {
        let keys = [5, 7, 5, 3];
        assert!(!Representative::First.beats_earlier(1, 0));
        assert!(Representative::Longest(&keys).beats_earlier(1, 0));
        assert!(!Representative::Longest(&keys).beats_earlier(2, 0)); // tie keeps the first
        assert!(Representative::Lowest(&keys).beats_earlier(3, 0));
        assert!(!Representative::Lowest(&keys).beats_earlier(2, 0));
    }

    #[test]
    fn priority_order() {
        let keys = [5, 7, 5, 3];
        assert_eq!(Representative::First.priority_order(4), None);
        assert_eq!(Representative::Longest(&keys).priority_order(4), Some(vec![1, 0, 2, 3]));
        assert_eq!(Representative::Lowest(&keys).priority_order(4), Some(vec![3, 0, 2, 1]));
    }
}
