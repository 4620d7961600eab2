//! Why a record was skipped, as typed values: a [`Reason`] to count and a message to
//! report as `FILE:LINE: message`.

use std::fmt;

/// Why a record was skipped: the key in the summary's `skipped` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Not a JSON object, or not valid JSON.
    InvalidJson,
    /// The line is not UTF-8.
    InvalidUtf8,
    /// No value at the text path.
    MissingText,
    /// The value at the text path is not a string.
    TextNotString,
    /// The id is empty, holds a TAB or line break, starts with a byte-order mark, or is not
    /// a string or number.
    BadId,
    /// Not a 64-bit hash in decimal or `0x` hex.
    BadHash,
    /// A hash TSV line without exactly two columns.
    BadColumns,
    /// An empty line (or only spaces): not a record.
    BlankLine,
    /// Longer than the length limit.
    TooLong,
    /// An earlier record has the same id.
    DuplicateId,
    /// A record with an id in a corpus whose first record has none, or the reverse.
    MixedIds,
    /// A whole input file that cannot be read as records (a Parquet file that is truncated,
    /// or without the text column, or with a column of the wrong type): all its records.
    BadFile,
    /// A key on the text or id path appears twice in its object (JSON readers disagree on
    /// which value counts).
    DuplicateKey,
}

impl Reason {
    /// The reason's name in summaries (`invalid_json`, `duplicate_id`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Reason::InvalidJson => "invalid_json",
            Reason::InvalidUtf8 => "invalid_utf8",
            Reason::MissingText => "missing_text",
            Reason::TextNotString => "text_not_string",
            Reason::BadId => "bad_id",
            Reason::BadHash => "bad_hash",
            Reason::BadColumns => "bad_columns",
            Reason::BlankLine => "blank_line",
            Reason::TooLong => "too_long",
            Reason::DuplicateId => "duplicate_id",
            Reason::MixedIds => "mixed_ids",
            Reason::BadFile => "bad_file",
            Reason::DuplicateKey => "duplicate_key",
        }
    }
}

/// A bad record: why, and a message for `FILE:LINE: message` ([`Problem::at`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Why, as a key for counts.
    pub reason: Reason,
    /// What is wrong, for a person (lowercase, no file or line).
    pub message: String,
}

impl Problem {
    /// A problem with its message.
    pub fn new(reason: Reason, message: impl Into<String>) -> Problem {
        Problem { reason, message: message.into() }
    }

    /// A line of `bytes` bytes, over the limit `max` ([`crate::LineStatus::TooLong`]).
    pub fn too_long(bytes: u64, max: u64) -> Problem {
        Problem::new(
            Reason::TooLong,
            format!("record of {bytes} bytes is longer than --max-record-bytes {max}"),
        )
    }

    /// A record whose id `id` an earlier record has.
    pub fn duplicate_id(id: &str) -> Problem {
        Problem::new(Reason::DuplicateId, format!("duplicate id {id:?} (an earlier record has it)"))
    }

    /// A record with an id (`has_id`) when the first record had none, or the reverse: a
    /// generated id (the line number) must never equal an explicit one.
    pub fn mixed_ids(has_id: bool) -> Problem {
        Problem::new(
            Reason::MixedIds,
            if has_id {
                "has an id, but earlier records have none (give every record an id, or none)"
            } else {
                "no id, but earlier records have one (give every record an id, or none)"
            },
        )
    }

    /// The problem as reported: `FILE:LINE: message`.
    ///
    /// ```
    /// use simhash_io::Problem;
    ///
    /// let problem = Problem::duplicate_id("a");
    /// assert_eq!(
    ///     problem.at("in.jsonl", 3).to_string(),
    ///     "in.jsonl:3: duplicate id \"a\" (an earlier record has it)"
    /// );
    /// ```
    pub fn at<'a>(&'a self, file: &'a str, line: u64) -> Located<'a> {
        Located { problem: self, file, line }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Problem {}

/// A [`Problem`] with its file and line, displayed as `FILE:LINE: message`.
#[derive(Clone, Copy, Debug)]
pub struct Located<'a> {
    problem: &'a Problem,
    file: &'a str,
    line: u64,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.problem.message)
    }
}

/// `message` safe to print on a terminal: control characters (an escape sequence in a file
/// name, a line break in a path) written as Rust escapes (`\u{1b}`, `\n`), as ids already
/// are in messages; everything else as it is.
///
/// ```
/// assert_eq!(simhash_io::printable("in.jsonl:3: bad"), "in.jsonl:3: bad");
/// assert_eq!(simhash_io::printable("x\u{1b}[2Jy.jsonl: cannot open"), "x\\u{1b}[2Jy.jsonl: cannot open");
/// ```
pub fn printable(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(message.len() + 8);
    for c in message.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
