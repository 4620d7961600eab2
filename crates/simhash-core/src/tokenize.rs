//! Tokenizers: split text into token slices, without allocating.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use crate::hash::xxh3;

/// Splits text into tokens and hands each to a callback, in order.
///
/// Tokens are slices of the input, so tokenizing never allocates. Implement this to plug your
/// own tokenizer into a [`Fingerprinter`](crate::Fingerprinter) with
/// [`FingerprinterBuilder::build_with`](crate::FingerprinterBuilder::build_with).
///
/// ```
/// use simhash_core::{Tokenizer, Words};
///
/// let mut tokens = Vec::new();
/// Words.tokenize("Hello, wörld! 東京", &mut |t| tokens.push(t));
/// assert_eq!(tokens, ["Hello", "wörld", "東", "京"]);
/// ```
pub trait Tokenizer {
    /// Calls `emit` once for each token of `text`, in order.
    fn tokenize<'t>(&self, text: &'t str, emit: &mut dyn FnMut(&'t str));
}

impl<T: Tokenizer + ?Sized> Tokenizer for &T {
    fn tokenize<'t>(&self, text: &'t str, emit: &mut dyn FnMut(&'t str)) {
        (**self).tokenize(text, emit);
    }
}

impl<T: Tokenizer + ?Sized> Tokenizer for Box<T> {
    fn tokenize<'t>(&self, text: &'t str, emit: &mut dyn FnMut(&'t str)) {
        (**self).tokenize(text, emit);
    }
}

/// Unicode-aware word tokens: the default preset's tokenizer.
///
/// A token is a maximal run of letters, digits and combining marks of any script
/// (`char::is_alphanumeric` or a Unicode combining mark), except that each CJK ideograph,
/// kana and hangul syllable is a token of its own, so Chinese and Japanese text without
/// spaces still yields features. Everything else (white space, punctuation, symbols, emoji)
/// separates tokens. Case and normalisation are left to the feature hash.
#[derive(Clone, Copy, Debug, Default)]
pub struct Words;

/// Byte classes for the ASCII fast path of [`Words`].
const SEP: u8 = 0;
const WORD: u8 = 1;
const NON_ASCII: u8 = 2;
static CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c >= 0x80 {
            NON_ASCII
        } else if c.is_ascii_alphanumeric() {
            WORD
        } else {
            SEP
        };
        b += 1;
    }
    t
};

/// CJK ideographs, kana and hangul: scripts written without spaces between words, so each
/// character is a token of its own.
pub(crate) fn is_cjk_unit(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF     // Hangul Jamo
        | 0x3040..=0x309F   // Hiragana
        | 0x30A0..=0x30FF   // Katakana
        | 0x3130..=0x318F   // Hangul Compatibility Jamo
        | 0x31F0..=0x31FF   // Katakana Phonetic Extensions
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xA960..=0xA97F   // Hangul Jamo Extended-A
        | 0xAC00..=0xD7AF   // Hangul Syllables
        | 0xD7B0..=0xD7FF   // Hangul Jamo Extended-B
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0xFF66..=0xFF9F   // Halfwidth Katakana
        | 0xFFA0..=0xFFDC   // Halfwidth Hangul
        | 0x1B000..=0x1B16F // Kana Supplement, Extended-A, Small Kana
        | 0x20000..=0x323AF // CJK Extensions B to H, Compatibility Supplement
    )
}

impl Tokenizer for Words {
    fn tokenize<'t>(&self, text: &'t str, emit: &mut dyn FnMut(&'t str)) {
        let bytes = text.as_bytes();
        let n = bytes.len();
        let mut i = 0;
        // A token being built: its start, when it continues past a non-ASCII letter.
        let mut start: Option<usize> = None;
        while i < n {
            // Fast path: runs of ASCII separators, then of ASCII word bytes.
            if start.is_none() {
                while i < n && CLASS[bytes[i] as usize] == SEP {
                    i += 1;
                }
                if i == n {
                    break;
                }
            }
            let s = *start.get_or_insert(i);
            while i < n && CLASS[bytes[i] as usize] == WORD {
                i += 1;
            }
            if i == n || CLASS[bytes[i] as usize] == SEP {
                if i > s {
                    emit(&text[s..i]);
                }
                start = None;
                continue;
            }
            // A non-ASCII character; `i` is at a char boundary, as every step before it
            // moved over whole ASCII bytes or whole chars.
            let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
            let len = c.len_utf8();
            if is_cjk_unit(c) {
                if i > s {
                    emit(&text[s..i]);
                }
                emit(&text[i..i + len]);
                start = None;
            } else if c.is_alphanumeric() || is_combining_mark(c) {
                // Part of the token: keep `start`.
            } else {
                if i > s {
                    emit(&text[s..i]);
                }
                start = None;
            }
            i += len;
        }
        if let Some(s) = start
            && s < n
        {
            emit(&text[s..]);
        }
    }
}

/// `simhash-cpp`'s tokens: maximal runs of ASCII letters `[A-Za-z]`; every other byte
/// (digits, `_`, apostrophes, all non-ASCII bytes) separates tokens. Case is kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct AsciiLetters;

impl Tokenizer for AsciiLetters {
    fn tokenize<'t>(&self, text: &'t str, emit: &mut dyn FnMut(&'t str)) {
        let bytes = text.as_bytes();
        let mut start: Option<usize> = None;
        for (i, b) in bytes.iter().enumerate() {
            if b.is_ascii_alphabetic() {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                // Both ends are next to ASCII bytes, hence char boundaries.
                emit(&text[s..i]);
            }
        }
        if let Some(s) = start {
            emit(&text[s..]);
        }
    }
}

/// The default preset's token hash: xxh3 of `lowercase(NFKC(token))`, where lowercase is
/// Unicode's per-character lowercase mapping. Short ASCII tokens (nearly all of them) are
/// lowercased on the stack in one pass; others go through `buf`.
#[inline]
pub(crate) fn hash_normalized(token: &str, buf: &mut String) -> u64 {
    const SHORT: usize = 32;
    let bytes = token.as_bytes();
    if bytes.len() <= SHORT {
        let mut lower = [0u8; SHORT];
        let mut high = 0u8;
        for (d, &b) in lower.iter_mut().zip(bytes) {
            high |= b;
            *d = b | (u8::from(b.is_ascii_uppercase()) << 5);
        }
        if high < 0x80 {
            return xxh3(&lower[..bytes.len()]);
        }
    }
    if is_stable_cjk(token) {
        return xxh3(bytes);
    }
    xxh3(normalize(token, buf).as_bytes())
}

/// [`hash_normalized`] and, for a short ASCII token (nearly all of them), whether it has a
/// digit and whether it has a letter, read in the same pass (none for other tokens).
#[inline]
pub(crate) fn hash_normalized_classes(
    token: &str,
    buf: &mut String,
) -> (u64, Option<(bool, bool)>) {
    const SHORT: usize = 32;
    let bytes = token.as_bytes();
    if bytes.len() <= SHORT {
        let mut lower = [0u8; SHORT];
        let (mut high, mut digit, mut letter) = (0u8, 0u8, 0u8);
        // Comparisons without branches, so that the loop runs on vectors.
        for (d, &b) in lower.iter_mut().zip(bytes) {
            high |= b;
            digit |= u8::from(b.wrapping_sub(b'0') < 10);
            letter |= u8::from((b | 0x20).wrapping_sub(b'a') < 26);
            *d = b | (u8::from(b.wrapping_sub(b'A') < 26) << 5);
        }
        if high < 0x80 {
            return (xxh3(&lower[..bytes.len()]), Some((digit != 0, letter != 0)));
        }
    }
    (hash_normalized(token, buf), None)
}

/// A one-character token that NFKC and lowercasing leave as it is, checked without the
/// Unicode tables: a CJK unified ideograph, a hangul syllable, or a hiragana or katakana
/// letter (not the voiced sound marks, the digraphs or the half-width forms, which NFKC
/// changes). Chinese, Japanese and Korean text is made mostly of these.
pub(crate) fn is_stable_cjk(token: &str) -> bool {
    let mut chars = token.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => matches!(c as u32,
            0x3041..=0x3096 | 0x30A1..=0x30FA | 0x4E00..=0x9FFF | 0xAC00..=0xD7A3),
        _ => false,
    }
}

/// `lowercase(NFKC(token))`, borrowing the token itself when it is already normal.
pub(crate) fn normalize<'a>(token: &'a str, buf: &'a mut String) -> &'a str {
    if token.is_ascii() {
        if !token.bytes().any(|b| b.is_ascii_uppercase()) {
            return token;
        }
        buf.clear();
        buf.push_str(token);
        buf.make_ascii_lowercase();
        return buf;
    }
    buf.clear();
    if is_nfkc_quick(token.chars()) == IsNormalized::Yes {
        buf.extend(token.chars().flat_map(char::to_lowercase));
    } else {
        buf.extend(token.nfkc().flat_map(char::to_lowercase));
    }
    buf
}

/// Calls `f(word, chars)` for each token of `text` in order: the default preset's tokens
/// ([`Words`]) with the default preset's normalisation, `lowercase(NFKC(token))`, and the
/// place of the token in `text` as a range of Unicode code points (`char`s, end exclusive),
/// not bytes.
///
/// Two texts that differ only in case, Unicode normalisation, punctuation, white space or
/// line breaks give the same words; the places say where each word was written. This is
/// what exact text matching that survives re-wrapping builds on (the contamination scan
/// of `simhash-index`). `text.chars().skip(chars.start).take(chars.len())` is the token as
/// written.
///
/// ```
/// use simhash_core::for_each_normalized_token;
///
/// let mut tokens = Vec::new();
/// for_each_normalized_token("Ünïcode, IS\nfine: 東京", |word, chars| tokens.push((word.to_string(), chars)));
/// assert_eq!(tokens, [
///     ("ünïcode".to_string(), 0..7),
///     ("is".to_string(), 9..11),
///     ("fine".to_string(), 12..16),
///     ("東".to_string(), 18..19),
///     ("京".to_string(), 19..20),
/// ]);
/// ```
pub fn for_each_normalized_token(text: &str, mut f: impl FnMut(&str, std::ops::Range<usize>)) {
    let mut buf = String::new();
    // The byte and code point where the previous token ended.
    let (mut byte, mut point) = (0, 0);
    Words.tokenize(text, &mut |token| {
        // `Words` gives slices of `text`, in order.
        let start = token.as_ptr() as usize - text.as_ptr() as usize;
        point += code_points(&text[byte..start]);
        let first = point;
        point += code_points(token);
        byte = start + token.len();
        f(normalize(token, &mut buf), first..point);
    });
}

/// The number of code points of `s`: its length when it is ASCII.
fn code_points(s: &str) -> usize {
    if s.is_ascii() { s.len() } else { s.chars().count() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        Words.tokenize(text, &mut |t| out.push(t));
        out
    }

    fn moz(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        AsciiLetters.tokenize(text, &mut |t| out.push(t));
        out
    }

    fn norm(token: &str) -> String {
        let mut buf = String::new();
        normalize(token, &mut buf).to_string()
    }

    macro_rules! t {
        ($name:ident, $f:ident, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                let want: &[&str] = &$want;
                assert_eq!($f($text), want);
            }
        };
    }

    t!(words_empty, words, "", []);
    t!(words_punct, words, "!!! ... ??? --- ,,, ;;;", []);
    t!(words_basic, words, "The quick, brown fox.", ["The", "quick", "brown", "fox"]);
    t!(words_digits, words, "v1.2 and 2024-01", ["v1", "2", "and", "2024", "01"]);
    t!(words_crlf, words, "one\r\ntwo\r\n", ["one", "two"]);
    t!(words_apostrophe, words, "don't", ["don", "t"]);
    t!(words_accents, words, "naïve café", ["naïve", "café"]);
    // "e" + COMBINING ACUTE stays one token.
    t!(words_combining, words, "cafe\u{301} au lait", ["cafe\u{301}", "au", "lait"]);
    t!(words_cjk, words, "東京タワー에서", ["東", "京", "タ", "ワ", "ー", "에", "서"]);
    t!(words_cjk_mixed, words, "abc中文def", ["abc", "中", "文", "def"]);
    t!(words_emoji, words, "hi 👋🏽 there", ["hi", "there"]);
    t!(words_cyrillic_greek, words, "Привет, κόσμε", ["Привет", "κόσμε"]);
    t!(words_fullwidth, words, "ＡＢＣ１２３", ["ＡＢＣ１２３"]);
    t!(words_no_final_sep, words, "end", ["end"]);

    t!(moz_basic, moz, "Don't stop_me now1x", ["Don", "t", "stop", "me", "now", "x"]);
    t!(moz_non_ascii, moz, "naïve", ["na", "ve"]);
    t!(moz_empty, moz, "", []);

    #[test]
    fn ascii_dash_is_katakana_long_vowel_only_in_cjk() {
        // U+30FC is katakana; ASCII '-' is punctuation.
        assert_eq!(words("a-b"), ["a", "b"]);
    }

    #[test]
    fn normalization() {
        assert_eq!(norm("hello"), "hello");
        assert_eq!(norm("HeLLo"), "hello");
        assert_eq!(norm("ＡＢＣ１２３"), "abc123");
        assert_eq!(norm("ﬁne"), "fine");
        // Composed and decomposed forms hash alike.
        assert_eq!(norm("cafe\u{301}"), norm("café"));
        assert_eq!(norm("ÉCOLE"), "école");
        assert_eq!(norm("ΣΊΣΥΦΟΣ"), "σίσυφοσ");
    }

    /// The definition, one char at a time: what the fast tokenizer must agree with.
    fn reference_words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            if is_cjk_unit(c) {
                if let Some(s) = start.take() {
                    out.push(&text[s..i]);
                }
                out.push(&text[i..i + c.len_utf8()]);
            } else if c.is_alphanumeric() || is_combining_mark(c) {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                out.push(&text[s..i]);
            }
        }
        if let Some(s) = start {
            out.push(&text[s..]);
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn words_match_the_definition(text in "[a-zA-Z0-9 .,'\\-\\né\\u{301}東タ한😀Ωß\\t]{0,40}") {
            proptest::prop_assert_eq!(words(&text), reference_words(&text));
        }

        #[test]
        fn words_match_the_definition_any_text(text in "\\PC{0,60}") {
            proptest::prop_assert_eq!(words(&text), reference_words(&text));
        }

        #[test]
        fn normalized_tokens_are_the_words_in_place(text in "\\PC{0,60}") {
            let mut got = Vec::new();
            for_each_normalized_token(&text, |word, chars| {
                let written: String = text.chars().skip(chars.start).take(chars.len()).collect();
                got.push((word.to_string(), written));
            });
            let want: Vec<(String, String)> =
                words(&text).into_iter().map(|t| (norm(t), t.to_string())).collect();
            proptest::prop_assert_eq!(got, want);
        }

        #[test]
        fn cjk_fast_path_is_xxh3_of_normalize(c in proptest::char::ranges(vec![
            '\u{3000}'..='\u{9FFF}', '\u{AC00}'..='\u{D7FF}', '\u{F900}'..='\u{FFEF}',
        ].into())) {
            let token = c.to_string();
            let mut buf = String::new();
            let fast = hash_normalized(&token, &mut buf);
            let mut buf2 = String::new();
            proptest::prop_assert_eq!(fast, xxh3(normalize(&token, &mut buf2).as_bytes()));
        }

        #[test]
        fn classes_are_read_with_the_hash(token in "[a-zA-Z0-9_.É頭]{0,40}") {
            let mut buf = String::new();
            let (hash, classes) = hash_normalized_classes(&token, &mut buf);
            proptest::prop_assert_eq!(hash, hash_normalized(&token, &mut buf));
            if token.is_ascii() && token.len() <= 32 {
                let b = token.as_bytes();
                let want = (b.iter().any(u8::is_ascii_digit), b.iter().any(u8::is_ascii_alphabetic));
                proptest::prop_assert_eq!(classes, Some(want));
            } else {
                proptest::prop_assert_eq!(classes, None);
            }
        }

        #[test]
        fn hash_normalized_is_xxh3_of_normalize(token in "[a-zA-ZÉé0-9]{1,40}") {
            let mut buf = String::new();
            let fast = hash_normalized(&token, &mut buf);
            let mut buf2 = String::new();
            proptest::prop_assert_eq!(fast, xxh3(normalize(&token, &mut buf2).as_bytes()));
        }
    }

    #[test]
    fn cjk_fast_path_agrees_with_the_tables_everywhere() {
        // Every code point of the fast path's ranges and around them.
        let mut buf = String::new();
        for cp in (0x3000..=0xA000).chain(0xAB00..=0xD800) {
            let Some(c) = char::from_u32(cp) else { continue };
            let token = c.to_string();
            if is_stable_cjk(&token) {
                assert_eq!(normalize(&token, &mut buf), token, "U+{cp:04X}");
            }
        }
    }

    #[test]
    fn long_tokens() {
        let long = "a".repeat(1 << 20);
        assert_eq!(words(&long), [long.as_str()]);
        assert_eq!(moz(&long), [long.as_str()]);
    }
}
