//! The simhash tools' application layer: the jobs a front end runs over the engines
//! (`simhash-core`, `simhash-index`, `simhash-cluster`) and the readers and writers
//! (`simhash-io`). The `simhash` command line is flags, commands and terminal output over
//! this crate; another front end (a service, a binding) runs the same jobs and writes the
//! same bytes.
//!
//! # Overview
//!
//! - [`Session`]: one run, from the first read to the last output put in place: the
//!   thread pool, the [`Reporter`] (bad records, warnings, phases), the [`Summary`] of the
//!   run's figures and the `--stats` file.
//! - [`Corpus`]: the documents of a run, read by a parallel pipeline (one reader thread,
//!   a bounded channel of numbered batches, fingerprint workers) and gathered back in input
//!   order, as [`Reading`] says each record becomes a document.
//! - [`Progress`]: how a front end shows progress and messages; every method does nothing
//!   by default ([`Silent`]).
//! - [`JobError`]: every failure, with an [`ErrorKind`] and the error behind it as its
//!   source; [`Context`] adds a message in front, as `anyhow`'s does.
//!
//! The steps a command runs between reading and finishing are modules of their own:
//! [`matching`] (pairs, clusters in either mode, the keep order), [`against`] (dedup
//! against an on-disk index and its one commit), [`rewrite`] (the second pass that copies
//! the kept records) and [`page`] (the `--report` HTML page). [`decontaminate`] is a whole
//! job: eval-set text found in a corpus, and the corpus written without, marked with or
//! cut of it. [`eval`] scores predicted pairs or clusters against labelled truth, and
//! [`audit`] a run's removals against labels given on its page.
//!
//! # Example
//!
//! Fingerprint a small JSONL file:
//!
//! ```
//! use simhash_core::Fingerprinter;
//! use simhash_jobs::{Reading, Run, Session, Silent};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("docs.jsonl");
//! std::fs::write(&path, "{\"id\":\"a\",\"text\":\"the quick brown fox\"}\n")?;
//!
//! let run = Run { threads: 1, quiet: true, stats: None, memory: None };
//! let mut session = Session::new("fingerprint", &run, false, Box::new(Silent))?;
//! let reading = Reading {
//!     parser: simhash_io::Parser::Json(simhash_io::Columns::new("text", "id")),
//!     fingerprinter: Some(Fingerprinter::new()),
//!     sketcher: None,
//!     eval: None,
//! };
//! let mut sources = simhash_io::Inputs::expand(&[path])?.sources();
//! let corpus = session.read(&mut sources, reading, None, false)?;
//! assert_eq!(corpus.len(), 1);
//! assert_eq!(corpus.id(0), "a");
//! assert!(corpus.fingerprint(0).is_some());
//! let finished = session.finish(Vec::new())?;
//! assert_eq!(finished.skipped, 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Errors are [`JobError`]s: a message for the user (lowercase, no trailing period) with
//! the error behind it as the source, never `anyhow`. Nothing here prints or draws: the
//! front end does, through its [`Progress`].

#![warn(missing_docs)]

pub mod against;
pub mod audit;
mod corpus;
pub mod decontaminate;
mod decontaminate_marks;
mod error;
pub mod eval;
#[cfg(feature = "clap")]
pub mod flags;
pub mod matching;
pub mod page;
mod reporter;
pub mod rewrite;
mod session;
mod settings;
mod summary;

pub use crate::corpus::{Corpus, Reading};
pub use crate::error::{Context, ErrorKind, JobError};
pub use crate::reporter::{Progress, Reporter, Silent};
pub use crate::session::{Finished, Finisher, Session, inputs_label_of};
pub use crate::settings::{DEFAULT_BIG_CLUSTER, Grouping, Input, Run};
pub use crate::summary::{BigCluster, Decontamination, EvalFigures, Summary};
