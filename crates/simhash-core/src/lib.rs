//! Text to features, and features to the two sketches of near-duplicate detection: 64-bit
//! simhash fingerprints (Charikar's simhash, bit-compatible with simhash-cpp, simhash-py and
//! the OpenMP fork) and MinHash signatures, with the shingle sets that verify MinHash
//! candidates exactly.
//!
//! Similar texts get fingerprints that differ in few bits, and signatures that agree in
//! many slots. This crate computes them and nothing else: it does no I/O and starts no
//! threads. Matching is the job of `simhash-index` (Hamming tables for fingerprints, LSH
//! banding and an online MinHash index for signatures); clustering, of `simhash-cluster`.
//!
//! # Overview
//!
//! * [`Fingerprinter`] is the high-level entry point: `Fingerprinter::new()` for the default
//!   preset, [`Fingerprinter::builder`] for another [`Preset`], window or [`Tokenizer`].
//! * [`Fingerprint`] is the 64-bit value, with [`Fingerprint::distance`] (Hamming distance).
//!   Its text form is hex both ways (`Display` and `FromStr`); [`Fingerprint::from_decimal`]
//!   reads simhash-cpp's decimal hashes.
//! * [`Accumulator`], [`compute`] and [`compute_weighted`] are the low-level vote over
//!   feature hashes you bring yourself (TF-IDF weights, your own features).
//! * [`MinHasher`] makes MinHash signatures of the same features, for the high-recall
//!   mode ([`estimate_jaccard`], [`band_hashes`] for LSH); [`shingle_set`] and [`jaccard`]
//!   verify candidates exactly.
//! * The parts: [`Tokenizer`] ([`Words`], [`AsciiLetters`]), the feature hashes
//!   ([`jenkins64`], [`unsigned_hash`]) and the rolling windows ([`Window`],
//!   [`CyclicWindow`], [`shingle`](fn@shingle)); [`for_each_normalized_token`] gives the
//!   default preset's normalized words with their places in the text, for exact matching.
//!
//! # Example
//!
//! ```
//! use simhash_core::Fingerprinter;
//!
//! let fp = Fingerprinter::new();
//! let a = fp.fingerprint("It was the best of times, it was the worst of times.").unwrap();
//! let b = fp.fingerprint("It was the best of times; it was the worst of times!").unwrap();
//! let c = fp.fingerprint("Call me Ishmael. Some years ago, never mind how long.").unwrap();
//! assert_eq!(a, b); // punctuation and case are not features
//! assert!(a.distance(c) > 10);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Bring your own weighted features:
//!
//! ```
//! use simhash_core::{compute_weighted, jenkins64};
//!
//! let features = [("rust", 2.5), ("simhash", 4.0), ("the", 0.1)];
//! let fp = compute_weighted(features.iter().map(|&(w, idf)| (jenkins64(w.as_bytes(), 0), idf)));
//! assert!(fp.is_some());
//! ```
//!
//! MinHash, and exact verification of its candidates:
//!
//! ```
//! use simhash_core::{Fingerprinter, MinHasher, estimate_jaccard, jaccard, shingle_set};
//!
//! let fp = Fingerprinter::new();
//! let features = |text: &str| {
//!     let mut hashes = Vec::new();
//!     fp.for_each_feature(text, |h, _| hashes.push(h));
//!     shingle_set(hashes)
//! };
//! let a = features("the quick brown fox jumps over the lazy dog");
//! let b = features("the quick brown fox jumps over the lazy cat");
//! let mh = MinHasher::new(128, 0);
//! let (sa, sb) = (mh.signature(a.iter().copied()).unwrap(), mh.signature(b.iter().copied()).unwrap());
//! assert!((estimate_jaccard(&sa, &sb) - jaccard(&a, &b)).abs() < 0.25);
//! assert_eq!(jaccard(&a, &b), 6.0 / 8.0); // exact: 6 of 8 shingles shared
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Settings
//!
//! Every size setting is valid: one out of range is clamped to its range, never refused,
//! and reads back as used: the window to `1..=`[`MAX_WINDOW`]
//! ([`FingerprinterBuilder::window`], [`Fingerprinter::window`]) and `num_perm` to
//! `1..=`[`MAX_PERM`] ([`MinHasher::new`], [`MinHasher::num_perm`]). Settings that must agree
//! with each other (a banding against the signature length, blocks against the distance)
//! are checked where they meet, in `simhash-index`, and refused with a typed error.
//!
//! # Stability contract
//!
//! A fingerprint is defined by the preset's name and version and the window. Each preset
//! fixes its tokenizer, normalisation, feature hash (with its seed), shingle combination and
//! weighting; none of these ever changes for an existing preset, on any machine or release.
//! A better definition arrives as a new preset (`default-v2`), and `default` moves to it only
//! in a release that says so; every version stays selectable. The tests pin golden values
//! for every preset.
//!
//! The `moz` and `fork` presets reproduce the original programs' output bit for bit: `moz`
//! is `simhash-cpp`'s `hash_text`, `fork` is the OpenMP fork's JSON mode, and [`compute`]
//! and [`unsigned_hash`] are simhash-py's. Where those programs print 0 for a text with no
//! features, this crate returns `None`, so that short texts do not all look alike.
//!
//! The one input the contract cannot pin is a code point that a later Unicode version
//! assigns: `default-v1` treats it as a letter only once Rust's tables know it.
#![deny(missing_docs)]

mod accumulate;
mod fingerprint;
mod fingerprinter;
mod grams;
mod hash;
mod minhash;
mod setbits;
mod shingle;
mod tf;
mod tokenize;

pub use crate::accumulate::{Accumulator, compute, compute_weighted};
pub use crate::fingerprint::{Fingerprint, ParseFingerprintError, ParseFingerprintErrorKind};
pub use crate::fingerprinter::{
    Fingerprinter, FingerprinterBuilder, Preset, PresetTokenizer, UnknownPreset, UnknownPresetKind,
    sublinear_weight, token_word,
};
pub use crate::hash::{jenkins64, unsigned_hash};
pub use crate::minhash::{
    EMPTY, MAX_PERM, MinHasher, SetFilter, band_hashes, estimate_jaccard, intersection_size,
    jaccard, jaccard_at_least, jaccard_min_common, shingle_set, shingle_set_into,
};
pub use crate::setbits::{SetBits, common_at_most, set_bits, set_bits_words};
pub use crate::shingle::{CyclicWindow, MAX_WINDOW, Window, combine, shingle};
pub use crate::tokenize::{AsciiLetters, Tokenizer, Words, for_each_normalized_token};

#[cfg(test)]
mod testoibits {
    use super::*;

    fn assert_all<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}

    #[test]
    fn thread_safe() {
        assert_all::<Fingerprinter>();
        assert_all::<Fingerprinter<Words>>();
        assert_all::<Fingerprint>();
        assert_all::<Accumulator>();
        assert_all::<Preset>();
    }
}
