//! The summary line worker 0 writes on standard error, and what it says.

use std::io::Write;
use std::time::Instant;

use simhash_io::Measure;

use super::gather::MatchStats;

/// What the summary line says beside the output's own figures.
#[derive(Debug)]
pub(crate) struct Summary {
    /// Records read, valid or not.
    pub(crate) records_read: u64,
    /// Bad records and empty input files, as the census counts them.
    pub(crate) skipped: u64,
    /// Records matched (not skipped), featureless ones included.
    pub(crate) documents: u64,
    /// Documents without features.
    pub(crate) featureless: u64,
    /// Workers in the job.
    pub(crate) workers: usize,
    /// Bytes of input.
    pub(crate) bytes: u64,
    /// The method's settings as the summary shows them: blocks and tables, or bands.
    pub(crate) matching: String,
    /// The pairs' score: distance or Jaccard similarity.
    pub(crate) measure: Measure,
    /// Seconds to read and fingerprint.
    pub(crate) read_seconds: f64,
    /// Seconds to match.
    pub(crate) match_seconds: f64,
    /// When the job started on this worker.
    pub(crate) started: Instant,
}

/// What the output holds: its lines, and for `cluster` the clusters and the largest one.
pub(crate) struct Written {
    /// Lines written.
    pub(crate) lines: u64,
    /// `cluster`: the clusters written and the size of the largest.
    pub(crate) clusters: Option<(usize, usize)>,
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
             candidates, {} verified{}",
            stats.representatives,
            stats.received,
            stats.largest_group,
            stats.candidates,
            stats.verified,
            match stats.flooded {
                0 => String::new(),
                n => format!(" ({n} records of larger band groups searched whole)"),
            }
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
