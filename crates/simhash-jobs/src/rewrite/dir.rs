//! `--output-dir`: one output per input file, written on the job's threads in input order.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use simhash_io::{Encoded, InputFile, Output, ParquetCompression, ParquetCopy, Source};

use super::copy::Copy;
use super::parquet::copy_rows;
use super::{Entry, Pass, PassProgress, Written};
use crate::error::{Context, Result, bail};

/// One input file of `--output-dir`: its lines are `base + 1 ..= base + lines` of the
/// concatenation, and `wanted` are the records to write among them.
struct Shard<'a> {
    file: &'a InputFile,
    source: &'a Source,
    base: u64,
    lines: u64,
    wanted: &'a [Entry],
}

/// One output per input file under `root`, each closed once written (committed together
/// by the caller), the files written on the job's threads. Returns them in input order,
/// with the records written and the wanted records after the last file's lines (none,
/// unless the input changed).
pub(super) fn dir<'w>(
    pass: &Pass<'_>,
    wanted: &'w [Entry],
    root: &Path,
    files: &[InputFile],
) -> Result<(Written, &'w [Entry])> {
    // Each file's records are a contiguous run of the sorted `wanted`.
    let mut shards = Vec::with_capacity(files.len());
    let (mut base, mut start) = (0, 0);
    for ((file, source), &lines) in files.iter().zip(pass.sources).zip(pass.corpus.shard_lines()) {
        let end = start + wanted[start..].partition_point(|w| w.0 <= base + lines);
        shards.push(Shard { file, source, base, lines, wanted: &wanted[start..end] });
        (base, start) = (base + lines, end);
    }
    let progress = PassProgress::default();
    let written =
        in_order(pass.pool, shards.len(), |i| shard_output(pass, root, &shards[i], &progress))?;
    let mut outputs = Vec::with_capacity(written.len());
    let mut records = 0;
    for (out, n) in written {
        outputs.extend(out);
        records += n;
    }
    Ok(((outputs, records), &wanted[start..]))
}

/// The output of one `--output-dir` file, closed, and the records written to it; none
/// for a Parquet file the first pass could not read.
fn shard_output(
    pass: &Pass<'_>,
    root: &Path,
    shard: &Shard<'_>,
    progress: &PassProgress,
) -> Result<(Option<Output>, u64)> {
    let Shard { file, source, base, lines, .. } = *shard;
    let path = root.join(&file.relative);
    // Each file in its own format: a directory may mix JSONL and Parquet shards.
    if simhash_io::is_parquet(&file.path) {
        let mut wanted = shard.wanted.iter().peekable();
        // A file the first pass could not read (reported then) has no schema to copy:
        // it gets no output.
        if lines == 0
            && ParquetCopy::new(std::io::sink(), &file.path, ParquetCompression::Mirror).is_err()
        {
            return Ok((None, 0));
        }
        let out = Output::create_for("--output-dir", &path)?;
        let mut copy =
            ParquetCopy::with_extra(out, &file.path, &pass.notes.columns(), pass.compression)?;
        let mut written = 0;
        if wanted.peek().is_some() {
            copy_rows(pass, &mut copy, &file.path, base, lines, &mut wanted, &mut written)?;
        }
        Ok((Some(copy.finish()?.close()?), written))
    } else {
        let mut copy = Copy::new(pass, true, progress);
        let mut out = Encoded::new(Output::create_encoded_for("--output-dir", &path)?, &path)?;
        copy.shard(source, base, lines, &mut &shard.wanted[..], &mut out)?;
        let out = out.finish().with_context(|| format!("{}: cannot write", path.display()))?;
        Ok((Some(out.close()?), copy.written))
    }
}

/// Runs `task` for `0..n` on the threads of `pool`, each thread taking the next index in
/// turn (so at most one task per thread at a time, started in index order), and returns
/// the results in index order, as a loop would. The error returned is the first in index
/// order, as a loop would meet it: once a task fails no later index is started, while
/// every earlier one has been or is still run to its end. On an error the other tasks'
/// results are dropped.
fn in_order<T: Send>(
    pool: &rayon::ThreadPool,
    n: usize,
    task: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(usize::MAX);
    let done: Vec<Vec<(usize, Result<T>)>> = pool.broadcast(|_| {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n || i > failed.load(Ordering::Relaxed) {
                return done;
            }
            let result = task(i);
            if result.is_err() {
                failed.fetch_min(i, Ordering::Relaxed);
            }
            done.push((i, result));
        }
    });
    let mut results: Vec<Option<Result<T>>> = (0..n).map(|_| None).collect();
    for (i, result) in done.into_iter().flatten() {
        results[i] = Some(result);
    }
    let mut out = Vec::with_capacity(n);
    for (i, result) in results.into_iter().enumerate() {
        // An index not run comes after one that failed, which has returned.
        let Some(result) = result else { bail!(Internal, "internal error: task {i} was not run") };
        out.push(result?);
    }
    Ok(out)
}
