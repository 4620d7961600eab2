//! Shared corpora and baselines for the simhash benchmarks.

// The README's examples compile and pass as doctests of this crate, which depends on every
// library of the workspace.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

/// English prose, about 60 KiB with little repetition: the Apache License 2.0 and this
/// project's own design and CLI documentation.
pub fn english() -> String {
    [
        include_str!("../../LICENSE-APACHE"),
        include_str!("../../docs/DESIGN.md"),
        include_str!("../../docs/cli.md"),
        include_str!("../../docs/cluster.md"),
    ]
    .concat()
}

/// Mixed-script text (Latin with accents, Cyrillic, Greek, CJK) of about 64 KiB.
pub fn multilingual() -> String {
    let text = include_str!("../data/multilingual.txt");
    text.repeat((64 * 1024) / text.len() + 1)
}

/// The obvious simhash: one branch per bit per feature, counters in `i64`. The baseline the
/// accumulator is measured against.
pub fn naive_simhash(features: impl IntoIterator<Item = (u64, u32)>) -> Option<u64> {
    let mut v = [0i64; 64];
    let mut any = false;
    for (h, w) in features {
        any = true;
        for (i, c) in v.iter_mut().enumerate() {
            if (h >> i) & 1 == 1 {
                *c += i64::from(w);
            } else {
                *c -= i64::from(w);
            }
        }
    }
    any.then(|| v.iter().enumerate().filter(|(_, c)| **c > 0).fold(0, |acc, (i, _)| acc | 1 << i))
}

#[cfg(test)]
mod tests {
    #[test]
    fn naive_matches_accumulator() {
        let fp = simhash_core::Fingerprinter::new();
        let text = super::english();
        let mut features = Vec::new();
        fp.for_each_feature(&text, |h, w| features.push((h, w)));
        assert_eq!(
            super::naive_simhash(features.iter().copied()),
            fp.fingerprint(&text).map(simhash_core::Fingerprint::get)
        );
    }
}
