//! Presets and the high-level [`Fingerprinter`].

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

use crate::accumulate::BitCounts;
use crate::grams::count_gram_hashes;
use crate::hash::jenkins64;
use crate::shingle::{CyclicWindow, MAX_WINDOW, Window};
use crate::tf::TfTable;
use crate::tokenize::{
    AsciiLetters, Tokenizer, Words, hash_normalized, hash_normalized_classes, is_stable_cjk,
};
use crate::{Accumulator, Fingerprint};

mod spans;

/// A named, versioned definition of how text becomes a fingerprint.
///
/// The preset (with its window) defines the value: a fingerprint computed today with a given
/// preset and window is the one every later release computes. New definitions arrive as new
/// variants; old ones stay selectable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "&'static str", try_from = "String"))]
#[non_exhaustive]
pub enum Preset {
    /// `default-v1`, the default for new users: [`Words`] tokens, each normalised as
    /// `lowercase(NFKC(token))` and hashed with xxh3-64 (fixed seed); shingles of `window`
    /// tokens (default 3) combined by [`combine`](crate::combine); each distinct shingle
    /// votes once with the sublinear weight `1 + ln(tf)` (in fixed point, 1/1024 units), where
    /// `tf` counts its occurrences in the document. A text with fewer tokens than the window
    /// has one shingle, all of its tokens. No tokens: no fingerprint.
    #[default]
    DefaultV1,
    /// `moz`: `simhash-cpp`'s `hash_text`: [`AsciiLetters`] tokens (case kept), `jenkins64`,
    /// the [cyclic window](crate::CyclicWindow) of `window` tokens (default 3), unweighted
    /// strict majority, then the bits reversed.
    Moz,
    /// `fork`: the OpenMP fork's JSON mode: `jenkins64` of the byte `window`-grams (default 5)
    /// starting at offsets `0 .. len - window` (the last gram is skipped, as in the fork),
    /// unweighted strict majority. Texts of `window` bytes or fewer have no fingerprint.
    Fork,
}

impl Preset {
    /// Every preset, in a stable order.
    pub const ALL: [Preset; 3] = [Preset::DefaultV1, Preset::Moz, Preset::Fork];

    /// The preset's name: `default-v1`, `moz` or `fork`.
    pub const fn name(self) -> &'static str {
        match self {
            Preset::DefaultV1 => "default-v1",
            Preset::Moz => "moz",
            Preset::Fork => "fork",
        }
    }

    /// Whether the preset implies the simhash method: it reproduces another program's
    /// fingerprints (`moz`: simhash-cpp, `fork`: the OpenMP fork), which are compared by
    /// their Hamming distance, so a front end's `--method auto` runs simhash with it.
    ///
    /// ```
    /// use simhash_core::Preset;
    ///
    /// assert!(!Preset::DefaultV1.implies_simhash());
    /// assert!(Preset::Moz.implies_simhash() && Preset::Fork.implies_simhash());
    /// ```
    pub const fn implies_simhash(self) -> bool {
        match self {
            Preset::DefaultV1 => false,
            Preset::Moz | Preset::Fork => true,
        }
    }

    /// The window the preset uses unless told otherwise: 3 tokens, or 5 bytes for `fork`.
    pub const fn default_window(self) -> usize {
        match self {
            Preset::DefaultV1 | Preset::Moz => 3,
            Preset::Fork => 5,
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = UnknownPreset;

    /// Accepts each preset's [name](Preset::name), and `default` for the current default.
    fn from_str(s: &str) -> Result<Preset, UnknownPreset> {
        match s {
            "default" => Ok(Preset::default()),
            _ => Preset::ALL
                .into_iter()
                .find(|p| p.name() == s)
                .ok_or_else(|| UnknownPreset(s.into())),
        }
    }
}

impl From<Preset> for &'static str {
    fn from(p: Preset) -> &'static str {
        p.name()
    }
}

impl TryFrom<String> for Preset {
    type Error = UnknownPreset;

    /// As [`FromStr`].
    fn try_from(s: String) -> Result<Preset, UnknownPreset> {
        s.parse()
    }
}

/// The error for a preset name that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPreset(Box<str>);

/// Why a preset name was refused; see [`UnknownPreset::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UnknownPresetKind {
    /// No preset has this name.
    Unknown,
}

impl UnknownPreset {
    /// Why the name was refused.
    pub fn kind(&self) -> UnknownPresetKind {
        UnknownPresetKind::Unknown
    }

    /// The name that was refused.
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for UnknownPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown preset {:?} (expected default, default-v1, moz or fork)", self.0)
    }
}

impl std::error::Error for UnknownPreset {}

/// The tokenizer a preset uses: [`Words`] for `default-v1`, [`AsciiLetters`] for `moz`
/// (`fork` reads bytes and tokenizes nothing).
#[derive(Clone, Copy, Debug)]
pub enum PresetTokenizer {
    /// Unicode words.
    Words(Words),
    /// ASCII letter runs.
    AsciiLetters(AsciiLetters),
}

impl Tokenizer for PresetTokenizer {
    #[inline]
    fn tokenize<'t>(&self, text: &'t str, emit: &mut dyn FnMut(&'t str)) {
        match self {
            PresetTokenizer::Words(t) => t.tokenize(text, emit),
            PresetTokenizer::AsciiLetters(t) => t.tokenize(text, emit),
        }
    }
}

/// Builds a [`Fingerprinter`] with settings other than the default.
#[derive(Clone, Debug, Default)]
pub struct FingerprinterBuilder {
    preset: Preset,
    window: Option<usize>,
}

impl FingerprinterBuilder {
    /// A builder with the default settings.
    pub fn new() -> FingerprinterBuilder {
        FingerprinterBuilder::default()
    }

    /// Chooses the preset.
    ///
    /// By default, [`Preset::DefaultV1`].
    pub fn preset(&mut self, preset: Preset) -> &mut FingerprinterBuilder {
        self.preset = preset;
        self
    }

    /// Sets the shingle window: tokens for `default-v1` and `moz`, bytes for `fork`. Clamped
    /// to `1..=`[`MAX_WINDOW`] (64), as every size setting of this crate is clamped to its
    /// range rather than refused; [`Fingerprinter::window`] reads back the value in use.
    ///
    /// By default, the preset's [`default_window`](Preset::default_window).
    pub fn window(&mut self, window: usize) -> &mut FingerprinterBuilder {
        self.window = Some(window);
        self
    }

    /// Builds a fingerprinter with the preset's own tokenizer.
    pub fn build(&self) -> Fingerprinter {
        let tokenizer = match self.preset {
            Preset::Moz => PresetTokenizer::AsciiLetters(AsciiLetters),
            _ => PresetTokenizer::Words(Words),
        };
        self.build_with(tokenizer)
    }

    /// Builds a fingerprinter that uses `tokenizer` in place of the preset's own, with the
    /// rest of the preset unchanged (`fork` reads bytes, so a tokenizer does not change it).
    pub fn build_with<T: Tokenizer>(&self, tokenizer: T) -> Fingerprinter<T> {
        let window = self.window.unwrap_or(self.preset.default_window()).clamp(1, MAX_WINDOW);
        Fingerprinter { tokenizer, preset: self.preset, window }
    }
}

/// Turns text into a [`Fingerprint`]: tokenize, hash each shingle of `window` tokens, add
/// ±weight per bit, keep the sign.
///
/// `Fingerprinter::new()` is the default preset; [`Fingerprinter::builder`] chooses another
/// preset, window or tokenizer. It is immutable, `Send + Sync`, and meant to be shared by all
/// threads. It keeps its working buffers per thread, so fingerprinting does not allocate per
/// document (only a token that is not ASCII, or one with capitals, is copied to normalise it).
///
/// ```
/// use simhash_core::{Fingerprinter, Preset};
///
/// let fp = Fingerprinter::new();
/// let a = fp.fingerprint("The quick brown fox jumps over the lazy dog, said the fox").unwrap();
/// let b = fp.fingerprint("The quick brown fox jumped over the lazy dog, said the fox").unwrap();
/// assert!(a.distance(b) < 20);
/// assert_eq!(fp.fingerprint("... !!!"), None); // no tokens: no fingerprint
///
/// // simhash-cpp's and the fork's values, bit for bit.
/// let moz = Fingerprinter::builder().preset(Preset::Moz).build();
/// assert_eq!(moz.fingerprint("hello world").unwrap().get(), 0x1a40201a26358020);
/// ```
#[derive(Clone, Debug)]
pub struct Fingerprinter<T = PresetTokenizer> {
    tokenizer: T,
    preset: Preset,
    window: usize,
}

impl Default for Fingerprinter {
    fn default() -> Fingerprinter {
        Fingerprinter::new()
    }
}

impl Fingerprinter {
    /// The default preset with its default window.
    pub fn new() -> Fingerprinter {
        FingerprinterBuilder::new().build()
    }

    /// A builder for other settings.
    pub fn builder() -> FingerprinterBuilder {
        FingerprinterBuilder::new()
    }

    /// The fingerprinter of `preset` with `window` (`None`: the preset's
    /// [`default_window`](Preset::default_window); clamped as
    /// [`FingerprinterBuilder::window`] says): what a front end's `--preset` and `--window`
    /// settings name.
    ///
    /// ```
    /// use simhash_core::{Fingerprinter, Preset};
    ///
    /// assert_eq!(Fingerprinter::with_settings(Preset::Fork, None).window(), 5);
    /// assert_eq!(Fingerprinter::with_settings(Preset::Moz, Some(4)).window(), 4);
    /// ```
    pub fn with_settings(preset: Preset, window: Option<usize>) -> Fingerprinter {
        let mut builder = FingerprinterBuilder::new();
        builder.preset(preset);
        if let Some(w) = window {
            builder.window(w);
        }
        builder.build()
    }
}

/// Per-thread working memory, reused across documents.
#[derive(Default)]
struct Scratch {
    tf: TfTable,
    token: String,
}

/// A token buffer grown past this for a huge token is given back afterwards.
const KEEP_TOKEN: usize = 1 << 20;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl<T: Tokenizer> Fingerprinter<T> {
    /// The preset.
    pub fn preset(&self) -> Preset {
        self.preset
    }

    /// The window after clamping.
    pub fn window(&self) -> usize {
        self.window
    }

    /// The fingerprint of `text`, or `None` when the text has no features (no tokens, or for
    /// `fork` no more than `window` bytes). The original programs print 0 for such texts;
    /// `None` keeps them from all matching each other.
    ///
    /// Invalid UTF-8 is the caller's choice to make: decode with
    /// [`String::from_utf8_lossy`] or reject the input.
    pub fn fingerprint(&self, text: &str) -> Option<Fingerprint> {
        let mut acc = Accumulator::new();
        match self.preset {
            // Every gram votes 1: count set bits in bulk, with no weights to look at.
            Preset::Fork => {
                let mut counts = BitCounts::new();
                let bytes = text.as_bytes();
                let grams = bytes.len().saturating_sub(self.window);
                count_gram_hashes(bytes, self.window, grams, &mut counts);
                return counts.majority();
            }
            // Vote as shingles come with weight w(1); afterwards each repeated shingle adds
            // w(tf) - w(1), so its votes sum to w(tf) exactly (integers, in any order).
            Preset::DefaultV1 => Self::with_scratch(|scratch| {
                let once = sublinear_weight(1);
                self.default_shingles(text, scratch, |tf, h| {
                    if tf == 1 {
                        acc.add(h, once);
                    }
                });
                for (h, tf) in scratch.tf.repeated() {
                    acc.add(h, sublinear_weight(u64::from(tf)) - once);
                }
            }),
            _ => self.for_each_feature(text, |hash, weight| acc.add(hash, weight)),
        }
        self.finish(&acc)
    }

    /// [`fingerprint`](Fingerprinter::fingerprint) and
    /// [`for_each_feature`](Fingerprinter::for_each_feature) in one pass over the text: calls
    /// `f(hash)` for each feature and returns the same fingerprint, for callers that need
    /// both (a MinHash sketch beside the fingerprint) without tokenizing twice.
    ///
    /// ```
    /// use simhash_core::Fingerprinter;
    ///
    /// let fp = Fingerprinter::new();
    /// let text = "the cat sat on the mat and the cat sat";
    /// let mut features = Vec::new();
    /// assert_eq!(fp.fingerprint_and_features(text, |h| features.push(h)), fp.fingerprint(text));
    /// assert_eq!(features.len(), 7); // distinct 3-word shingles
    /// ```
    pub fn fingerprint_and_features(
        &self,
        text: &str,
        mut f: impl FnMut(u64),
    ) -> Option<Fingerprint> {
        let mut acc = Accumulator::new();
        self.for_each_feature(text, |hash, weight| {
            f(hash);
            acc.add(hash, weight);
        });
        self.finish(&acc)
    }

    /// The fingerprint the votes in `acc` make (simhash-cpp's bit order for `moz`).
    fn finish(&self, acc: &Accumulator) -> Option<Fingerprint> {
        let fp = acc.finish()?;
        Some(if self.preset == Preset::Moz { Fingerprint(fp.0.reverse_bits()) } else { fp })
    }

    /// Calls `f(hash, weight)` for each feature of `text`: what [`fingerprint`] adds up.
    ///
    /// For `default-v1` each distinct shingle comes once, in order of first occurrence, with
    /// its fixed-point weight (1024 = weight 1, see [`sublinear_weight`]); for `moz` and
    /// `fork` every shingle comes in text order with weight 1. Use it to feed the same
    /// features to another sketch (MinHash, TF-IDF weighting).
    ///
    /// [`fingerprint`]: Fingerprinter::fingerprint
    pub fn for_each_feature(&self, text: &str, mut f: impl FnMut(u64, u32)) {
        match self.preset {
            Preset::Fork => {
                let bytes = text.as_bytes();
                let w = self.window;
                // The fork's off-by-one: offsets 0 .. len - w, the gram at len - w skipped.
                for offset in 0..bytes.len().saturating_sub(w) {
                    f(jenkins64(&bytes[offset..offset + w], 0), 1);
                }
            }
            Preset::Moz => {
                let mut window = CyclicWindow::new(self.window);
                self.tokenizer.tokenize(text, &mut |token| {
                    f(window.push(jenkins64(token.as_bytes(), 0)), 1);
                });
            }
            Preset::DefaultV1 => Self::with_scratch(|scratch| {
                self.default_shingles(text, scratch, |_, _| {});
                for (h, tf) in scratch.tf.iter() {
                    f(h, sublinear_weight(u64::from(tf)));
                }
            }),
        }
    }

    /// Calls `f(hash)` for each shingle of `text`, once per occurrence and without weights:
    /// the same set of hashes as [`for_each_feature`](Fingerprinter::for_each_feature)
    /// gives, with repeats, and for `default-v1` without counting them (no table). For
    /// sketches of the set (MinHash), where weights and repeats do not matter.
    pub fn for_each_shingle(&self, text: &str, mut f: impl FnMut(u64)) {
        match self.preset {
            Preset::DefaultV1 => Self::with_scratch(|scratch| {
                let buf = &mut scratch.token;
                let mut window = Window::new(self.window);
                self.tokenizer.tokenize(text, &mut |token| {
                    if let Some(h) = window.push(hash_normalized(token, buf)) {
                        f(h);
                    }
                });
                if let Some(h) = window.partial() {
                    f(h);
                }
                if buf.capacity() > KEEP_TOKEN {
                    *buf = String::new();
                }
            }),
            Preset::Moz | Preset::Fork => self.for_each_feature(text, |h, _| f(h)),
        }
    }

    /// [`for_each_shingle`](Fingerprinter::for_each_shingle), and also `token(word)` for
    /// each token of `text` in order, as a [`token_word`]: what the engine's relation of two
    /// verified documents (the same text, template siblings, or each with content of its
    /// own) reads. `default-v1` only: the `moz` and `fork` presets give no tokens (their
    /// features are not the relation's words), only shingles.
    ///
    /// ```
    /// use simhash_core::{Fingerprinter, token_word};
    ///
    /// let fp = Fingerprinter::new();
    /// let (mut shingles, mut tokens) = (Vec::new(), Vec::new());
    /// fp.for_each_shingle_and_token("Feature v3_22, for GTK", |s| shingles.push(s), |t| tokens.push(t));
    /// assert_eq!(shingles.len(), tokens.len() - 2); // one shingle per 3-token window
    /// assert_eq!(tokens[1] & 3, 1); // "v3" is a name with a number in it
    /// assert_eq!(tokens[tokens.len() - 1], token_word("gtk")); // case folded, as shingles are
    /// ```
    pub fn for_each_shingle_and_token(
        &self,
        text: &str,
        mut shingle: impl FnMut(u64),
        mut token: impl FnMut(u32),
    ) {
        match self.preset {
            Preset::DefaultV1 => Self::with_scratch(|scratch| {
                let buf = &mut scratch.token;
                let mut window = Window::new(self.window);
                self.tokenizer.tokenize(text, &mut |t| {
                    let (h, classes) = hash_normalized_classes(t, buf);
                    token(match classes {
                        Some((digit, letter)) => word_from(h, digit, letter, 0),
                        None => word_of(h, t),
                    });
                    if let Some(s) = window.push(h) {
                        shingle(s);
                    }
                });
                if let Some(s) = window.partial() {
                    shingle(s);
                }
                if buf.capacity() > KEEP_TOKEN {
                    *buf = String::new();
                }
            }),
            Preset::Moz | Preset::Fork => self.for_each_shingle(text, shingle),
        }
    }

    /// Calls `f(word, token)` for each token of `text` in order: its [`token_word`] and the
    /// token as it is in the text (before normalization), for showing what a relation was
    /// read from. `default-v1` only, as
    /// [`for_each_shingle_and_token`](Fingerprinter::for_each_shingle_and_token).
    ///
    /// ```
    /// let mut tokens = Vec::new();
    /// simhash_core::Fingerprinter::new().for_each_token("Feature GTK", |_, t| tokens.push(t.to_string()));
    /// assert_eq!(tokens, ["Feature", "GTK"]);
    /// ```
    pub fn for_each_token(&self, text: &str, mut f: impl FnMut(u32, &str)) {
        if self.preset != Preset::DefaultV1 {
            return;
        }
        Self::with_scratch(|scratch| {
            let buf = &mut scratch.token;
            self.tokenizer.tokenize(text, &mut |t| f(word_of(hash_normalized(t, buf), t), t));
            if buf.capacity() > KEEP_TOKEN {
                *buf = String::new();
            }
        });
    }

    /// Runs `work` with this thread's scratch buffers (fresh ones if they are in use, when a
    /// tokenizer fingerprints from inside `tokenize`).
    fn with_scratch<R>(work: impl FnOnce(&mut Scratch) -> R) -> R {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => work(&mut scratch),
            Err(_) => work(&mut Scratch::default()),
        })
    }

    /// Counts the shingles of `text` into `scratch.tf` (cleared first), calling
    /// `seen(tf so far, hash)` for each occurrence.
    fn default_shingles(&self, text: &str, scratch: &mut Scratch, mut seen: impl FnMut(u32, u64)) {
        let Scratch { tf, token: buf } = scratch;
        tf.clear();
        let mut window = Window::new(self.window);
        self.tokenizer.tokenize(text, &mut |token| {
            if let Some(h) = window.push(hash_normalized(token, buf)) {
                seen(tf.increment(h), h);
            }
        });
        if let Some(h) = window.partial() {
            seen(tf.increment(h), h);
        }
        if buf.capacity() > KEEP_TOKEN {
            *buf = String::new();
        }
    }
}

/// `1 + ln(tf)` in fixed point with 1024 = 1.0, computed with integers only (so every machine
/// gets the same value): `sublinear_weight(1) = 1024`, `sublinear_weight(2) = 1734`.
///
/// ```
/// assert_eq!(simhash_core::sublinear_weight(1), 1024);
/// assert_eq!(simhash_core::sublinear_weight(0), 0);
/// ```
pub fn sublinear_weight(tf: u64) -> u32 {
    if tf < WEIGHTS.len() as u64 { WEIGHTS[tf as usize] } else { sublinear_weight_slow(tf) }
}

/// `sublinear_weight` for the counts that almost all shingles have.
static WEIGHTS: [u32; 1024] = {
    let mut t = [0u32; 1024];
    let mut tf = 0;
    while tf < 1024 {
        t[tf] = sublinear_weight_slow(tf as u64);
        tf += 1;
    }
    t
};

/// ln 2 in Q32, rounded.
const LN2_Q32: u128 = 2_977_044_472;

const fn sublinear_weight_slow(tf: u64) -> u32 {
    if tf == 0 {
        return 0;
    }
    // log2(tf) in Q16 by repeated squaring of the mantissa.
    let int = tf.ilog2();
    // Mantissa tf / 2^int in [1, 2), as Q62.
    let mut m: u128 = ((tf as u128) << 62) >> int;
    let mut log2 = (int as u128) << 16;
    let mut bit = 16;
    while bit > 0 {
        bit -= 1;
        m = (m * m) >> 62;
        if m >= 1 << 63 {
            m >>= 1;
            log2 |= 1 << bit;
        }
    }
    // 1024 * ln(tf) = log2 (Q16) * ln2 (Q32) * 1024 / 2^48, rounded to nearest.
    let ln_scaled = (log2 * LN2_Q32 * 1024 + (1 << 47)) >> 48;
    1024 + ln_scaled as u32
}

/// A token's 32-bit word, as [`Fingerprinter::for_each_shingle_and_token`] gives it: the
/// high 30 bits of the 64-bit hash of the normalized token (NFKC, case folded: the hash
/// its shingles are made of); in its two low bits what kind of token it is: 0 a word, 1 a
/// name with a number in it (`v3_22`, `u64`, `libfoo2`), 2 one CJK ideograph, kana or
/// hangul syllable (a character, not a word), 3 a number alone (`12`, `2.0`).
///
/// ```
/// use simhash_core::token_word;
///
/// assert_eq!(token_word("GTK"), token_word("gtk"));
/// assert_eq!((token_word("gdk") & 3, token_word("u64") & 3, token_word("頭") & 3), (0, 1, 2));
/// assert_eq!(token_word("12") & 3, 3);
/// ```
pub fn token_word(token: &str) -> u32 {
    word_of(hash_normalized(token, &mut String::new()), token)
}

/// [`token_word`] from the token's hash.
fn word_of(hash: u64, token: &str) -> u32 {
    let (digit, letter) = if token.is_ascii() {
        let b = token.as_bytes();
        (b.iter().any(u8::is_ascii_digit), b.iter().any(u8::is_ascii_alphabetic))
    } else {
        (token.chars().any(char::is_numeric), token.chars().any(char::is_alphabetic))
    };
    let other = if !token.is_ascii() && is_stable_cjk(token) { 2 } else { 0 };
    word_from(hash, digit, letter, other)
}

/// A token word from the token's hash, whether it has a digit and a letter, and its kind
/// when it has no digit (2 for a stable CJK character, else 0).
#[inline]
fn word_from(hash: u64, digit: bool, letter: bool, other: u32) -> u32 {
    let kind = match (digit, letter) {
        (true, true) => 1,
        (true, false) => 3,
        _ => other,
    };
    ((hash >> 32) as u32 & !3) | kind
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::jenkins64_grams;

    #[test]
    fn sublinear_weight_tracks_ln() {
        for tf in (1u64..2000).chain([1 << 20, 1 << 32, u64::MAX]) {
            let want = 1024.0 * (1.0 + (tf as f64).ln());
            let got = f64::from(sublinear_weight(tf));
            assert!((got - want).abs() <= 1.0, "tf {tf}: {got} vs {want}");
        }
        assert_eq!(sublinear_weight(2), 1734);
    }

    #[test]
    fn one_pass_gives_the_same_fingerprint_and_features() {
        let texts = [
            "",
            "...",
            "one",
            "a b",
            "the cat sat on the mat and the cat sat on the mat again and again",
            "Ünïcödé text with 漢字かなカナ and CJK 한국어 mixed in, twice: 漢字かなカナ",
        ];
        let long = "lorem ipsum dolor sit amet ".repeat(200);
        for preset in [Preset::DefaultV1, Preset::Moz, Preset::Fork] {
            let fp = Fingerprinter::builder().preset(preset).build();
            for text in texts.iter().copied().chain([long.as_str()]) {
                let mut one_pass = Vec::new();
                let got = fp.fingerprint_and_features(text, |h| one_pass.push(h));
                assert_eq!(got, fp.fingerprint(text), "{preset} {text:?}");
                let mut features = Vec::new();
                fp.for_each_feature(text, |h, _| features.push(h));
                assert_eq!(one_pass, features, "{preset} {text:?}");
                // The same set, shingle by shingle.
                let mut shingles = Vec::new();
                fp.for_each_shingle(text, |h| shingles.push(h));
                assert!(shingles.len() >= features.len());
                let (mut a, mut b) = (features.clone(), shingles);
                for v in [&mut a, &mut b] {
                    v.sort_unstable();
                    v.dedup();
                }
                assert_eq!(a, b, "{preset} {text:?}");
            }
        }
    }

    #[test]
    fn preset_names_round_trip() {
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>(), Ok(p));
        }
        assert_eq!("default".parse::<Preset>(), Ok(Preset::DefaultV1));
        assert!("simhash".parse::<Preset>().unwrap_err().to_string().contains("unknown preset"));
    }

    #[test]
    fn window_is_clamped() {
        assert_eq!(Fingerprinter::builder().window(0).build().window(), 1);
        assert_eq!(Fingerprinter::builder().window(usize::MAX).build().window(), 64);
        assert_eq!(Fingerprinter::builder().preset(Preset::Fork).build().window(), 5);
    }

    /// The `fork` vote as it was before the bulk path: one [`jenkins64`] call per gram (in
    /// `for_each_feature`) added to an [`Accumulator`]. The test oracle for `fingerprint`.
    fn fork_oracle(fp: &Fingerprinter, text: &str) -> Option<Fingerprint> {
        let mut acc = Accumulator::new();
        fp.for_each_feature(text, |h, w| acc.add(h, w));
        acc.finish()
    }

    fn fork(window: usize) -> Fingerprinter {
        Fingerprinter::builder().preset(Preset::Fork).window(window).build()
    }

    #[test]
    fn fork_bulk_path_matches_oracle_on_long_texts() {
        // Past the carry-save flush (every 248 grams) several times, every window.
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet: Vec<char> = "ab é東😀\n".chars().collect();
        let text: String = (0..3000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize]
            })
            .collect();
        for window in 1..=MAX_WINDOW {
            let fp = fork(window);
            for end in [
                0,
                1,
                5,
                247,
                248,
                255,
                256,
                600,
                2039,
                2040,
                2041,
                2047,
                2048,
                2049,
                4100,
                text.len(),
            ] {
                let end = (0..=end.min(text.len())).rev().find(|&e| text.is_char_boundary(e));
                let t = &text[..end.unwrap_or(0)];
                assert_eq!(
                    fp.fingerprint(t),
                    fork_oracle(&fp, t),
                    "window {window}, {} bytes",
                    t.len()
                );
            }
        }
        // Uniform text: every count at its limit, ties included.
        for n in (0..600).chain(2030..2060) {
            let t = "a".repeat(n);
            assert_eq!(fork(5).fingerprint(&t), fork_oracle(&fork(5), &t), "{n} bytes");
        }
    }

    #[test]
    fn bit_counts_match_accumulator() {
        let mut x = 7u64;
        let hashes: Vec<u64> = (0..2100)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Some runs of all-ones and all-zeros hashes to push every counter to its limit.
                match i % 50 {
                    0..10 => u64::MAX,
                    10..15 => 0,
                    _ => x,
                }
            })
            .collect();
        for n in 0..=hashes.len() {
            let mut counts = BitCounts::new();
            let mut acc = Accumulator::new();
            for &h in &hashes[..n] {
                counts.add(h);
                acc.add(h, 1);
            }
            assert_eq!(counts.majority(), acc.finish(), "n = {n}");
        }
    }

    proptest::proptest! {
        #[test]
        fn fork_bulk_path_matches_oracle(text in "\\PC{0,200}", window in 1..=MAX_WINDOW) {
            let fp = fork(window);
            proptest::prop_assert_eq!(fp.fingerprint(&text), fork_oracle(&fp, &text));
        }

        #[test]
        fn fork_bulk_path_matches_oracle_small_alphabet(
            text in "[ab é東😀\n]{0,200}",
            window in 1..=MAX_WINDOW,
        ) {
            let fp = fork(window);
            proptest::prop_assert_eq!(fp.fingerprint(&text), fork_oracle(&fp, &text));
        }

        #[test]
        fn gram_hashes_match_jenkins64(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
            window in 1..=MAX_WINDOW,
        ) {
            let count = bytes.len().saturating_sub(window);
            let want: Vec<u64> = (0..count).map(|o| jenkins64(&bytes[o..o + window], 0)).collect();
            let mut got = Vec::new();
            jenkins64_grams(&bytes, window, count, |h| got.push(h));
            proptest::prop_assert_eq!(&got, &want);
            // The last gram too (the fork skips it; the hash must not read past the text).
            if bytes.len() >= window {
                let mut got = Vec::new();
                jenkins64_grams(&bytes, window, count + 1, |h| got.push(h));
                proptest::prop_assert_eq!(got.last(), Some(&jenkins64(&bytes[count..], 0)));
            }
        }
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;

    #[test]
    fn presets_serialize_as_their_names() {
        for p in Preset::ALL {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Preset>(&json).unwrap(), p);
        }
        assert_eq!(serde_json::from_str::<Preset>("\"default\"").unwrap(), Preset::default());
        let e = serde_json::from_str::<Preset>("\"nope\"").unwrap_err();
        assert!(e.to_string().contains("unknown preset"), "{e}");
    }
}
