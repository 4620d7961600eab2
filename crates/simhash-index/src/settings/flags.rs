//! The flag groups every front end shares (the `clap` feature): `--preset`/`--window` and
//! the matching flags, so that `simhash` and `simhash-dist` declare each flag once and map it
//! onto [`Asked`] the same way.

use simhash_core::Preset;

use super::{Asked, Method};
use crate::Blocks;
use crate::lsh::{BandKeyWidth, Templates};

/// How text becomes fingerprints: every front end's `--preset` and `--window`.
#[derive(Clone, Debug, clap::Args)]
pub struct FingerprintFlags {
    /// Fingerprint definition: default, default-v1, moz (simhash-cpp) or fork (the OpenMP fork).
    ///
    /// `default` is the current default for new users (now default-v1: Unicode words,
    /// NFKC and case folding, 3-token shingles, sublinear tf weights). moz and fork
    /// reproduce simhash-cpp's and the fork's fingerprints bit for bit. By default,
    /// `default` (fork for `simhash`'s fork-compatible top-level command).
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<Preset>,

    /// Shingle window: tokens for default and moz, bytes for fork [default: 3, fork: 5].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub window: Option<u16>,
}

/// How records are matched: every front end's matching flags, mapped onto [`Asked`]
/// ([`MatchFlags::asked`]).
#[derive(Clone, Debug, clap::Args)]
#[command(mut_arg("distance", |a| a.short_alias('d')))]
pub struct MatchFlags {
    /// Matching method: auto (minhash for text), minhash or simhash.
    ///
    /// minhash: candidates from MinHash LSH over the shingles, kept when the exact Jaccard
    /// similarity of their shingle sets is at least --jaccard. simhash: fingerprints
    /// within --distance bits (simhash-cpp's method). auto: minhash, unless a simhash-only
    /// setting is given (-k/--distance, --blocks, --preset moz|fork) or the input holds
    /// fingerprints (--format hash).
    #[arg(long, value_enum, value_name = "METHOD", default_value = "auto")]
    pub method: Method,

    /// `-k/--distance` and `--blocks`.
    #[command(flatten)]
    pub hamming: HammingFlags,

    /// minhash: minimum Jaccard similarity of two records' shingle sets [default: 0.4].
    #[arg(long, value_name = "J")]
    pub jaccard: Option<f64>,

    /// minhash: the similarity the LSH bands are tuned for; lower finds more candidates
    /// (slower), each verified exactly [default: 0.3].
    #[arg(long, value_name = "J", hide_short_help = true)]
    pub lsh_threshold: Option<f64>,

    /// minhash: MinHash signature slots [default: 128].
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub num_perm: Option<usize>,

    /// minhash: bits of the LSH band keys: auto, 32 or 64 [default: auto].
    ///
    /// auto chooses 64 from the size where the chance collisions of 32-bit keys cost more
    /// to verify than wider keys cost (about 1.3 billion documents at 37 bands; see
    /// docs/scale-out.md). The output is the same at either width
    /// (candidates are verified exactly); only the number of candidates differs.
    #[arg(long, value_name = "BITS", hide_short_help = true)]
    pub band_key_bits: Option<BandKeyWidth>,

    /// minhash: which verified pairs count, by what each pair is (its relation): remove
    /// (the default) acts on the same document and on template siblings (different
    /// entities filled into one template: names, numbers, versions, stock phrases); keep
    /// acts on the same document only. A document with content of its own (overlap) is
    /// never removed, listed by pairs or joined by cluster [default: remove].
    #[arg(long, value_name = "POLICY")]
    pub templates: Option<Templates>,
}

impl MatchFlags {
    /// What the flags ask of the contract: `preset` and `hashes` (the input holds
    /// fingerprints) are the input's; `simhash_only` a command that runs simhash alone (the
    /// fork-style one); `memory` whether a simhash memory budget was given.
    pub fn asked(
        &self,
        preset: Option<Preset>,
        hashes: bool,
        simhash_only: bool,
        memory: bool,
    ) -> Asked {
        Asked {
            method: self.method,
            preset,
            hashes,
            simhash_only,
            memory,
            distance: self.hamming.distance,
            blocks: self.hamming.blocks,
            jaccard: self.jaccard,
            lsh_threshold: self.lsh_threshold,
            num_perm: self.num_perm,
            band_keys: self.band_key_bits,
            templates: self.templates,
        }
    }
}

/// The simhash method's settings: `-k/--distance` and `--blocks` (a group of their own, for
/// a command that matches by simhash alone, as simhash-cpp's programs).
#[derive(Clone, Debug, clap::Args)]
pub struct HammingFlags {
    /// simhash: maximum Hamming distance (bits) for two records to be near-duplicates
    /// [default: 3]. `-d` works too, as on find-all.
    #[arg(short = 'k', long, value_name = "K")]
    pub distance: Option<u32>,

    /// simhash: number of blocks the 64 bits are split into, or `auto` [default: auto].
    ///
    /// More blocks mean more tables (C(blocks, distance)) but fewer candidates per table.
    /// Must be more than --distance.
    #[arg(long, value_name = "N|auto")]
    pub blocks: Option<Blocks>,
}
