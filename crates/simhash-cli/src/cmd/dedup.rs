//! `simhash dedup`: the input without its near-duplicates, each kept record byte for byte.
//! The input is read twice: once to match, once to copy the kept lines. Several input
//! files are read as one (their concatenation): the output holds the kept lines of each
//! in turn, and one hash TSV header, the first file's.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use simhash_index::disk::DiskIndex;
use simhash_index::lsh;
use simhash_io::{IdValue, Inputs, LineReader, LineStatus, Output, Score, Source};

use simhash_cluster::Clusters;

use crate::corpus::Corpus;
use crate::indexing::{Against, IndexMatch};
use crate::matching::{Grouped, clusters, star_clusters_without};
use crate::report::Reporter;
use crate::session::Session;
use crate::settings::DedupSettings;

pub fn run(settings: &DedupSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    simhash_io::register_inputs(&input.inputs.paths())?;
    let mut session = Session::new("dedup", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    settings.matching.note(&mut session.summary);
    input.note(&mut session.summary);
    let parquet = parquet_inputs(&input.inputs)?;
    let out = Output::create_for("--output", &settings.output)?;
    let mut removed =
        settings.removed.as_deref().map(|p| Output::create_for("--removed", p)).transpose()?;
    // The lock first (--update): a second writer fails before anything is read.
    let mut against =
        settings.against.as_ref().map(|a| Against::open(a, settings.update)).transpose()?;
    let mut sources = input.inputs.sources();
    let corpus = session.read(&mut sources, input.reading.clone(), Some(input), true)?;
    let matched = match &against {
        Some(against) => Some(against.matches(&mut session, &corpus)?),
        None => None,
    };
    let Grouped { clusters, jaccard } = match &matched {
        None => clusters(&mut session, &corpus, &settings.matching, &settings.grouping)?,
        Some(matched) => {
            let hidden: Vec<bool> = matched.iter().map(Option::is_some).collect();
            let (m, g) = (&settings.matching, &settings.grouping);
            star_clusters_without(&mut session, &corpus, m, g, &hidden)?
        }
    };
    let kept = |d: usize| {
        clusters.is_representative(d as u32) && matched.as_ref().is_none_or(|m| m[d].is_none())
    };

    session.reporter.phase("writing", sources.iter().map(|s| s.size).sum());
    // The lines to keep, in order: every document that is its cluster's representative.
    let mut keep: Vec<(u64, Option<u64>)> = (0..corpus.len())
        .filter(|&d| kept(d))
        .map(|d| (corpus.line(d), corpus.line_hash(d)))
        .collect();
    keep.sort_unstable();

    let index_matches = match (&against, &matched) {
        (Some(against), Some(matched)) => against.index().map(|index| (index, &matched[..])),
        _ => None,
    };
    let removed_count =
        write_removed(&corpus, &clusters, jaccard.as_deref(), index_matches, removed.as_mut())?;

    between_passes_hook();
    let (out, written) = if parquet {
        copy_rows(&input.reading.parser, &sources, &corpus, &keep, out)?
    } else {
        let mut copy = Copy {
            parser: &input.reading.parser,
            max: input.max_record_bytes,
            wanted: keep.iter().peekable(),
            header_written: false,
            written: 0,
            done_bytes: 0,
        };
        let mut out = out;
        let mut base = 0;
        for (source, &lines) in sources.iter().zip(corpus.shard_lines()) {
            copy.shard(source, base, lines, &mut out, &session.reporter)?;
            base += lines;
        }
        if let Some(&&(line, _)) = copy.wanted.peek() {
            anyhow::bail!("the input changed while it was read (line {line} is gone)");
        }
        (out, copy.written)
    };
    session.summary.removed = removed_count;
    session.summary.written = written;
    if let Some(against) = &mut against {
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        let kept_docs = (0..corpus.len()).filter(|&d| kept(d));
        against.add_kept(&mut session, &corpus, &names, kept_docs)?;
    }
    let code = session.finish(std::iter::once(out).chain(removed).collect())?;
    // The index last, once the output is in place: a failure here leaves the output
    // written and the index as it was (run again: the output is the same).
    if let Some(against) = against {
        against.commit()?;
    }
    Ok(code)
}

/// Whether the inputs are Parquet files: all or none may be (the output is one file of
/// their format).
fn parquet_inputs(inputs: &Inputs) -> anyhow::Result<bool> {
    let files = inputs.files();
    let parquet = files.first().is_some_and(|f| simhash_io::is_parquet(&f.path));
    if let Some(other) = files.iter().find(|f| simhash_io::is_parquet(&f.path) != parquet) {
        anyhow::bail!(
            "dedup writes one output of the inputs' format: {} and {} are not both Parquet",
            files[0].path.display(),
            other.path.display()
        );
    }
    Ok(parquet)
}

/// The second pass for Parquet inputs: copies the kept rows of each file, checking that
/// each is the record the first pass read, into one Parquet output with the schema and
/// compression of the first file read.
fn copy_rows(
    parser: &simhash_io::Parser,
    sources: &[Source],
    corpus: &Corpus,
    keep: &[(u64, Option<u64>)],
    out: Output,
) -> anyhow::Result<(Output, u64)> {
    let simhash_io::Parser::Json(columns) = parser else {
        anyhow::bail!("Parquet input holds text columns: --format hash does not apply");
    };
    let paths: Vec<&Path> = sources.iter().filter_map(Source::path).collect();
    // The schema of the first file that was read (a bad file has no rows).
    let like = paths
        .iter()
        .zip(corpus.shard_lines())
        .find(|(_, lines)| **lines > 0)
        .map_or(paths[0], |(p, _)| *p);
    let mut copy = simhash_io::ParquetCopy::new(out, like)?;
    let mut wanted = keep.iter().peekable();
    let mut written = 0u64;
    let mut base = 0;
    for (path, &rows) in paths.iter().zip(corpus.shard_lines()) {
        if wanted.peek().is_some_and(|w| w.0 <= base + rows) {
            copy.copy(path, columns, |row, text| {
                let at = base + row + 1;
                if at > base + rows || wanted.peek().is_none_or(|w| w.0 != at) {
                    return Ok(false);
                }
                let expected = wanted.next().and_then(|w| w.1);
                if text.is_none_or(|t| {
                    expected.is_some_and(|h| h != simhash_io::line_hash(t.as_bytes()))
                }) {
                    return Err(simhash_io::Error::from(std::io::Error::other(format!(
                        "{}:{}: the input changed while it was read (this row differs from \
                         the first pass); nothing was written",
                        path.display(),
                        row + 1
                    ))));
                }
                written += 1;
                Ok(true)
            })?;
        }
        anyhow::ensure!(
            wanted.peek().is_none_or(|w| w.0 > base + rows),
            "{}: the input changed while it was read (row {} is gone)",
            path.display(),
            wanted.peek().map_or(0, |w| w.0 - base)
        );
        base += rows;
    }
    Ok((copy.finish()?, written))
}

/// The second pass: copies the kept lines of each input file to the output, byte for
/// byte, checking that each is the record the first pass read.
struct Copy<'a, I: Iterator<Item = &'a (u64, Option<u64>)>> {
    parser: &'a simhash_io::Parser,
    max: u64,
    /// The kept lines (numbered over the concatenation) and their hashes, in order.
    wanted: std::iter::Peekable<I>,
    /// A hash TSV header is written once, the first file's.
    header_written: bool,
    written: u64,
    /// Bytes of the files done, for the progress bar.
    done_bytes: u64,
}

impl<'a, I: Iterator<Item = &'a (u64, Option<u64>)>> Copy<'a, I> {
    /// Copies the kept lines of `source`, whose lines are `base + 1 ..= base + lines` of the
    /// concatenation. A file with nothing to keep is not read again, unless its header is
    /// the one to write.
    fn shard(
        &mut self,
        source: &Source,
        base: u64,
        lines: u64,
        out: &mut Output,
        reporter: &Reporter,
    ) -> anyhow::Result<()> {
        let needs_header = matches!(self.parser, simhash_io::Parser::Hash) && !self.header_written;
        let has_kept = self.wanted.peek().is_some_and(|w| w.0 <= base + lines);
        if !has_kept && !needs_header {
            self.done_bytes += source.size.unwrap_or(0);
            return Ok(());
        }
        let mut reader = LineReader::new(source.reopen()?, self.max);
        let (mut buf, mut raw) = (Vec::new(), Vec::new());
        while let Some(status) = reader
            .next_line(&mut buf, Some(&mut raw))
            .with_context(|| format!("{}: read error", source.name))?
        {
            let line = base + reader.line;
            let header = status == LineStatus::Ok && self.parser.skips_header(reader.line, &buf);
            let kept = !header && self.wanted.peek().is_some_and(|w| w.0 == line);
            if kept {
                let expected = self.wanted.next().and_then(|w| w.1);
                // The line must be the record that was read and matched in the first pass.
                anyhow::ensure!(
                    status == LineStatus::Ok
                        && expected.is_none_or(|h| h == simhash_io::line_hash(&buf)),
                    "{}:{}: the input changed while it was read (this record differs from \
                     the first pass); nothing was written",
                    source.name,
                    reader.line
                );
                self.written += 1;
            }
            if kept || (header && !self.header_written) {
                self.header_written |= header;
                out.write_all(&raw)?;
                if raw.last() != Some(&b'\n') {
                    out.write_all(b"\n")?;
                }
            }
            if reader.line % 4096 == 0 {
                reporter.progress(self.done_bytes + reader.bytes, line);
            }
            if reader.line >= lines || self.wanted.peek().is_none_or(|w| w.0 > base + lines) {
                break;
            }
            buf.clear();
            raw.clear();
        }
        anyhow::ensure!(
            self.wanted.peek().is_none_or(|w| w.0 > base + lines),
            "{}: the input changed while it was read (line {} is gone)",
            source.name,
            self.wanted.peek().map_or(0, |w| w.0 - base)
        );
        self.done_bytes += source.size.unwrap_or(reader.bytes);
        Ok(())
    }
}

/// Tests only (debug builds): with `SIMHASH_TEST_BETWEEN_PASSES=PATH`, dedup creates PATH
/// after its first pass and waits (up to 30 s) until it is removed, so that a test can
/// change the input between the passes.
fn between_passes_hook() {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os("SIMHASH_TEST_BETWEEN_PASSES") {
        let path = std::path::PathBuf::from(path);
        if std::fs::write(&path, b"").is_ok() {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while path.exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// Writes one `--removed` line per dropped document (when asked) with its score against
/// the kept one; returns how many documents were dropped.
/// Documents that matched the on-disk index (`--against`) are removed as duplicates of
/// the indexed document named in `index`.
fn write_removed(
    corpus: &Corpus,
    clusters: &Clusters,
    jaccard: Option<&[f64]>,
    index: Option<(&DiskIndex, &[Option<IndexMatch>])>,
    mut removed: Option<&mut Output>,
) -> anyhow::Result<u64> {
    let mut removed_count = 0u64;
    for doc in 0..corpus.len() {
        if let Some((index, matched)) = index
            && let Some(m) = matched[doc]
        {
            removed_count += 1;
            if let Some(out) = removed.as_deref_mut() {
                // The index keeps ids as text.
                let kept = IdValue { text: index.id(m.doc)?.into(), number: false };
                simhash_io::write_removed(out, &corpus.id_value(doc), &kept, m.score)?;
            }
            continue;
        }
        let rep = clusters.representative(clusters.cluster_of(doc as u32)) as usize;
        if rep == doc {
            continue;
        }
        removed_count += 1;
        if let Some(out) = removed.as_deref_mut() {
            let score = match (&corpus.sketches, jaccard) {
                (_, Some(jaccard)) => Score::Jaccard(jaccard[doc]),
                (Some(sketches), None) => {
                    Score::Jaccard(lsh::similarity(sketches, doc as u32, rep as u32)?)
                }
                (None, None) => {
                    Score::Distance(match (corpus.fingerprint(doc), corpus.fingerprint(rep)) {
                        (Some(a), Some(b)) => a.distance(b),
                        _ => 0,
                    })
                }
            };
            simhash_io::write_removed(out, &corpus.id_value(doc), &corpus.id_value(rep), score)?;
        }
    }
    Ok(removed_count)
}
