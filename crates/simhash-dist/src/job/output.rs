//! The write, the last rounds before the outcome: `pairs` and `cluster` write their parts
//! ([`write_parts`]); `dedup` walks each component, reads its kept lines again and writes
//! them with `--removed` ([`dedup()`]). With `--output-dir` each worker writes its parts and
//! all are committed or none; with `-o` worker 0 receives them a window at a time
//! ([`stream_out`]) and commits the output (and `--removed`) together, or neither.

use std::path::PathBuf;
use std::time::Instant;

use simhash_io::Output;
use timely::worker::Worker;

use super::Job;
use crate::args::{Keep, Matching};
use crate::plan::Mode;
use crate::rounds::all_gather;
use crate::rounds::census::Census;
use crate::rounds::dedup::{self, Walker};
use crate::rounds::gather::{self, Matched};
use crate::rounds::kept::{self, KeptLines};
use crate::rounds::outcome::Outcome;
use crate::rounds::parts::{self, Parts};
use crate::rounds::stream::{self, Spool};
use crate::rounds::tables::Links;
use crate::rounds::write::{self, Summary};
use crate::share::{InputPlan, Share};

/// `pairs` and `cluster`: each worker writes the parts of the pieces it read ([`parts`]);
/// with `--output-dir` all are committed or none, with `-o` worker 0 receives them a window
/// at a time ([`stream`]) and writes the output (`outputs`, worker 0's). Worker 0 writes the
/// summary.
pub(super) fn write_parts(
    worker: &mut Worker,
    job: &Job,
    parts: Parts<'_>,
    (plan, docs): (&InputPlan, &crate::share::Docs),
    matched: Matched,
    (summary, outputs, code): (&Summary, Option<Outputs>, u8),
) -> Result<Outcome, Vec<String>> {
    let me = worker.index();
    let stats = matched.stats;
    let write_start = Instant::now();
    let (written, stats) = match job.mode {
        Mode::Pairs => {
            let (links, records) = parts::pairs(worker, plan, docs, matched);
            let stats = gather::figures(worker, stats);
            (parts::write_pairs(&parts, me, &links, &records, summary.measure), stats)
        }
        Mode::Cluster { singletons } => {
            let members = parts::clusters(worker, plan, docs, matched, singletons);
            let stats = gather::figures(worker, stats);
            (parts::write_clusters(worker, &parts, &members), stats)
        }
        Mode::Dedup { .. } | Mode::Decontaminate => {
            (Err(anyhow::anyhow!("internal error: this job writes its own parts")), stats)
        }
    };
    let (written, files) = match written {
        Ok(mut w) => {
            let files = std::mem::take(&mut w.outputs);
            (w, Ok(files))
        }
        Err(e) => (parts::Written::default(), Err(format!("{e:#}"))),
    };
    let all = all_gather(worker, &(written.lines, written.clusters, written.largest));
    let files = injected_write_error(job, me, files);
    if job.output_dir.is_some() {
        parts::commit(worker, files, &written.paths)?;
    } else {
        let spool = files.and_then(|_| parts.into_spool().map_err(|e| format!("{e:#}")));
        match stream_out(worker, job, spool, None, outputs)? {
            Ok(()) => {}
            Err(e) if e.is_empty() => return Ok(Ok(0)),
            Err(e) => return Ok(Err(vec![e])),
        }
    }
    if me == 0 && !job.quiet {
        let lines = all.iter().map(|w| w.0).sum();
        let clusters = all.iter().map(|w| w.1).sum::<u64>() as usize;
        let largest = all.iter().map(|w| w.2).max().unwrap_or(0) as usize;
        let clusters = matches!(job.mode, Mode::Cluster { .. }).then_some((clusters, largest));
        write::report(summary, &stats, &write::Written { lines, clusters }, write_start);
    }
    Ok(Ok(code))
}

/// Worker 0's outputs with `-o`: the output, and `dedup`'s `--removed`, if asked for (or
/// why it could not be created).
pub(super) type Outputs = (Output, Option<Result<Output, String>>);

/// `-o`: worker 0 receives every worker's `spool` of the output's lines (and of the
/// `--removed` lines) a window at a time ([`stream::to_worker_zero`]), writes them to its
/// `outputs` and commits them together, or neither. A worker whose spool could not be
/// written or read fails the job on every worker. Returns, on worker 0, the commit: an
/// empty message when the output's reader stopped reading (`| head`), not a failure.
pub(super) fn stream_out(
    worker: &mut Worker,
    job: &Job,
    spool: Result<Spool<std::fs::File>, String>,
    removed: Option<Spool<std::io::Cursor<Vec<u8>>>>,
    outputs: Option<Outputs>,
) -> Result<Result<(), String>, Vec<String>> {
    let me = worker.index();
    let (spool, error) = match spool {
        Ok(spool) => (Some(spool), None),
        Err(e) => (None, Some(e)),
    };
    kept::agree(worker, error.as_deref())?;
    let spool = spool.ok_or_else(|| vec!["internal error: no spool".to_string()])?;
    let (mut out, removed_out) = outputs.map_or((None, None), |(o, r)| (Some(o), r));
    let (mut removed_out, mut failed) = match removed_out.transpose() {
        Ok(r) => (r, None),
        Err(e) => (None, Some(e)),
    };
    if me == 0 && out.is_none() {
        failed = Some("worker 0 has no output".to_string());
    }
    let mut read_error = None;
    let target = if failed.is_none() { out.as_mut() } else { None };
    let streamed = stream::to_worker_zero(worker, spool, target, job.output_window);
    note(streamed, "the output's lines", (me, &mut read_error, &mut failed));
    if let Some(spool) = removed {
        let target = if failed.is_none() { removed_out.as_mut() } else { None };
        let streamed = stream::to_worker_zero(worker, spool, target, job.output_window);
        note(streamed, "--removed", (me, &mut read_error, &mut failed));
    }
    kept::agree(worker, read_error.as_deref())?;
    let Some(out) = out.filter(|_| me == 0) else {
        return Ok(Ok(()));
    };
    Ok(match failed {
        Some(e) => Err(e),
        None => crate::failure::commit(
            || what_is_committed(job),
            || simhash_io::commit_all(std::iter::once(out).chain(removed_out)),
        )
        .map_err(|e| {
            if simhash_io::is_broken_pipe(&e) {
                String::new()
            } else {
                format!("{:#}", anyhow::Error::from(e))
            }
        }),
    })
}

/// What worker 0 commits with `-o`, for the messages of a later failure.
fn what_is_committed(job: &Job) -> String {
    let shown = |p: &std::path::Path| p.display().to_string();
    if let Some(dec) = &job.decontaminate {
        let clean = dec.output.as_deref().map(shown).unwrap_or_default();
        return match &dec.hits {
            None => format!("the output {clean}"),
            Some(hits) => format!("the output {clean} and --hits {}", shown(hits)),
        };
    }
    match &job.removed {
        None => format!("the output {}", shown(&job.output)),
        Some(removed) => {
            format!("the output {} and --removed {}", shown(&job.output), shown(removed))
        }
    }
}

/// The test hook `--inject-write-error`: worker `me`'s outputs, written, fail.
pub(super) fn injected_write_error<T>(
    job: &Job,
    me: usize,
    outputs: Result<T, String>,
) -> Result<T, String> {
    if job.inject_write_error == Some(me) {
        return Err(format!("worker {me}: injected write failure (--inject-write-error)"));
    }
    outputs
}

/// How the dedup walk matches, from the method's settings (and for MinHash the bands and
/// the band keys' width).
pub(super) fn walker(matching: &Matching, bands: usize, key_bits: u32) -> Walker {
    match *matching {
        Matching::Simhash { distance, blocks } => Walker::Simhash { distance, blocks },
        Matching::Minhash { jaccard, templates, .. } => {
            Walker::Minhash { jaccard, bands, key_bits, templates }
        }
    }
}

/// Worker 0's `--removed` output, created after the output (its error fails the write).
pub(super) fn removed_output(job: &Job) -> Option<Result<Output, String>> {
    let path = job.removed.as_ref()?;
    Some(Output::create_for("--removed", path).map_err(|e| format!("{:#}", anyhow::Error::from(e))))
}

/// What the dedup rounds read.
pub(super) struct Dedup<'a> {
    pub(super) plan: &'a InputPlan,
    pub(super) share: &'a Share,
    pub(super) keep: Keep,
    pub(super) walker: Walker,
    pub(super) census: &'a Census,
}

/// `dedup` after the matching: the walk per component, the kept lines read again by
/// their readers, and worker 0's write of the output (and `--removed`), all or nothing.
pub(super) fn dedup(
    worker: &mut Worker,
    job: &Job,
    d: &Dedup<'_>,
    matched: Matched,
    outputs: Option<Outputs>,
    summary: &Summary,
) -> Result<Outcome, Vec<String>> {
    let Matched { links, copies, .. } = matched;
    let full = links.full(worker.index());
    let edges = match links {
        Links::Forest(forest) => forest.edges,
        Links::Pairs(_) => Vec::new(),
    };
    let copies = match d.walker {
        Walker::Minhash { .. } => copies,
        Walker::Simhash { .. } => Vec::new(),
    };
    let decisions = dedup::run(worker, d.plan, &d.share.docs, edges, &copies, d.walker, d.keep);
    // A full forest fails the job here, after the walk's rounds that every worker runs.
    let (decisions, error) = match decisions {
        Ok(decisions) => (decisions, full),
        Err(e) => (Vec::new(), Some(e)),
    };
    kept::agree(worker, error.as_deref())?;
    let me = worker.index();
    let removed_lines = job.removed.as_ref().map(|_| removed_spool(worker, d, &decisions));
    let parser = &job.reading.parser;
    let max = job.max_record_bytes;
    let header = kept::header(worker, d.plan, d.share, parser, max);
    let removed: Vec<u64> = decisions.iter().map(|d| d.0).collect();
    let kept =
        KeptLines { plan: d.plan, me, share: d.share, removed: &removed, parser, max, header };
    // Parquet rows are copied into the parts by their readers (only with --output-dir).
    let parquet = d.plan.files.iter().any(|f| f.parquet);
    let code = u8::from(d.census.exits_1());
    // Every worker's records written and removed, summed for the summary (a round).
    let totals = |worker: &mut Worker, written: u64| {
        let counts = all_gather(worker, &(written, decisions.len() as u64));
        (counts.iter().map(|c| c.0).sum(), counts.iter().map(|c| c.1).sum())
    };
    if let Some(dir) = &job.output_dir {
        let extension = match parser {
            _ if parquet => "parquet",
            simhash_io::Parser::Hash => "tsv",
            _ => "jsonl",
        };
        let parts = Parts::new(dir, d.plan, extension);
        let written = if parquet {
            let compression = job.parquet_compression;
            parts::write_kept_rows(me, &parts, (d.plan, d.share), &removed, (parser, compression))
        } else {
            parts::write_kept(&parts, &kept)
        };
        let (mut paths, outputs, count) = match written {
            Ok(w) => (w.paths, Ok(w.outputs), w.lines),
            Err(e) => (Vec::new(), Err(format!("{e:#}")), 0),
        };
        // Worker 0 writes every worker's removed lines to the one `--removed` file.
        let removed = removed_lines.and_then(|spool| write_removed(worker, job, spool));
        let outputs = with_removed(outputs, removed, job, &mut paths);
        let outputs = injected_write_error(job, me, outputs);
        parts::commit(worker, outputs, &paths)?;
        let (written, removed) = totals(worker, count);
        if me == 0 && !job.quiet {
            report_dedup(summary, written, removed);
        }
        return Ok(Ok(code));
    }
    if parquet {
        return Err(vec!["internal error: dedup of Parquet writes --output-dir parts".into()]);
    }
    // `-o`: each worker's kept lines go to a temporary file as they are read again, then to
    // worker 0 a window at a time: worker 0 holds one window of the output, never all of it.
    let spooled = Parts::spooled(d.plan).and_then(|p| {
        let written = parts::write_kept(&p, &kept)?;
        Ok((p.into_spool()?, written.lines))
    });
    let (spool, count) = match spooled {
        Ok((spool, count)) => (Ok(spool), count),
        Err(e) => (Err(format!("{e:#}")), 0),
    };
    let (written, removed) = totals(worker, count);
    match stream_out(worker, job, spool, removed_lines, outputs)? {
        Ok(()) => {}
        Err(e) if e.is_empty() => return Ok(Ok(0)),
        Err(e) => return Ok(Err(vec![e])),
    }
    if me == 0 && !job.quiet {
        report_dedup(summary, written, removed);
    }
    Ok(Ok(code))
}

/// `--removed`: this worker's removed records' lines (one short JSON line each), by piece.
fn removed_spool(
    worker: &mut Worker,
    d: &Dedup<'_>,
    decisions: &[dedup::Decision],
) -> Spool<std::io::Cursor<Vec<u8>>> {
    let order = d.plan.pieces_in_order();
    let mut spool = Spool::in_memory();
    for (pos, line) in kept::removed_lines(worker, d.plan, d.share, decisions) {
        // Writing to memory cannot fail.
        let _ = spool.push(order.of(pos), &line);
    }
    spool
}

/// The `--output-dir` parts' outputs with worker 0's `--removed` file (`removed`) added,
/// and its path added to `paths`; or the first error.
fn with_removed(
    outputs: Result<Vec<Output>, String>,
    removed: Option<Result<Output, String>>,
    job: &Job,
    paths: &mut Vec<PathBuf>,
) -> Result<Vec<Output>, String> {
    match (outputs, removed, job.removed.as_ref()) {
        (Ok(mut outputs), Some(written), Some(path)) => {
            paths.push(path.clone());
            written.map(|r| {
                outputs.push(r);
                outputs
            })
        }
        (outputs, _, _) => outputs,
    }
}

/// Keeps what a [`stream::to_worker_zero`] failed with: a read error (told to every worker),
/// or worker 0's first write error (an empty message for a reader that stopped reading).
fn note(
    result: Result<(), stream::Failure>,
    what: &str,
    (me, read_error, failed): (usize, &mut Option<String>, &mut Option<String>),
) {
    match result {
        Ok(()) => {}
        Err(stream::Failure::Read(e)) => {
            *read_error = Some(format!("worker {me}: reading back {what}: {e}"));
        }
        Err(stream::Failure::Write(e)) if simhash_io::is_broken_pipe(&e) => {
            failed.get_or_insert_with(String::new);
        }
        Err(stream::Failure::Write(e)) => {
            failed.get_or_insert(e.to_string());
        }
    }
}

/// `--removed` with `--output-dir`: worker 0 writes every worker's removed lines, in input
/// order, to the `--removed` file, closed and uncommitted (`None` on the other workers).
fn write_removed(
    worker: &mut Worker,
    job: &Job,
    spool: Spool<std::io::Cursor<Vec<u8>>>,
) -> Option<Result<Output, String>> {
    let out = if worker.index() == 0 { removed_output(job) } else { None };
    let (mut out, error) = match out {
        Some(Ok(o)) => (Some(o), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    let streamed = stream::to_worker_zero(worker, spool, out.as_mut(), job.output_window);
    if worker.index() != 0 {
        return None;
    }
    if let Some(e) = error {
        return Some(Err(e));
    }
    let out = out?;
    Some(match streamed {
        Ok(()) => out.close().map_err(|e| format!("{:#}", anyhow::Error::from(e))),
        Err(stream::Failure::Read(e) | stream::Failure::Write(e)) => Err(e.to_string()),
    })
}

/// `dedup`'s summary line on standard error.
fn report_dedup(s: &Summary, written: u64, removed: u64) {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "simhash-dist: {} records read ({} skipped), {} documents ({} featureless), {written} \
         kept, {removed} removed; {} workers, {} bytes, {}; total {:.2}s; peak memory of \
         process 0 {} MiB",
        s.records_read,
        s.skipped,
        s.documents,
        s.featureless,
        s.workers,
        s.bytes,
        s.matching,
        s.started.elapsed().as_secs_f64(),
        crate::peak_memory_mib(),
    );
}
