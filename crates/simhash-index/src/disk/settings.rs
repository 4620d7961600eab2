//! [`Settings`]: everything needed to sketch documents the way the index's were sketched,
//! stored in the manifest and compared on every open.

use std::collections::BTreeMap;

use simhash_core::{Fingerprinter, MinHasher, Preset};

use super::DiskError;
use crate::lsh::Banding;
use crate::lsh::{BandKeyWidth, DEFAULT_SEED, Sketcher};
use crate::{Blocks, Tables};

/// The number of documents a new simhash index's tables are planned for when its blocks
/// are `auto`: the tables are fixed when the index is made and its size is not known then
/// (any number of blocks finds the same matches; this one is fast from 1M to 1B).
pub const PLAN_DOCUMENTS: u64 = 100_000_000;

/// The settings an index was made with. They are data: the front end builds its sketcher
/// (or fingerprinter) from them, so that new documents are sketched the way the indexed ones
/// were. Opening an index with other settings is a [`SettingsMismatch`] error naming each
/// differing setting.
///
/// [`SettingsMismatch`]: super::DiskErrorKind::SettingsMismatch
#[derive(Clone, Debug, PartialEq)]
pub enum Settings {
    /// MinHash LSH with exact Jaccard verification.
    MinHash(MinHashSettings),
    /// Simhash fingerprints within a Hamming distance.
    Simhash(SimhashSettings),
}

/// The `extra` setting of a MinHash index whose documents carry their texts' tokens
/// ([`DocSketch::tokens`](crate::lsh::DocSketch::tokens)) beside their shingle sets, for the
/// [`Relation`](crate::lsh::Relation) of a match: `"1"`. Indexes made before tokens were
/// stored have none, and their matches read as [`Relation::Same`](crate::lsh::Relation).
pub(crate) const TOKENS: &str = "tokens";

/// The settings of a MinHash index.
#[derive(Clone, Debug, PartialEq)]
pub struct MinHashSettings {
    /// The front end's name for how texts become shingles (a preset).
    pub preset: String,
    /// Tokens per shingle.
    pub window: usize,
    /// MinHash signature slots.
    pub num_perm: usize,
    /// LSH bands: band keys per document.
    pub bands: usize,
    /// Signature slots per band.
    pub rows: usize,
    /// The similarity the banding was tuned for (recorded, not used by the index).
    pub lsh_threshold: f64,
    /// The minimum exact Jaccard similarity of a match.
    pub jaccard: f64,
    /// The MinHash seed.
    pub seed: u64,
    /// Bits of a stored band key: 32 (`DocSketch::bands`, what `MinHashSettings::new`
    /// records) or 64 (`DocSketch::band_hashes`).
    pub band_key_bits: u32,
    /// Other settings of the front end, compared like the rest (names without whitespace).
    pub extra: BTreeMap<String, String>,
}

/// The settings of a simhash index.
#[derive(Clone, Debug, PartialEq)]
pub struct SimhashSettings {
    /// The front end's name for how texts become features (a preset).
    pub preset: String,
    /// Tokens per shingle.
    pub window: usize,
    /// The maximum Hamming distance of a match (`k`).
    pub max_distance: u32,
    /// Blocks of the permutation tables (more than `max_distance`); a speed setting that
    /// the stored tables depend on.
    pub blocks: usize,
    /// Other settings of the front end, compared like the rest (names without whitespace).
    pub extra: BTreeMap<String, String>,
}

impl MinHashSettings {
    /// The settings of a new MinHash index, as the `simhash` command makes them: texts
    /// become shingles as `fingerprinter` makes them (its preset and window), the bands and
    /// rows are [`Banding::for_threshold`]`(lsh_threshold, num_perm)`, the seed is
    /// [`DEFAULT_SEED`] and band keys have 32 bits. Errors
    /// ([`Invalid`](super::DiskErrorKind::Invalid)): a threshold out of range, or
    /// `num_perm` out of `1..=MAX_PERM`.
    pub fn new(
        fingerprinter: &Fingerprinter,
        jaccard: f64,
        lsh_threshold: f64,
        num_perm: usize,
    ) -> Result<MinHashSettings, DiskError> {
        if num_perm == 0 || num_perm > simhash_core::MAX_PERM {
            return Err(DiskError::invalid(format!(
                "num_perm ({num_perm}) must be between 1 and {}",
                simhash_core::MAX_PERM
            )));
        }
        let banding = Banding::for_threshold(lsh_threshold, num_perm)
            .map_err(|e| DiskError::invalid(e.to_string()))?;
        let settings = MinHashSettings {
            preset: fingerprinter.preset().name().to_owned(),
            window: fingerprinter.window(),
            num_perm,
            bands: banding.bands,
            rows: banding.rows,
            lsh_threshold,
            jaccard,
            seed: DEFAULT_SEED,
            band_key_bits: 32,
            // The texts' tokens are stored beside each shingle set, for the relation of a
            // match (an index made before them has no such setting, and no tokens).
            extra: BTreeMap::from([(TOKENS.to_string(), "1".to_string())]),
        };
        Settings::MinHash(settings.clone()).validate()?;
        Ok(settings)
    }
}

impl SimhashSettings {
    /// The settings of a new simhash index, as the `simhash` command makes them: features
    /// as `fingerprinter` makes them, and for [`Blocks::Auto`] the planner's blocks for
    /// [`PLAN_DOCUMENTS`] documents. Errors ([`Invalid`](super::DiskErrorKind::Invalid)):
    /// blocks that do not fit the distance.
    pub fn new(
        fingerprinter: &Fingerprinter,
        max_distance: u32,
        blocks: Blocks,
    ) -> Result<SimhashSettings, DiskError> {
        let tables = blocks
            .tables(PLAN_DOCUMENTS, max_distance)
            .map_err(|e| DiskError::invalid(e.to_string()))?;
        Ok(SimhashSettings {
            preset: fingerprinter.preset().name().to_owned(),
            window: fingerprinter.window(),
            max_distance,
            blocks: tables.blocks(),
            extra: BTreeMap::new(),
        })
    }
}

impl Settings {
    /// The fingerprinter that makes features the way the indexed documents' were made:
    /// the stored preset (a name `simhash_core::Preset` knows) and window. Errors
    /// ([`Invalid`](super::DiskErrorKind::Invalid)): a preset this build does not know.
    pub fn fingerprinter(&self) -> Result<Fingerprinter, DiskError> {
        let (preset, window) = match self {
            Settings::MinHash(s) => (&s.preset, s.window),
            Settings::Simhash(s) => (&s.preset, s.window),
        };
        let preset: Preset = preset
            .parse()
            .map_err(|_| DiskError::invalid(format!("the index's preset {preset:?} is unknown")))?;
        Ok(Fingerprinter::with_settings(preset, Some(window)))
    }

    /// For a MinHash index, the sketcher that sketches new documents the way the indexed
    /// ones were (num_perm, seed, bands and rows, and band keys of the recorded width);
    /// `None` for a simhash index.
    pub fn sketcher(&self) -> Result<Option<Sketcher>, DiskError> {
        match self {
            Settings::MinHash(s) => {
                let invalid = |e: &dyn std::fmt::Display| DiskError::invalid(e.to_string());
                let banding = Banding::new(s.bands, s.rows).map_err(|e| invalid(&e))?;
                let sketcher = Sketcher::new(MinHasher::new(s.num_perm, s.seed), banding)
                    .map_err(|e| invalid(&e))?;
                let width = BandKeyWidth::from_bits(s.band_key_bits).unwrap_or_default();
                Ok(Some(sketcher.with_band_keys(width)))
            }
            Settings::Simhash(_) => Ok(None),
        }
    }

    /// The fingerprint preset's name, whichever the method.
    pub fn preset(&self) -> &str {
        match self {
            Settings::MinHash(s) => &s.preset,
            Settings::Simhash(s) => &s.preset,
        }
    }

    /// The fingerprint preset's name and the shingle window, whichever the method.
    pub fn preset_window_mut(&mut self) -> (&mut String, &mut usize) {
        match self {
            Settings::MinHash(s) => (&mut s.preset, &mut s.window),
            Settings::Simhash(s) => (&mut s.preset, &mut s.window),
        }
    }

    /// `"minhash"` or `"simhash"`.
    pub fn method(&self) -> &'static str {
        match self {
            Settings::MinHash(_) => "minhash",
            Settings::Simhash(_) => "simhash",
        }
    }

    /// Checks that the settings can work: a banding that fits the signature, a Jaccard
    /// threshold in `(0, 1]`, 32- or 64-bit band keys, valid tables.
    pub fn validate(&self) -> Result<(), DiskError> {
        match self {
            Settings::MinHash(s) => {
                crate::lsh::Banding::new(s.bands, s.rows)
                    .map_err(|e| DiskError::invalid(e.to_string()))?;
                if s.bands * s.rows > s.num_perm {
                    return Err(DiskError::invalid(format!(
                        "bands × rows ({} × {}) exceeds num_perm ({})",
                        s.bands, s.rows, s.num_perm
                    )));
                }
                if !(s.jaccard > 0.0 && s.jaccard <= 1.0) {
                    return Err(DiskError::invalid(format!(
                        "jaccard ({}) must be more than 0 and at most 1",
                        s.jaccard
                    )));
                }
                if s.band_key_bits != 32 && s.band_key_bits != 64 {
                    return Err(DiskError::invalid(format!(
                        "band_key_bits ({}) must be 32 or 64",
                        s.band_key_bits
                    )));
                }
                check_extra(&s.extra)
            }
            Settings::Simhash(s) => {
                Tables::new(s.blocks, s.max_distance)
                    .map_err(|e| DiskError::invalid(e.to_string()))?;
                check_extra(&s.extra)
            }
        }
    }

    /// The settings as `(name, value)` pairs, in a fixed order: what the manifest stores.
    pub(crate) fn to_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = vec![("method".to_string(), self.method().to_string())];
        let mut push = |k: &str, v: String| pairs.push((k.to_string(), v));
        let extra = match self {
            Settings::MinHash(s) => {
                push("preset", s.preset.clone());
                push("window", s.window.to_string());
                push("num_perm", s.num_perm.to_string());
                push("bands", s.bands.to_string());
                push("rows", s.rows.to_string());
                push("lsh_threshold", format!("{:?}", s.lsh_threshold));
                push("jaccard", format!("{:?}", s.jaccard));
                push("seed", s.seed.to_string());
                push("band_key_bits", s.band_key_bits.to_string());
                &s.extra
            }
            Settings::Simhash(s) => {
                push("preset", s.preset.clone());
                push("window", s.window.to_string());
                push("max_distance", s.max_distance.to_string());
                push("blocks", s.blocks.to_string());
                &s.extra
            }
        };
        for (k, v) in extra {
            pairs.push((format!("extra.{k}"), v.clone()));
        }
        pairs
    }

    /// The settings from the manifest's pairs; `None` names what is missing or malformed.
    pub(crate) fn from_pairs(pairs: &[(String, String)]) -> Result<Settings, String> {
        fn num<T: std::str::FromStr>(k: &str, v: Result<&str, String>) -> Result<T, String> {
            let v = v?;
            v.parse().map_err(|_| format!("setting {k} has a malformed value {v:?}"))
        }
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .ok_or(format!("no setting {k}"))
        };
        let extra: BTreeMap<String, String> = pairs
            .iter()
            .filter_map(|(k, v)| k.strip_prefix("extra.").map(|k| (k.to_string(), v.clone())))
            .collect();
        match get("method")? {
            "minhash" => Ok(Settings::MinHash(MinHashSettings {
                preset: get("preset")?.to_string(),
                window: num("window", get("window"))?,
                num_perm: num("num_perm", get("num_perm"))?,
                bands: num("bands", get("bands"))?,
                rows: num("rows", get("rows"))?,
                lsh_threshold: num("lsh_threshold", get("lsh_threshold"))?,
                jaccard: num("jaccard", get("jaccard"))?,
                seed: num("seed", get("seed"))?,
                band_key_bits: num("band_key_bits", get("band_key_bits"))?,
                extra,
            })),
            "simhash" => Ok(Settings::Simhash(SimhashSettings {
                preset: get("preset")?.to_string(),
                window: num("window", get("window"))?,
                max_distance: num("max_distance", get("max_distance"))?,
                blocks: num("blocks", get("blocks"))?,
                extra,
            })),
            other => Err(format!("unknown method {other:?}")),
        }
    }

    /// The settings that differ: `(name, stored value, given value)`.
    pub(crate) fn differences(&self, given: &Settings) -> Vec<(String, String, String)> {
        let (a, b) = (self.to_pairs(), given.to_pairs());
        let mut names: Vec<&String> = a.iter().chain(&b).map(|(k, _)| k).collect();
        names.sort();
        names.dedup();
        let value = |pairs: &[(String, String)], k: &str| {
            pairs
                .iter()
                .find(|(n, _)| n == k)
                .map_or_else(|| "unset".to_string(), |(_, v)| v.clone())
        };
        // The method first: when it differs, the rest does not matter.
        if self.method() != given.method() {
            return vec![("method".into(), self.method().into(), given.method().into())];
        }
        names
            .into_iter()
            .filter_map(|k| {
                let (x, y) = (value(&a, k), value(&b, k));
                (x != y).then(|| (k.clone(), x, y))
            })
            .collect()
    }
}

fn check_extra(extra: &BTreeMap<String, String>) -> Result<(), DiskError> {
    for k in extra.keys() {
        if k.is_empty() || k.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(DiskError::invalid(format!(
                "extra setting name {k:?} must be non-empty, without whitespace"
            )));
        }
    }
    Ok(())
}
