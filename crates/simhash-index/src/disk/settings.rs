//! [`Settings`]: everything needed to sketch documents the way the index's were sketched,
//! stored in the manifest and compared on every open.

use std::collections::BTreeMap;

use super::DiskError;
use crate::Tables;

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
    /// Bits of a stored band key: 32 (`DocSketch::bands`) or 64.
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

impl Settings {
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
                crate::Banding::new(s.bands, s.rows)
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
