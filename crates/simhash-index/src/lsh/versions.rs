//! Release-stage words (`alpha`, `beta`, ...): version markers, not content. Every
//! relation reads a text without them, and a sketch keeps a text's tokens without them
//! (so the relation of its pairs need not drop them again).

/// Release-stage words: a version marker, not content, so the relation reads a text without
/// them (`gcloud beta compute instances create` and `gcloud compute instances create` are
/// one command's page in two release tracks, the same document; judged so on real pages).
/// Not `stable`/`unstable` (`sort` and `sort_unstable` are two functions).
pub const VERSION_WORDS: [&str; 6] =
    ["alpha", "beta", "preview", "nightly", "experimental", "deprecated"];

/// The [`simhash_core::token_word`]s of [`VERSION_WORDS`].
pub(super) fn version_tokens() -> &'static [u32; VERSION_WORDS.len()] {
    static TOKENS: std::sync::OnceLock<[u32; VERSION_WORDS.len()]> = std::sync::OnceLock::new();
    TOKENS.get_or_init(|| VERSION_WORDS.map(simhash_core::token_word))
}

/// `tokens` without [`VERSION_WORDS`] (borrowed when it has none).
pub(super) fn without_versions(tokens: &[u32]) -> std::borrow::Cow<'_, [u32]> {
    let versions = version_tokens();
    // Without a branch per token, so that the scan of a text without them is fast.
    let any = tokens
        .iter()
        .fold(0u8, |any, t| any | versions.iter().fold(0u8, |m, v| m | u8::from(t == v)));
    if any != 0 {
        std::borrow::Cow::Owned(tokens.iter().copied().filter(|t| !versions.contains(t)).collect())
    } else {
        std::borrow::Cow::Borrowed(tokens)
    }
}

/// Drops the [`VERSION_WORDS`] from `tokens` in place (a text's tokens as a sketch keeps
/// them).
pub(crate) fn drop_versions(tokens: &mut Vec<u32>) {
    if let std::borrow::Cow::Owned(fewer) = without_versions(tokens) {
        *tokens = fewer;
    }
}
