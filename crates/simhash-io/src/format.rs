//! Every format the tools read or write, written in one place so that every binary writes
//! the same bytes: the input format inferred from a file name, the hash TSV (`fingerprint`),
//! the pairs TSV (`pairs`), the cluster TSV (`cluster`), the removed JSONL (`dedup
//! --removed`), and simhash-cpp's find-all and find-clusters JSON lines.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::record::IdValue;

/// An input format: every front end's `--format` (with the `clap` feature, a
/// `clap::ValueEnum`, which takes `jsonl` and `tsv` too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Format {
    /// JSON Lines records.
    #[cfg_attr(
        feature = "clap",
        value(alias = "jsonl", help = "JSON Lines records (`jsonl` is accepted too)")
    )]
    Json,
    /// Hash TSV: `id<TAB>hash` with a header line.
    #[cfg_attr(
        feature = "clap",
        value(
            alias = "tsv",
            help = "TSV `id<TAB>hash` with a header line (`tsv` is accepted too)"
        )
    )]
    Hash,
}

impl Format {
    /// The format a path's name implies: hash for names ending in `.tsv` (before any `.gz`
    /// or `.zst`, in any case), json otherwise (standard input, `-`, included).
    ///
    /// ```
    /// use std::path::Path;
    /// use simhash_io::Format;
    ///
    /// assert_eq!(Format::infer(Path::new("hashes.TSV.gz")), Format::Hash);
    /// assert_eq!(Format::infer(Path::new("corpus.jsonl.zst")), Format::Json);
    /// assert_eq!(Format::infer(Path::new("-")), Format::Json);
    /// ```
    pub fn infer(path: &Path) -> Format {
        let name = path.to_string_lossy().to_ascii_lowercase();
        let name = name.trim_end_matches(".gz").trim_end_matches(".zst");
        if Path::new(name).extension().is_some_and(|e| e == "tsv") {
            Format::Hash
        } else {
            Format::Json
        }
    }
}

impl Format {
    /// The format the names of `files` imply ([`Format::infer`]; json for none): every
    /// front end reads a set of inputs in one format, so names that imply different ones
    /// are refused, naming one file of each.
    ///
    /// ```
    /// use std::path::Path;
    /// use simhash_io::Format;
    ///
    /// assert_eq!(Format::of_files(&["a.jsonl", "b.jsonl.zst"]), Ok(Format::Json));
    /// assert_eq!(Format::of_files(&["a.tsv", "b.TSV.gz"]), Ok(Format::Hash));
    /// let err = Format::of_files(&["a.jsonl", "b.tsv"]).unwrap_err();
    /// assert!(err.to_string().starts_with("the inputs mix formats: a.jsonl is read as json"));
    /// ```
    pub fn of_files<P: AsRef<Path>>(files: &[P]) -> Result<Format, MixedFormats> {
        let first = files.first().map_or(Format::Json, |f| Format::infer(f.as_ref()));
        match files.iter().find(|f| Format::infer(f.as_ref()) != first) {
            None => Ok(first),
            Some(other) => {
                let (json, hash) = match first {
                    Format::Json => (files[0].as_ref(), other.as_ref()),
                    Format::Hash => (other.as_ref(), files[0].as_ref()),
                };
                Err(MixedFormats { json: json.to_path_buf(), hash: hash.to_path_buf() })
            }
        }
    }
}

/// Input files whose names imply different formats ([`Format::of_files`]): one read as
/// json, one as hash. Its message asks for `--format`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixedFormats {
    /// A file whose name implies json.
    pub json: PathBuf,
    /// A file whose name implies hash.
    pub hash: PathBuf,
}

impl fmt::Display for MixedFormats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the inputs mix formats: {} is read as json and {} as hash (by their names): \
             give --format",
            self.json.display(),
            self.hash.display()
        )
    }
}

impl std::error::Error for MixedFormats {}

/// How strongly a pair matched: bits apart (simhash) or Jaccard similarity (minhash).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    /// Hamming distance between fingerprints, in bits.
    Distance(u32),
    /// Jaccard similarity, printed with 4 decimals.
    Jaccard(f64),
}

impl Score {
    /// The score in 32 bits, for pairs held by the million: the distance, or the Jaccard
    /// similarity in units of 0.0001, rounded exactly as `Display` prints it.
    ///
    /// ```
    /// use simhash_io::Score;
    ///
    /// assert_eq!(Score::Distance(3).code(), 3);
    /// assert_eq!(Score::Jaccard(0.87654).code(), 8765);
    /// assert_eq!(Score::Jaccard(1.0).code(), 10_000);
    /// ```
    pub fn code(self) -> u32 {
        match self {
            Score::Distance(d) => d,
            Score::Jaccard(_) => {
                let text = self.to_string();
                let (whole, frac) = text.split_once('.').unwrap_or((&text, "0"));
                whole.parse::<u32>().unwrap_or(0) * 10_000 + frac.parse::<u32>().unwrap_or(0)
            }
        }
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Distance(d) => write!(f, "{d}"),
            Score::Jaccard(j) => write!(f, "{j:.4}"),
        }
    }
}

/// What the third column of a pairs TSV holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// `distance`: bits apart.
    Distance,
    /// `jaccard`: similarity with 4 decimals.
    Jaccard,
}

/// The pairs TSV: a header `id_a<TAB>id_b<TAB>distance` (or `jaccard`), then one pair a
/// line.
///
/// ```
/// use simhash_io::{Measure, PairsTsv, Score};
///
/// let mut tsv = PairsTsv::new(Vec::new(), Measure::Jaccard)?;
/// tsv.pair("a", "b", Score::Jaccard(0.9).code())?;
/// assert_eq!(tsv.into_inner(), b"id_a\tid_b\tjaccard\na\tb\t0.9000\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PairsTsv<W> {
    out: W,
    measure: Measure,
    relations: bool,
}

impl<W: Write> PairsTsv<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W, measure: Measure) -> io::Result<PairsTsv<W>> {
        out.write_all(match measure {
            Measure::Distance => b"id_a\tid_b\tdistance\n",
            Measure::Jaccard => b"id_a\tid_b\tjaccard\n",
        })?;
        Ok(PairsTsv { out, measure, relations: false })
    }

    /// [`new`](PairsTsv::new) with a fourth column, `relation` (what each pair is:
    /// `same`, `template`), for [`pair_related`](PairsTsv::pair_related).
    ///
    /// ```
    /// use simhash_io::{Measure, PairsTsv};
    ///
    /// let mut tsv = PairsTsv::with_relations(Vec::new(), Measure::Jaccard)?;
    /// tsv.pair_related("a", "b", 9_500, "template")?;
    /// assert_eq!(tsv.into_inner(), b"id_a\tid_b\tjaccard\trelation\na\tb\t0.9500\ttemplate\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_relations(mut out: W, measure: Measure) -> io::Result<PairsTsv<W>> {
        out.write_all(match measure {
            Measure::Distance => b"id_a\tid_b\tdistance\trelation\n",
            Measure::Jaccard => b"id_a\tid_b\tjaccard\trelation\n",
        })?;
        Ok(PairsTsv { out, measure, relations: true })
    }

    /// A later part of a pairs TSV cut into several files (`simhash-dist --output-dir`):
    /// no header, so that the parts concatenated are the whole file.
    ///
    /// ```
    /// use simhash_io::{Measure, PairsTsv};
    ///
    /// let mut tsv = PairsTsv::continued(Vec::new(), Measure::Distance);
    /// tsv.pair("c", "d", 1)?;
    /// assert_eq!(tsv.into_inner(), b"c\td\t1\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn continued(out: W, measure: Measure) -> PairsTsv<W> {
        PairsTsv { out, measure, relations: false }
    }

    /// [`continued`](PairsTsv::continued) for a file with the `relation` column.
    pub fn continued_with_relations(out: W, measure: Measure) -> PairsTsv<W> {
        PairsTsv { out, measure, relations: true }
    }

    /// Writes the pair `a`, `b` with its score as a [`Score::code`] and its relation
    /// (the fourth column of a file made [`with_relations`](PairsTsv::with_relations)).
    pub fn pair_related(&mut self, a: &str, b: &str, code: u32, relation: &str) -> io::Result<()> {
        self.cells(a, b, code)?;
        if self.relations {
            self.out.write_all(b"\t")?;
            self.out.write_all(relation.as_bytes())?;
        }
        self.out.write_all(b"\n")
    }

    /// Writes the pair `a`, `b` with its score as a [`Score::code`].
    pub fn pair(&mut self, a: &str, b: &str, code: u32) -> io::Result<()> {
        self.cells(a, b, code)?;
        self.out.write_all(b"\n")
    }

    /// The first three cells of a line.
    fn cells(&mut self, a: &str, b: &str, code: u32) -> io::Result<()> {
        let out = &mut self.out;
        out.write_all(a.as_bytes())?;
        out.write_all(b"\t")?;
        out.write_all(b.as_bytes())?;
        match self.measure {
            Measure::Distance => write!(out, "\t{code}"),
            Measure::Jaccard => write!(out, "\t{}.{:04}", code / 10_000, code % 10_000),
        }
    }

    /// The writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The cluster TSV: a header `id<TAB>hash<TAB>cluster`, then one record a line with its
/// fingerprint in decimal (empty for a featureless record) and its cluster's number.
///
/// ```
/// use simhash_io::ClustersTsv;
///
/// let mut tsv = ClustersTsv::new(Vec::new())?;
/// tsv.member("a", Some(255), 0)?;
/// tsv.member("b", None, 0)?;
/// assert_eq!(tsv.into_inner(), b"id\thash\tcluster\na\t255\t0\nb\t\t0\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ClustersTsv<W> {
    out: W,
}

impl<W: Write> ClustersTsv<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W) -> io::Result<ClustersTsv<W>> {
        out.write_all(b"id\thash\tcluster\n")?;
        Ok(ClustersTsv { out })
    }

    /// A later part of a cluster TSV cut into several files (`simhash-dist --output-dir`):
    /// no header, so that the parts concatenated are the whole file.
    ///
    /// ```
    /// use simhash_io::ClustersTsv;
    ///
    /// let mut tsv = ClustersTsv::continued(Vec::new());
    /// tsv.member("c", Some(7), 3)?;
    /// assert_eq!(tsv.into_inner(), b"c\t7\t3\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn continued(out: W) -> ClustersTsv<W> {
        ClustersTsv { out }
    }

    /// Writes a member of cluster number `cluster`.
    pub fn member(&mut self, id: &str, fingerprint: Option<u64>, cluster: u64) -> io::Result<()> {
        let out = &mut self.out;
        out.write_all(id.as_bytes())?;
        match fingerprint {
            Some(fp) => write!(out, "\t{fp}")?,
            None => out.write_all(b"\t")?,
        }
        writeln!(out, "\t{cluster}")
    }

    /// The writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The hash TSV (what `fingerprint` writes and the hash format reads): a header
/// `id<TAB>hash`, then each record's id and fingerprint in decimal (empty when featureless).
///
/// ```
/// use simhash_io::HashTsv;
///
/// let mut tsv = HashTsv::new(Vec::new())?;
/// tsv.record("a", Some(7))?;
/// tsv.record("b", None)?;
/// assert_eq!(tsv.into_inner(), b"id\thash\na\t7\nb\t\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct HashTsv<W> {
    out: W,
}

impl<W: Write> HashTsv<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W) -> io::Result<HashTsv<W>> {
        out.write_all(b"id\thash\n")?;
        Ok(HashTsv { out })
    }

    /// Writes one record.
    pub fn record(&mut self, id: &str, fingerprint: Option<u64>) -> io::Result<()> {
        self.out.write_all(id.as_bytes())?;
        match fingerprint {
            Some(fp) => writeln!(self.out, "\t{fp}"),
            None => self.out.write_all(b"\t\n"),
        }
    }

    /// The writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// One line of the removed JSONL: `{"id":..,"duplicate_of":..,"distance":..}` (or
/// `"jaccard"`), each id as it appeared in the input: a JSON number or a string, and
/// `"relation"` when the pair's relation is known (`"same"` or `"template"`).
///
/// ```
/// use std::borrow::Cow;
/// use simhash_io::{IdValue, Score, write_removed};
///
/// let mut out = Vec::new();
/// let doc = IdValue { text: Cow::Borrowed("b\"2"), number: false };
/// let kept = IdValue { text: Cow::Borrowed("1.50"), number: true };
/// write_removed(&mut out, &doc, &kept, Score::Distance(2), None)?;
/// assert_eq!(out, b"{\"id\":\"b\\\"2\",\"duplicate_of\":1.50,\"distance\":2}\n");
/// out.clear();
/// write_removed(&mut out, &doc, &kept, Score::Jaccard(0.5), Some("template"))?;
/// assert!(out.ends_with(b",\"jaccard\":0.5000,\"relation\":\"template\"}\n"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_removed(
    out: &mut impl Write,
    doc: &IdValue<'_>,
    kept: &IdValue<'_>,
    score: Score,
    relation: Option<&str>,
) -> io::Result<()> {
    out.write_all(b"{\"id\":")?;
    write_json_id(out, doc)?;
    out.write_all(b",\"duplicate_of\":")?;
    write_json_id(out, kept)?;
    match score {
        Score::Distance(d) => write!(out, ",\"distance\":{d}")?,
        Score::Jaccard(_) => write!(out, ",\"jaccard\":{score}")?,
    }
    if let Some(relation) = relation {
        // A name of the engine's (letters only): no escaping needed.
        write!(out, ",\"relation\":\"{relation}\"")?;
    }
    out.write_all(b"}\n")
}

/// An id as JSON, as it appeared in the input: a number as written, or a string.
///
/// ```
/// use std::borrow::Cow;
/// use simhash_io::{IdValue, write_json_id};
///
/// let mut out = Vec::new();
/// write_json_id(&mut out, &IdValue { text: Cow::Borrowed("a\"b"), number: false })?;
/// write_json_id(&mut out, &IdValue { text: Cow::Borrowed("1.50"), number: true })?;
/// assert_eq!(out, b"\"a\\\"b\"1.50");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_json_id(out: &mut impl Write, id: &IdValue<'_>) -> io::Result<()> {
    if id.number {
        out.write_all(id.text.as_bytes())
    } else {
        serde_json::to_writer(&mut *out, id.text.as_ref()).map_err(io::Error::from)
    }
}

/// One line of simhash-cpp's find-all output: a pair of hashes in decimal, `[a,b]`.
///
/// ```
/// let mut out = Vec::new();
/// simhash_io::write_hash_pair(&mut out, 1, 18446744073709551615)?;
/// assert_eq!(out, b"[1,18446744073709551615]\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_hash_pair(out: &mut impl Write, a: u64, b: u64) -> io::Result<()> {
    // The line in one buffer and one write (`writeln!` costs a call per piece).
    let mut line = [0u8; 44];
    let mut at = 0;
    for piece in [
        b"[",
        itoa::Buffer::new().format(a).as_bytes(),
        b",",
        itoa::Buffer::new().format(b).as_bytes(),
        b"]\n",
    ] {
        line[at..at + piece.len()].copy_from_slice(piece);
        at += piece.len();
    }
    out.write_all(&line[..at])
}

/// One line of simhash-cpp's find-clusters output: a cluster's hashes in decimal,
/// `[a,b,c]`.
///
/// ```
/// let mut out = Vec::new();
/// simhash_io::write_hash_list(&mut out, &[3, 1, 2])?;
/// assert_eq!(out, b"[3,1,2]\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_hash_list(out: &mut impl Write, hashes: &[u64]) -> io::Result<()> {
    out.write_all(b"[")?;
    for (i, h) in hashes.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        out.write_all(itoa::Buffer::new().format(*h).as_bytes())?;
    }
    out.write_all(b"]\n")
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn id(text: &str, number: bool) -> IdValue<'_> {
        IdValue { text: Cow::Borrowed(text), number }
    }

    #[test]
    fn pairs_bytes() {
        let mut tsv = PairsTsv::new(Vec::new(), Measure::Distance).unwrap();
        tsv.pair("a", "b", 0).unwrap();
        tsv.pair("1.50", "é x", 17).unwrap();
        assert_eq!(tsv.into_inner(), b"id_a\tid_b\tdistance\na\tb\t0\n1.50\t\xc3\xa9 x\t17\n");
        let mut tsv = PairsTsv::new(Vec::new(), Measure::Jaccard).unwrap();
        for j in [1.0, 0.5, 0.12345, 0.00004, 0.99996] {
            tsv.pair("a", "b", Score::Jaccard(j).code()).unwrap();
        }
        let text = String::from_utf8(tsv.into_inner()).unwrap();
        assert_eq!(
            text,
            "id_a\tid_b\tjaccard\na\tb\t1.0000\na\tb\t0.5000\na\tb\t0.1235\na\tb\t0.0000\n\
             a\tb\t1.0000\n"
        );
    }

    #[test]
    fn jaccard_codes_print_as_display_does() {
        for i in 0..=20_000u32 {
            let j = f64::from(i) / 20_000.0;
            let code = Score::Jaccard(j).code();
            let mut tsv = PairsTsv::new(Vec::new(), Measure::Jaccard).unwrap();
            tsv.pair("a", "b", code).unwrap();
            let text = String::from_utf8(tsv.into_inner()).unwrap();
            assert_eq!(text, format!("id_a\tid_b\tjaccard\na\tb\t{}\n", Score::Jaccard(j)), "{j}");
        }
    }

    #[test]
    fn clusters_and_hashes_bytes() {
        let mut tsv = ClustersTsv::new(Vec::new()).unwrap();
        tsv.member("x", Some(u64::MAX), 12).unwrap();
        tsv.member("y", None, 12).unwrap();
        assert_eq!(tsv.into_inner(), b"id\thash\tcluster\nx\t18446744073709551615\t12\ny\t\t12\n");
        let mut tsv = HashTsv::new(Vec::new()).unwrap();
        tsv.record("0", Some(0)).unwrap();
        tsv.record("1", None).unwrap();
        assert_eq!(tsv.into_inner(), b"id\thash\n0\t0\n1\t\n");
    }

    #[test]
    fn removed_bytes() {
        let mut out = Vec::new();
        write_removed(
            &mut out,
            &id("7", true),
            &id("a\tb\u{1}", false),
            Score::Jaccard(0.875),
            None,
        )
        .unwrap();
        write_removed(&mut out, &id("é", false), &id("-1e3", true), Score::Distance(0), None)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"id\":7,\"duplicate_of\":\"a\\tb\\u0001\",\"jaccard\":0.8750}\n\
             {\"id\":\"é\",\"duplicate_of\":-1e3,\"distance\":0}\n"
        );
    }

    #[test]
    fn cpp_json_bytes() {
        let mut out = Vec::new();
        write_hash_pair(&mut out, 0, 5).unwrap();
        write_hash_list(&mut out, &[]).unwrap();
        write_hash_list(&mut out, &[9]).unwrap();
        write_hash_list(&mut out, &[1, 2, 3]).unwrap();
        assert_eq!(out, b"[0,5]\n[]\n[9]\n[1,2,3]\n");
    }

    #[test]
    fn write_errors_keep_their_kind() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err =
            write_removed(&mut Closed, &id("a", false), &id("b", false), Score::Distance(1), None)
                .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let err = write_json_id(&mut Closed, &id("a", false)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert!(PairsTsv::new(Closed, Measure::Distance).is_err());
    }
}
