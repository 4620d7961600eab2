//! Worker 0 writes the output, and the summary: a step of worker 0 alone, between the
//! rounds `gather` and `outcome`.
//!
//! Nothing crosses the network here: worker 0 has gathered every pair or edge and every id
//! it prints ([`crate::rounds::gather`]). It writes the output whole, by temp file and
//! rename ([`Output`]), in `simhash`'s formats ([`PairsTsv`], [`ClustersTsv`]).

use std::io::Write;
use std::time::Instant;

use anyhow::Context;

use simhash_cluster::Clusters;
use simhash_io::{ClustersTsv, Measure, Output, PairsTsv};

use super::gather::{Gathered, MatchStats};
use super::outcome::Outcome;
use crate::job::Mode;

/// What the summary line says beside the output's own figures.
#[derive(Debug)]
pub(crate) struct Summary {
    pub(crate) records_read: u64,
    pub(crate) skipped: u64,
    pub(crate) documents: u64,
    pub(crate) featureless: u64,
    pub(crate) workers: usize,
    pub(crate) bytes: u64,
    /// The method's settings as the summary shows them: blocks and tables, or bands.
    pub(crate) matching: String,
    /// The pairs' score: distance or Jaccard similarity.
    pub(crate) measure: Measure,
    pub(crate) read_seconds: f64,
    pub(crate) match_seconds: f64,
    /// When the job started on this worker.
    pub(crate) started: Instant,
}

/// What the output holds: its lines, and for `cluster` the clusters and the largest one.
pub(crate) struct Written {
    pub(crate) lines: u64,
    pub(crate) clusters: Option<(usize, usize)>,
}

/// Writes the output and, unless `summary` is `None` (`--quiet`), the summary line; returns
/// the job's outcome: `code` once the output is complete, 0 when its reader stopped reading
/// (`| head`, as `simhash` does), or the messages of a failed write.
pub(crate) fn run(
    out: Option<Output>,
    mode: Mode,
    gathered: &Gathered,
    code: u8,
    summary: &Summary,
    quiet: bool,
) -> Outcome {
    let Some(out) = out else {
        return Err(vec!["worker 0 has no output".to_string()]);
    };
    let write_start = Instant::now();
    let (out, written) = match write(out, mode, summary.measure, gathered) {
        Ok(done) => done,
        // Write errors name the output already.
        Err(e) => match e.downcast_ref::<std::io::Error>() {
            Some(io) => return Err(vec![io.to_string()]),
            None => return Err(vec![format!("{e:#}")]),
        },
    };
    if let Err(e) = out.commit() {
        // As `simhash`: a reader that stopped reading (`| head`) is not a failure.
        if simhash_io::is_broken_pipe(&e) {
            return Ok(0);
        }
        return Err(vec![format!("{:#}", anyhow::Error::from(e))]);
    }
    if !quiet {
        report(summary, &gathered.stats, &written, write_start);
    }
    Ok(code)
}

/// Writes the pairs or the clusters to `out`, uncommitted.
fn write(
    out: Output,
    mode: Mode,
    measure: Measure,
    gathered: &Gathered,
) -> anyhow::Result<(Output, Written)> {
    let records = &gathered.records;
    let index = |pos: u64| records.binary_search_by_key(&pos, |r| r.0).ok();
    let mut lines = 0u64;
    match mode {
        Mode::Pairs => {
            let mut tsv = PairsTsv::new(out, measure)?;
            for &(a, b, d) in &gathered.links {
                let (Some(ia), Some(ib)) = (index(a), index(b)) else {
                    anyhow::bail!("internal error: a paired record's id is missing");
                };
                tsv.pair(&records[ia].1, &records[ib].1, d)?;
            }
            lines = gathered.links.len() as u64;
            Ok((tsv.into_inner(), Written { lines, clusters: None }))
        }
        Mode::Dedup { .. } => anyhow::bail!("internal error: dedup writes its own output"),
        Mode::Cluster { singletons } => {
            let dense: Vec<(u32, u32)> = gathered
                .links
                .iter()
                .filter_map(|&(a, b, _)| Some((index(a)? as u32, index(b)? as u32)))
                .collect();
            let clusters = Clusters::components(records.len(), dense)
                .context("internal error: clustering failed")?;
            let mut tsv = ClustersTsv::new(out)?;
            let mut next_id = 0u64;
            for members in &clusters {
                if members.len() < 2 && !singletons {
                    continue;
                }
                for &doc in members {
                    let (_, id, fp) = &records[doc as usize];
                    tsv.member(id, *fp, next_id)?;
                    lines += 1;
                }
                next_id += 1;
            }
            let s = clusters.stats(usize::MAX);
            let clusters = Some((s.clusters, s.largest.max(usize::from(s.clusters > 0))));
            Ok((tsv.into_inner(), Written { lines, clusters }))
        }
    }
}

/// The summary line on standard error.
pub(crate) fn report(s: &Summary, stats: &MatchStats, written: &Written, write_start: Instant) {
    let clusters = match written.clusters {
        Some((c, largest)) => format!(", {c} clusters (largest {largest})"),
        None => String::new(),
    };
    let matching = match s.measure {
        Measure::Distance => format!(
            "{} distinct fingerprints, {} table records shuffled, largest prefix group {}",
            stats.representatives, stats.received, stats.largest_group
        ),
        Measure::Jaccard => format!(
            "{} distinct shingle sets, {} band records shuffled, largest band group {}, {} \
             candidates, {} verified",
            stats.representatives,
            stats.received,
            stats.largest_group,
            stats.candidates,
            stats.verified
        ),
    };
    let per_doc = stats.sent as f64 / s.documents.max(1) as f64;
    let _ = writeln!(
        std::io::stderr().lock(),
        "simhash-dist: {} records read ({} skipped), {} documents ({} featureless), {} pairs\
         {clusters}, {} lines written; {} workers, {} bytes, {}, {matching}; {} bytes exchanged \
         ({per_doc:.0} a document, at most {} by one worker); read {:.2}s, match {:.2}s, write \
         {:.2}s, total {:.2}s; peak memory of process 0 {} MiB, of any process {} MiB",
        s.records_read,
        s.skipped,
        s.documents,
        s.featureless,
        stats.record_pairs,
        written.lines,
        s.workers,
        s.bytes,
        s.matching,
        stats.sent,
        stats.max_sent,
        s.read_seconds,
        s.match_seconds,
        write_start.elapsed().as_secs_f64(),
        s.started.elapsed().as_secs_f64(),
        crate::peak_memory_mib(),
        stats.peak_mib,
    );
}
