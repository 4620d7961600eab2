//! Version markers: release-stage words (`alpha`, `beta`, ...) and API version names
//! (`v1`, `v1beta1`, ...), not content. Every relation reads a text without them, and a
//! sketch keeps a text's tokens without them (so the relation of its pairs need not drop
//! them again: the sketcher leaves them out as it reads the tokens).

/// Version markers, so the relation reads a text without them:
///
/// - release-stage words: `gcloud beta compute instances create` and `gcloud compute
///   instances create` are one command's page in two release tracks, the same document
///   (judged so on real pages). Not `stable`/`unstable` (`sort` and `sort_unstable` are two
///   functions).
/// - API version names (`v1`, `v1beta1`, `v2alpha1`, `v1p1beta1`, the forms Google's and
///   Kubernetes' APIs use): the same page of a command in its beta track names the `v1beta1`
///   API where the GA page names `v1`.
pub const VERSION_WORDS: [&str; 18] = [
    "alpha",
    "beta",
    "preview",
    "nightly",
    "experimental",
    "deprecated",
    "v1",
    "v2",
    "v3",
    "v1alpha1",
    "v1alpha2",
    "v1beta1",
    "v1beta2",
    "v1beta3",
    "v2alpha1",
    "v2beta1",
    "v2beta2",
    "v1p1beta1",
];

/// A 256-bit filter of token words' top bytes: a word whose top byte is not in it is
/// none of them, so most words are told apart from a short list with one test.
#[derive(Clone, Copy, Default)]
pub(super) struct TopBytes([u64; 4]);

impl TopBytes {
    /// The filter of `words`.
    pub(super) fn of<'a>(words: impl IntoIterator<Item = &'a u32>) -> TopBytes {
        let mut filter = TopBytes::default();
        for &w in words {
            let top = (w >> 24) as usize;
            filter.0[top >> 6] |= 1 << (top & 63);
        }
        filter
    }

    /// Whether `w` may be one of its words (false: it is none of them).
    #[inline]
    pub(super) fn may_hold(&self, w: u32) -> bool {
        let top = (w >> 24) as usize;
        self.0[top >> 6] & (1 << (top & 63)) != 0
    }
}

/// The [`simhash_core::token_word`]s of [`VERSION_WORDS`], and the [`TopBytes`] of them.
pub(super) struct Versions {
    tokens: [u32; VERSION_WORDS.len()],
    filter: TopBytes,
}

impl Versions {
    /// Whether `t` is one of them.
    #[inline]
    pub(super) fn contains(&self, t: u32) -> bool {
        self.filter.may_hold(t) && self.tokens.contains(&t)
    }

    /// Their token words.
    #[cfg(test)]
    pub(super) fn tokens(&self) -> &[u32] {
        &self.tokens
    }
}

/// The [`Versions`] of [`VERSION_WORDS`].
pub(super) fn version_tokens() -> &'static Versions {
    static VERSIONS: std::sync::OnceLock<Versions> = std::sync::OnceLock::new();
    VERSIONS.get_or_init(|| {
        let tokens = VERSION_WORDS.map(simhash_core::token_word);
        Versions { tokens, filter: TopBytes::of(&tokens) }
    })
}

/// `tokens` without [`VERSION_WORDS`] (borrowed when it has none).
pub(super) fn without_versions(tokens: &[u32]) -> std::borrow::Cow<'_, [u32]> {
    let versions = version_tokens();
    match tokens.iter().position(|&t| versions.contains(t)) {
        None => std::borrow::Cow::Borrowed(tokens),
        Some(first) => {
            let mut fewer = tokens[..first].to_vec();
            fewer.extend(tokens[first + 1..].iter().copied().filter(|&t| !versions.contains(t)));
            std::borrow::Cow::Owned(fewer)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simhash_core::token_word;

    /// Each version word is dropped, in any case, and nothing else: not words that differ
    /// by a letter or a digit, nor the same letters in another token.
    #[test]
    fn only_version_words_are_dropped() {
        let words = |t: &str| t.split_whitespace().map(token_word).collect::<Vec<u32>>();
        for v in VERSION_WORDS {
            let text = words(&format!("gcloud {v} compute {} list", v.to_uppercase()));
            assert_eq!(&*without_versions(&text), &words("gcloud compute list")[..], "{v}");
        }
        let others = words("v4 v1beta v1beta4 betas alphabet stable unstable v 1 beta1 v1_beta1");
        assert_eq!(&*without_versions(&others), &others[..]);
        assert!(matches!(without_versions(&others), std::borrow::Cow::Borrowed(_)));
        // Every token word is told by the filter and the list alike.
        let versions = version_tokens();
        for w in (0..200_000u32).map(|i| i.wrapping_mul(0x9e37_79b9)) {
            assert_eq!(versions.contains(w), versions.tokens().contains(&w));
        }
    }
}
