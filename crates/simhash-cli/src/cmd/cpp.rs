//! simhash-cpp's `find-all` and `find-clusters` (also the `simhash-find-all` and
//! `simhash-find-clusters` binaries): decimal hashes in, JSON pairs or clusters out.

use std::io::Write;
use std::process::ExitCode;

use rayon::iter::ParallelIterator;
use rayon::slice::{ParallelSlice, ParallelSliceMut};
use simhash_core::Fingerprint;
use simhash_index::{Blocks, Distinct};
use simhash_io::Output;
use simhash_jobs::Reading;
use simhash_jobs::Session;
use simhash_jobs::matching::{clusters, match_fingerprints};

use crate::flags::{ClusterMode, KeepPolicy};
use crate::settings::{CppSettings, Grouping, Matching};

/// simhash-cpp's `find-all` and `find-clusters`.
pub fn run(settings: &CppSettings, clusters_out: bool) -> anyhow::Result<ExitCode> {
    let mut plan = simhash_io::WritePlan::new();
    plan.inputs(settings.inputs.paths()).output("--output", &settings.output);
    if let Some(stats) = &settings.run.stats {
        plan.output("--stats", stats);
    }
    plan.check()?;
    simhash_io::run::register_inputs(&settings.inputs.paths())?;
    let command = if clusters_out { "find-clusters" } else { "find-all" };
    let mut session = crate::progress::session(command, &settings.run, settings.strict)?;
    session.note_skipped(&settings.inputs);
    let matching = settings.matching;
    session.summary.note_matching(&matching);
    let mut out = Output::create_for("--output", &settings.output)?;
    let mut sources = settings.inputs.sources();
    if clusters_out {
        let reading = Reading::hashes(simhash_io::Parser::CppHash);
        let corpus = session.read(&mut sources, reading, None, false)?;
        let hash = |d: u32| corpus.fingerprint(d as usize).unwrap_or_default().get();
        let grouping = Grouping {
            mode: ClusterMode::Components,
            keep: KeepPolicy::First,
            big_cluster: simhash_jobs::DEFAULT_BIG_CLUSTER,
        };
        let clusters = clusters(&mut session, &corpus, &matching, &grouping)?.clusters;
        session.reporter.phase("writing", None);
        for members in clusters.iter().filter(|m| m.len() > 1) {
            let hashes: Vec<u64> = members.iter().map(|&d| hash(d)).collect();
            simhash_io::write_hash_list(&mut out, &hashes)?;
            session.summary.written += 1;
        }
    } else {
        let Matching::Simhash { distance, blocks } = matching else {
            anyhow::bail!("internal error: find-all matches hashes");
        };
        let hashes = session.read_hashes(&mut sources)?;
        let lines = find_all(&mut session, hashes, distance, blocks)?;
        session.reporter.phase("writing", None);
        write_lines(&session, &mut out, &lines)?;
        session.summary.written = lines.lines.len() as u64;
    }
    crate::progress::finish(session, vec![out])
}

/// One output line of `find-all`, `[h(first),h(second)]` (indexes of distinct hashes), at
/// the pair of input lines that gives it first: `(at, then)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Line {
    at: u32,
    then: u32,
    first: u32,
    second: u32,
}

/// `find-all`'s lines in output order, and the distinct hashes they index.
struct Lines {
    lines: Vec<Line>,
    distinct: Vec<Fingerprint>,
}

/// Lines formatted at once, on the run's threads: about 40 MB of output.
const WRITE_WAVE: usize = 1 << 20;
/// Lines formatted by one task (small enough that the tests' outputs span several).
const WRITE_CHUNK: usize = 1 << 10;

/// Writes `lines` in order, a wave at a time: each wave's lines are formatted in parallel
/// (looking up each line's two hashes, which at 1B are cache misses), then written.
fn write_lines(session: &Session, out: &mut Output, lines: &Lines) -> anyhow::Result<()> {
    for wave in lines.lines.chunks(WRITE_WAVE) {
        let texts: Vec<Vec<u8>> = session.pool.install(|| {
            wave.par_chunks(WRITE_CHUNK)
                .map(|chunk| {
                    let mut text = Vec::with_capacity(chunk.len() * 42);
                    for line in chunk {
                        let a = lines.distinct[line.first as usize];
                        let b = lines.distinct[line.second as usize];
                        simhash_io::write_hash_pair(&mut text, a.get(), b.get())?;
                    }
                    Ok(text)
                })
                .collect::<std::io::Result<_>>()
        })?;
        for text in &texts {
            out.write_all(text)?;
        }
    }
    Ok(())
}

/// The lines of `find-all` over `hashes` (the input's, in order): each `[h(a),h(b)]` once,
/// in order of the first pair of input positions `a < b` that gives it, as simhash-cpp's
/// set of hash pairs does. A hash on several positions gives `[h,h]` once (at its first
/// two positions); two distinct hashes within `distance` bits give `[h1,h2]` at the first
/// position of h1 and the first position of h2 after it, if any, and `[h2,h1]` the same
/// way: found once between the distinct hashes, not once per pair of their positions.
///
/// Memory: 12 bytes per input hash while identical hashes are collapsed ([`Distinct`]),
/// then 12 bytes per distinct hash (and 4 per repeated position) beside the matching's
/// budget, and 16 bytes per output line.
fn find_all(
    session: &mut Session,
    hashes: Vec<Fingerprint>,
    distance: u32,
    blocks: Blocks,
) -> anyhow::Result<Lines> {
    if u32::try_from(hashes.len()).is_err() {
        anyhow::bail!("find-all takes at most {} hashes, not {}", u32::MAX, hashes.len());
    }
    let distinct = session.pool.install(|| Distinct::new(hashes));
    let duplicates = distinct.duplicates() as u64;
    let first = distinct.first();
    let mut lines: Vec<Line> = distinct
        .repeated()
        .map(|r| {
            let at = distinct.positions(r);
            Line { at: at[0], then: at[1], first: r as u32, second: r as u32 }
        })
        .collect();
    let found =
        match_fingerprints(session, distinct.fingerprints(), distance, blocks, |a, b, _| {
            let (u, v) = if first[a as usize] < first[b as usize] { (a, b) } else { (b, a) };
            let (at, then) = (first[u as usize], first[v as usize]);
            lines.push(Line { at, then, first: u, second: v });
            // A position of u's hash after v's first gives the line the other way round.
            if let Some(later) = distinct.position_after(u as usize, then) {
                lines.push(Line { at: then, then: later, first: v, second: u });
            }
        })?;
    session.summary.exact_duplicates = Some(duplicates);
    session.summary.pairs = found + duplicates;
    session.pool.install(|| lines.par_sort_unstable());
    Ok(Lines { lines, distinct: distinct.into_fingerprints() })
}
