//! The `blocks` setting: a number of blocks, or `auto` for the planner's choice.

use std::fmt;
use std::str::FromStr;

use crate::hamming::plan::plan;
use crate::hamming::tables::{ConfigError, Tables};

/// How many blocks the 64 bits are split into: a fixed number, or [`Auto`](Blocks::Auto) to
/// let [`plan`] choose for the number of fingerprints.
///
/// Its text form is `auto` or the number ([`FromStr`] and [`Display`](fmt::Display) agree),
/// as the binaries' `--blocks` reads it.
///
/// ```
/// use simhash_index::Blocks;
///
/// let auto: Blocks = "auto".parse()?;
/// assert_eq!(auto, Blocks::Auto);
/// assert_eq!("6".parse::<Blocks>()?, Blocks::Fixed(6));
/// assert_eq!(Blocks::Fixed(6).to_string(), "6");
/// let tables = auto.tables(1_000_000, 3)?;
/// assert_eq!(tables.max_distance(), 3);
/// assert!(Blocks::Fixed(3).validate(3).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Blocks {
    /// The planner's choice for the number of fingerprints ([`plan`]).
    #[default]
    Auto,
    /// Exactly this many blocks.
    Fixed(usize),
}

impl Blocks {
    /// The number of blocks for `n` fingerprints within `max_distance` bits.
    ///
    /// Errors as [`plan`] does for `Auto` (only if `max_distance >= 64`) and as
    /// [`Tables::new`] does for `Fixed`.
    pub fn resolve(self, n: u64, max_distance: u32) -> Result<usize, ConfigError> {
        match self {
            Blocks::Auto => Ok(plan(n, max_distance)?.blocks),
            Blocks::Fixed(m) => Tables::new(m, max_distance).map(|t| t.blocks()),
        }
    }

    /// The tables for `n` fingerprints within `max_distance` bits.
    pub fn tables(self, n: u64, max_distance: u32) -> Result<Tables, ConfigError> {
        match self {
            Blocks::Auto => Tables::from_plan(&plan(n, max_distance)?),
            Blocks::Fixed(m) => Tables::new(m, max_distance),
        }
    }

    /// Checks the setting against `max_distance` before any fingerprint is read: the error
    /// [`tables`](Blocks::tables) would return, if any. Whether it errors does not depend on
    /// `n`.
    pub fn validate(self, max_distance: u32) -> Result<(), ConfigError> {
        match self {
            Blocks::Auto => plan(1, max_distance).map(drop),
            Blocks::Fixed(m) => Tables::new(m, max_distance).map(drop),
        }
    }
}

impl fmt::Display for Blocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocks::Auto => f.write_str("auto"),
            Blocks::Fixed(m) => write!(f, "{m}"),
        }
    }
}

impl FromStr for Blocks {
    type Err = ParseBlocksError;

    /// `auto`, or a number (`usize`); whether the number is usable is checked against the
    /// distance later ([`Blocks::validate`]).
    fn from_str(s: &str) -> Result<Blocks, ParseBlocksError> {
        if s == "auto" {
            return Ok(Blocks::Auto);
        }
        s.parse::<usize>().map(Blocks::Fixed).map_err(|_| ParseBlocksError { input: s.into() })
    }
}

/// The error returned when text is neither `auto` nor a number of blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseBlocksError {
    input: Box<str>,
}

/// Why text is not a [`Blocks`] setting; see [`ParseBlocksError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseBlocksErrorKind {
    /// Neither `auto` nor a `usize`.
    Invalid,
}

impl ParseBlocksError {
    /// Why the text is not a setting.
    pub fn kind(&self) -> ParseBlocksErrorKind {
        ParseBlocksErrorKind::Invalid
    }
}

impl fmt::Display for ParseBlocksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected a number of blocks or `auto`, got {:?}", self.input)
    }
}

impl std::error::Error for ParseBlocksError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        for b in [Blocks::Auto, Blocks::Fixed(0), Blocks::Fixed(6), Blocks::Fixed(64)] {
            assert_eq!(b.to_string().parse(), Ok(b));
        }
        for bad in ["", "Auto", " 6", "-1", "6.0", "x"] {
            let e = bad.parse::<Blocks>().unwrap_err();
            assert_eq!(e.kind(), ParseBlocksErrorKind::Invalid);
            assert_eq!(
                e.to_string(),
                format!("expected a number of blocks or `auto`, got {bad:?}")
            );
        }
    }

    #[test]
    fn resolve_agrees_with_plan_and_tables() {
        for k in [0, 3, 8, 63] {
            for n in [0, 1, 1000, 10_000_000_000] {
                let m = Blocks::Auto.resolve(n, k).unwrap();
                assert_eq!(m, plan(n, k).unwrap().blocks);
                assert_eq!(Blocks::Auto.tables(n, k).unwrap().blocks(), m);
            }
            assert!(Blocks::Auto.validate(k).is_ok());
        }
        assert!(Blocks::Auto.validate(64).is_err());
        for (m, k) in [(4, 3), (3, 3), (65, 3), (17, 8), (6, 64)] {
            let want = Tables::new(m, k).map(|t| t.blocks());
            assert_eq!(Blocks::Fixed(m).resolve(5, k), want);
            assert_eq!(Blocks::Fixed(m).validate(k), want.map(drop));
        }
    }
}
