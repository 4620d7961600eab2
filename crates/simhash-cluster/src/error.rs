use std::fmt;

/// The largest number of documents a [`UnionFind`](crate::UnionFind) or
/// [`Clusters`](crate::Clusters) can hold: positions are `u32`, and `u32::MAX` is reserved.
pub const MAX_DOCUMENTS: usize = u32::MAX as usize;

/// An error building clusters: a document position out of range, too many documents, a
/// per-document key slice of the wrong length, or two partial results of different sizes.
///
/// A builder that fails returns no partial result; see
/// [`UnionFind::union_all`](crate::UnionFind::union_all) for the one call that can fail
/// part way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterError {
    kind: ErrorKind,
}

/// What went wrong; see [`ClusterError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClusterErrorKind {
    /// A pair or center names a document `>= n`
    /// ([`out_of_range_document`](ClusterError::out_of_range_document) says which).
    OutOfRange,
    /// More than [`MAX_DOCUMENTS`] documents.
    TooManyDocuments,
    /// A [`Representative`](crate::Representative) policy's keys do not number the documents.
    KeyCount,
    /// Two partial results over different numbers of documents.
    SizeMismatch,
    /// A document is named as a center but is not its own center.
    NotACenter,
    /// Deserialized clusters that are not a valid layout.
    Malformed,
}

/// What went wrong, with the details the message shows.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ErrorKind {
    OutOfRange { doc: u32, documents: usize },
    TooManyDocuments { documents: usize },
    KeyCount { keys: usize, documents: usize },
    SizeMismatch { left: usize, right: usize },
    NotACenter { doc: u32 },
    Malformed { why: &'static str },
}

impl ClusterError {
    pub(crate) fn out_of_range(doc: u32, documents: usize) -> Self {
        ClusterError { kind: ErrorKind::OutOfRange { doc, documents } }
    }

    pub(crate) fn too_many_documents(documents: usize) -> Self {
        ClusterError { kind: ErrorKind::TooManyDocuments { documents } }
    }

    pub(crate) fn key_count(keys: usize, documents: usize) -> Self {
        ClusterError { kind: ErrorKind::KeyCount { keys, documents } }
    }

    pub(crate) fn size_mismatch(left: usize, right: usize) -> Self {
        ClusterError { kind: ErrorKind::SizeMismatch { left, right } }
    }

    pub(crate) fn not_a_center(doc: u32) -> Self {
        ClusterError { kind: ErrorKind::NotACenter { doc } }
    }

    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn malformed(why: &'static str) -> Self {
        ClusterError { kind: ErrorKind::Malformed { why } }
    }

    /// What went wrong.
    pub fn kind(&self) -> ClusterErrorKind {
        match self.kind {
            ErrorKind::OutOfRange { .. } => ClusterErrorKind::OutOfRange,
            ErrorKind::TooManyDocuments { .. } => ClusterErrorKind::TooManyDocuments,
            ErrorKind::KeyCount { .. } => ClusterErrorKind::KeyCount,
            ErrorKind::SizeMismatch { .. } => ClusterErrorKind::SizeMismatch,
            ErrorKind::NotACenter { .. } => ClusterErrorKind::NotACenter,
            ErrorKind::Malformed { .. } => ClusterErrorKind::Malformed,
        }
    }

    /// The document position that was out of range, if that is what went wrong.
    pub fn out_of_range_document(&self) -> Option<u32> {
        match self.kind {
            ErrorKind::OutOfRange { doc, .. } => Some(doc),
            _ => None,
        }
    }
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::OutOfRange { doc, documents } => {
                write!(f, "document {doc} out of range for {documents} documents")
            }
            ErrorKind::TooManyDocuments { documents } => {
                write!(f, "{documents} documents exceed the limit of {MAX_DOCUMENTS}")
            }
            ErrorKind::KeyCount { keys, documents } => {
                write!(f, "representative policy has {keys} keys for {documents} documents")
            }
            ErrorKind::SizeMismatch { left, right } => {
                write!(f, "cannot merge partial results over {left} and {right} documents")
            }
            ErrorKind::NotACenter { doc } => {
                write!(f, "document {doc} is named as a center but is not its own center")
            }
            ErrorKind::Malformed { why } => write!(f, "malformed clusters: {why}"),
        }
    }
}

impl std::error::Error for ClusterError {}

/// Checks a document count against [`MAX_DOCUMENTS`].
pub(crate) fn check_documents(documents: usize) -> Result<(), ClusterError> {
    if documents > MAX_DOCUMENTS {
        Err(ClusterError::too_many_documents(documents))
    } else {
        Ok(())
    }
}

/// Checks a document position against the number of documents.
#[inline]
pub(crate) fn check_document(doc: u32, documents: usize) -> Result<(), ClusterError> {
    if (doc as usize) < documents {
        Ok(())
    } else {
        Err(ClusterError::out_of_range(doc, documents))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! t {
        ($err:expr, $msg:expr) => {
            assert_eq!($err.to_string(), $msg);
        };
    }

    #[test]
    fn messages() {
        t!(ClusterError::out_of_range(7, 5), "document 7 out of range for 5 documents");
        t!(
            ClusterError::too_many_documents(MAX_DOCUMENTS),
            "4294967295 documents exceed the limit of 4294967295"
        );
        t!(ClusterError::key_count(3, 4), "representative policy has 3 keys for 4 documents");
        t!(
            ClusterError::size_mismatch(3, 4),
            "cannot merge partial results over 3 and 4 documents"
        );
    }

    #[test]
    fn accessors() {
        assert_eq!(ClusterError::out_of_range(7, 5).out_of_range_document(), Some(7));
        assert_eq!(ClusterError::key_count(3, 4).out_of_range_document(), None);
        assert_eq!(ClusterError::out_of_range(7, 5).kind(), ClusterErrorKind::OutOfRange);
        assert_eq!(ClusterError::too_many_documents(9).kind(), ClusterErrorKind::TooManyDocuments);
        assert_eq!(ClusterError::key_count(3, 4).kind(), ClusterErrorKind::KeyCount);
        assert_eq!(ClusterError::size_mismatch(3, 4).kind(), ClusterErrorKind::SizeMismatch);
        assert_eq!(ClusterError::not_a_center(1).kind(), ClusterErrorKind::NotACenter);
        assert_eq!(ClusterError::malformed("x").kind(), ClusterErrorKind::Malformed);
        assert!(check_documents(MAX_DOCUMENTS).is_ok());
        #[cfg(target_pointer_width = "64")]
        assert!(check_documents(MAX_DOCUMENTS + 1).is_err());
    }
}
