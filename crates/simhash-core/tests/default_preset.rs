//! The default preset: golden values (its stability contract) and the properties users rely on.

use simhash_core::{Fingerprint, Fingerprinter, Preset};

fn fp(text: &str) -> Option<u64> {
    Fingerprinter::new().fingerprint(text).map(Fingerprint::get)
}

/// Values of `default-v1` pinned when the preset was released. If this test fails, the
/// change broke every stored fingerprint: make a new preset instead.
#[test]
fn golden_default_v1() {
    let cases: &[(&str, Option<u64>)] = &[
        ("", None),
        ("!!! ... ??? --- ,,, ;;;", None),
        ("👋🏽 🎉", None),
        ("hello", Some(0xfc355a5db7489ca5)),
        ("Hello, World!", Some(0xd18122950909ca2f)),
        ("The quick brown fox jumps over the lazy dog", Some(0x79e9ef63375995c4)),
        ("東京タワーは日本の電波塔です", Some(0xb3124494049d64c2)),
        ("Ｆｕｌｌｗｉｄｔｈ ＴＥＸＴ", Some(0xe3aa8ff3ff588c49)),
        ("café naïve résumé", Some(0x6cd57391144b8c33)),
        ("one two three one two three one two three", Some(0xbce2d0296e79aa9e)),
    ];
    for &(text, want) in cases {
        assert_eq!(fp(text), want, "{text:?}: got {:#x?}", fp(text));
    }
    let window5 = Fingerprinter::builder().window(5).build();
    assert_ne!(window5.fingerprint("a b c d e f"), Fingerprinter::new().fingerprint("a b c d e f"));
    assert_eq!(
        Fingerprinter::builder().preset(Preset::DefaultV1).build().fingerprint("hello"),
        Some(Fingerprint(0xfc355a5db7489ca5))
    );
}

#[test]
fn normalisation_makes_variants_equal() {
    let same = [
        ("Hello, World!", "hello world"),
        ("HELLO WORLD", "hello   world\r\n"),
        // Composed and decomposed accents.
        ("café naïve résumé", "cafe\u{301} nai\u{308}ve re\u{301}sume\u{301}"),
        // Full-width forms and ligatures (NFKC).
        ("Ｆｕｌｌｗｉｄｔｈ ＴＥＸＴ", "fullwidth text"),
        ("ﬁne print", "fine print"),
        ("line one\r\nline two\r\n", "line one\nline two"),
    ];
    for (a, b) in same {
        assert_eq!(fp(a), fp(b), "{a:?} vs {b:?}");
    }
    assert_ne!(fp("hello world"), fp("world hello"));
}

/// A deterministic English-like text of `n` words drawn from the Apache license's vocabulary.
fn text(seed: u64, n: usize) -> Vec<&'static str> {
    let vocab: Vec<&str> = include_str!("../../../LICENSE-APACHE").split_whitespace().collect();
    let mut x = seed.wrapping_mul(0x9e3779b97f4a7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vocab[(x % vocab.len() as u64) as usize]
        })
        .collect()
}

#[test]
fn one_word_edit_moves_few_bits_and_unrelated_texts_land_near_32() {
    let f = Fingerprinter::new();
    let mut edit_distances = Vec::new();
    let mut unrelated = Vec::new();
    for seed in 0..40 {
        let words = text(seed, 400);
        let original = f.fingerprint(&words.join(" ")).unwrap();
        let mut edited = words.clone();
        edited[(seed as usize * 37) % 400] = "zebra";
        edit_distances.push(original.distance(f.fingerprint(&edited.join(" ")).unwrap()));
        let other = f.fingerprint(&text(seed + 1000, 400).join(" ")).unwrap();
        unrelated.push(original.distance(other));
    }
    let max_edit = *edit_distances.iter().max().unwrap();
    let mean_unrelated = unrelated.iter().sum::<u32>() as f64 / unrelated.len() as f64;
    assert!(max_edit <= 10, "one-word edits moved up to {max_edit} bits: {edit_distances:?}");
    assert!((28.0..=36.0).contains(&mean_unrelated), "unrelated mean {mean_unrelated}");
    assert!(unrelated.iter().all(|&d| d >= 16), "{unrelated:?}");
}

#[test]
fn reuse_and_threads_do_not_change_values() {
    let f = Fingerprinter::new();
    let texts: Vec<String> = (0..20).map(|s| text(s, 50 + s as usize * 13).join(" ")).collect();
    let first: Vec<_> = texts.iter().map(|t| f.fingerprint(t)).collect();
    // Interleave with very different inputs to dirty the per-thread buffers.
    let again: Vec<_> = texts
        .iter()
        .map(|t| {
            let _ = f.fingerprint(&"x ".repeat(5000));
            let _ = f.fingerprint("東京");
            f.fingerprint(t)
        })
        .collect();
    assert_eq!(first, again);
    let shared = &f;
    let threaded: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> =
            texts.iter().map(|t| s.spawn(move || shared.fingerprint(t))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(first, threaded);
    // A fresh fingerprinter gives the same values as a reused one.
    assert_eq!(first[3], Fingerprinter::new().fingerprint(&texts[3]));
}

#[test]
fn short_texts_have_fingerprints_but_featureless_ones_do_not() {
    // Fewer tokens than the window: one feature, all the tokens.
    assert!(fp("hi").is_some());
    assert_ne!(fp("hi"), fp("ho"));
    assert_eq!(fp("a b"), fp("A, B."));
    for featureless in ["", " ", "\n\r\n", "...", "—–-", "🦀🦀🦀", "\u{301}\u{301}"] {
        // Lone combining marks are part of words, so the last one is a token.
        if featureless.starts_with('\u{301}') {
            assert!(fp(featureless).is_some());
        } else {
            assert_eq!(fp(featureless), None, "{featureless:?}");
        }
    }
}

#[test]
fn very_long_tokens_and_texts() {
    let long_token = "a".repeat(4 << 20);
    assert!(fp(&long_token).is_some());
    assert_ne!(fp(&long_token), fp(&"a".repeat((4 << 20) + 1)));
    let long_text = text(7, 300_000).join(" ");
    let a = fp(&long_text).unwrap();
    let b = fp(&format!("{long_text} extra words at the end")).unwrap();
    assert!(Fingerprint(a).distance(Fingerprint(b)) <= 2);
}

#[test]
fn invalid_utf8_via_lossy_decoding() {
    let bytes = b"caf\xe9 au lait \xff\xfe with milk";
    let text = String::from_utf8_lossy(bytes);
    let a = fp(&text).unwrap();
    // The replacement character separates tokens like punctuation.
    assert_eq!(Some(a), fp("caf au lait with milk"));
}

/// `fingerprint` votes as shingles come; it must equal the vote over `for_each_feature`'s
/// distinct shingles and weights.
#[test]
fn fingerprint_equals_the_vote_over_its_features() {
    let f = Fingerprinter::new();
    let mut texts: Vec<String> = (0..30).map(|s| text(s, 5 + s as usize * 40).join(" ")).collect();
    texts.push("a a a a a a a a a a a a a a a a a a a a a a".into());
    texts.push(format!("{} {}", "x y z ".repeat(2000), text(3, 100).join(" ")));
    for t in &texts {
        let mut acc = simhash_core::Accumulator::new();
        let mut distinct = std::collections::HashSet::new();
        f.for_each_feature(t, |h, w| {
            assert!(distinct.insert(h), "each shingle once");
            acc.add(h, w);
        });
        assert_eq!(f.fingerprint(t), acc.finish(), "{}", &t[..t.len().min(40)]);
    }
}

#[test]
fn repeated_shingles_are_weighted_sublinearly() {
    // A shingle repeated many times must not outweigh many distinct shingles linearly.
    let base = text(3, 200).join(" ");
    let spam = format!("{base} {}", "buy now ".repeat(300));
    let distance = Fingerprint(fp(&base).unwrap()).distance(Fingerprint(fp(&spam).unwrap()));
    assert!(distance < 24, "300 repeats of one phrase moved {distance} bits");
}

mod properties {
    use std::collections::HashMap;

    use proptest::prelude::*;
    use simhash_core::{
        Fingerprint, Fingerprinter, MAX_WINDOW, Preset, Tokenizer, Words, combine, jenkins64,
        sublinear_weight,
    };
    use unicode_normalization::UnicodeNormalization;

    /// The weighted per-bit vote: bit `i` is set when the weights of the features with bit
    /// `i` set outweigh those of the features without it (a tie leaves it clear). No
    /// features: no fingerprint.
    fn vote(features: &[(u64, i64)]) -> Option<u64> {
        if features.is_empty() {
            return None;
        }
        let mut fp = 0;
        for i in 0..64 {
            let sum: i64 =
                features.iter().map(|&(h, w)| if (h >> i) & 1 == 1 { w } else { -w }).sum();
            fp |= u64::from(sum > 0) << i;
        }
        Some(fp)
    }

    /// `default-v1` as [`Preset::DefaultV1`] documents it, written out plainly: [`Words`]
    /// tokens, each `lowercase(NFKC(token))` hashed with xxh3-64 (seed `"SHASH_v1"`);
    /// shingles of `window` tokens (all the tokens when there are fewer) combined oldest
    /// first; each distinct shingle votes `1 + ln(tf)`.
    fn default_v1(text: &str, window: usize) -> Option<u64> {
        const SEED: u64 = u64::from_be_bytes(*b"SHASH_v1");
        let mut tokens = Vec::new();
        Words.tokenize(text, &mut |t| {
            let normal: String = t.nfkc().flat_map(char::to_lowercase).collect();
            tokens.push(xxhash_rust::xxh3::xxh3_64_with_seed(normal.as_bytes(), SEED));
        });
        let shingles: Vec<u64> = match tokens.len() {
            0 => Vec::new(),
            n if n < window => vec![combine(tokens.iter().copied())],
            _ => tokens.windows(window).map(|w| combine(w.iter().copied())).collect(),
        };
        let mut tf: HashMap<u64, u64> = HashMap::new();
        for s in shingles {
            *tf.entry(s).or_default() += 1;
        }
        vote(&tf.into_iter().map(|(h, n)| (h, i64::from(sublinear_weight(n)))).collect::<Vec<_>>())
    }

    /// `moz`, simhash-cpp's `hash_text`: runs of ASCII letters (case kept) hashed with
    /// `jenkins64`; the feature ending at token `i` is the XOR over `j < window` (and
    /// `j <= i`) of token `i - j`'s hash rotated left by `j`; each votes 1; the bits reversed.
    fn moz(text: &str, window: usize) -> Option<u64> {
        let tokens: Vec<u64> = text
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|t| !t.is_empty())
            .map(|t| jenkins64(t.as_bytes(), 0))
            .collect();
        let features: Vec<(u64, i64)> = (0..tokens.len())
            .map(|i| {
                let f =
                    (0..window.min(i + 1)).fold(0, |f, j| f ^ tokens[i - j].rotate_left(j as u32));
                (f, 1)
            })
            .collect();
        vote(&features).map(u64::reverse_bits)
    }

    /// `fork`: `jenkins64` of the byte `window`-grams at offsets `0 .. len - window` (the
    /// fork skips the last one), each voting 1.
    fn fork(text: &str, window: usize) -> Option<u64> {
        let bytes = text.as_bytes();
        let grams = bytes.len().saturating_sub(window);
        vote(&(0..grams).map(|o| (jenkins64(&bytes[o..o + window], 0), 1)).collect::<Vec<_>>())
    }

    /// Any text, and texts of a few short words: repeated shingles (weights past 1), ties in
    /// the vote, case, accents, ligatures, full-width forms and CJK for the normalisation.
    fn texts() -> impl Strategy<Value = String> {
        prop_oneof![
            "\\PC{0,200}",
            "((a|b|B|ab|é|É|e\u{301}|ﬁ|Ｆ|東|京|1)[ ,.\n]{1,2}){0,80}",
            "[a-cA-C0-9 ,.é東😀\n-]{0,300}",
        ]
    }

    proptest! {
        /// Every preset, at any window (clamped to `1..=MAX_WINDOW`), gives on any text the
        /// fingerprint of its definition, written out plainly above, and so does the one
        /// pass that also gives the features: deterministic, and the fingerprint it should
        /// be. (The definitions' components, `Words`, `jenkins64`, `combine` and
        /// `sublinear_weight`, are pinned by `reference.rs`, the golden values above and
        /// their unit tests. docs/DESIGN.md cites this test by its name.)
        #[test]
        fn any_text_any_preset_is_deterministic(
            text in texts(),
            w in prop_oneof![0usize..10, Just(MAX_WINDOW + 1)],
        ) {
            let window = w.clamp(1, MAX_WINDOW);
            for preset in Preset::ALL {
                let want = match preset {
                    Preset::DefaultV1 => default_v1(&text, window),
                    Preset::Moz => moz(&text, window),
                    Preset::Fork => fork(&text, window),
                    other => panic!("write out the definition of {other} here"),
                };
                let f = Fingerprinter::builder().preset(preset).window(w).build();
                prop_assert_eq!(f.fingerprint(&text).map(Fingerprint::get), want, "{}", preset);
                let mut features = 0;
                let both = f.fingerprint_and_features(&text, |_| features += 1);
                prop_assert_eq!(both.map(Fingerprint::get), want, "{} in one pass", preset);
                prop_assert_eq!(features > 0, want.is_some(), "{}: {} features", preset, features);
            }
        }

        #[test]
        fn featureless_exactly_when_no_tokens(text in "[ .,!?\\-a-zé東]{0,12}") {
            let has_token = text.chars().any(char::is_alphanumeric);
            prop_assert_eq!(Fingerprinter::new().fingerprint(&text).is_some(), has_token);
        }
    }
}
