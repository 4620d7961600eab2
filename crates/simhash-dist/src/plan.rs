//! What the rounds share with the job that runs them, below both: the [`Mode`] (what to
//! compute and write) and how a worker's part ended ([`End`]). The rounds depend on these
//! plain types, never on [`crate::job`], which runs them.

use crate::args::Keep;

/// What to compute and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `pairs`: every near-duplicate pair.
    Pairs,
    /// `cluster`: the connected components (`singletons`: with the records in none).
    Cluster { singletons: bool },
    /// `dedup`: the walk in `--keep` order, per component ([`crate::rounds::dedup`]).
    Dedup { keep: Keep },
    /// `decontaminate`: each text scanned for eval n-grams as it is read, the scans
    /// gathered ([`crate::rounds::contamination`]).
    Decontaminate,
}

/// How a worker's part of the job ended.
#[derive(Debug)]
pub(crate) enum End {
    /// Finished, with the job's exit code (1 when records were skipped): the same on every
    /// worker of every process.
    Done(u8),
    /// The job failed; the messages say why (every worker has them).
    Failed(Vec<String>),
}
