//! Documents that share a boilerplate, each with a paragraph of its own: the flood of
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

    /// The next document: the boilerplate and 28 words of its own (from
    /// `simhash_index::lsh::ADDED_WORDS`, 20, on, content of its own against any kept
    /// text, even one that is the boilerplate alone).
    pub(crate) fn document(&mut self) -> String {
        let own = self.sentence(28);
        format!("{}. {own}.", self.boilerplate)
    }
}
