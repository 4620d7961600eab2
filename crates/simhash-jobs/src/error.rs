//! The crate's error type: a job failed, as a message and the error behind it.
//!
//! Messages are what a front end shows its user (after `simhash: `), lowercase and without
//! a trailing period. A message added with [`Context::context`] comes first and the error
//! it wraps is its [`source`](std::error::Error::source), so a chain printer such as
//! `anyhow`'s `{:#}` shows `x.jsonl:3: read error: stream did not contain valid UTF-8`.
//! An error converted from another (an [`std::io::Error`], a [`simhash_io::Error`], an
//! engine's) displays as that error and has its sources: the conversion adds nothing to
//! the chain. So a chain walker that looks for a type finds the wrapped error's sources but
//! not the wrapped error itself: ask [`JobError::io_error`] or
//! [`JobError::is_broken_pipe`], which look inside.

use std::error::Error as StdError;
use std::fmt;
use std::io;

/// The crate's results: a [`JobError`] unless said otherwise.
pub(crate) type Result<T, E = JobError> = std::result::Result<T, E>;

/// A boxed error from below (an io error, an engine's, an input's).
type Source = Box<dyn StdError + Send + Sync + 'static>;

/// A job failed: reading, writing, matching, or a setting that cannot run.
///
/// [`kind`](JobError::kind) says what failed; `Display` is the message (or, for an error
/// converted from another, that error's message); the error behind it is the source.
#[derive(Debug)]
pub struct JobError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    /// `None` when the source is the whole message (a converted error).
    message: Option<String>,
    source: Option<Source>,
}

/// What kind of failure a [`JobError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An input cannot be read, or holds what a run must refuse (a bad record under
    /// `--strict`, an input that changed between two passes).
    Input,
    /// An output cannot be made, written or put in place.
    Output,
    /// An input or output failed in a way [`simhash_io::Error`] or [`std::io::Error`]
    /// describes (see [`JobError::io_error`]).
    Io,
    /// The settings cannot run (the matching contract's refusal, an index's settings).
    Settings,
    /// A matching or clustering engine failed (a spill file, too many documents).
    Engine,
    /// A step the crate's own logic rules out (a thread that panicked, a missing part).
    Internal,
}

impl JobError {
    /// An error of `kind` with `message` and nothing behind it.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> JobError {
        JobError(Box::new(Inner { kind, message: Some(message.into()), source: None }))
    }

    /// An error converted from `source`: it displays as `source` and has its sources.
    pub fn wrap(kind: ErrorKind, source: impl Into<Source>) -> JobError {
        JobError(Box::new(Inner { kind, message: None, source: Some(source.into()) }))
    }

    /// This error with `message` in front: the message displays, this error is its source.
    #[must_use]
    pub fn context(self, message: impl fmt::Display) -> JobError {
        let kind = self.kind();
        JobError(Box::new(Inner {
            kind,
            message: Some(message.to_string()),
            source: Some(Box::new(self)),
        }))
    }

    /// What failed.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The first [`io::Error`] in the chain, if there is one, looking inside the errors this
    /// one displays as (a [`simhash_io::Error`] converted whole is not in the chain of
    /// sources: its message is this error's).
    pub fn io_error(&self) -> Option<&io::Error> {
        let mut cause: Option<&(dyn StdError + 'static)> = self.0.source.as_deref().map(|s| {
            let s: &(dyn StdError + 'static) = s;
            s
        });
        while let Some(e) = cause {
            if let Some(io) = e.downcast_ref::<io::Error>() {
                return Some(io);
            }
            if let Some(io) =
                e.downcast_ref::<simhash_io::Error>().and_then(simhash_io::Error::io_error)
            {
                return Some(io);
            }
            if let Some(job) = e.downcast_ref::<JobError>() {
                return job.io_error();
            }
            cause = e.source();
        }
        None
    }

    /// The first error of type `E` behind this one, looking inside the errors this one
    /// displays as (a converted error is not in the chain of sources): a front end with
    /// its own error types (Python's exceptions) maps an engine's error as it maps that
    /// engine's errors elsewhere.
    pub fn find<E: StdError + 'static>(&self) -> Option<&E> {
        let mut cause: Option<&(dyn StdError + 'static)> = self.0.source.as_deref().map(|s| {
            let s: &(dyn StdError + 'static) = s;
            s
        });
        while let Some(e) = cause {
            if let Some(found) = e.downcast_ref::<E>() {
                return Some(found);
            }
            if let Some(job) = e.downcast_ref::<JobError>() {
                return job.find();
            }
            cause = e.source();
        }
        None
    }

    /// Whether the error is (or wraps) a closed output pipe, which a command line counts as
    /// success.
    pub fn is_broken_pipe(&self) -> bool {
        self.io_error().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0.message, &self.0.source) {
            (Some(message), _) => f.write_str(message),
            (None, Some(source)) => source.fmt(f),
            (None, None) => f.write_str("job failed"),
        }
    }
}

impl StdError for JobError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        let source: &(dyn StdError + 'static) = self.0.source.as_deref()?;
        if self.0.message.is_some() { Some(source) } else { source.source() }
    }
}

macro_rules! from_errors {
    ($($ty:ty => $kind:ident),* $(,)?) => {$(
        impl From<$ty> for JobError {
            fn from(e: $ty) -> JobError {
                JobError::wrap(ErrorKind::$kind, e)
            }
        }
    )*};
}

from_errors! {
    io::Error => Io,
    simhash_io::Error => Io,
    simhash_io::MixedFormats => Input,
    simhash_index::lsh::EngineError => Engine,
    simhash_index::lsh::LshError => Engine,
    simhash_index::disk::DiskError => Engine,
    simhash_index::ConfigError => Settings,
    simhash_index::settings::SettingsError => Settings,
    simhash_cluster::ClusterError => Engine,
    serde_json::Error => Output,
    rayon::ThreadPoolBuildError => Internal,
}

/// `.context(..)` and `.with_context(..)` on results and options, as `anyhow`'s: the
/// message goes in front of the error (an option's `None` becomes an error of
/// [`ErrorKind::Internal`] with the message alone).
pub trait Context<T> {
    /// The error with `message` in front.
    fn context(self, message: impl fmt::Display) -> Result<T, JobError>;

    /// The error with `message()` in front, made only on error.
    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T, JobError>;
}

impl<T, E: Into<JobError>> Context<T> for Result<T, E> {
    fn context(self, message: impl fmt::Display) -> Result<T, JobError> {
        self.map_err(|e| e.into().context(message))
    }

    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T, JobError> {
        self.map_err(|e| e.into().context(message()))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, message: impl fmt::Display) -> Result<T, JobError> {
        self.ok_or_else(|| JobError::new(ErrorKind::Internal, message.to_string()))
    }

    fn with_context<M: fmt::Display>(self, message: impl FnOnce() -> M) -> Result<T, JobError> {
        self.ok_or_else(|| JobError::new(ErrorKind::Internal, message().to_string()))
    }
}

/// Returns an error of the kind named with the formatted message.
macro_rules! bail {
    ($kind:ident, $($arg:tt)+) => {
        return Err($crate::JobError::new($crate::ErrorKind::$kind, format!($($arg)+)))
    };
}

/// Returns an error of the kind named with the formatted message unless `cond` holds.
#[allow(unused_macros)]
macro_rules! ensure {
    ($cond:expr, $kind:ident, $($arg:tt)+) => {
        if !$cond {
            $crate::error::bail!($kind, $($arg)+);
        }
    };
}

#[allow(unused_imports)]
pub(crate) use {bail, ensure};

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain as `anyhow`'s `{:#}` prints it.
    fn chain(e: &(dyn StdError + 'static)) -> String {
        let mut s = e.to_string();
        let mut cause = e.source();
        while let Some(c) = cause {
            s.push_str(": ");
            s.push_str(&c.to_string());
            cause = c.source();
        }
        s
    }

    #[test]
    fn a_conversion_adds_nothing_to_the_chain() {
        let io = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        let e = JobError::from(io);
        assert_eq!(chain(&e), "closed");
        assert!(e.is_broken_pipe());
        let e = Err::<(), _>(e).context("x.jsonl: cannot write").unwrap_err();
        assert_eq!(chain(&e), "x.jsonl: cannot write: closed");
        assert_eq!(e.kind(), ErrorKind::Io);
        assert!(e.is_broken_pipe());
    }

    /// A closed pipe inside a converted simhash-io error (its message is this error's, so
    /// a chain walker passes over it) is still found.
    #[test]
    fn a_broken_pipe_inside_an_io_error_is_found() {
        let pipe = io::Error::new(io::ErrorKind::BrokenPipe, "closed");
        let e = JobError::from(simhash_io::Error::from(pipe)).context("writing");
        assert!(e.is_broken_pipe());
        let e = JobError::from(simhash_io::Error::from(io::Error::other("disk full")));
        assert!(!e.is_broken_pipe());
    }

    /// The error converted from is found, though the chain of sources passes over it.
    #[test]
    fn find_looks_inside_a_conversion() {
        let e = JobError::from(io::Error::other("disk full")).context("writing");
        assert_eq!(e.find::<io::Error>().map(ToString::to_string).as_deref(), Some("disk full"));
        assert!(e.find::<serde_json::Error>().is_none());
    }

    #[test]
    fn none_becomes_the_message() {
        let e = None::<u8>.context("internal error: no offset").unwrap_err();
        assert_eq!(chain(&e), "internal error: no offset");
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert!(!e.is_broken_pipe());
    }

    #[test]
    fn small_and_shareable() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<JobError>();
        assert_eq!(std::mem::size_of::<JobError>(), std::mem::size_of::<usize>());
    }
}
