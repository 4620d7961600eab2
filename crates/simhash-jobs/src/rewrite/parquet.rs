//! The second pass over Parquet inputs: rows copied with their schema, checked against
//! the first pass, with the annotation columns added.

use std::path::Path;

use simhash_io::{Output, ParquetCompression, ParquetCopy, Parser, Source};

use super::{Iter, Pass};
use crate::error::{Result, bail, ensure};

/// The Parquet inputs into one output with the schema and compression of the first file
/// read.
pub(super) fn parquet_one(
    pass: &Pass<'_>,
    wanted: &mut Iter<'_>,
    out: Output,
) -> Result<(Vec<Output>, u64)> {
    let paths: Vec<&Path> = pass.sources.iter().filter_map(Source::path).collect();
    let shard_lines = pass.corpus.shard_lines();
    // The schema of the first file that was read (a bad file has no rows, and was reported
    // in the first pass), or of a file without rows that is Parquet.
    let like = paths.iter().zip(shard_lines).find(|(_, lines)| **lines > 0).map(|(p, _)| *p);
    let like = like.or_else(|| {
        paths
            .iter()
            .copied()
            .find(|p| ParquetCopy::new(std::io::sink(), p, ParquetCompression::Mirror).is_ok())
    });
    let Some(like) = like else {
        // No input could be read (each was reported once as a bad file): there is no
        // schema to write, so the output is not written (its temporary file goes).
        drop(out);
        pass.reporter.warning(
            "no input could be read as Parquet: the output is not written (it has no schema)",
        );
        return Ok((Vec::new(), 0));
    };
    let mut copy = ParquetCopy::with_extra(out, like, &pass.notes.columns(), pass.compression)?;
    let mut written = 0u64;
    let mut base = 0;
    for (path, &rows) in paths.iter().zip(shard_lines) {
        if wanted.peek().is_some_and(|w| w.0 <= base + rows) {
            copy_rows(pass, &mut copy, path, base, rows, wanted, &mut written)?;
        }
        base += rows;
    }
    Ok((vec![copy.finish()?], written))
}

/// Copies the wanted rows of the Parquet file `path` (rows `base + 1 ..= base + rows` of
/// the concatenation), checking each against the first pass.
pub(super) fn copy_rows(
    pass: &Pass<'_>,
    copy: &mut ParquetCopy<Output>,
    path: &Path,
    base: u64,
    rows: u64,
    wanted: &mut Iter<'_>,
    written: &mut u64,
) -> Result<()> {
    let Parser::Json(columns) = pass.parser else {
        bail!(Input, "Parquet input holds text columns: --format hash does not apply");
    };
    copy.copy(path, columns, |row, text, extra| {
        let at = base + row + 1;
        if at > base + rows || wanted.peek().is_none_or(|w| w.0 != at) {
            return Ok(false);
        }
        let Some(&(_, expected, doc)) = wanted.next() else { return Ok(false) };
        if text.is_none_or(|t| expected.is_some_and(|h| h != simhash_io::line_hash(t.as_bytes()))) {
            return Err(simhash_io::Error::from(std::io::Error::other(format!(
                "{}:{}: the input changed while it was read (this row differs from the first \
                 pass); nothing was written",
                path.display(),
                row + 1
            ))));
        }
        pass.notes.push(doc as usize, extra);
        *written += 1;
        Ok(true)
    })?;
    ensure!(
        wanted.peek().is_none_or(|w| w.0 > base + rows),
        Input,
        "{}: the input changed while it was read (row {} is gone)",
        path.display(),
        wanted.peek().map_or(0, |w| w.0 - base)
    );
    Ok(())
}
