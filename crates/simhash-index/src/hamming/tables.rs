//! The block-permutation tables: block layout, permutations, ownership, and their validation.

use std::fmt;

use simhash_core::Fingerprint;

/// The most tables a configuration may need (`C(blocks, blocks - max_distance)`).
///
/// A sanity bound: 2^14, so that 16 blocks at distance 8 (12,870 tables) are allowed and 17
/// blocks at distance 8 (24,310) are not.
pub const MAX_TABLES: u64 = 16_384;

/// The error returned for an invalid table configuration.
///
/// Its [`Display`](fmt::Display) says what is wrong, in lowercase with no trailing period;
/// [`kind`](ConfigError::kind) says it as a value to match on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    kind: Repr,
}

/// What is wrong with a table configuration; see [`ConfigError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// `blocks <= max_distance`: no block is left to agree on.
    TooFewBlocks,
    /// `blocks > 64`.
    TooManyBlocks,
    /// `max_distance >= 64`.
    DistanceTooLarge,
    /// The configuration needs more than [`MAX_TABLES`] tables.
    TooManyTables,
    /// A memory budget below what the input, the pairs in flight and the smallest
    /// partition of a table need (see [`plan_with_memory`](crate::plan_with_memory)).
    MemoryTooSmall,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repr {
    TooFewBlocks { blocks: usize, max_distance: u32 },
    TooManyBlocks { blocks: usize },
    DistanceTooLarge { max_distance: u32 },
    TooManyTables { blocks: usize, max_distance: u32, tables: u128 },
    MemoryTooSmall { memory: u64, needed: u64 },
}

impl ConfigError {
    fn new(kind: Repr) -> ConfigError {
        ConfigError { kind }
    }

    /// What is wrong.
    pub fn kind(&self) -> ConfigErrorKind {
        match self.kind {
            Repr::TooFewBlocks { .. } => ConfigErrorKind::TooFewBlocks,
            Repr::TooManyBlocks { .. } => ConfigErrorKind::TooManyBlocks,
            Repr::DistanceTooLarge { .. } => ConfigErrorKind::DistanceTooLarge,
            Repr::TooManyTables { .. } => ConfigErrorKind::TooManyTables,
            Repr::MemoryTooSmall { .. } => ConfigErrorKind::MemoryTooSmall,
        }
    }

    pub(crate) fn distance_too_large(max_distance: u32) -> ConfigError {
        ConfigError::new(Repr::DistanceTooLarge { max_distance })
    }

    pub(crate) fn memory_too_small(memory: u64, needed: u64) -> ConfigError {
        ConfigError::new(Repr::MemoryTooSmall { memory, needed })
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Repr::TooFewBlocks { blocks, max_distance } => write!(
                f,
                "blocks ({blocks}) must be greater than the maximum distance ({max_distance})"
            ),
            Repr::TooManyBlocks { blocks } => {
                write!(f, "blocks ({blocks}) must be at most 64")
            }
            Repr::DistanceTooLarge { max_distance } => {
                write!(f, "maximum distance ({max_distance}) must be less than 64")
            }
            Repr::TooManyTables { blocks, max_distance, tables } => write!(
                f,
                "{blocks} blocks at distance {max_distance} need {tables} tables, \
                 more than the limit of {MAX_TABLES}"
            ),
            Repr::MemoryTooSmall { memory, needed } => write!(
                f,
                "a memory budget of {memory} bytes is too small: the input, the pairs in \
                 flight and the smallest partitions need {needed} bytes"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// The serialized form of [`Tables`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct TablesConfig {
    blocks: usize,
    max_distance: u32,
}

#[cfg(feature = "serde")]
impl From<Tables> for TablesConfig {
    fn from(t: Tables) -> TablesConfig {
        TablesConfig { blocks: t.blocks(), max_distance: t.max_distance() }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<TablesConfig> for Tables {
    type Error = ConfigError;

    fn try_from(c: TablesConfig) -> Result<Tables, ConfigError> {
        Tables::new(c.blocks, c.max_distance)
    }
}

/// `C(n, r)`, saturating at `u128::MAX` (never reached for `n <= 64`).
pub(crate) fn binomial(n: u64, r: u64) -> u128 {
    let r = r.min(n - r.min(n));
    let mut acc: u128 = 1;
    for i in 0..r {
        acc = acc * u128::from(n - i) / u128::from(i + 1);
    }
    acc
}

/// The widths of `m` blocks covering 64 bits, as even as possible, wider blocks first
/// (`m = 6`: 11, 11, 11, 11, 10, 10). Block 0 holds the most significant bits.
pub(crate) fn block_widths(m: usize) -> Vec<u32> {
    let base = 64 / m as u32;
    let extra = 64 % m as u32;
    (0..m as u32).map(|i| base + u32::from(i < extra)).collect()
}

/// One permutation table: a choice of `blocks - max_distance` blocks moved to the front.
///
/// Any two fingerprints within the maximum distance agree on every bit of at least one
/// table's leading blocks (its *prefix*), so matching within one table means comparing only
/// fingerprints with equal prefixes. A pair can agree on the prefixes of several tables;
/// it is *owned* by the first of them (in the fixed order of [`Tables::iter`]) and
/// [`Table::owns_xor`] tells each table, on its own, whether a pair is its to report.
///
/// Permuting keeps Hamming distance: `permute(a) ^ permute(b)` has as many ones as `a ^ b`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    index: usize,
    prefix_blocks: u64,
    prefix_bits: u32,
    /// `(mask in the original value, left rotation)`: the masked bits never wrap around.
    moves: Box<[(u64, u32)]>,
    /// Masks (in permuted space) of the blocks that precede the last prefix block in block
    /// order but are not in the prefix: a pair is owned here only if it differs in each.
    must_differ: Box<[u64]>,
    /// The same blocks' masks in the original bit order.
    must_differ_original: Box<[u64]>,
    /// The prefix blocks' bits in the original bit order.
    prefix_mask: u64,
    /// The first prefix block: its offset from the most significant bit, and its width.
    first_block: (u32, u32),
}

impl Table {
    fn new(index: usize, widths: &[u32], chosen: &[usize]) -> Table {
        let m = widths.len();
        let starts: Vec<u32> = widths
            .iter()
            .scan(0u32, |acc, &w| {
                let s = *acc;
                *acc += w;
                Some(s)
            })
            .collect();
        let mut order: Vec<usize> = chosen.to_vec();
        order.extend((0..m).filter(|b| !chosen.contains(b)));
        let last_chosen = chosen.iter().copied().max().unwrap_or(0);

        let mut moves: Vec<(u64, u32)> = Vec::new();
        let mut must_differ = Vec::new();
        let mut must_differ_original = Vec::new();
        let mut prefix_mask = 0;
        let mut at = 0u32;
        for &b in &order {
            let w = widths[b];
            let mask = block_mask(starts[b], w);
            let shift = (starts[b] + 64 - at) % 64;
            match moves.iter_mut().find(|(_, s)| *s == shift) {
                Some((m, _)) => *m |= mask,
                None => moves.push((mask, shift)),
            }
            if b < last_chosen && !chosen.contains(&b) {
                must_differ.push(block_mask(at, w));
                must_differ_original.push(mask);
            }
            if chosen.contains(&b) {
                prefix_mask |= mask;
            }
            at += w;
        }
        Table {
            index,
            prefix_blocks: chosen.iter().fold(0, |acc, &b| acc | 1 << b),
            prefix_bits: chosen.iter().map(|&b| widths[b]).sum(),
            moves: moves.into(),
            must_differ: must_differ.into(),
            must_differ_original: must_differ_original.into(),
            prefix_mask,
            first_block: (starts[chosen[0]], widths[chosen[0]]),
        }
    }

    /// This table's position in [`Tables::iter`] order (the order that decides ownership).
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many bits the prefix has: the sum of the widths of the leading blocks.
    pub fn prefix_bits(&self) -> u32 {
        self.prefix_bits
    }

    /// The leading blocks as a bit set: bit `i` is set if block `i` (block 0 holds the most
    /// significant bits of a fingerprint) is part of the prefix.
    pub fn prefix_blocks(&self) -> u64 {
        self.prefix_blocks
    }

    /// The permuted value: the prefix blocks (in block order) in the most significant bits,
    /// then the other blocks in block order.
    #[inline]
    pub fn permute(&self, fp: Fingerprint) -> u64 {
        let mut out = 0;
        for &(mask, rotate) in &*self.moves {
            out |= (fp.0 & mask).rotate_left(rotate);
        }
        out
    }

    /// The prefix of a fingerprint: its leading blocks, as a number of
    /// [`prefix_bits`](Table::prefix_bits) bits.
    #[inline]
    pub fn prefix(&self, fp: Fingerprint) -> u64 {
        self.prefix_of_permuted(self.permute(fp))
    }

    /// The prefix of an already [permuted](Table::permute) value.
    #[inline]
    pub fn prefix_of_permuted(&self, permuted: u64) -> u64 {
        permuted >> (64 - self.prefix_bits)
    }

    /// The top `bits` bits of the permuted value, `bits <= prefix_bits`: with a shift and a
    /// mask when they all come from the first prefix block (the common case).
    #[inline(always)]
    pub(crate) fn top_bits(&self, fp: Fingerprint, bits: u32) -> usize {
        let (start, width) = self.first_block;
        if bits == 0 {
            0
        } else if bits <= width {
            ((fp.0 << start) >> (64 - bits)) as usize
        } else {
            (self.permute(fp) >> (64 - bits)) as usize
        }
    }

    /// Whether [`top_bits`](Table::top_bits)`(_, bits)` is the same function for `other` as
    /// for this table: both prefixes start with the same block, and `bits` lie within it.
    pub(crate) fn same_top_bits(&self, other: &Table, bits: u32) -> bool {
        self.first_block == other.first_block && bits <= self.first_block.1
    }

    /// The bits of this table's prefix blocks, in the original (unpermuted) bit order.
    pub fn prefix_mask(&self) -> u64 {
        self.prefix_mask
    }

    /// Whether this table owns the pair whose fingerprints XOR to `xor` (`a.0 ^ b.0`): the
    /// two share this table's prefix and no earlier table's prefix.
    #[inline]
    pub fn owns_xor(&self, xor: u64) -> bool {
        xor & self.prefix_mask == 0 && self.must_differ_original.iter().all(|&m| xor & m != 0)
    }

    /// Like [`owns_xor`](Table::owns_xor) for the XOR of two [permuted](Table::permute)
    /// values that already share this table's prefix.
    #[inline]
    pub(crate) fn owns_permuted_xor(&self, xor: u64) -> bool {
        self.must_differ.iter().all(|&m| xor & m != 0)
    }

    /// Whether this table reports the pair `(a, b)`: they share this table's prefix and no
    /// earlier table's. Every pair within the maximum distance is owned by exactly one table.
    pub fn owns(&self, a: Fingerprint, b: Fingerprint) -> bool {
        self.owns_xor(a.0 ^ b.0)
    }
}

fn block_mask(start_from_msb: u32, width: u32) -> u64 {
    let ones = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    ones << (64 - start_from_msb - width)
}

/// The full set of permutation tables for a number of blocks and a maximum distance.
///
/// With `m` blocks and maximum distance `k` there are `C(m, m - k)` tables. Any two
/// fingerprints within `k` bits differ in at most `k` blocks, so they agree on all blocks of
/// at least one table's prefix: matching is exact. More blocks mean longer prefixes (fewer
/// candidates to check) but more tables (more passes); [`plan`](crate::plan) picks `m`.
///
/// ```
/// use simhash_index::Tables;
///
/// let tables = Tables::new(6, 3)?;
/// assert_eq!(tables.len(), 20);
/// assert_eq!(tables.block_widths(), &[11, 11, 11, 11, 10, 10]);
/// assert!(Tables::new(3, 3).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// With the `serde` feature, tables serialize as their configuration,
/// `{"blocks": m, "max_distance": k}`, and are rebuilt (and checked) on the way in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(into = "TablesConfig", try_from = "TablesConfig"))]
pub struct Tables {
    max_distance: u32,
    widths: Box<[u32]>,
    list: Box<[Table]>,
}

impl Tables {
    /// Builds the tables for `blocks` blocks and `max_distance` bits.
    ///
    /// Errors if `blocks <= max_distance`, `blocks > 64`, `max_distance >= 64`, or the
    /// configuration needs more than [`MAX_TABLES`] tables.
    pub fn new(blocks: usize, max_distance: u32) -> Result<Tables, ConfigError> {
        if max_distance >= 64 {
            return Err(ConfigError::distance_too_large(max_distance));
        }
        if blocks > 64 {
            return Err(ConfigError::new(Repr::TooManyBlocks { blocks }));
        }
        if blocks <= max_distance as usize {
            return Err(ConfigError::new(Repr::TooFewBlocks { blocks, max_distance }));
        }
        let keep = blocks - max_distance as usize;
        let count = binomial(blocks as u64, keep as u64);
        if count > u128::from(MAX_TABLES) {
            return Err(ConfigError::new(Repr::TooManyTables {
                blocks,
                max_distance,
                tables: count,
            }));
        }
        let widths = block_widths(blocks);
        let mut tables = Vec::with_capacity(count as usize);
        // Combinations in lexicographic order: the ownership rule depends on it.
        let mut chosen: Vec<usize> = (0..keep).collect();
        loop {
            tables.push(Table::new(tables.len(), &widths, &chosen));
            let Some(i) = (0..keep).rev().find(|&i| chosen[i] < blocks - keep + i) else {
                break;
            };
            chosen[i] += 1;
            for j in i + 1..keep {
                chosen[j] = chosen[j - 1] + 1;
            }
        }
        Ok(Tables { max_distance, widths: widths.into(), list: tables.into() })
    }

    /// The maximum distance `k`: pairs with at most this many differing bits match.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// The number of blocks `m`.
    pub fn blocks(&self) -> usize {
        self.widths.len()
    }

    /// The width in bits of each block, block 0 (the most significant bits) first.
    pub fn block_widths(&self) -> &[u32] {
        &self.widths
    }

    /// The number of tables, `C(m, m - k)`.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Always false: there is at least one table.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The tables in their fixed order, which decides which table owns a pair.
    pub fn iter(&self) -> std::slice::Iter<'_, Table> {
        self.list.iter()
    }

    pub(crate) fn as_slice(&self) -> &[Table] {
        &self.list
    }

    /// The table at `index`, if any.
    pub fn get(&self, index: usize) -> Option<&Table> {
        self.list.get(index)
    }

    /// The shortest prefix over all tables, in bits.
    pub fn min_prefix_bits(&self) -> u32 {
        self.list.iter().map(Table::prefix_bits).min().unwrap_or(64)
    }

    /// The table that owns the pair `(a, b)`, or `None` if they are more than
    /// [`max_distance`](Tables::max_distance) apart.
    pub fn owner(&self, a: Fingerprint, b: Fingerprint) -> Option<&Table> {
        if a.distance(b) > self.max_distance {
            return None;
        }
        self.list.iter().find(|t| t.prefix(a) == t.prefix(b))
    }
}

impl<'a> IntoIterator for &'a Tables {
    type Item = &'a Table;
    type IntoIter = std::slice::Iter<'a, Table>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! widths {
        ($($m:expr => $w:expr),* $(,)?) => {$(
            assert_eq!(block_widths($m), $w, "m = {}", $m);
        )*};
    }

    #[test]
    fn widths_are_even() {
        widths! {
            1 => vec![64],
            4 => vec![16, 16, 16, 16],
            5 => vec![13, 13, 13, 13, 12],
            6 => vec![11, 11, 11, 11, 10, 10],
            7 => vec![10, 9, 9, 9, 9, 9, 9],
        }
        assert_eq!(block_widths(64), vec![1; 64]);
    }

    #[test]
    fn errors() {
        let cases: &[(usize, u32, &str)] = &[
            (3, 3, "blocks (3) must be greater than the maximum distance (3)"),
            (0, 0, "blocks (0) must be greater than the maximum distance (0)"),
            (65, 3, "blocks (65) must be at most 64"),
            (64, 64, "maximum distance (64) must be less than 64"),
            (
                32,
                16,
                "32 blocks at distance 16 need 601080390 tables, more than the limit of 16384",
            ),
            (17, 8, "17 blocks at distance 8 need 24310 tables, more than the limit of 16384"),
        ];
        for &(m, k, msg) in cases {
            assert_eq!(Tables::new(m, k).unwrap_err().to_string(), msg);
        }
        assert!(Tables::new(64, 63).is_ok());
        assert!(Tables::new(1, 0).is_ok());
        assert_eq!(Tables::new(16, 8).unwrap().len(), 12870);
    }

    #[test]
    fn table_counts_and_order() {
        let t = Tables::new(6, 3).unwrap();
        assert_eq!(t.len(), 20);
        let blocks: Vec<u64> = t.iter().map(Table::prefix_blocks).collect();
        assert_eq!(&blocks[..4], &[0b000111, 0b001011, 0b010011, 0b100011]);
        assert_eq!(t.iter().map(Table::prefix_bits).min(), Some(31));
        assert_eq!(t.iter().map(Table::prefix_bits).max(), Some(33));
        assert_eq!(Tables::new(64, 0).unwrap().len(), 1);
    }

    #[test]
    fn permutation_is_a_bijection_on_bits() {
        for (m, k) in [(4, 3), (6, 3), (7, 2), (10, 6), (64, 62), (1, 0)] {
            let tables = Tables::new(m, k).unwrap();
            for t in &tables {
                let mut seen = 0u64;
                for bit in 0..64 {
                    let p = t.permute(Fingerprint(1 << bit));
                    assert_eq!(p.count_ones(), 1);
                    seen |= p;
                }
                assert_eq!(seen, u64::MAX);
                // The prefix is the chosen blocks, in block order.
                let widths = tables.block_widths();
                let mut expect = 0u64;
                let mut start = 0;
                for (b, &w) in widths.iter().enumerate() {
                    if t.prefix_blocks() >> b & 1 == 1 {
                        let v = (0x0123_4567_89ab_cdef_u64 >> (64 - start - w))
                            & (u64::MAX >> (64 - w));
                        expect = expect.checked_shl(w).unwrap_or(0) | v;
                    }
                    start += w;
                }
                assert_eq!(t.prefix(Fingerprint(0x0123_4567_89ab_cdef)), expect);
                for bits in 0..=t.prefix_bits() {
                    let fp = Fingerprint(0xfedc_ba98_7654_3210);
                    let top = t.permute(fp).checked_shr(64 - bits).unwrap_or(0);
                    assert_eq!(t.top_bits(fp, bits), top as usize, "bits = {bits}");
                }
            }
        }
    }

    #[test]
    fn exactly_one_owner() {
        let tables = Tables::new(6, 3).unwrap();
        let a = Fingerprint(0xdead_beef_0bad_f00d);
        for flips in [0u64, 1, 1 << 63 | 1, 0b111 << 30, 1 << 63 | 1 << 40 | 1 << 20] {
            let b = Fingerprint(a.0 ^ flips);
            let owners = tables.iter().filter(|t| t.owns(a, b)).count();
            assert_eq!(owners, 1, "flips {flips:#x}");
            for t in &tables {
                let (pa, pb) = (t.permute(a), t.permute(b));
                let same = t.prefix_of_permuted(pa) == t.prefix_of_permuted(pb);
                assert_eq!(t.owns(a, b), same && t.owns_permuted_xor(pa ^ pb));
            }
            assert_eq!(
                tables.owner(a, b).map(Table::index),
                tables.iter().position(|t| t.owns(a, b))
            );
        }
    }
}
