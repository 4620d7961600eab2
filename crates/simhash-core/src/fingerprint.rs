//! The [`Fingerprint`] newtype and its parsing.

use std::fmt;
use std::str::FromStr;

/// A 64-bit simhash fingerprint.
///
/// Two fingerprints of similar texts differ in few bits; [`Fingerprint::distance`] counts them.
///
/// # Text forms
///
/// * [`Display`](fmt::Display) prints 16 lowercase hex digits with no prefix
///   (`{:#}` adds a `0x` prefix). [`Fingerprint::from_hex`] reads that form back.
/// * [`FromStr`] reads a decimal `u64` (the seeds' wire format, e.g. `simhash-cpp`'s
///   `find-all` input) or a `0x`/`0X`-prefixed hex number of 1 to 16 digits.
///
/// ```
/// use simhash_core::Fingerprint;
///
/// let a: Fingerprint = "0x00000000000000ff".parse()?;
/// let b: Fingerprint = "255".parse()?;
/// assert_eq!(a, b);
/// assert_eq!(a.to_string(), "00000000000000ff");
/// assert_eq!(format!("{a:#}"), "0x00000000000000ff");
/// assert_eq!(Fingerprint::from_hex("00000000000000ff")?, a);
/// assert_eq!(a.distance(Fingerprint::from(0x0f)), 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
        parse_hex_digits(s, s)
    }
}

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

    /// Decimal, or hex after a `0x`/`0X` prefix. Surrounding whitespace is an error.
    fn from_str(s: &str) -> Result<Fingerprint, ParseFingerprintError> {
        if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            return parse_hex_digits(hex, s);
        }
        if s.is_empty() {
            return Err(ParseFingerprintError::new(s, ParseErrorKind::Empty));
        }
        if !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseFingerprintError::new(s, ParseErrorKind::InvalidDigit));
        }
        s.parse::<u64>()
            .map(Fingerprint)
            .map_err(|_| ParseFingerprintError::new(s, ParseErrorKind::OutOfRange))
    }
}

fn parse_hex_digits(digits: &str, whole: &str) -> Result<Fingerprint, ParseFingerprintError> {
    if digits.is_empty() {
        return Err(ParseFingerprintError::new(whole, ParseErrorKind::Empty));
    }
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ParseFingerprintError::new(whole, ParseErrorKind::InvalidDigit));
    }
    if digits.len() > 16 {
        return Err(ParseFingerprintError::new(whole, ParseErrorKind::OutOfRange));
    }
    u64::from_str_radix(digits, 16)
        .map(Fingerprint)
        .map_err(|_| ParseFingerprintError::new(whole, ParseErrorKind::OutOfRange))
}

/// The error returned when text is not a fingerprint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseFingerprintError {
    input: Box<str>,
    kind: ParseErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ParseErrorKind {
    Empty,
    InvalidDigit,
    OutOfRange,
}

impl ParseFingerprintError {
    fn new(input: &str, kind: ParseErrorKind) -> ParseFingerprintError {
        // Keep error values small even when a whole line was passed in by mistake.
        let shown: String = input.chars().take(40).collect();
        ParseFingerprintError { input: shown.into_boxed_str(), kind }
    }
}

impl fmt::Display for ParseFingerprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ParseErrorKind::Empty => "empty fingerprint",
            ParseErrorKind::InvalidDigit => {
                "invalid fingerprint (expected a decimal u64 or 0x-prefixed hex)"
            }
            ParseErrorKind::OutOfRange => "fingerprint out of range (more than 64 bits)",
        };
        write!(f, "{what}: {:?}", self.input)
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
        for v in [0, 1, 255, 0xdead_beef, u64::MAX, 1 << 63] {
            let f = Fingerprint(v);
            assert_eq!(f.to_string().len(), 16);
            assert_eq!(Fingerprint::from_hex(&f.to_string()), Ok(f));
            assert_eq!(format!("{f:#}").parse(), Ok(f));
            assert_eq!(v.to_string().parse(), Ok(f));
        }
    }

    #[test]
    fn parse_accepts_decimal_and_prefixed_hex() {
        assert_eq!("18446744073709551615".parse(), Ok(Fingerprint(u64::MAX)));
        assert_eq!("0XFF".parse(), Ok(Fingerprint(255)));
        assert_eq!("0x0".parse(), Ok(Fingerprint(0)));
        assert_eq!("007".parse(), Ok(Fingerprint(7)));
    }

    #[test]
    fn parse_rejects_bad_input() {
        let bad = [
            "",
            "0x",
            "18446744073709551616",
            "0x10000000000000000",
            "-1",
            "+1",
            " 1",
            "1 ",
            "12a",
            "0xfg",
            "1e3",
        ];
        for s in bad {
            let err = s.parse::<Fingerprint>().unwrap_err();
            assert!(!err.to_string().is_empty(), "{s:?}");
        }
        assert_eq!(
            "18446744073709551616".parse::<Fingerprint>().unwrap_err().kind,
            ParseErrorKind::OutOfRange
        );
        assert!(Fingerprint::from_hex("0x12").is_err());
    }
}
