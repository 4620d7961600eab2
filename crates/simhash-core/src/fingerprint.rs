//! The [`Fingerprint`] newtype and its parsing.

use std::fmt;
use std::str::FromStr;

/// A 64-bit simhash fingerprint.
///
/// Two fingerprints of similar texts differ in few bits; [`Fingerprint::distance`] counts them.
///
/// # Text forms
///
/// The wire format is hex: [`Display`](fmt::Display) prints 16 lowercase hex digits with no
/// prefix (`{:#}` adds a `0x` prefix), and [`FromStr`] reads it back: 1 to 16 hex digits,
/// with an optional `0x`/`0X` prefix, so `to_string().parse()` and `format!("{fp:#}").parse()`
/// both round-trip. The other readers say what they read:
///
/// * [`Fingerprint::from_hex`]: 1 to 16 hex digits, no prefix.
/// * [`Fingerprint::from_decimal`]: a decimal `u64`, the form `simhash-cpp` prints and its
///   `find-all` reads (a `0x`/`0X` prefix switches to hex, as those tools accept).
///
/// ```
/// use simhash_core::Fingerprint;
///
/// let a: Fingerprint = "00000000000000ff".parse()?;
/// assert_eq!(a, Fingerprint(255));
/// assert_eq!(a.to_string(), "00000000000000ff");
/// assert_eq!(format!("{a:#}"), "0x00000000000000ff");
/// assert_eq!("0xff".parse::<Fingerprint>()?, a);
/// assert_eq!(Fingerprint(0x100).to_string().parse::<Fingerprint>()?, Fingerprint(0x100));
/// assert_eq!(Fingerprint::from_decimal("255")?, a);
/// assert_eq!(a.distance(Fingerprint::from(0x0f)), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Fingerprint(pub u64);

impl Fingerprint {
    /// The Hamming distance: how many of the 64 bits differ (`popcount(a ^ b)`), 0 to 64.
    #[inline]
    pub const fn distance(self, other: Fingerprint) -> u32 {
        (self.0 ^ other.0).count_ones()
    }

    /// The raw 64-bit value.
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }

    /// Parses 1 to 16 hex digits with no prefix (the [`Display`](fmt::Display) form).
    pub fn from_hex(s: &str) -> Result<Fingerprint, ParseFingerprintError> {
        parse_hex_digits(s, s, HEX_EXPECTED)
    }

    /// Parses a decimal `u64`, the form `simhash-cpp` prints and reads; a `0x`/`0X` prefix
    /// switches to 1 to 16 hex digits, as simhash-cpp's tools accept. Surrounding whitespace
    /// is an error.
    ///
    /// ```
    /// use simhash_core::Fingerprint;
    ///
    /// assert_eq!(Fingerprint::from_decimal("18446744073709551615")?, Fingerprint(u64::MAX));
    /// assert_eq!(Fingerprint::from_decimal("0x10")?, Fingerprint(16));
    /// assert!(Fingerprint::from_decimal("ff").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_decimal(s: &str) -> Result<Fingerprint, ParseFingerprintError> {
        if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            return parse_hex_digits(hex, s, DECIMAL_EXPECTED);
        }
        if s.is_empty() {
            return Err(ParseFingerprintError::new(s, Repr::Empty));
        }
        if !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseFingerprintError::new(s, Repr::InvalidDigit(DECIMAL_EXPECTED)));
        }
        s.parse::<u64>()
            .map(Fingerprint)
            .map_err(|_| ParseFingerprintError::new(s, Repr::OutOfRange))
    }
}

/// What the decimal reader names in its invalid-digit message.
const DECIMAL_EXPECTED: &str = "a decimal u64 or 0x-prefixed hex";
/// What the hex readers name in their invalid-digit message.
const HEX_EXPECTED: &str = "1 to 16 hex digits";

impl From<u64> for Fingerprint {
    #[inline]
    fn from(v: u64) -> Fingerprint {
        Fingerprint(v)
    }
}

impl From<Fingerprint> for u64 {
    #[inline]
    fn from(f: Fingerprint) -> u64 {
        f.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() { write!(f, "0x{:016x}", self.0) } else { write!(f, "{:016x}", self.0) }
    }
}

impl fmt::LowerHex for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

impl FromStr for Fingerprint {
    type Err = ParseFingerprintError;

    /// The wire format: 1 to 16 hex digits, with an optional `0x`/`0X` prefix. Surrounding
    /// whitespace is an error. For decimal input use [`Fingerprint::from_decimal`].
    fn from_str(s: &str) -> Result<Fingerprint, ParseFingerprintError> {
        let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")).unwrap_or(s);
        parse_hex_digits(digits, s, HEX_EXPECTED)
    }
}

fn parse_hex_digits(
    digits: &str,
    whole: &str,
    expected: &'static str,
) -> Result<Fingerprint, ParseFingerprintError> {
    if digits.is_empty() {
        return Err(ParseFingerprintError::new(whole, Repr::Empty));
    }
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ParseFingerprintError::new(whole, Repr::InvalidDigit(expected)));
    }
    if digits.len() > 16 {
        return Err(ParseFingerprintError::new(whole, Repr::OutOfRange));
    }
    u64::from_str_radix(digits, 16)
        .map(Fingerprint)
        .map_err(|_| ParseFingerprintError::new(whole, Repr::OutOfRange))
}

/// The error returned when text is not a fingerprint; [`kind`](Self::kind) says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseFingerprintError {
    input: Box<str>,
    repr: Repr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Repr {
    Empty,
    /// With what the reader expected, for the message.
    InvalidDigit(&'static str),
    OutOfRange,
}

/// Why text is not a fingerprint; see [`ParseFingerprintError::kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseFingerprintErrorKind {
    /// The text (after any `0x` prefix) is empty.
    Empty,
    /// A character is not a digit of the expected base (this includes signs and spaces).
    InvalidDigit,
    /// The value does not fit in 64 bits.
    OutOfRange,
}

impl ParseFingerprintError {
    fn new(input: &str, repr: Repr) -> ParseFingerprintError {
        // Keep error values small even when a whole line was passed in by mistake.
        let shown: String = input.chars().take(40).collect();
        ParseFingerprintError { input: shown.into_boxed_str(), repr }
    }

    /// Why the text is not a fingerprint.
    pub fn kind(&self) -> ParseFingerprintErrorKind {
        match self.repr {
            Repr::Empty => ParseFingerprintErrorKind::Empty,
            Repr::InvalidDigit(_) => ParseFingerprintErrorKind::InvalidDigit,
            Repr::OutOfRange => ParseFingerprintErrorKind::OutOfRange,
        }
    }
}

impl fmt::Display for ParseFingerprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.repr {
            Repr::Empty => write!(f, "empty fingerprint")?,
            Repr::InvalidDigit(expected) => write!(f, "invalid fingerprint (expected {expected})")?,
            Repr::OutOfRange => write!(f, "fingerprint out of range (more than 64 bits)")?,
        }
        write!(f, ": {:?}", self.input)
    }
}

impl std::error::Error for ParseFingerprintError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_is_popcount_of_xor() {
        let a = Fingerprint(0);
        assert_eq!(a.distance(Fingerprint(u64::MAX)), 64);
        assert_eq!(a.distance(a), 0);
        assert_eq!(Fingerprint(0b1011).distance(Fingerprint(0b0110)), 3);
    }

    #[test]
    fn display_and_parse_round_trip() {
        for v in [0, 1, 255, 0x100, 0xdead_beef, u64::MAX, 1 << 63] {
            let f = Fingerprint(v);
            assert_eq!(f.to_string().len(), 16);
            assert_eq!(f.to_string().parse(), Ok(f));
            assert_eq!(Fingerprint::from_hex(&f.to_string()), Ok(f));
            assert_eq!(format!("{f:#}").parse(), Ok(f));
            assert_eq!(Fingerprint::from_decimal(&v.to_string()), Ok(f));
            assert_eq!(Fingerprint::from_decimal(&format!("{f:#}")), Ok(f));
        }
        assert_eq!("100".parse(), Ok(Fingerprint(0x100)));
    }

    proptest::proptest! {
        #[test]
        fn every_value_round_trips(v: u64) {
            let f = Fingerprint(v);
            proptest::prop_assert_eq!(f.to_string().parse(), Ok(f));
            proptest::prop_assert_eq!(format!("{f:#}").parse(), Ok(f));
            proptest::prop_assert_eq!(format!("{v:x}").parse(), Ok(f));
            proptest::prop_assert_eq!(format!("0X{v:X}").parse(), Ok(f));
            proptest::prop_assert_eq!(Fingerprint::from_decimal(&v.to_string()), Ok(f));
        }
    }

    #[test]
    fn parse_accepts_hex_with_or_without_prefix() {
        assert_eq!("ffffffffffffffff".parse(), Ok(Fingerprint(u64::MAX)));
        assert_eq!("0XFF".parse(), Ok(Fingerprint(255)));
        assert_eq!("0x0".parse(), Ok(Fingerprint(0)));
        assert_eq!("007".parse(), Ok(Fingerprint(7)));
        assert_eq!("Ab".parse(), Ok(Fingerprint(0xab)));
    }

    #[test]
    fn from_decimal_accepts_decimal_and_prefixed_hex() {
        assert_eq!(Fingerprint::from_decimal("18446744073709551615"), Ok(Fingerprint(u64::MAX)));
        assert_eq!(Fingerprint::from_decimal("0XFF"), Ok(Fingerprint(255)));
        assert_eq!(Fingerprint::from_decimal("0x0"), Ok(Fingerprint(0)));
        assert_eq!(Fingerprint::from_decimal("007"), Ok(Fingerprint(7)));
    }

    #[test]
    fn parse_rejects_bad_input() {
        use ParseFingerprintErrorKind::{Empty, InvalidDigit, OutOfRange};
        let hex = [
            ("", Empty),
            ("0x", Empty),
            ("10000000000000000", OutOfRange),
            ("0x10000000000000000", OutOfRange),
            ("-1", InvalidDigit),
            ("+1", InvalidDigit),
            (" 1", InvalidDigit),
            ("1 ", InvalidDigit),
            ("0xfg", InvalidDigit),
            ("x1", InvalidDigit),
        ];
        for (s, kind) in hex {
            let err = s.parse::<Fingerprint>().unwrap_err();
            assert_eq!(err.kind(), kind, "{s:?}");
            assert!(!err.to_string().is_empty(), "{s:?}");
        }
        let decimal = [
            ("", Empty),
            ("0x", Empty),
            ("18446744073709551616", OutOfRange),
            ("0x10000000000000000", OutOfRange),
            ("-1", InvalidDigit),
            ("+1", InvalidDigit),
            (" 1", InvalidDigit),
            ("1 ", InvalidDigit),
            ("12a", InvalidDigit),
            ("0xfg", InvalidDigit),
            ("1e3", InvalidDigit),
        ];
        for (s, kind) in decimal {
            assert_eq!(Fingerprint::from_decimal(s).unwrap_err().kind(), kind, "{s:?}");
        }
        assert!(Fingerprint::from_hex("0x12").is_err());
    }

    #[test]
    fn messages_name_the_expected_form() {
        assert_eq!(
            Fingerprint::from_decimal("12a").unwrap_err().to_string(),
            "invalid fingerprint (expected a decimal u64 or 0x-prefixed hex): \"12a\""
        );
        assert_eq!(
            "12g".parse::<Fingerprint>().unwrap_err().to_string(),
            "invalid fingerprint (expected 1 to 16 hex digits): \"12g\""
        );
        assert_eq!(
            Fingerprint::from_decimal("").unwrap_err().to_string(),
            "empty fingerprint: \"\""
        );
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;

    #[test]
    fn fingerprint_is_a_transparent_u64() {
        let f = Fingerprint(u64::MAX);
        assert_eq!(serde_json::to_string(&f).unwrap(), "18446744073709551615");
        assert_eq!(serde_json::from_str::<Fingerprint>("18446744073709551615").unwrap(), f);
    }
}
