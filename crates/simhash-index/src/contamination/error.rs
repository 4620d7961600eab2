//! The contamination scan's error: a setting out of range, an eval set or item named
//! twice, more than the engine's `u32` positions hold, or a tally that does not fit.

use std::error::Error;
use std::fmt;

/// The error of the contamination scan ([`EvalSetsBuilder`](super::EvalSetsBuilder),
/// [`Tally`](super::Tally), [`EvalSets::finish`](super::EvalSets::finish)).
///
/// Its [`Display`](fmt::Display) says what is wrong, in lowercase with no trailing period;
/// [`kind`](ContaminationError::kind) says it as a value to match on.
#[derive(Clone, Debug, PartialEq)]
pub struct ContaminationError {
    repr: Repr,
}

/// What is wrong; see [`ContaminationError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContaminationErrorKind {
    /// The n-gram length is 0 or more than [`MAX_NGRAM`](super::MAX_NGRAM).
    Ngram,
    /// The minimum overlap is not between 0 and 1.
    MinOverlap,
    /// The document-frequency limit is a count of 0 or a share not in `(0, 1]`.
    MaxDf,
    /// An eval set was added twice under one name.
    DuplicateSet,
    /// An item id was added twice to one eval set.
    DuplicateItem,
    /// A [`SetId`](super::SetId) that the builder did not give out.
    UnknownSet,
    /// More than `u32::MAX - 1` distinct words, items or n-grams in the eval sets.
    TooLarge,
    /// A tally of other eval sets.
    Mismatch,
    /// One document number was added to the tallies twice.
    DuplicateDocument,
}

#[derive(Clone, Debug, PartialEq)]
enum Repr {
    Ngram { n: usize, max: usize },
    MinOverlap(f64),
    MaxDf(String),
    DuplicateSet(String),
    DuplicateItem { set: String, item: String },
    UnknownSet(u32),
    TooLarge(&'static str),
    Mismatch { tally: usize, eval: usize },
    DuplicateDocument(u64),
}

impl ContaminationError {
    pub(crate) fn ngram(n: usize, max: usize) -> ContaminationError {
        ContaminationError { repr: Repr::Ngram { n, max } }
    }

    pub(crate) fn min_overlap(x: f64) -> ContaminationError {
        ContaminationError { repr: Repr::MinOverlap(x) }
    }

    pub(crate) fn max_df(shown: String) -> ContaminationError {
        ContaminationError { repr: Repr::MaxDf(shown) }
    }

    pub(crate) fn duplicate_set(name: &str) -> ContaminationError {
        ContaminationError { repr: Repr::DuplicateSet(name.to_string()) }
    }

    pub(crate) fn duplicate_item(set: &str, item: &str) -> ContaminationError {
        ContaminationError {
            repr: Repr::DuplicateItem { set: set.to_string(), item: item.to_string() },
        }
    }

    pub(crate) fn unknown_set(id: u32) -> ContaminationError {
        ContaminationError { repr: Repr::UnknownSet(id) }
    }

    pub(crate) fn too_large(what: &'static str) -> ContaminationError {
        ContaminationError { repr: Repr::TooLarge(what) }
    }

    pub(crate) fn mismatch(tally: usize, eval: usize) -> ContaminationError {
        ContaminationError { repr: Repr::Mismatch { tally, eval } }
    }

    pub(crate) fn duplicate_document(doc: u64) -> ContaminationError {
        ContaminationError { repr: Repr::DuplicateDocument(doc) }
    }

    /// What is wrong.
    pub fn kind(&self) -> ContaminationErrorKind {
        match self.repr {
            Repr::Ngram { .. } => ContaminationErrorKind::Ngram,
            Repr::MinOverlap(_) => ContaminationErrorKind::MinOverlap,
            Repr::MaxDf(_) => ContaminationErrorKind::MaxDf,
            Repr::DuplicateSet(_) => ContaminationErrorKind::DuplicateSet,
            Repr::DuplicateItem { .. } => ContaminationErrorKind::DuplicateItem,
            Repr::UnknownSet(_) => ContaminationErrorKind::UnknownSet,
            Repr::TooLarge(_) => ContaminationErrorKind::TooLarge,
            Repr::Mismatch { .. } => ContaminationErrorKind::Mismatch,
            Repr::DuplicateDocument(_) => ContaminationErrorKind::DuplicateDocument,
        }
    }
}

impl fmt::Display for ContaminationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Ngram { n, max } => write!(f, "the n-gram length ({n}) must be from 1 to {max}"),
            Repr::MinOverlap(x) => write!(f, "the minimum overlap ({x}) must be from 0 to 1"),
            Repr::MaxDf(shown) => write!(
                f,
                "the document-frequency limit ({shown}) must be a count of at least 1 or a \
                 share greater than 0 and at most 1"
            ),
            Repr::DuplicateSet(name) => write!(f, "the eval set {name:?} is added twice"),
            Repr::DuplicateItem { set, item } => {
                write!(f, "the item {item:?} is added twice to the eval set {set:?}")
            }
            Repr::UnknownSet(id) => write!(f, "no eval set has the id {id}"),
            Repr::TooLarge(what) => {
                write!(f, "the eval sets have more {what} than the scan can number (u32)")
            }
            Repr::Mismatch { tally, eval } => write!(
                f,
                "a tally of {tally} n-grams does not fit eval sets of {eval} n-grams (it was \
                 made for other eval sets)"
            ),
            Repr::DuplicateDocument(doc) => write!(f, "the document {doc} is tallied twice"),
        }
    }
}

impl Error for ContaminationError {}
