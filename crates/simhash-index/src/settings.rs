//! The one settings contract of the front ends: what a run was asked ([`Asked`]: flags on a
//! command line, keyword arguments in Python), resolved to a matching method with its
//! checked settings ([`Matching`]), with the same refusals and messages everywhere.
//!
//! `simhash`, `simhash-dist` and the Python module map their flags or arguments onto an
//! [`Asked`] and call [`Asked::resolve`]; none of them decides `--method auto` or checks a
//! value on its own.
//!
//! ```
//! use simhash_index::settings::{Asked, Matching, Method};
//!
//! // Text, nothing asked: MinHash with the defaults.
//! let m = Asked::default().resolve()?;
//! assert!(matches!(m, Matching::Minhash { num_perm: 128, .. }));
//! // A simhash-only flag makes `auto` simhash; a MinHash flag beside it is refused.
//! let asked = Asked { distance: Some(4), ..Asked::default() };
//! assert!(matches!(asked.resolve()?, Matching::Simhash { distance: 4, .. }));
//! let both = Asked { jaccard: Some(0.5), ..asked };
//! assert_eq!(
//!     both.resolve().unwrap_err().to_string(),
//!     "--jaccard, --lsh-threshold, --num-perm and --templates apply to --method minhash, not simhash"
//! );
//! # Ok::<(), simhash_index::settings::SettingsError>(())
//! ```

use std::fmt;

use simhash_core::{MAX_PERM, MinHasher, Preset};

use crate::hamming::blocks::Blocks;
use crate::hamming::online::DEFAULT_MAX_DISTANCE;
use crate::hamming::tables::ConfigError;
use crate::lsh::Banding;
use crate::lsh::LshError;
use crate::lsh::{
    BandKeyWidth, DEFAULT_JACCARD, DEFAULT_LSH_THRESHOLD, DEFAULT_NUM_PERM, DEFAULT_SEED,
    EngineError, Sketcher, Templates,
};
use crate::{Tables, disk};

#[cfg(feature = "clap")]
mod flags;
#[cfg(feature = "clap")]
pub use flags::{FingerprintFlags, HammingFlags, MatchFlags};

/// How near-duplicates are found, as asked: every front end's `--method` (with the `clap`
/// feature, a `clap::ValueEnum`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Method {
    /// MinHash for text, unless a simhash-only setting is given (a distance, blocks, a
    /// preset that implies simhash) or the input holds only fingerprints.
    #[default]
    #[cfg_attr(
        feature = "clap",
        value(help = "minhash for text, unless a simhash-only setting is given (-k, --blocks, \
                      --preset moz or fork) or the input is fingerprints (--format hash)")
    )]
    Auto,
    /// Candidates from MinHash LSH, kept when the exact Jaccard similarity reaches the
    /// threshold.
    #[cfg_attr(
        feature = "clap",
        value(help = "Candidates from MinHash LSH, kept when the exact Jaccard similarity of \
                      the two shingle sets reaches --jaccard: high recall, precision kept by \
                      verification")
    )]
    Minhash,
    /// 64-bit simhash fingerprints within a Hamming distance.
    #[cfg_attr(
        feature = "clap",
        value(help = "64-bit simhash fingerprints within --distance bits (simhash-cpp's \
                      method, exact)")
    )]
    Simhash,
}

/// What a run was asked, before defaults and checks: each setting `None` when not given.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Asked {
    /// `--method`.
    pub method: Method,
    /// `--preset`: [`Preset::implies_simhash`] makes `auto` simhash.
    pub preset: Option<Preset>,
    /// The input holds only fingerprints (`--format hash`): simhash only.
    pub hashes: bool,
    /// The front end runs simhash whatever is asked (the fork's command line).
    pub simhash_only: bool,
    /// An all-pairs memory budget was given (`--memory`: simhash's).
    pub memory: bool,
    /// `-k/--distance`.
    pub distance: Option<u32>,
    /// `--blocks`.
    pub blocks: Option<Blocks>,
    /// `--jaccard`.
    pub jaccard: Option<f64>,
    /// `--lsh-threshold`.
    pub lsh_threshold: Option<f64>,
    /// `--num-perm`.
    pub num_perm: Option<usize>,
    /// `--band-key-bits`.
    pub band_keys: Option<BandKeyWidth>,
    /// `--templates`.
    pub templates: Option<Templates>,
}

/// The matching method and its settings, defaults filled in and checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Matching {
    /// Simhash fingerprints within a Hamming distance.
    Simhash {
        /// Bits apart at most.
        distance: u32,
        /// The block-permutation tables' blocks.
        blocks: Blocks,
    },
    /// MinHash LSH candidates, verified by their exact Jaccard similarity.
    Minhash {
        /// Pairs are kept at this exact Jaccard similarity or more.
        jaccard: f64,
        /// The similarity the LSH bands are tuned for.
        lsh_threshold: f64,
        /// Permutations in a signature.
        num_perm: usize,
        /// The band keys' width.
        band_keys: BandKeyWidth,
        /// Which verified pairs are acted on, by their relation (never two that overlap).
        templates: Templates,
    },
}

impl Asked {
    /// Whether a simhash-only setting (`-k`, `--blocks`) is given.
    pub fn simhash_flags(&self) -> bool {
        self.distance.is_some() || self.blocks.is_some()
    }

    /// Whether a MinHash-only setting (`--jaccard`, `--lsh-threshold`, `--num-perm`,
    /// `--band-key-bits`) is given.
    pub fn minhash_flags(&self) -> bool {
        self.jaccard.is_some()
            || self.lsh_threshold.is_some()
            || self.num_perm.is_some()
            || self.band_keys.is_some()
            || self.templates.is_some()
    }

    /// The method `auto` stands for: simhash for the fork's command line, fingerprint
    /// input, a simhash-only setting or a preset that implies it; MinHash otherwise
    /// (chosen by measurement on the dev set: docs/accuracy.md).
    pub fn method(&self) -> Method {
        match self.method {
            Method::Auto
                if self.simhash_only
                    || self.hashes
                    || self.simhash_flags()
                    || self.preset.is_some_and(Preset::implies_simhash) =>
            {
                Method::Simhash
            }
            Method::Auto => Method::Minhash,
            explicit => explicit,
        }
    }

    /// The method and its settings: defaults filled in, every combination and value
    /// checked.
    pub fn resolve(&self) -> Result<Matching, SettingsError> {
        if self.method() != Method::Minhash {
            if self.minhash_flags() {
                return Err(SettingsError(Repr::MinhashFlagsWithSimhash));
            }
            let distance = self.distance.unwrap_or(DEFAULT_MAX_DISTANCE);
            let blocks = self.blocks.unwrap_or(Blocks::Auto);
            blocks.validate(distance).map_err(|source| SettingsError::blocks(blocks, source))?;
            return Ok(Matching::Simhash { distance, blocks });
        }
        if self.hashes {
            return Err(SettingsError(Repr::MinhashOnHashes));
        }
        if self.simhash_flags() {
            return Err(SettingsError(Repr::SimhashFlagsWithMinhash));
        }
        if self.memory {
            return Err(SettingsError(Repr::MemoryWithMinhash));
        }
        let jaccard = jaccard(self.jaccard.unwrap_or(DEFAULT_JACCARD))?;
        let lsh_threshold = lsh_threshold(self.lsh_threshold.unwrap_or(DEFAULT_LSH_THRESHOLD))?;
        let num_perm = num_perm(self.num_perm.unwrap_or(DEFAULT_NUM_PERM))?;
        banding(lsh_threshold, num_perm)?;
        let band_keys = self.band_keys.unwrap_or_default();
        let templates = self.templates.unwrap_or_default();
        Ok(Matching::Minhash { jaccard, lsh_threshold, num_perm, band_keys, templates })
    }
}

impl Asked {
    /// The settings of a stored index with the asked ones laid over them: the method must be
    /// the index's (or `auto`), settings of the other method are refused, and given values
    /// are checked and replace the stored ones (the banding follows a new threshold or
    /// signature length). Opening the index with the result then reports each setting that
    /// differs from the stored one. The preset and window are the front end's to lay over.
    pub fn lay_over(&self, stored: &disk::Settings) -> Result<disk::Settings, SettingsError> {
        let index = match stored {
            disk::Settings::MinHash(_) => Method::Minhash,
            disk::Settings::Simhash(_) => Method::Simhash,
        };
        if self.method != Method::Auto && self.method != index {
            return Err(SettingsError(Repr::IndexMethod { index, asked: self.method }));
        }
        let mut laid = stored.clone();
        match &mut laid {
            disk::Settings::MinHash(s) => {
                if self.simhash_flags() {
                    return Err(SettingsError(Repr::SimhashFlagsWithMinhash));
                }
                if self.hashes {
                    return Err(SettingsError(Repr::MinhashOnHashes));
                }
                if let Some(j) = self.jaccard {
                    s.jaccard = jaccard(j)?;
                }
                if let Some(n) = self.num_perm {
                    s.num_perm = num_perm(n)?;
                }
                if let Some(t) = self.lsh_threshold {
                    s.lsh_threshold = lsh_threshold(t)?;
                }
                if self.num_perm.is_some() || self.lsh_threshold.is_some() {
                    let banding = banding(s.lsh_threshold, s.num_perm)?;
                    (s.bands, s.rows) = (banding.bands, banding.rows);
                }
            }
            disk::Settings::Simhash(s) => {
                if self.minhash_flags() {
                    return Err(SettingsError(Repr::MinhashFlagsWithSimhash));
                }
                if let Some(k) = self.distance {
                    s.max_distance = k;
                }
                if let Some(Blocks::Fixed(n)) = self.blocks {
                    s.blocks = n;
                }
                // Not checked here: values other than the index's (valid or not) are a
                // settings mismatch, which opening the index reports naming each.
            }
        }
        Ok(laid)
    }
}

/// The block-permutation tables for `n` fingerprints within `distance` bits (the planner's
/// choice for [`Blocks::Auto`]), refused as [`Asked::resolve`] refuses them.
pub fn tables(distance: u32, blocks: Blocks, n: usize) -> Result<Tables, SettingsError> {
    blocks.tables(n as u64, distance).map_err(|source| SettingsError::blocks(blocks, source))
}

impl Matching {
    /// The method's name: `minhash` or `simhash`.
    pub fn method(&self) -> &'static str {
        match self {
            Matching::Minhash { .. } => "minhash",
            Matching::Simhash { .. } => "simhash",
        }
    }

    /// The Hamming distance pairs may be apart (simhash), none when the method scores
    /// pairs by their Jaccard similarity (MinHash): what a pair's score measures.
    pub fn distance(&self) -> Option<u32> {
        match *self {
            Matching::Simhash { distance, .. } => Some(distance),
            Matching::Minhash { .. } => None,
        }
    }

    /// Which verified pairs are acted on by their relation: MinHash's setting; simhash's
    /// pairs have no relation, and every one is acted on ([`Templates::default`]).
    pub fn templates(&self) -> Templates {
        match *self {
            Matching::Minhash { templates, .. } => templates,
            Matching::Simhash { .. } => Templates::default(),
        }
    }

    /// What an on-disk index's settings match with, every front end alike (`templates`:
    /// the run's choice of which relations to act on, which an index does not store).
    pub fn of_stored(stored: &disk::Settings, templates: Templates) -> Matching {
        match stored {
            disk::Settings::MinHash(s) => Matching::Minhash {
                jaccard: s.jaccard,
                lsh_threshold: s.lsh_threshold,
                num_perm: s.num_perm,
                band_keys: BandKeyWidth::from_bits(s.band_key_bits).unwrap_or_default(),
                templates,
            },
            disk::Settings::Simhash(s) => {
                Matching::Simhash { distance: s.max_distance, blocks: Blocks::Fixed(s.blocks) }
            }
        }
    }

    /// The settings a new on-disk index stores for these, its documents fingerprinted by
    /// `fingerprinter`; simhash's `--blocks auto` is planned for `plan_documents`
    /// ([`disk::PLAN_DOCUMENTS`] for the front ends).
    ///
    /// Errors: blocks that make no tables for that many documents, named as
    /// [`Asked::resolve`] names them (`Ok(Err(..))` is the index's own refusal, from
    /// [`disk::MinHashSettings::new`] or [`disk::SimhashSettings::new`]).
    pub fn to_stored(
        &self,
        fingerprinter: &simhash_core::Fingerprinter,
        plan_documents: usize,
    ) -> Result<Result<disk::Settings, disk::DiskError>, SettingsError> {
        Ok(match *self {
            Matching::Minhash { jaccard, lsh_threshold, num_perm, .. } => {
                disk::MinHashSettings::new(fingerprinter, jaccard, lsh_threshold, num_perm)
                    .map(disk::Settings::MinHash)
            }
            Matching::Simhash { distance, blocks } => {
                tables(distance, blocks, plan_documents)?;
                disk::SimhashSettings::new(fingerprinter, distance, blocks)
                    .map(disk::Settings::Simhash)
            }
        })
    }

    /// The MinHash sketcher of these settings (none for simhash), with the fingerprints
    /// too when `fingerprints`.
    pub fn sketcher(&self, fingerprints: bool) -> Result<Option<Sketcher>, SettingsError> {
        let &Matching::Minhash { lsh_threshold, num_perm, band_keys, .. } = self else {
            return Ok(None);
        };
        let sketcher = Sketcher::new(
            MinHasher::new(num_perm, DEFAULT_SEED),
            banding(lsh_threshold, num_perm)?,
        )
        .map_err(|e| SettingsError(Repr::Sketcher(e)))?;
        Ok(Some(sketcher.with_fingerprints(fingerprints).with_band_keys(band_keys)))
    }
}

/// `--jaccard`, checked: more than 0 and at most 1.
pub fn jaccard(value: f64) -> Result<f64, SettingsError> {
    unit(Setting::Jaccard, value)
}

/// `--lsh-threshold`, checked: more than 0 and below 1.
pub fn lsh_threshold(value: f64) -> Result<f64, SettingsError> {
    if value >= 1.0 {
        return Err(SettingsError(Repr::LshThresholdNotBelowOne(value)));
    }
    unit(Setting::LshThreshold, value)
}

/// `--num-perm`, checked: 1 to [`MAX_PERM`].
pub fn num_perm(value: usize) -> Result<usize, SettingsError> {
    if value == 0 || value > MAX_PERM {
        return Err(SettingsError(Repr::NumPerm(value)));
    }
    Ok(value)
}

/// The banding of a checked LSH threshold and signature length.
pub fn banding(lsh_threshold: f64, num_perm: usize) -> Result<Banding, SettingsError> {
    Banding::for_threshold(lsh_threshold, num_perm).map_err(SettingsError::lsh_threshold)
}

fn unit(setting: Setting, value: f64) -> Result<f64, SettingsError> {
    if value > 0.0 && value <= 1.0 {
        Ok(value)
    } else {
        Err(SettingsError(Repr::NotUnit { setting, value }))
    }
}

/// One of the contract's settings, as its refusals name it ([`SettingsError::settings`]):
/// each front end says it in its own terms ([`SettingsError::message`]), the command line
/// by its flag ([`Setting::flag`]), Python by its argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The method; with the method named (`--method minhash`), or the setting alone.
    Method(Option<Method>),
    /// The simhash distance (`-k/--distance`).
    Distance,
    /// The simhash blocks (`--blocks`).
    Blocks,
    /// The memory budget of all-pairs (`--memory`).
    Memory,
    /// The Jaccard threshold (`--jaccard`).
    Jaccard,
    /// The LSH tuning threshold (`--lsh-threshold`).
    LshThreshold,
    /// The signature length (`--num-perm`).
    NumPerm,
    /// Whether template siblings are acted on (`--templates`).
    Templates,
    /// Input that holds only fingerprints (`--format hash`).
    HashInput,
}

impl Setting {
    /// Its name on the command line: `--jaccard`, `-k/--distance`, `--method minhash`.
    pub fn flag(self) -> String {
        let flag = match self {
            Setting::Method(Some(Method::Auto)) => "--method auto",
            Setting::Method(Some(Method::Minhash)) => "--method minhash",
            Setting::Method(Some(Method::Simhash)) => "--method simhash",
            Setting::Method(None) => "--method",
            Setting::Distance => "-k/--distance",
            Setting::Blocks => "--blocks",
            Setting::Memory => "--memory",
            Setting::Jaccard => "--jaccard",
            Setting::LshThreshold => "--lsh-threshold",
            Setting::NumPerm => "--num-perm",
            Setting::Templates => "--templates",
            Setting::HashInput => "--format hash",
        };
        flag.to_string()
    }
}

/// Settings that cannot go together, or a value out of range. Its message names the
/// settings as flags (`--jaccard must be more than 0 and at most 1, not 1.5`), or in a
/// front end's own terms ([`message`](SettingsError::message)); [`kind`](SettingsError::kind)
/// says what is wrong and [`settings`](SettingsError::settings) with which settings, as
/// values to match on.
///
/// ```
/// use simhash_index::settings::{Asked, Method, Setting};
///
/// let err = Asked { jaccard: Some(1.5), ..Asked::default() }.resolve().unwrap_err();
/// assert_eq!(err.settings(), [Setting::Jaccard]);
/// assert_eq!(err.to_string(), "--jaccard must be more than 0 and at most 1, not 1.5");
/// let python = |s: Setting| match s {
///     Setting::Method(Some(m)) => format!("method={:?}", format!("{m:?}").to_lowercase()),
///     other => format!("{other:?}").to_lowercase(),
/// };
/// assert_eq!(err.message(&python), "jaccard must be more than 0 and at most 1, not 1.5");
/// ```
#[derive(Debug)]
pub struct SettingsError(Repr);

/// What is wrong with asked settings; see [`SettingsError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SettingsErrorKind {
    /// MinHash settings with the simhash method.
    MinhashFlagsWithSimhash,
    /// The MinHash method on input that holds only fingerprints.
    MinhashOnHashes,
    /// Simhash settings with the MinHash method.
    SimhashFlagsWithMinhash,
    /// A memory budget with the MinHash method.
    MemoryWithMinhash,
    /// A value out of its range.
    Range,
    /// Blocks and distance that make no tables.
    Blocks,
    /// A method other than a stored index's ([`Asked::lay_over`]).
    IndexMethod,
}

#[derive(Debug)]
enum Repr {
    MinhashFlagsWithSimhash,
    MinhashOnHashes,
    SimhashFlagsWithMinhash,
    MemoryWithMinhash,
    NotUnit {
        setting: Setting,
        value: f64,
    },
    LshThresholdNotBelowOne(f64),
    NumPerm(usize),
    /// `fixed`: blocks were given (else chosen for the distance).
    Blocks {
        fixed: bool,
        source: ConfigError,
    },
    LshThreshold(LshError),
    Sketcher(EngineError),
    IndexMethod {
        index: Method,
        asked: Method,
    },
}

impl SettingsError {
    fn blocks(blocks: Blocks, source: ConfigError) -> SettingsError {
        SettingsError(Repr::Blocks { fixed: matches!(blocks, Blocks::Fixed(_)), source })
    }

    fn lsh_threshold(source: LshError) -> SettingsError {
        SettingsError(Repr::LshThreshold(source))
    }

    /// What is wrong.
    pub fn kind(&self) -> SettingsErrorKind {
        match self.0 {
            Repr::MinhashFlagsWithSimhash => SettingsErrorKind::MinhashFlagsWithSimhash,
            Repr::MinhashOnHashes => SettingsErrorKind::MinhashOnHashes,
            Repr::SimhashFlagsWithMinhash => SettingsErrorKind::SimhashFlagsWithMinhash,
            Repr::MemoryWithMinhash => SettingsErrorKind::MemoryWithMinhash,
            Repr::NotUnit { .. }
            | Repr::LshThresholdNotBelowOne(_)
            | Repr::NumPerm(_)
            | Repr::LshThreshold(_)
            | Repr::Sketcher(_) => SettingsErrorKind::Range,
            Repr::Blocks { .. } => SettingsErrorKind::Blocks,
            Repr::IndexMethod { .. } => SettingsErrorKind::IndexMethod,
        }
    }
}

impl SettingsError {
    /// The settings it is about, in the order its message names them first.
    pub fn settings(&self) -> Vec<Setting> {
        use Setting as S;
        let (minhash, simhash) =
            (S::Method(Some(Method::Minhash)), S::Method(Some(Method::Simhash)));
        match &self.0 {
            Repr::MinhashFlagsWithSimhash => {
                vec![S::Jaccard, S::LshThreshold, S::NumPerm, S::Templates, minhash]
            }
            Repr::MinhashOnHashes => vec![minhash, S::HashInput],
            Repr::SimhashFlagsWithMinhash => vec![S::Distance, S::Blocks, simhash],
            Repr::MemoryWithMinhash => vec![S::Memory, simhash],
            Repr::NotUnit { setting, .. } => vec![*setting],
            Repr::LshThresholdNotBelowOne(_) | Repr::LshThreshold(_) | Repr::Sketcher(_) => {
                vec![S::LshThreshold]
            }
            Repr::NumPerm(_) => vec![S::NumPerm],
            Repr::Blocks { fixed: true, .. } => vec![S::Blocks, S::Distance],
            Repr::Blocks { fixed: false, .. } => vec![S::Distance],
            Repr::IndexMethod { asked, .. } => vec![S::Method(Some(*asked))],
        }
    }

    /// The message with each setting named by `name` (the [`Display`](fmt::Display) form
    /// names them by [`Setting::flag`]); the source's message is not included.
    pub fn message(&self, name: &dyn Fn(Setting) -> String) -> String {
        use Setting as S;
        let method = |m: Method| name(S::Method(Some(m)));
        match &self.0 {
            Repr::MinhashFlagsWithSimhash => format!(
                "{}, {}, {} and {} apply to {}, not simhash",
                name(S::Jaccard),
                name(S::LshThreshold),
                name(S::NumPerm),
                name(S::Templates),
                method(Method::Minhash)
            ),
            Repr::MinhashOnHashes => format!(
                "{} needs the text: {} input holds only fingerprints (use {})",
                method(Method::Minhash),
                name(S::HashInput),
                method(Method::Simhash)
            ),
            Repr::SimhashFlagsWithMinhash => format!(
                "{} and {} apply to {}, not minhash (use {})",
                name(S::Distance),
                name(S::Blocks),
                method(Method::Simhash),
                name(S::Jaccard)
            ),
            Repr::MemoryWithMinhash => format!(
                "{} applies to {} (all pairs within {})",
                name(S::Memory),
                method(Method::Simhash),
                name(S::Distance)
            ),
            Repr::NotUnit { setting, value } => {
                format!("{} must be more than 0 and at most 1, not {value}", name(*setting))
            }
            Repr::LshThresholdNotBelowOne(v) => {
                format!("{} must be below 1, not {v}", name(S::LshThreshold))
            }
            Repr::NumPerm(n) => {
                format!("{} must be between 1 and {MAX_PERM}, not {n}", name(S::NumPerm))
            }
            Repr::Blocks { fixed: true, .. } => {
                format!("invalid {} and {}", name(S::Blocks), name(S::Distance))
            }
            Repr::Blocks { fixed: false, .. } => format!("invalid {}", name(S::Distance)),
            Repr::LshThreshold(_) | Repr::Sketcher(_) => {
                format!("invalid {}", name(S::LshThreshold))
            }
            Repr::IndexMethod { index, asked } => {
                let index = if *index == Method::Minhash { "minhash" } else { "simhash" };
                format!("{}: the index holds {index} sketches", method(*asked))
            }
        }
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&Setting::flag))
    }
}

impl std::error::Error for SettingsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0 {
            Repr::Blocks { source, .. } => Some(source),
            Repr::LshThreshold(source) => Some(source),
            Repr::Sketcher(source) => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_resolves_to_simhash_only_for_simhash_inputs_flags_and_presets() {
        let minhash = |a: Asked| matches!(a.resolve().unwrap(), Matching::Minhash { .. });
        assert!(minhash(Asked::default()));
        assert!(minhash(Asked { preset: Some(Preset::DefaultV1), ..Asked::default() }));
        assert!(minhash(Asked { jaccard: Some(0.6), ..Asked::default() }));
        for asked in [
            Asked { hashes: true, ..Asked::default() },
            Asked { simhash_only: true, ..Asked::default() },
            Asked { distance: Some(2), ..Asked::default() },
            Asked { blocks: Some(Blocks::Fixed(5)), ..Asked::default() },
            Asked { preset: Some(Preset::Moz), ..Asked::default() },
            Asked { preset: Some(Preset::Fork), ..Asked::default() },
            Asked { method: Method::Simhash, ..Asked::default() },
        ] {
            assert!(!minhash(asked), "{asked:?}");
        }
        // An explicit method wins over the preset.
        let asked =
            Asked { method: Method::Minhash, preset: Some(Preset::Moz), ..Asked::default() };
        assert!(minhash(asked));
    }

    #[test]
    fn every_refusal_has_its_kind_and_message() {
        use SettingsErrorKind as K;
        let cases = [
            (
                Asked { method: Method::Simhash, num_perm: Some(64), ..Asked::default() },
                K::MinhashFlagsWithSimhash,
                "apply to --method minhash",
            ),
            (
                Asked { method: Method::Minhash, hashes: true, ..Asked::default() },
                K::MinhashOnHashes,
                "needs the text",
            ),
            (
                Asked { method: Method::Minhash, distance: Some(3), ..Asked::default() },
                K::SimhashFlagsWithMinhash,
                "apply to --method simhash",
            ),
            (Asked { memory: true, ..Asked::default() }, K::MemoryWithMinhash, "--memory applies"),
            (
                Asked { jaccard: Some(0.0), ..Asked::default() },
                K::Range,
                "--jaccard must be more than 0 and at most 1, not 0",
            ),
            (Asked { jaccard: Some(f64::NAN), ..Asked::default() }, K::Range, "--jaccard must be"),
            (
                Asked { lsh_threshold: Some(1.0), ..Asked::default() },
                K::Range,
                "--lsh-threshold must be below 1, not 1",
            ),
            (
                Asked { lsh_threshold: Some(-0.5), ..Asked::default() },
                K::Range,
                "--lsh-threshold must be more than 0",
            ),
            (
                Asked { num_perm: Some(0), ..Asked::default() },
                K::Range,
                "--num-perm must be between 1 and",
            ),
            (
                Asked { num_perm: Some(MAX_PERM + 1), ..Asked::default() },
                K::Range,
                "--num-perm must be between 1 and",
            ),
            (
                Asked { distance: Some(3), blocks: Some(Blocks::Fixed(3)), ..Asked::default() },
                K::Blocks,
                "invalid --blocks and -k/--distance",
            ),
            (Asked { distance: Some(65), ..Asked::default() }, K::Blocks, "invalid -k/--distance"),
        ];
        for (asked, kind, message) in cases {
            let err = asked.resolve().unwrap_err();
            assert_eq!(err.kind(), kind, "{asked:?}");
            assert!(err.to_string().contains(message), "{asked:?}: {err}");
            // Every setting the message names is one of the error's settings, named by
            // the front end's names wherever the message names it.
            let named = err.message(&|s| format!("<{s:?}>"));
            assert!(!named.contains("--"), "{named}");
            let settings = err.settings();
            assert!(!settings.is_empty(), "{asked:?}");
            for s in &settings {
                assert!(named.contains(&format!("<{s:?}>")), "{named} lacks {s:?}");
            }
        }
    }

    #[test]
    fn a_matching_stored_reads_back_as_itself() {
        use simhash_core::{Fingerprinter, Preset};
        let fp = Fingerprinter::with_settings(Preset::Fork, Some(5));
        let keep = Templates::Keep;
        let minhash =
            Asked { jaccard: Some(0.6), num_perm: Some(64), ..Asked::default() }.resolve().unwrap();
        let stored = minhash.to_stored(&fp, 1000).unwrap().unwrap();
        let disk::Settings::MinHash(s) = &stored else { panic!("not minhash") };
        assert_eq!((s.jaccard, s.num_perm, &s.preset[..], s.window), (0.6, 64, "fork", 5));
        // The run's templates, not a stored one's; the band keys the index's.
        let read = Matching::of_stored(&stored, keep);
        let Matching::Minhash { jaccard, lsh_threshold, num_perm, band_keys, templates } = read
        else {
            panic!("not minhash")
        };
        assert_eq!((jaccard, lsh_threshold, num_perm, templates), (0.6, s.lsh_threshold, 64, keep));
        assert_eq!(BandKeyWidth::from_bits(s.band_key_bits), Some(band_keys));
        assert_eq!((read.templates(), read.distance()), (keep, None));
        let simhash =
            Asked { distance: Some(5), blocks: Some(Blocks::Fixed(7)), ..Asked::default() }
                .resolve()
                .unwrap();
        let stored = simhash.to_stored(&fp, 1000).unwrap().unwrap();
        let read = Matching::of_stored(&stored, keep);
        assert_eq!(read, simhash);
        assert_eq!((read.templates(), read.distance()), (Templates::default(), Some(5)));
        assert_eq!(stored.preset(), "fork");
        let mut renamed = stored.clone();
        *renamed.preset_window_mut().1 = 9;
        let disk::Settings::Simhash(s) = renamed else { panic!("not simhash") };
        assert_eq!((s.window, s.max_distance, s.blocks), (9, 5, 7));
        // Auto blocks are planned for the documents asked; blocks that make no tables are
        // named as the contract names them, before the index is asked.
        let auto = Asked { distance: Some(3), ..Asked::default() }.resolve().unwrap();
        let disk::Settings::Simhash(s) = auto.to_stored(&fp, 1000).unwrap().unwrap() else {
            panic!("not simhash")
        };
        assert!(s.blocks > 3);
        let none = Matching::Simhash { distance: 3, blocks: Blocks::Fixed(3) };
        let err = none.to_stored(&fp, 1000).unwrap_err();
        assert_eq!(err.kind(), SettingsErrorKind::Blocks);
    }

    #[test]
    fn asked_settings_lay_over_a_stored_index() {
        use SettingsErrorKind as K;
        use simhash_core::Fingerprinter;
        let fp = Fingerprinter::default();
        let minhash =
            disk::Settings::MinHash(disk::MinHashSettings::new(&fp, 0.4, 0.3, 128).unwrap());
        let simhash =
            disk::Settings::Simhash(disk::SimhashSettings::new(&fp, 3, Blocks::Fixed(4)).unwrap());
        // Nothing asked: the stored settings.
        assert_eq!(Asked::default().lay_over(&minhash).unwrap(), minhash);
        assert_eq!(Asked::default().lay_over(&simhash).unwrap(), simhash);
        // Values given replace the stored ones, the banding following.
        let asked = Asked { jaccard: Some(0.6), num_perm: Some(64), ..Asked::default() };
        let disk::Settings::MinHash(laid) = asked.lay_over(&minhash).unwrap() else {
            panic!("not minhash")
        };
        let want = banding(0.3, 64).unwrap();
        assert_eq!(
            (laid.jaccard, laid.num_perm, laid.bands, laid.rows),
            (0.6, 64, want.bands, want.rows)
        );
        let asked = Asked { distance: Some(5), blocks: Some(Blocks::Fixed(7)), ..Asked::default() };
        let disk::Settings::Simhash(laid) = asked.lay_over(&simhash).unwrap() else {
            panic!("not simhash")
        };
        assert_eq!((laid.max_distance, laid.blocks), (5, 7));
        // Refusals.
        for (asked, stored, kind, message) in [
            (
                Asked { method: Method::Simhash, ..Asked::default() },
                &minhash,
                K::IndexMethod,
                "--method simhash: the index holds minhash sketches",
            ),
            (
                Asked { method: Method::Minhash, ..Asked::default() },
                &simhash,
                K::IndexMethod,
                "--method minhash: the index holds simhash sketches",
            ),
            (
                Asked { distance: Some(3), ..Asked::default() },
                &minhash,
                K::SimhashFlagsWithMinhash,
                "apply to --method simhash",
            ),
            (
                Asked { hashes: true, ..Asked::default() },
                &minhash,
                K::MinhashOnHashes,
                "needs the text",
            ),
            (
                Asked { jaccard: Some(2.0), ..Asked::default() },
                &minhash,
                K::Range,
                "--jaccard must be",
            ),
            (
                Asked { lsh_threshold: Some(1.0), ..Asked::default() },
                &minhash,
                K::Range,
                "--lsh-threshold must be below 1",
            ),
            (
                Asked { num_perm: Some(0), ..Asked::default() },
                &minhash,
                K::Range,
                "--num-perm must be",
            ),
            (
                Asked { jaccard: Some(0.5), ..Asked::default() },
                &simhash,
                K::MinhashFlagsWithSimhash,
                "apply to --method minhash",
            ),
        ] {
            let err = asked.lay_over(stored).unwrap_err();
            assert_eq!(err.kind(), kind, "{asked:?}");
            assert!(err.to_string().contains(message), "{asked:?}: {err}");
        }
    }

    #[test]
    fn the_sketcher_is_the_settings() {
        let m = Asked { lsh_threshold: Some(0.5), num_perm: Some(64), ..Asked::default() };
        let m = m.resolve().unwrap();
        let sketcher = m.sketcher(true).unwrap().unwrap();
        assert_eq!(sketcher.banding(), banding(0.5, 64).unwrap());
        assert_eq!(m.method(), "minhash");
        let s = Asked { distance: Some(2), ..Asked::default() }.resolve().unwrap();
        assert!(s.sketcher(true).unwrap().is_none());
        assert_eq!(s.method(), "simhash");
    }
}
