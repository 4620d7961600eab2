//! Each shingle with the text it covers: what a diagnosis (`simhash explain`) shows of a
//! shingle besides its hash.

use crate::hash::jenkins64;
use crate::shingle::{CyclicWindow, Window};
use crate::tokenize::{Tokenizer, hash_normalized};

use super::{Fingerprinter, Preset};

/// The byte range of `token` in `text`, when `token` is a slice of it (the tokenizers of
/// this crate give slices; another may not, and its tokens then have no place).
fn place(text: &str, token: &str) -> Option<(usize, usize)> {
    let start = (token.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (start + token.len() <= text.len()).then_some((start, start + token.len()))
}

/// The bytes `start..end` of `text`, widened to whole characters.
fn chars(text: &str, mut start: usize, mut end: usize) -> &str {
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[start..end]
}

/// The starts of the last tokens, for the text a window of them covers.
struct Starts {
    ring: Vec<Option<usize>>,
    seen: usize,
    end: Option<usize>,
}

impl Starts {
    fn new(size: usize) -> Starts {
        Starts { ring: vec![None; size], seen: 0, end: None }
    }

    fn push(&mut self, place: Option<(usize, usize)>) {
        let size = self.ring.len();
        self.ring[self.seen % size] = place.map(|p| p.0);
        self.end = place.map(|p| p.1);
        self.seen += 1;
    }

    /// The text of the last `n` tokens (`n` at most the window and the tokens seen).
    fn last<'t>(&self, text: &'t str, n: usize) -> &'t str {
        let size = self.ring.len();
        match (self.ring[(self.seen - n) % size], self.end) {
            (Some(start), Some(end)) if start <= end => &text[start..end],
            _ => "",
        }
    }
}

impl<T: Tokenizer> Fingerprinter<T> {
    /// [`for_each_shingle`](Fingerprinter::for_each_shingle) with the text each shingle
    /// covers: calls `f(hash, text)` for the same hashes in the same order, `text` being
    /// the slice of `text` from the first token of the shingle to the end of its last (for
    /// `fork`, its bytes widened to whole characters). The text is as written: shingles that
    /// differ only in case or normalisation have the same hash and different texts. It is
    /// empty when a tokenizer gives tokens that are not slices of the text.
    ///
    /// ```
    /// use simhash_core::Fingerprinter;
    ///
    /// let mut shingles = Vec::new();
    /// Fingerprinter::new().for_each_shingle_text("The cat, sat on it", |_, s| shingles.push(s.to_string()));
    /// assert_eq!(shingles, ["The cat, sat", "cat, sat on", "sat on it"]);
    /// ```
    pub fn for_each_shingle_text<'t>(&self, text: &'t str, mut f: impl FnMut(u64, &'t str)) {
        match self.preset {
            Preset::DefaultV1 => Self::with_scratch(|scratch| {
                let buf = &mut scratch.token;
                let mut window = Window::new(self.window);
                let mut starts = Starts::new(window.size());
                self.tokenizer.tokenize(text, &mut |token| {
                    starts.push(place(text, token));
                    if let Some(h) = window.push(hash_normalized(token, buf)) {
                        f(h, starts.last(text, window.size()));
                    }
                });
                if let Some(h) = window.partial() {
                    f(h, starts.last(text, starts.seen));
                }
            }),
            Preset::Moz => {
                let mut window = CyclicWindow::new(self.window);
                let mut starts = Starts::new(self.window);
                self.tokenizer.tokenize(text, &mut |token| {
                    starts.push(place(text, token));
                    let h = window.push(jenkins64(token.as_bytes(), 0));
                    f(h, starts.last(text, starts.seen.min(self.window)));
                });
            }
            Preset::Fork => {
                let (bytes, w) = (text.as_bytes(), self.window);
                for offset in 0..bytes.len().saturating_sub(w) {
                    f(jenkins64(&bytes[offset..offset + w], 0), chars(text, offset, offset + w));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Fingerprinter, Preset};

    /// The hashes are `for_each_shingle`'s, in order, for every preset and window, and
    /// each text's shingle hashes back to its hash (for the token presets).
    #[test]
    fn shingle_texts_have_the_hashes_of_for_each_shingle() {
        let texts = [
            "",
            "one",
            "two words",
            "The quick brown fox, jumps over the lazy dog. The quick brown fox!",
            "東京の天気は晴れ、明日も晴れ",
            "  spaces   and\ttabs\r\nand lines  ",
            "ÅNGSTRÖM ångström Ａｎｇｓｔｒｏｍ",
        ];
        for preset in [Preset::DefaultV1, Preset::Moz, Preset::Fork] {
            for window in [1, 2, 3, 5, 8] {
                let fp = Fingerprinter::builder().preset(preset).window(window).build();
                for text in texts {
                    let mut want = Vec::new();
                    fp.for_each_shingle(text, |h| want.push(h));
                    let mut got = Vec::new();
                    fp.for_each_shingle_text(text, |h, s| got.push((h, s)));
                    let hashes: Vec<u64> = got.iter().map(|g| g.0).collect();
                    assert_eq!(hashes, want, "{preset} {window} {text:?}");
                    for (h, s) in got {
                        assert!(!s.is_empty() && text.contains(s), "{preset} {text:?}: {s:?}");
                        if preset == Preset::DefaultV1 {
                            // A whole window's text makes one shingle of the same hash.
                            let mut again = Vec::new();
                            fp.for_each_shingle(s, |x| again.push(x));
                            assert!(again.contains(&h), "{window} {text:?}: {s:?}");
                        }
                    }
                }
            }
        }
    }
}
