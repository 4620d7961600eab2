//! How wide LSH band keys are: 32 bits (a 64-bit band hash folded) or the whole 64-bit
//! hash, chosen from the corpus size by [`band_key_bits`], the same way by every front end.

/// Bytes one spurious candidate costs: a request, the smaller shingle set shipped to the
/// other record's worker (8 bytes a shingle, about 60 shingles a web paragraph) and a
/// Jaccard computation. The `C` of [`band_key_bits`].
pub const SPURIOUS_CANDIDATE_BYTES: u64 = 512;

/// The width of band keys that costs least for `documents` documents cut into `bands`
/// bands: 32, or 64 from the size where 32-bit keys cost more than they save.
///
/// Two documents whose band hashes differ share a 32-bit key with probability `2^-32` per
/// band, so 32-bit keys add about `bands × n² / 2^33` spurious candidates, each costing
/// [`SPURIOUS_CANDIDATE_BYTES`] (`C`) to verify and drop; 64-bit keys cost `4 × bands`
/// more bytes a document in memory and `2 × bands² + 4 × bands` more in `simhash-dist`'s
/// band exchange (each band's record carries the keys of the earlier bands). The two
/// costs meet at
///
/// ```text
/// n* = 2^33 × (2 × bands + 4) / C
/// ```
///
/// about 1.3 billion documents at the default 37 bands. Below `n*` (and at it) the answer
/// is 32, above it 64. Either width gives the same verified pairs, since every candidate
/// is verified exactly; the width only changes how many candidates are compared.
///
/// ```
/// use simhash_index::lsh::band_key_bits;
///
/// assert_eq!(band_key_bits(1_000_000, 37), 32);
/// assert_eq!(band_key_bits(1_300_000_000, 37), 32);
/// assert_eq!(band_key_bits(1_400_000_000, 37), 64);
/// assert_eq!(band_key_bits(8_000_000_000, 37), 64);
/// // Fewer bands, fewer keys to carry: 64 bits pay off sooner.
/// assert_eq!(band_key_bits(200_000_000, 1), 64);
/// ```
pub fn band_key_bits(documents: u64, bands: usize) -> u32 {
    let bands = bands as u128;
    // n > 2^33 (2b + 4) / C, in integers: n × C > 2^33 (2b + 4).
    let lhs = u128::from(documents) * u128::from(SPURIOUS_CANDIDATE_BYTES);
    let rhs = (1u128 << 33) * (2 * bands + 4);
    if lhs > rhs { 64 } else { 32 }
}

/// Which band keys to use: chosen by [`band_key_bits`] (`Auto`, the default) or forced.
///
/// A [`Sketcher`](super::Sketcher) with `Auto` or `Bits64` keeps each band's whole 64-bit
/// hash in its sketches (4 bytes a band more than `Bits32`), so that a store can use either
/// width once it knows how many documents it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BandKeyWidth {
    /// [`band_key_bits`] of the documents and bands.
    #[default]
    Auto,
    /// 32-bit keys (64-bit band hashes folded), at any size.
    Bits32,
    /// 64-bit keys (the whole band hashes), at any size.
    Bits64,
}

/// `auto`, `32` or `64` (every front end's `--band-key-bits`).
///
/// ```
/// use simhash_index::lsh::BandKeyWidth;
///
/// assert_eq!("64".parse::<BandKeyWidth>(), Ok(BandKeyWidth::Bits64));
/// assert_eq!("auto".parse::<BandKeyWidth>(), Ok(BandKeyWidth::Auto));
/// assert!("48".parse::<BandKeyWidth>().is_err());
/// ```
impl std::str::FromStr for BandKeyWidth {
    type Err = ParseBandKeyWidthError;

    fn from_str(text: &str) -> Result<BandKeyWidth, ParseBandKeyWidthError> {
        match text {
            "auto" => Ok(BandKeyWidth::Auto),
            _ => text.parse().ok().and_then(BandKeyWidth::from_bits).ok_or(ParseBandKeyWidthError),
        }
    }
}

/// A band key width that is not `auto`, `32` or `64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseBandKeyWidthError;

impl std::fmt::Display for ParseBandKeyWidthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("must be auto, 32 or 64")
    }
}

impl std::error::Error for ParseBandKeyWidthError {}

impl BandKeyWidth {
    /// The bits of a key for `documents` documents of `bands` bands: 32 or 64.
    ///
    /// ```
    /// use simhash_index::lsh::BandKeyWidth;
    ///
    /// assert_eq!(BandKeyWidth::Auto.bits(1000, 37), 32);
    /// assert_eq!(BandKeyWidth::Bits64.bits(1000, 37), 64);
    /// assert_eq!(BandKeyWidth::Bits32.bits(u64::MAX, 37), 32);
    /// ```
    pub fn bits(self, documents: u64, bands: usize) -> u32 {
        match self {
            BandKeyWidth::Auto => band_key_bits(documents, bands),
            BandKeyWidth::Bits32 => 32,
            BandKeyWidth::Bits64 => 64,
        }
    }

    /// The width of `bits` (32 or 64) as a forced choice; `None` for any other number.
    pub fn from_bits(bits: u32) -> Option<BandKeyWidth> {
        match bits {
            32 => Some(BandKeyWidth::Bits32),
            64 => Some(BandKeyWidth::Bits64),
            _ => None,
        }
    }
}

/// A 64-bit band hash folded to a 32-bit key (both halves count).
pub(crate) fn fold(hash: u64) -> u32 {
    (hash ^ (hash >> 32)) as u32
}

/// The 64-bit band hash of a folded key and the hash's high half.
pub(crate) fn unfold(key: u32, high: u32) -> u64 {
    (u64::from(high) << 32) | u64::from(key ^ high)
}

/// 64-bit keys replaced by 32-bit ones that are equal exactly when the keys are: each
/// key's rank among the distinct keys. So that the searches, written for 32-bit keys,
/// group and compare 64-bit keys exactly (a store hands out ranks, per band, within one
/// call).
pub(crate) fn ranks(keys: &[u64]) -> Vec<u32> {
    let mut order: Vec<(u64, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
    if order.len() > 1 << 16 {
        rayon::slice::ParallelSliceMut::par_sort_unstable(&mut order[..]);
    } else {
        order.sort_unstable();
    }
    let mut out = vec![0; keys.len()];
    let mut rank = 0u32;
    for (i, &(key, at)) in order.iter().enumerate() {
        if i > 0 && key != order[i - 1].0 {
            rank += 1;
        }
        out[at as usize] = rank;
    }
    out
}

/// Appends to `out`, row after row, the first `band` keys of `m` documents whose 64-bit
/// keys `key(i, k)` gives (document `i`, band `k`), as [`ranks`] per band: equal exactly
/// when the keys are, among these documents.
pub(crate) fn ranked_rows(
    m: usize,
    band: usize,
    key: impl Fn(usize, usize) -> u64,
    out: &mut Vec<u32>,
) {
    let start = out.len();
    out.resize(start + m * band, 0);
    let mut column = Vec::with_capacity(m);
    for k in 0..band {
        column.clear();
        column.extend((0..m).map(|i| key(i, k)));
        for (i, r) in ranks(&column).into_iter().enumerate() {
            out[start + i * band + k] = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_and_unfold() {
        for h in [0u64, 1, u64::MAX, 0x0123_4567_89ab_cdef, 1 << 32] {
            assert_eq!(unfold(fold(h), (h >> 32) as u32), h);
        }
    }

    #[test]
    fn ranks_keep_equality() {
        let keys = [5u64 << 40, 7, 5 << 40, (5 << 40) ^ (1 << 8), 7];
        let r = ranks(&keys);
        for i in 0..keys.len() {
            for j in 0..keys.len() {
                assert_eq!(keys[i] == keys[j], r[i] == r[j]);
            }
        }
    }

    #[test]
    fn break_even() {
        // n* = 2^33 (2b + 4) / C: at 37 bands, 1,308,622,848.
        let n = (1u64 << 33) * 78 / SPURIOUS_CANDIDATE_BYTES;
        assert_eq!(band_key_bits(n, 37), 32);
        assert_eq!(band_key_bits(n + 1, 37), 64);
        assert_eq!(band_key_bits(0, 0), 32);
    }
}
