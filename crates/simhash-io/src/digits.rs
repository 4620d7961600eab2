//! A fast reader for the well-formed hashes of the hash inputs: decimal digits taken eight
//! at a time, or `0x` hex, straight from the line's bytes (no UTF-8 pass, no trimming).
//! It accepts only what [`Fingerprint::from_decimal`](simhash_core::Fingerprint::from_decimal)
//! reads to the same value; for anything else it returns `None` and the caller falls back
//! to the full parser, which gives the messages.

/// The value of `s` when it is 1 to 20 ASCII decimal digits within `u64`, or `0x`/`0X`
/// followed by 1 to 16 hex digits; `None` otherwise (signs, spaces, a byte-order mark,
/// overflow, empty), where [`Fingerprint::from_decimal`](simhash_core::Fingerprint::from_decimal)
/// decides.
///
/// ```
/// use simhash_io::parse_u64_fast;
///
/// assert_eq!(parse_u64_fast(b"18446744073709551615"), Some(u64::MAX));
/// assert_eq!(parse_u64_fast(b"0xFf"), Some(255));
/// assert_eq!(parse_u64_fast(b"18446744073709551616"), None);
/// assert_eq!(parse_u64_fast(b" 1"), None);
/// ```
#[inline]
pub fn parse_u64_fast(s: &[u8]) -> Option<u64> {
    match s {
        [b'0', b'x' | b'X', hex @ ..] => parse_hex(hex),
        _ => parse_decimal(s),
    }
}

#[inline]
fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut chunks = s.chunks_exact(8);
    let mut value: u64 = 0;
    // At most two chunks: 16 digits stay below 10^16, no overflow.
    for chunk in chunks.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        value = value * 100_000_000 + eight_digits(word)?;
    }
    let rest = chunks.remainder();
    if s.len() < 20 {
        for &b in rest {
            value = value * 10 + digit(b)?;
        }
        return Some(value);
    }
    for &b in rest {
        value = value.checked_mul(10)?.checked_add(digit(b)?)?;
    }
    Some(value)
}

#[inline]
fn digit(b: u8) -> Option<u64> {
    let d = b.wrapping_sub(b'0');
    (d < 10).then_some(u64::from(d))
}

/// The value of eight ASCII digits read little-endian (the first digit in the low byte),
/// or `None` when any byte is not a digit.
#[inline]
fn eight_digits(word: u64) -> Option<u64> {
    const LOW: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    // Every byte is 0x30..=0x39: its high nibble is 3, and adding 6 does not carry into it.
    let high = word & 0xf0f0_f0f0_f0f0_f0f0;
    let carried = word.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0;
    if high != 0x3030_3030_3030_3030 || carried != 0x3030_3030_3030_3030 {
        return None;
    }
    let mut v = word & LOW;
    v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
    v = (v * 10_000 + (v >> 32)) & 0xffff_ffff;
    Some(v)
}

/// Each byte's value as a hex digit, or 0xff when it is not one.
static HEX: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => 0xff,
        };
        b += 1;
    }
    table
};

#[inline]
fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut value: u64 = 0;
    // Any byte that is not a digit sets bits above the low four in `bad`: one test at the
    // end instead of a branch per byte.
    let mut bad = 0u8;
    for &b in s {
        let d = HEX[usize::from(b)];
        bad |= d;
        value = (value << 4) | u64::from(d & 0x0f);
    }
    (bad < 0x10).then_some(value)
}

/// The value of the line of 1 to 19 decimal digits that starts `s` and ends at a `\n`,
/// and the bytes it takes with its `\n`; `None` for any other line, and when fewer than
/// eight bytes follow the digits' start (the caller then reads the line the general way).
/// The digits are found eight bytes at a time, without looking for the line's end first.
#[inline]
pub(crate) fn decimal_line(s: &[u8]) -> Option<(u64, usize)> {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    let mut n = 0;
    loop {
        let word = u64::from_le_bytes(s.get(n..n + 8)?.try_into().ok()?);
        let t = word ^ ZEROS;
        // A byte's high bit is set unless the byte is a digit: above 0x7f, or at least 10
        // once its digit offset is taken away (no carry between bytes: at most 0x7f + 0x76).
        let other =
            (((t & 0x7f7f_7f7f_7f7f_7f7f) + 0x7676_7676_7676_7676) | t) & 0x8080_8080_8080_8080;
        if other != 0 {
            n += (other.trailing_zeros() / 8) as usize;
            break;
        }
        n += 8;
        if n > 19 {
            return None;
        }
    }
    if n == 0 || n > 19 || s[n] != b'\n' {
        return None;
    }
    // At most 19 digits: below 10^19, no overflow.
    let digits = &s[..n];
    let mut value: u64 = 0;
    let mut chunks = digits.chunks_exact(8);
    for chunk in chunks.by_ref() {
        value = value * 100_000_000 + eight_digits(u64::from_le_bytes(chunk.try_into().ok()?))?;
    }
    for &b in chunks.remainder() {
        value = value * 10 + u64::from(b - b'0');
    }
    Some((value, n + 1))
}

#[cfg(test)]
mod tests {
    use simhash_core::Fingerprint;

    use super::*;

    /// The fast reader agrees with `from_decimal` wherever it answers, and answers wherever
    /// `from_decimal` reads a number, bar decimals longer than 20 digits (leading zeros),
    /// which it leaves to the full parser.
    fn check(s: &[u8]) {
        let slow = std::str::from_utf8(s).ok().map(Fingerprint::from_decimal);
        let fast = parse_u64_fast(s).map(|v| Ok(Fingerprint(v)));
        if fast.is_some() || (matches!(slow, Some(Ok(_))) && s.len() <= 20) {
            assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(s));
        }
    }

    use crate::test_rng::Rng;

    #[test]
    fn edges_agree_with_from_decimal() {
        let fixed: &[&[u8]] = &[
            b"",
            b"0",
            b"00000000000000000000",
            b"000000000000000000000",
            b"18446744073709551615",
            b"18446744073709551616",
            b"99999999999999999999",
            b"018446744073709551615",
            b"+1",
            b"-1",
            b"-0",
            b" 1",
            b"1 ",
            b"\t1",
            b"1\r",
            b"\xef\xbb\xbf1",
            b"0x",
            b"0X",
            b"0xffffffffffffffff",
            b"0x10000000000000000",
            b"0x0000000000000000f",
            b"0xg",
            b"0x-1",
            b"0x+1",
            b"x1",
            b"1x",
            b"12345678/",
            b"1234567:",
            b"\xff",
            b"\xff1234567",
            b"1234567\x80",
        ];
        for s in fixed {
            check(s);
        }
        assert_eq!(parse_u64_fast(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64_fast(b"18446744073709551616"), None);
        assert_eq!(parse_u64_fast(b"0xffffffffffffffff"), Some(u64::MAX));
        assert_eq!(parse_u64_fast(b"00000000000000000007"), Some(7));
    }

    #[test]
    fn every_length_agrees_with_from_decimal() {
        let mut rng = Rng(17);
        // Every length 0..=21 digits, each digit position at its extremes and at random,
        // and every byte value put at every position of a valid number.
        for len in 0..=21 {
            for fill in [b'0', b'9', b'1'] {
                check(&vec![fill; len]);
            }
            for _ in 0..200 {
                let s: Vec<u8> = (0..len).map(|_| b'0' + rng.below(10) as u8).collect();
                check(&s);
            }
            let base: Vec<u8> = (0..len).map(|_| b'0' + rng.below(10) as u8).collect();
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut s = base.clone();
                    s[at] = byte;
                    check(&s);
                }
            }
        }
        // Around u64::MAX and every power of ten.
        for v in [u64::MAX, u64::MAX - 1, 0, 1]
            .into_iter()
            .chain((0..20).map(|p| 10u64.pow(p)))
            .chain((0..20).map(|p| 10u64.pow(p) - 1))
        {
            let s = v.to_string();
            check(s.as_bytes());
            assert_eq!(parse_u64_fast(s.as_bytes()), Some(v));
            check(format!("{}", u128::from(v) + 1).as_bytes());
            check(format!("0{s}").as_bytes());
            check(format!("+{s}").as_bytes());
            check(format!("-{s}").as_bytes());
            check(format!("{s} ").as_bytes());
            check(format!("{s}\t").as_bytes());
            check(format!("0x{v:x}").as_bytes());
            check(format!("0X{v:X}").as_bytes());
            check(format!("0x0{v:x}").as_bytes());
        }
        for v in [u128::from(u64::MAX) + 1, u128::from(u64::MAX) * 5, u128::MAX] {
            check(v.to_string().as_bytes());
        }
    }

    /// `decimal_line` reads a line as `parse_u64_fast` reads it whenever it answers.
    fn check_line(s: &[u8]) {
        if let Some((v, used)) = decimal_line(s) {
            assert_eq!(s[used - 1], b'\n', "{s:?}");
            assert_eq!(parse_u64_fast(&s[..used - 1]), Some(v), "{s:?}");
            assert!(used <= 20, "{s:?}");
        } else if let Some(end) = s.iter().position(|&b| b == b'\n') {
            // It may decline only lines of 20 digits or more, lines that are not digits
            // alone, and lines with fewer than eight bytes after them.
            let digits = s[..end].iter().all(u8::is_ascii_digit);
            assert!(!digits || end == 0 || end > 19 || s.len() < end / 8 * 8 + 8, "{s:?}");
        }
    }

    #[test]
    fn decimal_lines_agree_with_parse_u64_fast() {
        let mut rng = Rng(3);
        let alphabet = b"0123456789\n\r \t+-x/:\x80\xff";
        for _ in 0..300_000 {
            let len = rng.below(30);
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    if rng.below(3) == 0 {
                        alphabet[rng.below(alphabet.len())]
                    } else {
                        b'0' + rng.below(10) as u8
                    }
                })
                .collect();
            check_line(&s);
        }
        for v in [0, 1, 9, 10, u64::MAX / 10, 10u64.pow(18), 10u64.pow(19) - 1, 10u64.pow(19)] {
            for tail in ["\n", "\nxxxxxxxx", "\r\n", "\n12345678\n", ""] {
                let s = format!("{v}{tail}");
                check_line(s.as_bytes());
                check_line(format!("0{s}").as_bytes());
            }
        }
        assert_eq!(decimal_line(b"12345678\n1234567"), Some((12_345_678, 9)));
        assert_eq!(decimal_line(b"12345678\n"), None, "short: left to the general path");
        assert_eq!(decimal_line(b"1\n2345678"), Some((1, 2)));
        assert_eq!(decimal_line(b"1\n"), None, "short: left to the general path");
        assert_eq!(decimal_line(b"18446744073709551615\n"), None, "20 digits");
    }

    #[test]
    fn random_lines_agree_with_from_decimal() {
        let mut rng = Rng(99);
        let alphabet = b"0123456789abcdefABCDEFxX+- \t\r/:\xef\xbb\xbf\x80";
        for _ in 0..200_000 {
            let len = rng.below(24);
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    if rng.below(4) == 0 {
                        alphabet[rng.below(alphabet.len())]
                    } else {
                        b'0' + rng.below(10) as u8
                    }
                })
                .collect();
            check(&s);
            let v = rng.next() >> rng.below(64);
            assert_eq!(parse_u64_fast(v.to_string().as_bytes()), Some(v));
            assert_eq!(parse_u64_fast(format!("0x{v:x}").as_bytes()), Some(v));
        }
    }
}
