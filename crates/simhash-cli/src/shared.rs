//! The parts of this binary that `simhash-dist` runs too. Not an API: no stability promise.

pub use crate::args::Blocks;
