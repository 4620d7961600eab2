//! Documents that share a boilerplate, each with a sentence of its own: the flood of
//! records kept for content of their own, for the tests of the walk, the components and
//! the on-disk index, and for `bench_flood --shape own` (each includes this file).

/// Words of letters (a name with a digit is not content), drawn from 20,000, and the
/// boilerplate of 60 of them; xorshift from a fixed seed, so every run draws the same.
pub(crate) struct OwnFlood {
    state: u64,
    /// The boilerplate every document starts with.
    pub(crate) boilerplate: String,
}

impl OwnFlood {
    /// A generator whose boilerplate is its first 60 words.
    pub(crate) fn new() -> OwnFlood {
        let mut flood = OwnFlood { state: 0x2545_f491_4f6c_dd1d, boilerplate: String::new() };
        flood.boilerplate = flood.sentence(60);
        flood
    }

    /// The next word.
    pub(crate) fn word(&mut self) -> String {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let mut n = self.state % 20_000;
        let mut w = String::new();
        loop {
            w.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
            if n == 0 {
                return w;
            }
        }
    }

    /// The next `n` words, spaced.
    pub(crate) fn sentence(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    /// The next document: the boilerplate and 17 words of its own: content of its own
    /// against another such document, which has a sentence of its own too, but below
    /// `simhash_index::lsh::ADDED_WORDS` (20) a variant's against a text that lies wholly
    /// within it (the boilerplate alone), so the walk's shortcuts must tell the two apart.
    pub(crate) fn document(&mut self) -> String {
        let own = self.sentence(17);
        format!("{}. {own}.", self.boilerplate)
    }
}
