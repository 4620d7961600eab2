//! A persistent near-duplicate index on disk, for both methods.
//!
//! TODO docs
mod error;
mod file;
mod index;
mod manifest;
mod segment;
mod settings;
mod writer;

pub use error::{DiskError, DiskErrorKind};
pub use index::{DiskIndex, Stats};
pub use settings::{MinHashSettings, Settings, SimhashSettings};
pub use writer::{Commit, DEFAULT_FLUSH_BYTES, Refused, Writer, WriterBuilder};

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod tests;
