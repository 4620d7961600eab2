//! Sketches: a text (or a list of shingle hashes) to its shingle set and LSH band hashes.

use std::cell::RefCell;

use simhash_core::{Fingerprint, Fingerprinter, MinHasher};

use super::buffers::trim;
use super::keys::fold;
use super::{BandKeyWidth, Banding, EngineError, EngineErrorKind};

/// Makes the [`DocSketch`] of each document: its shingle set (for exact verification) and
/// its LSH band hashes (for candidates), and its simhash fingerprint when asked for.
///
/// Pure and `Send + Sync`: share one between worker threads and sketch documents in any
/// order, then push the sketches into a [`SketchStore`](super::SketchStore) in document
/// order.
#[derive(Clone, Debug)]
pub struct Sketcher {
    minhasher: MinHasher,
    banding: Banding,
    fingerprints: bool,
    band_keys: BandKeyWidth,
}

thread_local! {
    static SCRATCH: RefCell<(Vec<u64>, Vec<u32>, Vec<u32>)> =
        const { RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
}

impl Sketcher {
    /// A sketcher that cuts `minhasher`'s signatures by `banding`.
    ///
    /// Errors ([`EngineErrorKind::Config`]): the banding needs more slots than the
    /// signature has.
    pub fn new(minhasher: MinHasher, banding: Banding) -> Result<Sketcher, EngineError> {
        Banding::new(banding.bands, banding.rows)?;
        if banding.bands.checked_mul(banding.rows).is_none_or(|n| n > minhasher.num_perm()) {
            return Err(EngineError::other(
                EngineErrorKind::Config,
                format!(
                    "bands × rows ({} × {}) exceeds num_perm ({})",
                    banding.bands,
                    banding.rows,
                    minhasher.num_perm()
                ),
            ));
        }
        Ok(Sketcher { minhasher, banding, fingerprints: false, band_keys: BandKeyWidth::Auto })
    }

    /// Also computes the simhash fingerprint in [`sketch`](Sketcher::sketch) (for outputs
    /// that show it); off by default.
    #[must_use]
    pub fn with_fingerprints(mut self, fingerprints: bool) -> Sketcher {
        self.fingerprints = fingerprints;
        self
    }

    /// The band keys its sketches are for: with [`BandKeyWidth::Bits32`], sketches carry
    /// only the 32-bit keys; otherwise also the high halves of the 64-bit band hashes, so
    /// that a store can use 64-bit keys ([`DocSketch::has_wide_keys`]). By default,
    /// [`BandKeyWidth::Auto`].
    #[must_use]
    pub fn with_band_keys(mut self, band_keys: BandKeyWidth) -> Sketcher {
        self.band_keys = band_keys;
        self
    }

    /// The band keys its sketches are for (see [`with_band_keys`](Sketcher::with_band_keys)).
    pub fn band_keys(&self) -> BandKeyWidth {
        self.band_keys
    }

    /// The banding: the number of band hashes of each sketch.
    pub fn banding(&self) -> Banding {
        self.banding
    }

    /// The MinHash signature maker.
    pub fn minhasher(&self) -> &MinHasher {
        &self.minhasher
    }

    /// The fingerprint of `text` (when asked for with
    /// [`with_fingerprints`](Sketcher::with_fingerprints)) and its sketch, from the
    /// shingles `fingerprinter` makes; both none for a featureless text.
    pub fn sketch(
        &self,
        fingerprinter: &Fingerprinter,
        text: &str,
    ) -> (Option<Fingerprint>, Option<DocSketch>) {
        let mut fp = None;
        let sketch = SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (features, signature, tokens) = &mut *guard;
            features.clear();
            tokens.clear();
            // Kept without version markers, as every relation reads it: dropped once here
            // (as the tokens are made) rather than at each of the pairs it verifies in.
            let versions = super::versions::version_tokens();
            let mut token = |t: u32| {
                if !versions.contains(t) {
                    tokens.push(t);
                }
            };
            if self.fingerprints {
                fp = fingerprinter.fingerprint_and_features(text, |hash| features.push(hash));
                fingerprinter.for_each_shingle_and_token(text, |_| {}, &mut token);
            } else {
                fingerprinter.for_each_shingle_and_token(
                    text,
                    |hash| features.push(hash),
                    &mut token,
                );
            }
            let sketch = self.sketch_features(features, signature).map(|mut s| {
                s.tokens.clone_from(tokens);
                s
            });
            trim(tokens);
            sketch
        });
        (fp, sketch)
    }

    /// The sketch of a document given as shingle hashes (repeats and order do not
    /// matter); none when there are none.
    pub fn sketch_shingles(&self, shingles: impl IntoIterator<Item = u64>) -> Option<DocSketch> {
        SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (features, signature, _) = &mut *guard;
            features.clear();
            features.extend(shingles);
            self.sketch_features(features, signature)
        })
    }

    /// The sketch of the shingle hashes in `features` (sorted and deduplicated in place:
    /// the set, which also makes the signature, a minimum over the same distinct values).
    fn sketch_features(
        &self,
        features: &mut Vec<u64>,
        signature: &mut Vec<u32>,
    ) -> Option<DocSketch> {
        if features.is_empty() {
            return None;
        }
        features.sort_unstable();
        features.dedup();
        signature.resize(self.minhasher.num_perm(), 0);
        self.minhasher.signature_into(features.iter().copied(), signature);
        let mut bands = vec![0; self.banding.bands];
        simhash_core::band_hashes(signature, self.banding.bands, self.banding.rows, &mut bands);
        let high = if self.band_keys == BandKeyWidth::Bits32 {
            Vec::new()
        } else {
            bands.iter().map(|&h| (h >> 32) as u32).collect()
        };
        let bands = bands.iter().map(|&h| fold(h)).collect();
        let set = features.clone();
        trim(features);
        Some(DocSketch { bands, high, set_hash: hash_of(&set), set, tokens: Vec::new() })
    }
}

/// What the engine keeps of one document with features.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocSketch {
    /// One hash per LSH band, folded to 32 bits (chance collisions only add candidates,
    /// which verification drops).
    pub(crate) bands: Vec<u32>,
    /// The high halves of the 64-bit band hashes (with `bands`, the whole hashes), or
    /// empty when the sketch has 32-bit keys only.
    pub(crate) high: Vec<u32>,
    /// The distinct 64-bit shingle hashes, sorted.
    pub(crate) set: Vec<u64>,
    /// [`hash_of`] the set, made with it (by the thread that sketches, not the one that
    /// stores).
    pub(crate) set_hash: u64,
    /// The text's tokens in order, as [`simhash_core::token_word`]s, for the
    /// [`Relation`](super::Relation) of the pairs it verifies in, without the
    /// [`VERSION_WORDS`](super::VERSION_WORDS) (which every relation reads past); empty
    /// when not known (a sketch of shingles, the `moz` and `fork` presets).
    pub(crate) tokens: Vec<u32>,
}

/// A hash of a whole set (see [`DocSketch::set_hash`]).
pub(crate) fn hash_of(set: &[u64]) -> u64 {
    let mut h = set.len() as u64;
    for &x in set {
        h = (h.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    h ^ (h >> 29)
}

impl DocSketch {
    /// A sketch from its parts, as a [`SketchStore`](super::SketchStore) holds them: the
    /// band keys (as [`bands`](DocSketch::bands) gives them) and the shingle set (sorted
    /// and deduplicated here if it is not already). For front ends that keep sketches
    /// elsewhere and hand them back (a store, an on-disk index).
    pub fn from_parts(bands: Vec<u32>, mut set: Vec<u64>) -> DocSketch {
        if !set.is_sorted_by(|a, b| a < b) {
            set.sort_unstable();
            set.dedup();
        }
        DocSketch { bands, high: Vec::new(), set_hash: hash_of(&set), set, tokens: Vec::new() }
    }

    /// The sketch with the text's tokens ([`simhash_core::token_word`]s in text order), as
    /// a [`SketchStore`](super::SketchStore) hands them back: what the
    /// [`Relation`](super::Relation) of its pairs is read from.
    #[must_use]
    pub fn with_tokens(mut self, tokens: Vec<u32>) -> DocSketch {
        self.tokens = tokens;
        self
    }

    /// The text's tokens, in order ([`simhash_core::token_word`]s) and without the
    /// [`VERSION_WORDS`](super::VERSION_WORDS); empty when not known.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// [`from_parts`](DocSketch::from_parts) with the whole 64-bit band hashes, as
    /// [`band_hashes`](DocSketch::band_hashes) gives them: the sketch has wide keys.
    pub fn from_band_hashes(hashes: &[u64], set: Vec<u64>) -> DocSketch {
        let mut sketch = DocSketch::from_parts(hashes.iter().map(|&h| fold(h)).collect(), set);
        sketch.high = hashes.iter().map(|&h| (h >> 32) as u32).collect();
        sketch
    }

    /// Whether the sketch has the whole 64-bit band hashes, for 64-bit keys (its sketcher
    /// was not limited to [`BandKeyWidth::Bits32`]), and not only their 32-bit keys.
    pub fn has_wide_keys(&self) -> bool {
        !self.high.is_empty() || self.bands.is_empty()
    }

    /// The whole 64-bit band hashes, the 64-bit keys; `None` when the sketch has 32-bit
    /// keys only.
    pub fn band_hashes(&self) -> Option<Vec<u64>> {
        self.has_wide_keys().then(|| {
            self.bands.iter().zip(&self.high).map(|(&k, &h)| super::keys::unfold(k, h)).collect()
        })
    }

    /// The whole 64-bit hash of `band`, its 64-bit key; `None` when the sketch has 32-bit
    /// keys only (or `band` is out of range).
    pub fn band_hash(&self, band: usize) -> Option<u64> {
        Some(super::keys::unfold(*self.bands.get(band)?, *self.high.get(band)?))
    }

    /// Drops the high halves of the band hashes, keeping the 32-bit keys (4 bytes a band
    /// less), once 32-bit keys are chosen.
    pub fn narrow(&mut self) {
        self.high = Vec::new();
    }

    /// One 32-bit key per LSH band: its 64-bit band hash `h` folded to 32 bits, `lo(h) ^
    /// hi(h)` (the XOR of its low and high halves).
    pub fn bands(&self) -> &[u32] {
        &self.bands
    }

    /// The shingle set: distinct 64-bit shingle hashes, ascending.
    pub fn set(&self) -> &[u64] {
        &self.set
    }

    /// A hash of the whole set: documents with equal sets have equal hashes (the members
    /// are already well-mixed hashes, so a cheap fold does). Unequal sets may share a hash:
    /// group by it, then compare the sets, as the searches do.
    pub fn set_hash(&self) -> u64 {
        self.set_hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sketch keeps its text's tokens without version markers, as it reads them.
    #[test]
    fn sketch_tokens_leave_version_markers_out() {
        let banding = Banding::for_threshold(0.3, 128).expect("banding");
        let sketcher = Sketcher::new(MinHasher::new(128, 0), banding).expect("a sketcher");
        let fp = Fingerprinter::new();
        let text = "gcloud BETA compute v1beta1 instances create, Alpha: v2";
        let sketch = sketcher.sketch(&fp, text).1.expect("a sketch");
        let words: Vec<u32> =
            "gcloud compute instances create".split(' ').map(simhash_core::token_word).collect();
        assert_eq!(sketch.tokens, words);
    }
}
