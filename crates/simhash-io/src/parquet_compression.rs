//! The compression codec of a Parquet output: the input's (mirror), or one chosen.

use std::fmt;
use std::str::FromStr;

use parquet::basic::{Compression, ZstdLevel};

/// The compression codec a [`crate::ParquetCopy`] writes its column chunks with.
///
/// Written and parsed as `mirror`, `zstd`, `snappy`, `lz4` or `none`:
///
/// ```
/// use simhash_io::ParquetCompression;
///
/// assert_eq!("zstd".parse::<ParquetCompression>()?, ParquetCompression::Zstd);
/// assert_eq!(ParquetCompression::Uncompressed.to_string(), "none");
/// assert_eq!(ParquetCompression::default(), ParquetCompression::Mirror);
/// assert!("gzip".parse::<ParquetCompression>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParquetCompression {
    /// `mirror`: the codec of the input's first column chunk, as the input was written.
    #[default]
    Mirror,
    /// `zstd` at level 1 ([`ParquetCompression::ZSTD_LEVEL`]).
    Zstd,
    /// `snappy`.
    Snappy,
    /// `lz4`: Parquet's `LZ4_RAW` codec (the one current readers support; the older,
    /// framed `LZ4` codec is deprecated by the format).
    Lz4,
    /// `none`: pages stored uncompressed.
    Uncompressed,
}

impl ParquetCompression {
    /// Every value, in the order the help lists them.
    pub const ALL: [ParquetCompression; 5] = [
        ParquetCompression::Mirror,
        ParquetCompression::Zstd,
        ParquetCompression::Snappy,
        ParquetCompression::Lz4,
        ParquetCompression::Uncompressed,
    ];

    /// The zstd level of [`ParquetCompression::Zstd`]: 1, the default of the `parquet`
    /// crate's and Arrow C++'s (pyarrow's) writers, so that `zstd` files agree with theirs,
    /// and zstd's fastest standard level: the point of the option is a cheaper copy. On this
    /// repository's own text in 1 MiB blocks (`zstd -b1`, `-b3`), level 3 took about 1.4
    /// times as long for about 10% less size.
    pub const ZSTD_LEVEL: i32 = 1;

    /// The value's name: `mirror`, `zstd`, `snappy`, `lz4` or `none`.
    pub fn name(self) -> &'static str {
        match self {
            ParquetCompression::Mirror => "mirror",
            ParquetCompression::Zstd => "zstd",
            ParquetCompression::Snappy => "snappy",
            ParquetCompression::Lz4 => "lz4",
            ParquetCompression::Uncompressed => "none",
        }
    }

    /// The codec to write, `None` for [`ParquetCompression::Mirror`] (the input's).
    pub(crate) fn codec(self) -> Option<Compression> {
        match self {
            ParquetCompression::Mirror => None,
            ParquetCompression::Zstd => Some(Compression::ZSTD(
                ZstdLevel::try_new(ParquetCompression::ZSTD_LEVEL).unwrap_or_default(),
            )),
            ParquetCompression::Snappy => Some(Compression::SNAPPY),
            ParquetCompression::Lz4 => Some(Compression::LZ4_RAW),
            ParquetCompression::Uncompressed => Some(Compression::UNCOMPRESSED),
        }
    }
}

impl fmt::Display for ParquetCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ParquetCompression {
    type Err = UnknownParquetCompression;

    /// Accepts each value's [name](ParquetCompression::name), in lowercase.
    fn from_str(s: &str) -> Result<ParquetCompression, UnknownParquetCompression> {
        ParquetCompression::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownParquetCompression(s.into()))
    }
}

/// A name that is no [`ParquetCompression`]; its message lists the names accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownParquetCompression(Box<str>);

impl fmt::Display for UnknownParquetCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown Parquet compression {:?} (expected one of ", self.0)?;
        for (i, c) in ParquetCompression::ALL.into_iter().enumerate() {
            f.write_str(if i == 0 { "" } else { ", " })?;
            f.write_str(c.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownParquetCompression {}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! parses {
        ($($text:expr => $value:expr),* $(,)?) => {$(
            assert_eq!($text.parse::<ParquetCompression>(), $value, "{:?}", $text);
        )*};
    }

    #[test]
    fn names_parse_back_and_nothing_else_does() {
        use ParquetCompression as C;
        parses! {
            "mirror" => Ok(C::Mirror),
            "zstd" => Ok(C::Zstd),
            "snappy" => Ok(C::Snappy),
            "lz4" => Ok(C::Lz4),
            "none" => Ok(C::Uncompressed),
            "" => Err(UnknownParquetCompression("".into())),
            "ZSTD" => Err(UnknownParquetCompression("ZSTD".into())),
            "lz4_raw" => Err(UnknownParquetCompression("lz4_raw".into())),
            "gzip" => Err(UnknownParquetCompression("gzip".into())),
            "uncompressed" => Err(UnknownParquetCompression("uncompressed".into())),
        }
        for c in C::ALL {
            assert_eq!(c.to_string().parse::<C>(), Ok(c));
        }
    }

    #[test]
    fn the_message_lists_the_names() {
        let err = "brotli".parse::<ParquetCompression>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown Parquet compression \"brotli\" (expected one of mirror, zstd, snappy, lz4, \
             none)"
        );
    }

    #[test]
    fn each_codec_is_the_one_named() {
        use ParquetCompression as C;
        assert_eq!(C::Mirror.codec(), None);
        assert_eq!(C::Zstd.codec(), Some(Compression::ZSTD(ZstdLevel::try_new(1).unwrap())));
        assert_eq!(C::Snappy.codec(), Some(Compression::SNAPPY));
        assert_eq!(C::Lz4.codec(), Some(Compression::LZ4_RAW));
        assert_eq!(C::Uncompressed.codec(), Some(Compression::UNCOMPRESSED));
    }
}
