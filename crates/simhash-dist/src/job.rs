//! The program every worker runs: a fixed sequence of dataflow rounds, the same on every
//! worker, each deciding what comes next only from what all workers were told.
//!
//! 1. Read: each worker reads and fingerprints its share ([`crate::share`]).
//! 2. `chunks`: all-gather each piece's line count and any error; everyone can now number
//!    lines (in the file, for `FILE:LINE` messages, and in the concatenation of the files,
//!    for the ids of records without one, as `simhash` numbers the concatenated input), and
//!    stops together if a worker failed.
//! 3. `id kinds`: the first record of the input (over all files, in order) decides whether
//!    records have ids; every record of the other kind is a bad record (`mixed_ids`), as
//!    `simhash` reports it.
//!    `ids`, `duplicates`: ids are exchanged by hash; all but the first (in input order) of
//!    each id are sent back to their reader and skipped, as `simhash` skips them.
//! 4. `census`: counts are all-gathered; bad records go to worker 0, which reports them in
//!    input order (or stops, with `--strict`).
//! 5. `collapse`: fingerprints are exchanged by value; each set of identical fingerprints
//!    becomes one representative (the first record) with a multiplicity, so a flood of
//!    copies costs one record per table, not a quadratic group.
//! 6. tables: one epoch per table ([`crate::round::table_phase`]).
//! 7. `gather`: representative pairs (pairs) or spanning-forest edges (cluster) go to
//!    worker 0, which expands them to records, asks the readers for the ids it must print,
//!    and writes the output whole, by temp file and rename.
//! 8. `outcome`: worker 0 tells every worker how the write went, so that every process
//!    exits with the same code (0, 1 when records were skipped, or 2).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use simhash_cluster::Clusters;
use simhash_index::Tables;
use simhash_io::{ClustersTsv, Measure, Output, PairsTsv, Problem};
use timely::worker::Worker;

use crate::forest::Forest;
use crate::round::{Rep, all_gather, exchange, mix, table_phase};
use crate::share::{BadRecord, Chunk, InputPlan, OFFSET_BITS, Reading, Share, read_share};

/// What to compute and write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Pairs,
    Cluster { singletons: bool },
}

/// Everything a worker needs to know, the same in every process.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) mode: Mode,
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) reading: Reading,
    pub(crate) max_record_bytes: u64,
    pub(crate) strict: bool,
    /// Fixed blocks, or `None` for the planner's choice.
    pub(crate) blocks: Option<usize>,
    pub(crate) distance: u32,
    pub(crate) output: PathBuf,
    pub(crate) quiet: bool,
    pub(crate) inject_error: Option<usize>,
    pub(crate) inject_panic: Option<usize>,
}

/// How a worker's part of the job ended.
#[derive(Debug)]
pub(crate) enum End {
    /// Finished, with the job's exit code (1 when records were skipped): the same on every
    /// worker of every process.
    Done(u8),
    /// The job failed; the messages say why (every worker has them).
    Failed(Vec<String>),
}

/// Round `chunks`: what each worker read, or why it could not.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ChunkReport {
    digest: u64,
    chunks: Vec<Chunk>,
    error: Option<String>,
}

/// Round `census`: each worker's counts after reading and removing duplicate ids.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct Census {
    bad: u64,
    documents: u64,
    featureless: u64,
}

/// Round `gather`: each worker's matching figures.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
struct MatchStats {
    record_pairs: u64,
    largest_group: u64,
    received: u64,
    representatives: u64,
}

pub(crate) fn run(worker: &mut Worker, job: &Job) -> End {
    let (me, peers) = (worker.index(), worker.peers());
    let started = Instant::now();
    // The output is created first, so that a bad path fails before any input is read.
    let mut out = None;
    let mut error = None;
    if me == 0 {
        match Output::create_for("--output", &job.output) {
            Ok(o) => out = Some(o),
            Err(e) => error = Some(format!("{:#}", anyhow::Error::from(e))),
        }
    }
    let plan = match InputPlan::new(&job.paths, peers) {
        Ok(plan) => plan,
        // Every worker fails the same way on the same flags: no round is needed.
        Err(e) => return End::Failed(vec![format!("{e:#}")]),
    };
    let mut share = Share::default();
    if error.is_none() {
        match read_share(&plan, me, &job.reading, job.max_record_bytes) {
            Ok(s) => share = s,
            Err(e) => error = Some(format!("worker {me}: {e:#}")),
        }
    }
    if job.inject_error == Some(me) {
        error = Some(format!("worker {me}: injected failure (--inject-error)"));
    }
    let read_seconds = started.elapsed().as_secs_f64();

    // Round `chunks`.
    let report = ChunkReport { digest: plan.digest(), chunks: share.chunks.clone(), error };
    let reports = all_gather(worker, &report);
    let mut errors: Vec<String> = reports.iter().filter_map(|r| r.error.clone()).collect();
    if reports.iter().any(|r| r.digest != reports[0].digest) {
        errors.push(
            "the processes disagree on the input (file names, sizes, kinds) or the number of \
             workers: every process must see the same files and run the same simhash-dist \
             build (the same version, on every host)"
                .to_string(),
        );
    }
    if !errors.is_empty() {
        return End::Failed(errors);
    }
    let all_chunks: Vec<&Chunk> = reports.iter().flat_map(|r| &r.chunks).collect();
    let lines_before = chunk_lines(&share.chunks, &all_chunks);
    share.docs.resolve_lines(&lines_before);
    for bad in &mut share.bad {
        bad.line += lines_before[bad.chunk as usize].0;
    }

    // Round `id kinds`: the first record of the input (in input order, over all files)
    // decides whether records have ids; each later record of the other kind is a bad record,
    // as `simhash` reports it.
    let docs = &mut share.docs;
    let firsts = all_gather(worker, &docs.pos.first().map(|&pos| (pos, !docs.generated[0])));
    if let Some((_, with_ids)) = firsts.iter().flatten().min() {
        for d in 0..docs.len() {
            if docs.generated[d] != *with_ids {
                continue;
            }
            docs.removed[d] = true;
            share.bad.push(BadRecord {
                pos: docs.pos[d],
                chunk: 0,
                line: docs.line[d],
                problem: Problem::mixed_ids(!*with_ids),
            });
        }
    }

    // Rounds `ids` and `duplicates`.
    let ids = exchange(
        worker,
        (0..docs.len()).filter(|&d| !docs.removed[d]).filter_map(|d| {
            let h = id_hash(docs.given_id(d)?);
            Some(((h.0 % peers as u64) as usize, (h, docs.pos[d])))
        }),
    );
    let mut ids = ids;
    ids.sort_unstable();
    let later = ids
        .windows(2)
        .filter(|w| w[0].0 == w[1].0)
        .map(|w| (plan.owner(w[1].1), w[1].1))
        .collect::<Vec<_>>();
    let duplicates = exchange(worker, later);
    for pos in duplicates {
        if let Ok(d) = docs.pos.binary_search(&pos) {
            docs.removed[d] = true;
            let id = docs.given_id(d).unwrap_or_default();
            share.bad.push(BadRecord {
                pos,
                chunk: 0,
                line: docs.line[d],
                problem: Problem::duplicate_id(id),
            });
        }
    }

    // Round `census`.
    let live = |d: usize| !docs.removed[d];
    let census = Census {
        bad: share.bad.len() as u64,
        documents: (0..docs.len()).filter(|&d| live(d)).count() as u64,
        featureless: (0..docs.len()).filter(|&d| live(d) && docs.fp[d].is_none()).count() as u64,
    };
    let censuses = all_gather(worker, &census);
    let bad =
        exchange(worker, share.bad.iter().map(|b| (0, (b.pos, b.line, b.problem.message.clone()))));
    let total = censuses.iter().fold(Census::default(), |acc, c| Census {
        bad: acc.bad + c.bad,
        documents: acc.documents + c.documents,
        featureless: acc.featureless + c.featureless,
    });
    let mut per_file = vec![0u64; plan.files.len()];
    for c in &all_chunks {
        per_file[c.file] += c.records;
    }
    let empty: Vec<&str> = per_file
        .iter()
        .zip(&plan.files)
        .filter(|(n, _)| **n == 0)
        .map(|(_, f)| f.name.as_str())
        .collect();
    if job.strict && (total.bad > 0 || !empty.is_empty()) {
        if me != 0 {
            return End::Failed(Vec::new());
        }
        let mut bad = bad;
        bad.sort_unstable();
        let message = match bad.first() {
            Some((pos, line, message)) => {
                format!("{}:{line}: {message} (stopped by --strict)", file_name(&plan, *pos))
            }
            None => format!("{}: empty input, no records (stopped by --strict)", empty[0]),
        };
        return End::Failed(vec![message]);
    }
    if me == 0 {
        let mut bad = bad;
        bad.sort_unstable();
        let mut err = std::io::stderr().lock();
        for (pos, line, message) in &bad {
            let _ = writeln!(err, "simhash-dist: {}:{line}: {message}", file_name(&plan, *pos));
        }
        for name in &empty {
            let _ = writeln!(err, "simhash-dist: {name}: empty input, no records");
        }
    }

    // Round `collapse`.
    let fps = exchange(
        worker,
        (0..docs.len()).filter(|&d| live(d)).filter_map(|d| {
            let fp = docs.fp[d]?;
            Some(((mix(u64::MAX, fp) % peers as u64) as usize, (fp, docs.pos[d])))
        }),
    );
    let mut fps = fps;
    fps.sort_unstable();
    let mut reps: Vec<Rep> = Vec::new();
    // (representative, member) for every record that is not its set's representative.
    let mut copies: Vec<(u64, u64)> = Vec::new();
    let mut copy_pairs = 0u64;
    for run in fps.chunk_by(|a, b| a.0 == b.0) {
        let (fp, rep) = run[0];
        reps.push((rep, fp, run.len() as u32));
        copies.extend(run[1..].iter().map(|&(_, member)| (rep, member)));
        let m = run.len() as u64;
        copy_pairs += m * (m - 1) / 2;
    }
    drop(fps);

    // The tables.
    let fingerprinted = total.documents - total.featureless;
    let tables = match job
        .blocks
        .map_or_else(|| simhash_index::plan(fingerprinted, job.distance).map(|p| p.blocks), Ok)
    {
        Ok(blocks) => Tables::new(blocks, job.distance),
        Err(e) => Err(e),
    };
    let tables = match tables {
        Ok(t) => t,
        Err(e) => return End::Failed(vec![format!("invalid --blocks/--distance: {e}")]),
    };
    assert!(job.inject_panic != Some(me), "worker {me}: injected panic (--inject-panic)");
    let match_start = Instant::now();
    let forest = std::rc::Rc::new(std::cell::RefCell::new(Forest::default()));
    let rep_pairs = std::rc::Rc::new(std::cell::RefCell::new(Vec::<(u64, u64, u32)>::new()));
    if matches!(job.mode, Mode::Cluster { .. }) {
        let mut f = forest.borrow_mut();
        for &(rep, member) in &copies {
            f.union(rep, member);
        }
    }
    let (mode, f2, p2) = (job.mode, std::rc::Rc::clone(&forest), std::rc::Rc::clone(&rep_pairs));
    let matches = table_phase(worker, &tables, job.distance, &reps, move |a, b, d, _| match mode {
        Mode::Pairs => p2.borrow_mut().push((a, b, d)),
        Mode::Cluster { .. } => f2.borrow_mut().union(a, b),
    });
    let match_seconds = match_start.elapsed().as_secs_f64();

    // Round `gather`.
    let stats = MatchStats {
        record_pairs: matches.record_pairs + copy_pairs,
        largest_group: matches.largest_group,
        received: matches.received,
        representatives: reps.len() as u64,
    };
    let stats = all_gather(worker, &stats);
    let (edges, copies) = match job.mode {
        Mode::Pairs => {
            let pairs = exchange(worker, rep_pairs.take().into_iter().map(|p| (0, p)));
            let copies = exchange(worker, copies.into_iter().map(|c| (0, c)));
            (pairs, copies)
        }
        Mode::Cluster { .. } => {
            let edges = std::mem::take(&mut forest.borrow_mut().edges);
            (exchange(worker, edges.into_iter().map(|(a, b)| (0, (a, b, 0)))), Vec::new())
        }
    };

    // What worker 0 must print: record pairs, or the clusters' members.
    let mut pairs: Vec<(u64, u64, u32)> = Vec::new();
    let mut needed: Vec<u64> = Vec::new();
    if me == 0 {
        match job.mode {
            Mode::Pairs => {
                pairs = expand(&edges, copies);
                needed.extend(pairs.iter().flat_map(|&(a, b, _)| [a, b]));
            }
            Mode::Cluster { .. } => needed.extend(edges.iter().flat_map(|&(a, b, _)| [a, b])),
        }
        needed.sort_unstable();
        needed.dedup();
    }
    let everything = job.mode == Mode::Cluster { singletons: true };
    let requests = if everything {
        Vec::new()
    } else {
        exchange(worker, needed.iter().map(|&pos| (plan.owner(pos), pos)))
    };
    let answers = if everything {
        (0..docs.len()).filter(|&d| live(d)).collect::<Vec<_>>()
    } else {
        requests.iter().filter_map(|pos| docs.pos.binary_search(pos).ok()).collect()
    };
    let mut records = exchange(
        worker,
        answers.into_iter().map(|d| (0, (docs.pos[d], docs.id(d), docs.numeric[d], docs.fp[d]))),
    );
    // Every worker knows the census, so every worker knows the exit code.
    let skipped = total.bad + empty.len() as u64;
    let code = u8::from(skipped > 0);

    // Worker 0 writes; the others wait for the outcome, so that every process exits with
    // the same code.
    let outcome: Result<u8, Vec<String>> = 'write: {
        if me != 0 {
            break 'write Ok(code);
        }
        records.sort_unstable_by_key(|r| r.0);
        let Some(out) = out.take() else {
            break 'write Err(vec!["worker 0 has no output".to_string()]);
        };
        let positions: Vec<u64> = records.iter().map(|r| r.0).collect();
        let index = |pos: u64| positions.binary_search(&pos).ok();
        let write_start = Instant::now();
        let mut written = 0u64;
        let mut summary_clusters = None;
        let result = (|| -> std::io::Result<Output> {
            Ok(match job.mode {
                Mode::Pairs => {
                    let mut tsv = PairsTsv::new(out, Measure::Distance)?;
                    for &(a, b, d) in &pairs {
                        let (Some(ia), Some(ib)) = (index(a), index(b)) else {
                            return Err(std::io::Error::other("a paired record's id is missing"));
                        };
                        tsv.pair(&records[ia].1, &records[ib].1, d)?;
                    }
                    written = pairs.len() as u64;
                    tsv.into_inner()
                }
                Mode::Cluster { singletons } => {
                    let dense: Vec<(u32, u32)> = edges
                        .iter()
                        .filter_map(|&(a, b, _)| Some((index(a)? as u32, index(b)? as u32)))
                        .collect();
                    let clusters = Clusters::components(records.len(), dense)
                        .map_err(|e| std::io::Error::other(format!("clustering failed: {e}")))?;
                    let mut tsv = ClustersTsv::new(out)?;
                    let mut next_id = 0u64;
                    for members in &clusters {
                        if members.len() < 2 && !singletons {
                            continue;
                        }
                        for &doc in members {
                            let (_, id, _, fp) = &records[doc as usize];
                            tsv.member(id, *fp, next_id)?;
                            written += 1;
                        }
                        next_id += 1;
                    }
                    let s = clusters.stats(usize::MAX);
                    summary_clusters =
                        Some((s.clusters, s.largest.max(usize::from(s.clusters > 0))));
                    tsv.into_inner()
                }
            })
        })();
        let out = match result {
            Ok(out) => out,
            // Write errors name the output already.
            Err(e) => break 'write Err(vec![e.to_string()]),
        };
        if let Err(e) = out.commit() {
            // As `simhash`: a reader that stopped reading (`| head`) is not a failure.
            if simhash_io::is_broken_pipe(&e) {
                break 'write Ok(0);
            }
            break 'write Err(vec![format!("{:#}", anyhow::Error::from(e))]);
        }
        if !job.quiet {
            let records_read: u64 = all_chunks.iter().map(|c| c.records).sum();
            let bytes: u64 = all_chunks.iter().map(|c| c.bytes).sum();
            let pairs_total: u64 = stats.iter().map(|s| s.record_pairs).sum();
            let largest_group = stats.iter().map(|s| s.largest_group).max().unwrap_or(0);
            let shuffled: u64 = stats.iter().map(|s| s.received).sum();
            let reps_total: u64 = stats.iter().map(|s| s.representatives).sum();
            let clusters = match summary_clusters {
                Some((c, largest)) => format!(", {c} clusters (largest {largest})"),
                None => String::new(),
            };
            let _ = writeln!(
                std::io::stderr().lock(),
                "simhash-dist: {records_read} records read ({skipped} skipped), {} documents \
             ({} featureless), {pairs_total} pairs{clusters}, {written} lines written; \
             {peers} workers, {bytes} bytes, {} blocks / {} tables, {reps_total} distinct \
             fingerprints, {shuffled} table records shuffled, largest prefix group \
             {largest_group}; read {read_seconds:.2}s, match {match_seconds:.2}s, \
             write {:.2}s, total {:.2}s; peak memory of process 0 {} MiB",
                total.documents,
                total.featureless,
                tables.blocks(),
                tables.len(),
                write_start.elapsed().as_secs_f64(),
                started.elapsed().as_secs_f64(),
                peak_memory_mib(),
            );
        }
        Ok(code)
    };

    // Round `outcome`: worker 0's result goes to every worker.
    let told = exchange(worker, (0..peers).filter(|_| me == 0).map(|w| (w, outcome.clone())));
    match told.into_iter().next() {
        Some(Ok(code)) => End::Done(code),
        Some(Err(messages)) => End::Failed(messages),
        None => End::Failed(vec!["worker 0 sent no outcome".to_string()]),
    }
}

/// This process's peak resident memory in MiB ([`simhash_io::peak_memory`]; 0 where it is
/// not known).
pub(crate) fn peak_memory_mib() -> u64 {
    simhash_io::peak_memory().map_or(0, |bytes| bytes >> 20)
}

/// For each of `mine`: the lines of its file before it (so messages name `FILE:LINE` in the
/// file), and the lines of all the earlier files (so a record without an id gets its line
/// number in the concatenation of the files, as `simhash` numbers the concatenated input).
fn chunk_lines(mine: &[Chunk], all: &[&Chunk]) -> Vec<(u64, u64)> {
    mine.iter()
        .map(|c| {
            let in_file = all.iter().filter(|o| o.file == c.file && o.lo < c.lo).map(|o| o.lines);
            let earlier = all.iter().filter(|o| o.file < c.file).map(|o| o.lines);
            (in_file.sum(), earlier.sum())
        })
        .collect()
}

fn file_name(plan: &InputPlan, pos: u64) -> &str {
    plan.files.get((pos >> OFFSET_BITS) as usize).map_or("?", |f| f.name.as_str())
}

/// The pairs `simhash pairs` lists: each copy of a fingerprint once with its set's
/// representative (distance 0), and the representative pairs as they are (each stands for
/// the pairs of the two sets of copies, which are not repeated: a flood of copies is one
/// line a record, not one a pair). Sorted as `simhash pairs` writes them.
fn expand(rep_pairs: &[(u64, u64, u32)], copies: Vec<(u64, u64)>) -> Vec<(u64, u64, u32)> {
    let mut out: Vec<(u64, u64, u32)> = rep_pairs.to_vec();
    out.extend(copies.into_iter().map(|(rep, member)| (rep.min(member), rep.max(member), 0)));
    out.sort_unstable();
    out
}

/// A 128-bit hash of an id: XXH3-128 of its UTF-8 bytes, as `(high, low)` 64-bit halves;
/// `high % workers` is the worker that checks the id for duplicates. XXH3 is a fixed,
/// specified function, so processes built with different Rust toolchains agree on it
/// (`std`'s `DefaultHasher` is not specified and may change between Rust releases).
fn id_hash(id: &str) -> (u64, u64) {
    let h = xxhash_rust::xxh3::xxh3_128(id.as_bytes());
    ((h >> 64) as u64, h as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_hash_is_xxh3_128() {
        // XXH3-128 (seed 0) of the empty input, from the reference implementation's test
        // vectors; then a value pinned here: a change of hash would split one job's
        // processes built from different sources.
        assert_eq!(id_hash(""), (0x99aa06d3014798d8, 0x6001c324468d497f));
        assert_eq!(id_hash("doc-1"), (0x86d30a7187b8846d, 0x519b17ab187068cc));
    }
}
