use std::cmp::Reverse;

use crate::error::{ClusterError, check_documents};

/// Which record of a cluster is kept, by name: every front end's `--keep` (with the `clap`
/// feature, a `clap::ValueEnum`). The front end turns it into a [`Representative`] with the
/// values it needs (the texts' lengths, the ids' ranks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum KeepPolicy {
    /// The first member in input order.
    #[default]
    First,
    /// The member with the longest text (the first of equals).
    Longest,
    /// The member with the lowest id (numeric if both are numbers, else bytewise).
    LowestId,
}

impl KeepPolicy {
    /// Record `position`'s place in this policy's order, from what the policy reads of the
    /// record alone (its text's `len`gth, its `id`): smaller keys are kept first. Keys of
    /// records read anywhere (another thread, process or host) compare alike, so the order
    /// needs no view of the whole input: the order of [`Representative::ranks`] over the
    /// lengths or the ids' ranks, which `simhash` uses, and of `simhash-dist`'s exchange.
    ///
    /// `first`: the position; `longest`: the longest first, then the position;
    /// `lowest-id`: integer ids (by value) before other ids (bytewise), then the position.
    ///
    /// ```
    /// use simhash_cluster::KeepPolicy;
    ///
    /// let key = |p, id| KeepPolicy::LowestId.key(p, 0, id);
    /// assert!(key(5, "-3") < key(0, "2") && key(0, "2") < key(1, "10"));
    /// assert!(key(1, "10") < key(0, "1a") && key(0, "1a") < key(0, "b"));
    /// assert!(key(0, "7") < key(1, "7")); // equal ids: the first wins
    /// assert!(KeepPolicy::Longest.key(9, 40, "") < KeepPolicy::Longest.key(0, 12, ""));
    /// ```
    pub fn key(self, position: u64, len: u64, id: &str) -> KeepKey<'_> {
        let (class, high, low, id) = match self {
            KeepPolicy::First => (0, 0, 0, ""),
            KeepPolicy::Longest => (u64::MAX - len, 0, 0, ""),
            KeepPolicy::LowestId => match id.parse::<i128>() {
                Ok(n) => {
                    // Order-preserving as unsigned: the sign bit flipped.
                    let u = n.cast_unsigned() ^ (1 << 127);
                    (0, (u >> 64) as u64, u as u64, id)
                }
                Err(_) => (1, 0, 0, id),
            },
        };
        KeepKey { class, high, low, id: std::borrow::Cow::Borrowed(id), position }
    }
}

/// A record's place in a [`KeepPolicy`]'s order ([`KeepPolicy::key`]): compare two to know
/// which is kept first. Borrows the record's id; [`KeepKey::into_owned`] keeps it (to send
/// it elsewhere, with the `serde` feature).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KeepKey<'a> {
    class: u64,
    high: u64,
    low: u64,
    id: std::borrow::Cow<'a, str>,
    position: u64,
}

impl KeepKey<'_> {
    /// The record's position (the last tie-break).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The key with its id owned.
    pub fn into_owned(self) -> KeepKey<'static> {
        KeepKey { id: std::borrow::Cow::Owned(self.id.into_owned()), ..self }
    }
}

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

    /// Each document's place in the policy's priority order (0 first, ties in input order):
    /// the keep policy of a dedup walk, which visits documents by rank and keeps each one
    /// unless it matches one already kept. [`First`](Representative::First) gives input
    /// order, [`Longest`](Representative::Longest) the longest first, and
    /// [`Lowest`](Representative::Lowest) the smallest key first (keys that are already
    /// distinct ranks come back as they are). The one definition of `--keep` that the
    /// `simhash` command and the Python package share.
    ///
    /// # Errors
    ///
    /// If the policy's keys do not match the number of `documents`, or `documents` exceeds
    /// [`MAX_DOCUMENTS`](crate::MAX_DOCUMENTS).
    ///
    /// ```
    /// use simhash_cluster::Representative;
    ///
    /// let lengths = [120, 4000, 4000, 80];
    /// assert_eq!(Representative::First.ranks(4)?, [0, 1, 2, 3]);
    /// assert_eq!(Representative::Longest(&lengths).ranks(4)?, [2, 0, 1, 3]);
    /// assert_eq!(Representative::Lowest(&[9, 3, 5, 3]).ranks(4)?, [3, 0, 2, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn ranks(&self, documents: usize) -> Result<Vec<u32>, ClusterError> {
        check_documents(documents)?;
        self.check(documents)?;
        let Some(order) = self.priority_order(documents) else {
            return Ok((0..documents as u32).collect());
        };
        let mut rank = vec![0u32; documents];
        for (r, &d) in order.iter().enumerate() {
            rank[d as usize] = r as u32;
        }
        Ok(rank)
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
    fn ranks_invert_the_priority_order() {
        let keys = [5, 7, 5, 3];
        assert_eq!(Representative::First.ranks(4).unwrap(), [0, 1, 2, 3]);
        assert_eq!(Representative::Longest(&keys).ranks(4).unwrap(), [1, 0, 2, 3]);
        assert_eq!(Representative::Lowest(&keys).ranks(4).unwrap(), [1, 3, 2, 0]);
        // Distinct ranks as keys come back unchanged.
        assert_eq!(Representative::Lowest(&[2, 0, 3, 1]).ranks(4).unwrap(), [2, 0, 3, 1]);
        assert!(Representative::Longest(&keys).ranks(3).is_err());
        assert_eq!(Representative::First.ranks(0).unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn priority_order() {
        let keys = [5, 7, 5, 3];
        assert_eq!(Representative::First.priority_order(4), None);
        assert_eq!(Representative::Longest(&keys).priority_order(4), Some(vec![1, 0, 2, 3]));
        assert_eq!(Representative::Lowest(&keys).priority_order(4), Some(vec![3, 0, 2, 1]));
    }
}
