//! `--stats`: every worker's figures (records read, bytes sent and received per kind of
//! exchange, peak memory), gathered by worker 0 and written as JSON.

use simhash_io::Output;
use timely::worker::Worker;

use super::Job;
use crate::plan::End;
use crate::rounds::all_gather;

thread_local! {
    /// Records this worker read (its share's documents).
    pub(super) static RECORDS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// One worker's figures for `--stats`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct WorkerStats {
    records: u64,
    /// Per kind of exchange: bytes sent to other workers, and received from them.
    exchanges: Vec<(String, u64, u64)>,
    process: usize,
    peak_rss_bytes: u64,
}

/// `--stats`: every worker's figures to worker 0, which writes them as JSON. A failed write
/// fails process 0 (exit 2).
pub(super) fn write(worker: &mut Worker, job: &Job, path: &std::path::Path, end: End) -> End {
    let volumes = crate::rounds::volumes();
    crate::rounds::label("stats");
    let mine = WorkerStats {
        records: RECORDS.with(std::cell::Cell::get),
        exchanges: volumes.into_iter().map(|(l, s, r)| (l.to_string(), s, r)).collect(),
        process: job.process,
        peak_rss_bytes: simhash_io::peak_memory().unwrap_or(0),
    };
    let all = all_gather(worker, &mine);
    if worker.index() != 0 {
        return end;
    }
    let written = Output::create_for("--stats", path).and_then(|mut out| {
        std::io::Write::write_all(&mut out, stats_json(&all).as_bytes())
            .map_err(simhash_io::Error::from)?;
        crate::failure::commit(|| format!("--stats {}", path.display()), || out.commit())
    });
    match written {
        Ok(()) => end,
        Err(e) => End::Failed(vec![format!("cannot write --stats {}: {e}", path.display())]),
    }
}

/// The figures as JSON: `workers` (deterministic: the same at any split of the workers
/// into processes) and `measured` (memory), one entry per worker, in worker order.
fn stats_json(all: &[WorkerStats]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("{\n  \"workers\": [\n");
    for (w, st) in all.iter().enumerate() {
        let (sent, received) = st.exchanges.iter().fold((0, 0), |(a, b), e| (a + e.1, b + e.2));
        let _ = write!(
            s,
            "    {{\"worker\": {w}, \"records_read\": {}, \"sent_bytes\": {sent}, \
             \"received_bytes\": {received}, \"exchanges\": {{",
            st.records
        );
        for (i, (label, sent, received)) in st.exchanges.iter().enumerate() {
            let comma = if i == 0 { "" } else { ", " };
            let _ = write!(s, "{comma}\"{label}\": {{\"sent\": {sent}, \"received\": {received}}}");
        }
        let comma = if w + 1 == all.len() { "" } else { "," };
        let _ = writeln!(s, "}}}}{comma}");
    }
    s.push_str("  ],\n  \"measured\": [\n");
    for (w, st) in all.iter().enumerate() {
        let comma = if w + 1 == all.len() { "" } else { "," };
        let _ = writeln!(
            s,
            "    {{\"worker\": {w}, \"process\": {}, \"peak_rss_bytes\": {}}}{comma}",
            st.process, st.peak_rss_bytes
        );
    }
    s.push_str("  ]\n}\n");
    s
}
