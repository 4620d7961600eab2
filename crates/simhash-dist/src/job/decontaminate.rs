//! `decontaminate` after the census: the hits of the whole corpus
//! ([`crate::rounds::contamination`]), written by worker 0 to `--hits`, and
//! with `-o` the corpus without its contaminated documents, each kept line read again by
//! the worker that read it and streamed to worker 0 ([`super::output::stream_out`]), as
//! `dedup` writes its kept lines. Worker 0 commits `-o` and `--hits` together, or neither.

use std::sync::Arc;
use std::time::Instant;

use simhash_index::contamination::EvalSets;
use simhash_io::Output;
use timely::worker::Worker;

use super::Job;
use super::output::{injected_write_error, stream_out};
use crate::rounds::census::Census;
use crate::rounds::contamination::{self, Found};
use crate::rounds::kept::{self, KeptLines};
use crate::rounds::outcome::Outcome;
use crate::rounds::parts::{self, Parts};
use crate::rounds::{all_gather, write};
use crate::share::{InputPlan, Share};

/// What `decontaminate` is asked for, beside the job's input: the eval sets every process
/// loaded alike, and the outputs.
#[derive(Debug)]
pub(crate) struct Decontaminating {
    /// The eval sets (the same in every process: [`Job::agreement`] compares them).
    pub(crate) eval: Arc<EvalSets>,
    /// Records of the eval sets left out as bad (reported by process 0 when loaded).
    pub(crate) eval_skipped: u64,
    /// `--hits` (standard output when no output is asked for).
    pub(crate) hits: Option<std::path::PathBuf>,
    /// `-o`: the corpus without its contaminated documents.
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Worker 0's outputs, created before the input is read: `-o` and `--hits`, if asked for.
#[derive(Default)]
pub(crate) struct Outputs {
    pub(crate) clean: Option<Output>,
    pub(crate) hits: Option<Output>,
}

/// The hits, then the outputs: worker 0 writes `--hits`; with `-o` every worker's kept
/// lines go to worker 0, which commits both together. Returns worker 0's outcome.
pub(super) fn write(
    worker: &mut Worker,
    job: &Job,
    dec: &Decontaminating,
    (plan, share, census): (&InputPlan, &mut Share, &Census),
    outputs: Outputs,
    summary: &write::Summary,
) -> Result<Outcome, Vec<String>> {
    let me = worker.index();
    crate::rounds::label("contamination");
    let write_start = Instant::now();
    let Found { report, ids, hit } = contamination::run(worker, &dec.eval, share)?;
    let mut figures = simhash_jobs::decontaminate::figures(&dec.eval, &report);
    figures.eval_records_skipped = dec.eval_skipped;
    // Worker 0 writes the hits first, in the report's order (by document, then item).
    let Outputs { clean, hits } = outputs;
    let mut failed = None;
    let hits = hits.and_then(|mut out| match write_hits(&mut out, &report, &ids) {
        Ok(()) => Some(out),
        Err(e) => {
            failed = Some(format!("cannot write --hits: {e:#}"));
            None
        }
    });
    // Bad records of the corpus or of an eval set: exit 1.
    let code = u8::from(census.exits_1() || dec.eval_skipped > 0);
    crate::rounds::label("records");
    let (written, removed) = if dec.output.is_some() {
        let parser = &job.reading.parser;
        let max = job.max_record_bytes;
        let header = kept::header(worker, plan, share, parser, max);
        // The documents hit that this worker read: the lines it leaves out.
        let mine: Vec<u64> =
            hit.iter().copied().filter(|&p| share.docs.find(p).is_some()).collect();
        let kept = KeptLines { plan, me, share, removed: &mine, parser, max, header };
        let spooled = Parts::spooled(plan).and_then(|p| {
            let written = parts::write_kept(&p, &kept)?;
            Ok((p.into_spool()?, written.lines))
        });
        let (spool, count) = match spooled {
            Ok((spool, count)) => (Ok(spool), count),
            Err(e) => (Err(format!("{e:#}")), 0),
        };
        let spool = injected_write_error(job, me, spool);
        let counts = all_gather(worker, &count);
        let outputs = clean.map(|o| (o, hits.map(Ok).or(failed.take().map(Err))));
        match stream_out(worker, job, spool, None, outputs)? {
            Ok(()) => {}
            Err(e) if e.is_empty() => return Ok(Ok(0)),
            Err(e) => return Ok(Err(vec![e])),
        }
        (Some(counts.iter().sum::<u64>()), hit.len() as u64)
    } else {
        // Only worker 0 has an output: the hits, committed alone.
        if me == 0 {
            let committed = match (hits, failed) {
                (_, Some(e)) => Err(e),
                (None, None) => Err("worker 0 has no --hits output".to_string()),
                (Some(out), None) => commit_hits(job, dec, out),
            };
            match committed {
                Ok(()) => {}
                Err(e) if e.is_empty() => return Ok(Ok(0)),
                Err(e) => return Ok(Err(vec![e])),
            }
        }
        (None, hit.len() as u64)
    };
    if me == 0 && !job.quiet {
        summarize(summary, &figures, written.map(|w| (w, removed)), write_start);
    }
    Ok(Ok(code))
}

/// Worker 0's `--hits` lines, each document's id as its reader sent it.
fn write_hits(
    out: &mut Output,
    report: &simhash_index::contamination::Report<'_>,
    ids: &[(u64, (String, bool))],
) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut line = Vec::new();
    for hit in &report.hits {
        let Ok(at) = ids.binary_search_by_key(&hit.doc, |(pos, _)| *pos) else {
            anyhow::bail!("internal error: no id for the document at position {}", hit.doc);
        };
        let (text, number) = &ids[at].1;
        let id = simhash_io::IdValue { text: text.as_str().into(), number: *number };
        line.clear();
        simhash_jobs::decontaminate::hit_line(&mut line, &id, hit)?;
        out.write_all(&line)?;
    }
    Ok(())
}

/// Commits `--hits` alone (no `-o`): an empty message when its reader stopped reading
/// (`| head`), not a failure.
fn commit_hits(job: &Job, dec: &Decontaminating, out: Output) -> Result<(), String> {
    let shown = dec.hits.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
    if job.inject_write_error == Some(0) {
        return Err("worker 0: injected write failure (--inject-write-error)".to_string());
    }
    crate::failure::commit(|| format!("--hits {shown}"), || out.commit()).map_err(|e| {
        if simhash_io::is_broken_pipe(&e) {
            String::new()
        } else {
            format!("{:#}", anyhow::Error::from(e))
        }
    })
}

/// `decontaminate`'s summary on standard error: the per-eval table and the totals, as
/// `simhash decontaminate` prints them, then the job's workers, bytes and times.
fn summarize(
    s: &write::Summary,
    figures: &simhash_jobs::Decontamination,
    written: Option<(u64, u64)>,
    write_start: Instant,
) {
    use std::fmt::Write as _;
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    for line in figures.table() {
        let _ = writeln!(err, "simhash-dist: {line}");
    }
    let mut line = format!(
        "simhash-dist: {} records read ({} skipped), {} documents, {} hits in {} documents, {} \
         of {} eval n-grams dropped",
        s.records_read,
        s.skipped,
        s.documents,
        figures.hits,
        figures.documents_hit,
        figures.ngrams_dropped,
        figures.ngrams
    );
    if figures.eval_records_skipped > 0 {
        let _ = write!(line, ", {} eval records skipped", figures.eval_records_skipped);
    }
    if let Some((kept, removed)) = written {
        let _ = write!(line, ", {kept} kept, {removed} removed");
    }
    let _ = writeln!(
        err,
        "{line}; {} workers, {} bytes; read {:.2}s, match and write {:.2}s, total {:.2}s; peak \
         memory of process 0 {} MiB",
        s.workers,
        s.bytes,
        s.read_seconds,
        write_start.elapsed().as_secs_f64(),
        s.started.elapsed().as_secs_f64(),
        crate::peak_memory_mib(),
    );
}
