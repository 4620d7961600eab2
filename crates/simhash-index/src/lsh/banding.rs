//! The banding of MinHash signatures for a Jaccard threshold ([`Banding`]) and the error of
//! an LSH configuration that cannot work ([`LshError`]).

use std::fmt;

use simhash_core::MAX_PERM;

/// The error for an invalid LSH configuration.
///
/// Its [`Display`](fmt::Display) says what is wrong, in lowercase with no trailing period;
/// [`kind`](LshError::kind) says it as a value to match on.
#[derive(Clone, Debug, PartialEq)]
pub struct LshError {
    kind: Repr,
}

/// What is wrong with an LSH configuration; see [`LshError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LshErrorKind {
    /// The threshold is not strictly between 0 and 1.
    Threshold,
    /// The error weights are negative, not finite, or both zero.
    Weights,
    /// Bands or rows is 0.
    Empty,
    /// `bands × rows` is more than the signature holds: more than [`MAX_PERM`], the longest
    /// signature a `MinHasher` makes, or than the hasher it is paired with.
    TooLong,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Repr {
    Threshold { threshold: f64 },
    Weights { false_positive: f64, false_negative: f64 },
    Empty { bands: usize, rows: usize },
    TooLong { bands: usize, rows: usize },
    LongerThanSignature { bands: usize, rows: usize, num_perm: usize },
}

impl LshError {
    pub(crate) fn threshold(threshold: f64) -> LshError {
        LshError { kind: Repr::Threshold { threshold } }
    }

    pub(crate) fn too_long_for(banding: Banding, num_perm: usize) -> LshError {
        let Banding { bands, rows } = banding;
        LshError { kind: Repr::LongerThanSignature { bands, rows, num_perm } }
    }

    /// What is wrong.
    pub fn kind(&self) -> LshErrorKind {
        match self.kind {
            Repr::Threshold { .. } => LshErrorKind::Threshold,
            Repr::Weights { .. } => LshErrorKind::Weights,
            Repr::Empty { .. } => LshErrorKind::Empty,
            Repr::TooLong { .. } | Repr::LongerThanSignature { .. } => LshErrorKind::TooLong,
        }
    }
}

impl fmt::Display for LshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Repr::Threshold { threshold } => {
                write!(f, "threshold ({threshold}) must be strictly between 0 and 1")
            }
            Repr::Weights { false_positive, false_negative } => write!(
                f,
                "weights ({false_positive}, {false_negative}) must be finite, non-negative \
                 and not both zero"
            ),
            Repr::Empty { bands, rows } => {
                write!(f, "bands ({bands}) and rows ({rows}) must both be at least 1")
            }
            Repr::TooLong { bands, rows } => write!(
                f,
                "bands ({bands}) × rows ({rows}) must be at most {MAX_PERM}, the longest signature"
            ),
            Repr::LongerThanSignature { bands, rows, num_perm } => write!(
                f,
                "bands ({bands}) × rows ({rows}) must be at most {num_perm}, the signature length"
            ),
        }
    }
}

impl std::error::Error for LshError {}

/// How a signature is cut for LSH: `bands` bands of `rows` slots, using the first
/// `bands × rows` slots of the signature.
///
/// Build one with [`Banding::new`] or [`Banding::for_threshold`], which check that
/// `bands × rows` fits in a signature (`1..=`[`MAX_PERM`] slots); a `Banding` written as a
/// struct literal is not checked, and the batch functions panic if a signature is shorter
/// than [`num_perm`](Banding::num_perm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "BandingFields"))]
pub struct Banding {
    /// The number of bands.
    pub bands: usize,
    /// The number of slots per band.
    pub rows: usize,
}

/// What a deserialized [`Banding`] is checked from, as [`Banding::new`] checks it.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
struct BandingFields {
    bands: usize,
    rows: usize,
}

#[cfg(feature = "serde")]
impl TryFrom<BandingFields> for Banding {
    type Error = LshError;

    fn try_from(f: BandingFields) -> Result<Banding, LshError> {
        Banding::new(f.bands, f.rows)
    }
}

/// Points of Simpson's rule for the error integrals (even).
const SIMPSON_STEPS: usize = 128;

impl Banding {
    /// A banding of `bands` bands of `rows` slots, both at least 1, with `bands × rows` at
    /// most [`MAX_PERM`] (no `MinHasher` makes a longer signature).
    ///
    /// ```
    /// use simhash_index::lsh::{Banding, LshErrorKind};
    ///
    /// assert_eq!(Banding::new(16, 8)?.num_perm(), 128);
    /// assert_eq!(Banding::new(0, 8).unwrap_err().kind(), LshErrorKind::Empty);
    /// assert_eq!(Banding::new(1000, 1000).unwrap_err().kind(), LshErrorKind::TooLong);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(bands: usize, rows: usize) -> Result<Banding, LshError> {
        if bands == 0 || rows == 0 {
            return Err(LshError { kind: Repr::Empty { bands, rows } });
        }
        if bands.checked_mul(rows).is_none_or(|n| n > MAX_PERM) {
            return Err(LshError { kind: Repr::TooLong { bands, rows } });
        }
        Ok(Banding { bands, rows })
    }

    /// The banding with `bands × rows <= num_perm` that minimises the false-positive
    /// probability mass below `threshold` plus the false-negative mass above it, equally
    /// weighted (datasketch's `_optimal_param` with weights 0.5 and 0.5): see
    /// [`for_threshold_weighted`](Banding::for_threshold_weighted).
    ///
    /// ```
    /// use simhash_index::lsh::Banding;
    ///
    /// let b = Banding::for_threshold(0.5, 128)?;
    /// assert_eq!((b.bands, b.rows), (25, 5)); // as datasketch chooses
    /// assert!(b.probability(0.8) > 0.99 && b.probability(0.2) < 0.01);
    /// assert!(Banding::for_threshold(1.0, 128).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_threshold(threshold: f64, num_perm: usize) -> Result<Banding, LshError> {
        Banding::for_threshold_weighted(threshold, num_perm, 0.5, 0.5)
    }

    /// The banding with `bands × rows <= num_perm` that minimises
    /// `false_positive × ∫₀ᵗ P(j) dj + false_negative × ∫ₜ¹ (1 - P(j)) dj`, where `t` is
    /// `threshold` and `P` is [`probability`](Banding::probability): weight false negatives
    /// more for recall (verification removes false positives, at the cost of comparing
    /// them). Ties go to fewer bands, then fewer rows.
    ///
    /// `num_perm` is clamped to `1..=`[`MAX_PERM`], as `MinHasher::new` clamps it, so the
    /// banding always fits the signatures of a `MinHasher` built with the same `num_perm`.
    ///
    /// Errors: `threshold` not strictly between 0 and 1, or weights negative, not finite, or
    /// both zero.
    pub fn for_threshold_weighted(
        threshold: f64,
        num_perm: usize,
        false_positive: f64,
        false_negative: f64,
    ) -> Result<Banding, LshError> {
        if !(threshold > 0.0 && threshold < 1.0) {
            return Err(LshError { kind: Repr::Threshold { threshold } });
        }
        let num_perm = num_perm.clamp(1, MAX_PERM);
        let valid = |w: f64| w.is_finite() && w >= 0.0;
        if !valid(false_positive)
            || !valid(false_negative)
            || false_positive + false_negative == 0.0
        {
            return Err(LshError { kind: Repr::Weights { false_positive, false_negative } });
        }
        let mut best = Banding { bands: 1, rows: 1 };
        let mut best_error = f64::INFINITY;
        for bands in 1..=num_perm {
            for rows in 1..=num_perm / bands {
                let b = Banding { bands, rows };
                let fp = simpson(|j| b.probability(j), 0.0, threshold);
                let fnr = simpson(|j| 1.0 - b.probability(j), threshold, 1.0);
                let error = false_positive * fp + false_negative * fnr;
                if error < best_error {
                    best_error = error;
                    best = b;
                }
            }
        }
        Ok(best)
    }

    /// The probability that two documents of Jaccard similarity `j` share at least one band
    /// hash: `1 - (1 - j^rows)^bands`.
    pub fn probability(&self, j: f64) -> f64 {
        let rows = i32::try_from(self.rows).unwrap_or(i32::MAX);
        let bands = i32::try_from(self.bands).unwrap_or(i32::MAX);
        1.0 - (1.0 - j.powi(rows)).powi(bands)
    }

    /// The number of signature slots used: `bands × rows`.
    pub fn num_perm(&self) -> usize {
        self.bands * self.rows
    }
}

/// `∫ₐᵇ f` by Simpson's rule.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    let h = (b - a) / SIMPSON_STEPS as f64;
    let mut sum = f(a) + f(b);
    for i in 1..SIMPSON_STEPS {
        sum += f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}
