//! Feature hashes: Bob Jenkins' lookup3 (simhash-cpp's and the fork's), MD5 for simhash-py,
//! and the fixed-seed xxh3 of the default preset.

/// Bob Jenkins' lookup3 `hashlittle2` as `simhash-cpp` uses it: a 64-bit hash of `bytes`.
///
/// The two 32-bit in/out words start as `pc = seed >> 32` and `pb = seed & 0xffff_ffff`;
/// the result is `(c << 32) | b`. Little-endian reads on every platform, so the value is
/// the same everywhere. The empty input hashes to `0xdeadbeefdeadbeef` with seed 0.
///
/// ```
/// assert_eq!(simhash_core::jenkins64(b"hello", 0), 0x34cbbc6e5c04b779);
/// ```
pub fn jenkins64(bytes: &[u8], seed: u64) -> u64 {
    #[inline(always)]
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    #[inline(always)]
    fn word(bytes: &[u8]) -> u32 {
        // Little-endian, zero-padded: lookup3's tail handling.
        let mut w = [0u8; 4];
        w[..bytes.len()].copy_from_slice(bytes);
        u32::from_le_bytes(w)
    }

    let pc = (seed >> 32) as u32;
    let pb = seed as u32;
    // lookup3 mixes the length in as a 32-bit value.
    let init = 0xdead_beef_u32.wrapping_add(bytes.len() as u32).wrapping_add(pc);
    let (mut a, mut b, mut c) = (init, init, init.wrapping_add(pb));

    let mut rest = bytes;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        // "Zero length strings require no mixing."
        return (u64::from(c) << 32) | u64::from(b);
    }
    let n = rest.len();
    a = a.wrapping_add(word(&rest[..n.min(4)]));
    if n > 4 {
        b = b.wrapping_add(word(&rest[4..n.min(8)]));
    }
    if n > 8 {
        c = c.wrapping_add(word(&rest[8..n]));
    }
    last(&mut a, &mut b, &mut c);
    (u64::from(c) << 32) | u64::from(b)
}

/// lookup3's `final`: the last mix of a hash's three words.
#[inline(always)]
fn last(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// [`last`] on eight independent lanes, one step at a time across all lanes (the shape the
/// compiler vectorises).
#[inline(always)]
fn last_lanes(a: &mut [u32; 8], b: &mut [u32; 8], c: &mut [u32; 8]) {
    #[inline(always)]
    fn step(x: &mut [u32; 8], y: &[u32; 8], r: u32) {
        for (x, y) in x.iter_mut().zip(y) {
            *x = (*x ^ y).wrapping_sub(y.rotate_left(r));
        }
    }
    step(c, b, 14);
    step(a, c, 11);
    step(b, a, 25);
    step(c, b, 16);
    step(a, c, 4);
    step(b, a, 14);
    step(c, b, 24);
}

/// `f(jenkins64(&bytes[o..o + w], 0))` for each offset `o` in `0..count`, in order: the
/// hashes of the byte `w`-grams of `bytes`, as the `fork` preset takes them.
///
/// For `w` up to 12 (one lookup3 block, no mixing loop) each gram is read from the text as
/// one 16-byte little-endian load, masked to `w` bytes, and eight grams are finished at once
/// (independent lanes the compiler can interleave or vectorise). Longer grams take
/// [`jenkins64`] one by one.
///
/// # Panics
///
/// If `count > 0` and `count - 1 + w > bytes.len()`.
#[inline]
pub(crate) fn jenkins64_grams(bytes: &[u8], w: usize, count: usize, mut f: impl FnMut(u64)) {
    const LANES: usize = 8;
    if count == 0 {
        return;
    }
    assert!(count - 1 + w <= bytes.len(), "grams past the end of the text");
    if !(1..=12).contains(&w) {
        for o in 0..count {
            f(jenkins64(&bytes[o..o + w], 0));
        }
        return;
    }
    let mask = u128::MAX >> (128 - 8 * w);
    // lookup3's start with seed 0 and length w; the zero padding adds nothing to b and c
    // when the gram is shorter than 5 or 9 bytes, as lookup3 skips them.
    let init = 0xdead_beef_u32.wrapping_add(w as u32);
    let load = |o: usize| -> u128 {
        let chunk: [u8; 16] = bytes[o..o + 16].try_into().expect("16 bytes");
        u128::from_le_bytes(chunk) & mask
    };
    let finish = |x: u128| -> u64 {
        let (mut a, mut b, mut c) = (
            init.wrapping_add(x as u32),
            init.wrapping_add((x >> 32) as u32),
            init.wrapping_add((x >> 64) as u32),
        );
        last(&mut a, &mut b, &mut c);
        (u64::from(c) << 32) | u64::from(b)
    };
    // Grams whose 16-byte load stays inside the text.
    let loadable = count.min(bytes.len().saturating_sub(15));
    let mut o = 0;
    while o + LANES <= loadable {
        let mut a = [0u32; LANES];
        let mut b = [0u32; LANES];
        let mut c = [0u32; LANES];
        for l in 0..LANES {
            let x = load(o + l);
            a[l] = init.wrapping_add(x as u32);
            b[l] = init.wrapping_add((x >> 32) as u32);
            c[l] = init.wrapping_add((x >> 64) as u32);
        }
        last_lanes(&mut a, &mut b, &mut c);
        for l in 0..LANES {
            f((u64::from(c[l]) << 32) | u64::from(b[l]));
        }
        o += LANES;
    }
    for o in o..loadable {
        f(finish(load(o)));
    }
    for o in loadable..count {
        let mut chunk = [0u8; 16];
        chunk[..w].copy_from_slice(&bytes[o..o + w]);
        f(finish(u128::from_le_bytes(chunk)));
    }
}

/// simhash-py's `unsigned_hash`: the first 8 bytes of MD5(`bytes`), read big-endian.
///
/// ```
/// assert_eq!(simhash_core::unsigned_hash(b""), 0xd41d8cd98f00b204);
/// ```
pub fn unsigned_hash(bytes: &[u8]) -> u64 {
    let digest = md5(bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// MD5 (RFC 1321). Only simhash-py compatibility needs it, so it is kept small and private.
fn md5(input: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    const K: [u32; 64] = [
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
        0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
        0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
        0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
        0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
        0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
        0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
        0xeb86d391,
    ];
    let mut state: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
    let mut block = |chunk: &[u8]| {
        let mut m = [0u32; 16];
        for (i, w) in m.iter_mut().enumerate() {
            *w = u32::from_le_bytes([
                chunk[4 * i],
                chunk[4 * i + 1],
                chunk[4 * i + 2],
                chunk[4 * i + 3],
            ]);
        }
        let [mut a, mut b, mut c, mut d] = state;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(K[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        state[0] = state[0].wrapping_add(a);
        state[1] = state[1].wrapping_add(b);
        state[2] = state[2].wrapping_add(c);
        state[3] = state[3].wrapping_add(d);
    };
    let mut chunks = input.chunks_exact(64);
    for chunk in &mut chunks {
        block(chunk);
    }
    let tail = chunks.remainder();
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let len = if tail.len() < 56 { 64 } else { 128 };
    let bits = (input.len() as u64).wrapping_mul(8);
    last[len - 8..len].copy_from_slice(&bits.to_le_bytes());
    for chunk in last[..len].chunks_exact(64) {
        block(chunk);
    }
    let mut out = [0u8; 16];
    for (i, w) in state.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// The fixed seed of the default preset's token hash. Part of the stability contract.
pub(crate) const TOKEN_SEED: u64 = 0x5348_4153_485f_7631; // "SHASH_v1"

/// The default preset's token hash: xxh3-64 of the normalised token's UTF-8 bytes.
#[inline]
pub(crate) fn xxh3(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(bytes, TOKEN_SEED)
}

/// Multiplies as 128 bits and folds the halves together (the mixing step of wyhash/xxh3).
#[inline(always)]
pub(crate) fn folded_multiply(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jenkins_reference_vectors() {
        // From ../shared/reference/components.tsv (values printed by simhash-cpp).
        let cases: &[(&str, u64, u64)] = &[
            ("", 0, 0xdeadbeefdeadbeef),
            ("a", 0, 0x58d68708582647ac),
            ("hello", 0, 0x34cbbc6e5c04b779),
            ("world", 0, 0x6ca6d4b960d76c2c),
            ("abcdefghijkl", 0, 0x4012f87b75b50ec0),
            ("abcdefghijklm", 0, 0x928128f90f04ab68),
            ("The quick brown fox", 0, 0x9b1d27523edbd698),
            ("naïve", 0, 0x83086ac7c1f0394e),
            ("hello", 0x0123456789abcdef, 0x002e794e82c0cd12),
        ];
        for &(input, seed, want) in cases {
            assert_eq!(jenkins64(input.as_bytes(), seed), want, "{input:?} seed {seed:#x}");
        }
    }

    #[test]
    fn unsigned_hash_reference_vectors() {
        assert_eq!(unsigned_hash(b""), 0xd41d8cd98f00b204);
        assert_eq!(unsigned_hash(b"hello"), 0x5d41402abc4b2a76);
        assert_eq!(unsigned_hash(b"abcd"), 0xe2fc714c4727ee93);
    }

    #[test]
    fn md5_rfc1321_vectors() {
        fn hex(d: [u8; 16]) -> String {
            use std::fmt::Write;
            d.iter().fold(String::new(), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            })
        }
        let cases = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            (
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(hex(md5(input.as_bytes())), want, "{input:?}");
        }
        // Lengths around the padding boundary (55, 56, 63, 64 bytes) must not panic and must
        // differ from each other.
        let digests: Vec<_> = [55, 56, 63, 64, 65].iter().map(|&n| md5(&vec![b'x'; n])).collect();
        for i in 0..digests.len() {
            for j in i + 1..digests.len() {
                assert_ne!(digests[i], digests[j]);
            }
        }
    }

    #[test]
    fn jenkins_every_tail_length() {
        // Every tail length 0..=12 plus a full block; all distinct.
        let data = b"abcdefghijklmnopqrstuvwxyz";
        let mut seen = std::collections::HashSet::new();
        for n in 0..=data.len() {
            assert!(seen.insert(jenkins64(&data[..n], 0)), "collision at length {n}");
        }
    }
}
