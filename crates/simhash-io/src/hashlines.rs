//! Hash input read a block of whole lines at a time: the records and problems of many
//! lines at once, as [`LineReader`](crate::LineReader) and [`Parser::parse`] give them one
//! line at a time, without a call, a batch entry and an id string per line.

use std::borrow::Cow;

use simhash_core::Fingerprint;

use crate::digits::decimal_line;
use crate::ids::{IdKey, IdTable};
use crate::problem::Problem;
use crate::record::{Parser, is_hash_header, parse_cpp_hash, parse_hash};

/// The hash input formats, which a block reader can read many lines at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashFormat {
    /// simhash-cpp's input ([`Parser::CppHash`]): one hash per line, no ids.
    Cpp,
    /// Hash TSV ([`Parser::Hash`]): `id<TAB>hash`, with a header line.
    Tsv,
}

impl Parser {
    /// The hash format this parser reads, if it reads hashes (not JSONL).
    pub fn hash_format(&self) -> Option<HashFormat> {
        match self {
            Parser::Json(_) => None,
            Parser::Hash => Some(HashFormat::Tsv),
            Parser::CppHash => Some(HashFormat::Cpp),
        }
    }
}

/// What a block of whole lines of hash input holds, in line order: each record's line,
/// hash and id, and each line that is not a record with its problem.
#[derive(Debug, Default)]
pub struct HashLines {
    /// Each record's line number in the block (1-based), in order.
    pub lines: Vec<u64>,
    /// Each record's hash (`None`: the empty hash of a featureless hash TSV record).
    pub hashes: Vec<Option<Fingerprint>>,
    /// Each record's id, for hash TSV (simhash-cpp's input has none: it stays empty).
    pub ids: IdTable,
    /// Each id's key, for finding repeated ids with an [`IdSet`](crate::IdSet).
    pub keys: Vec<IdKey>,
    /// The lines that are not records, in order: each one's number in the block and its
    /// problem (blank lines included, as [`Reason::BlankLine`](crate::Reason::BlankLine)).
    pub problems: Vec<(u64, Problem)>,
    /// The lines of the block, a skipped header included.
    pub count: u64,
}

/// Reads the lines of `data` into `out` (appended): what reading `data` with a
/// [`LineReader`](crate::LineReader) limited to `max` bytes a line, then each line with
/// [`Parser::parse`] gives, and in the same order. `top`: `data` starts at the top of an
/// input file, where a hash TSV header line is skipped ([`Parser::skips_header`]).
///
/// A line ends at `\n` or `\r\n`; the last line needs no end (and keeps a final `\r`).
/// A line longer than `max` (terminator excluded) is a
/// [`Reason::TooLong`](crate::Reason::TooLong) problem that gives its length with the
/// terminator.
///
/// ```
/// use simhash_core::Fingerprint;
/// use simhash_io::{HashFormat, HashLines, Reason, parse_hash_lines};
///
/// let mut out = HashLines::default();
/// parse_hash_lines(HashFormat::Cpp, b"12\r\nx\n0xff", u64::MAX, true, &mut out);
/// assert_eq!(out.lines, [1, 3]);
/// assert_eq!(out.hashes, [Some(Fingerprint(12)), Some(Fingerprint(255))]);
/// assert_eq!(out.problems[0].0, 2);
/// assert_eq!(out.problems[0].1.reason, Reason::BadHash);
/// assert_eq!(out.count, 3);
/// ```
pub fn parse_hash_lines(format: HashFormat, data: &[u8], max: u64, top: bool, out: &mut HashLines) {
    let mut rest = data;
    let mut number = out.count;
    let first = number + 1;
    // About a record per 20 bytes (a 64-bit decimal hash and its line end).
    out.lines.reserve(data.len() / 20);
    out.hashes.reserve(data.len() / 20);
    while !rest.is_empty() {
        // The common line of simhash-cpp's input, digits alone, read as its end is found.
        if format == HashFormat::Cpp
            && let Some((v, used)) = decimal_line(rest)
            && (used - 1) as u64 <= max
        {
            rest = &rest[used..];
            number += 1;
            out.lines.push(number);
            out.hashes.push(Some(Fingerprint(v)));
            continue;
        }
        let (line, total) = match memchr::memchr(b'\n', rest) {
            Some(end) => {
                let line = &rest[..end];
                (line.strip_suffix(b"\r").unwrap_or(line), end + 1)
            }
            None => (rest, rest.len()),
        };
        rest = &rest[total..];
        number += 1;
        if line.len() as u64 > max {
            out.problems.push((number, Problem::too_long(total as u64, max)));
            continue;
        }
        match format {
            HashFormat::Cpp => {
                // The common case, a line of digits alone, without a call.
                let hash = match crate::parse_u64_fast(line) {
                    Some(v) => Fingerprint(v),
                    None => match parse_cpp_hash(line) {
                        Ok(fp) => fp,
                        Err(problem) => {
                            out.problems.push((number, problem));
                            continue;
                        }
                    },
                };
                out.lines.push(number);
                out.hashes.push(Some(hash));
            }
            HashFormat::Tsv => {
                if top && number == first && is_hash_header(line) {
                    continue;
                }
                let (id, hash) = match simple_tsv(line) {
                    Some(record) => record,
                    None => match parse_hash(line) {
                        // A hash TSV record always has an id.
                        Ok((id, hash)) => (id.map_or(Cow::Borrowed(""), |id| id.text), hash),
                        Err(problem) => {
                            out.problems.push((number, problem));
                            continue;
                        }
                    },
                };
                out.lines.push(number);
                out.hashes.push(hash);
                out.keys.push(IdKey::new(&id));
                out.ids.push(&id);
            }
        }
    }
    out.count = number;
}

/// The common hash TSV line, read without a UTF-8 pass: an id of ASCII characters but
/// CR, a TAB, and a hash [`parse_u64_fast`](crate::parse_u64_fast) reads (or none).
/// [`parse_hash`] reads such a line the same; `None` leaves any other line to it.
#[inline]
fn simple_tsv(line: &[u8]) -> Option<(Cow<'_, str>, Option<Fingerprint>)> {
    let tab = memchr::memchr(b'\t', line)?;
    let (id, hash) = (&line[..tab], &line[tab + 1..]);
    // Not empty, no byte-order mark, TAB or line break (see `check_id`).
    if id.is_empty() || !id.iter().all(|&b| b.is_ascii() && b != b'\r') {
        return None;
    }
    let hash = if hash.is_empty() { None } else { Some(Fingerprint(crate::parse_u64_fast(hash)?)) };
    Some((Cow::Borrowed(std::str::from_utf8(id).ok()?), hash))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LineReader, LineStatus};

    /// What the line reader and the parser give, one line at a time: the reference.
    fn reference(format: HashFormat, data: &[u8], max: u64) -> Vec<String> {
        let parser = match format {
            HashFormat::Cpp => Parser::CppHash,
            HashFormat::Tsv => Parser::Hash,
        };
        let mut lines = LineReader::new(data, max);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while let Some(status) = lines.next_line(&mut buf, None).expect("in memory") {
            if parser.skips_header(lines.line, &buf) {
                buf.clear();
                continue;
            }
            let item = match status {
                LineStatus::TooLong(n) => Err(Problem::too_long(n, max)),
                LineStatus::Ok => parser.parse(&buf),
            };
            out.push(match item {
                Ok(record) => format!(
                    "{}: {:?} {:?}",
                    lines.line,
                    record.id.map(|id| id.text.into_owned()),
                    record.body
                ),
                Err(p) => format!("{}: {:?} {}", lines.line, p.reason, p.message),
            });
            buf.clear();
        }
        out.push(format!("lines {}", lines.line));
        out
    }

    /// The same through `parse_hash_lines`, the input cut into blocks at `cuts` (each a
    /// line's end).
    fn blocks(format: HashFormat, data: &[u8], max: u64, cuts: &[usize]) -> Vec<String> {
        let mut out = HashLines::default();
        let mut start = 0;
        for &end in cuts.iter().chain([&data.len()]) {
            parse_hash_lines(format, &data[start..end], max, start == 0, &mut out);
            start = end;
        }
        let mut items: Vec<(u64, String)> = out
            .problems
            .iter()
            .map(|(line, p)| (*line, format!("{line}: {:?} {}", p.reason, p.message)))
            .collect();
        for (i, (&line, hash)) in out.lines.iter().zip(&out.hashes).enumerate() {
            let id = (format == HashFormat::Tsv).then(|| out.ids.get(i).to_string());
            if let Some(id) = &id {
                assert_eq!(out.keys[i], IdKey::new(id));
            }
            items.push((line, format!("{line}: {id:?} {:?}", crate::Body::Hash(*hash))));
        }
        items.sort_by_key(|(line, _)| *line);
        let mut got: Vec<String> = items.into_iter().map(|(_, s)| s).collect();
        got.push(format!("lines {}", out.count));
        got
    }

    use crate::test_rng::Rng;

    /// Lines of every kind: good hashes (decimal, hex, leading zeros, spaces), bad ones
    /// (overflow, bad digits, signs, invalid UTF-8, a byte-order mark), blank lines, CRLF,
    /// lone CRs, TABs, a header.
    fn random_input(rng: &mut Rng, format: HashFormat, lines: usize) -> Vec<u8> {
        let pieces: &[&[u8]] = &[
            b"",
            b" ",
            b"\r",
            b"0",
            b"00000000000000000000000000012",
            b"18446744073709551615",
            b"18446744073709551616",
            b"99999999999999999999",
            b"0xffffffffffffffff",
            b"0x10000000000000000",
            b"0XaB",
            b"0x",
            b" 42 ",
            b"+1",
            b"-1",
            b"12a",
            b"\xef\xbb\xbf7",
            b"\xff\xfe",
            b"id\thash",
            b"a\tb\tc",
            b"\t5",
            b"x\t",
            b"\xc3\xa9\t3",
            b"a\rb\t4",
            b"\xef\xbb\xbfbom\t5",
            b"\xef\xbb\xbf\xef\xbb\xbfbom\t5",
            b"sp ace\t0x7",
        ];
        let mut out = Vec::new();
        for _ in 0..lines {
            let r = rng.below(10);
            if format == HashFormat::Tsv && r > 0 {
                out.extend_from_slice(format!("d{}\t", rng.below(1000)).as_bytes());
            }
            if r < 5 {
                let v = rng.next() >> rng.below(64);
                out.extend_from_slice(v.to_string().as_bytes());
            } else {
                out.extend_from_slice(pieces[rng.below(pieces.len())]);
            }
            match rng.below(6) {
                0 => out.extend_from_slice(b"\r\n"),
                1 => out.extend_from_slice(b"\r\r\n"),
                _ => out.push(b'\n'),
            }
        }
        if rng.below(2) == 0 {
            out.pop();
        }
        out
    }

    #[test]
    fn agrees_with_the_line_reader_and_parser_at_every_cut() {
        let mut rng = Rng(5);
        for format in [HashFormat::Cpp, HashFormat::Tsv] {
            for round in 0..60 {
                let data = random_input(&mut rng, format, 1 + round % 25);
                for max in [u64::MAX, 2, 5, 20] {
                    let want = reference(format, &data, max);
                    assert_eq!(blocks(format, &data, max, &[]), want, "{data:?}");
                    // Cut after every line end, one cut at a time, and at all of them.
                    let ends: Vec<usize> = (0..data.len())
                        .filter(|&i| data[i] == b'\n')
                        .map(|i| i + 1)
                        .filter(|&e| e < data.len())
                        .collect();
                    for &cut in &ends {
                        assert_eq!(blocks(format, &data, max, &[cut]), want, "cut {cut}");
                    }
                    assert_eq!(blocks(format, &data, max, &ends), want);
                }
            }
        }
    }

    #[test]
    fn edges() {
        for format in [HashFormat::Cpp, HashFormat::Tsv] {
            for data in [
                &b""[..],
                b"\n",
                b"\n\n",
                b"\r\n",
                b"\r",
                b"1",
                b"1\r",
                b"id\thash\n",
                b"id\thash",
                b"\xef\xbb\xbfid\thash\r\na\t1\n",
                b"a\t1\r\nb\t\n\n",
            ] {
                for max in [u64::MAX, 0, 1, 7] {
                    assert_eq!(
                        blocks(format, data, max, &[]),
                        reference(format, data, max),
                        "{data:?} {max}"
                    );
                }
            }
        }
    }
}
