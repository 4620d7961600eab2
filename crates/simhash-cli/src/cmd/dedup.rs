//! `simhash dedup`: the input without its near-duplicates, each kept record byte for byte.
//! The input is read twice: once to match, once to copy the kept lines.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use simhash_index::lsh;
use simhash_io::{LineReader, LineStatus, Output, Score, Source};

use simhash_cluster::Clusters;

use crate::corpus::Corpus;
use crate::matching::{Grouped, clusters};
use crate::session::Session;
use crate::settings::DedupSettings;

pub fn run(settings: &DedupSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    simhash_io::register_inputs(&[&input.path])?;
    let mut session = Session::new("dedup", &settings.run, input.strict)?;
    settings.matching.note(&mut session.summary);
    input.note(&mut session.summary);
    let records = input.reading.parser.clone();
    let mut out = Output::create_for("--output", &settings.output)?;
    let mut removed =
        settings.removed.as_deref().map(|p| Output::create_for("--removed", p)).transpose()?;
    let mut source = Source::new(&input.path);
    let corpus = session.read(&mut source, input.reading.clone(), Some(input), true)?;
    let Grouped { clusters, jaccard } =
        clusters(&mut session, &corpus, &settings.matching, &settings.grouping)?;

    session.reporter.phase("writing", source.size);
    // The lines to keep, in order: every document that is its cluster's representative.
    let mut keep: Vec<(u64, Option<u64>)> = (0..corpus.len())
        .filter(|&d| clusters.is_representative(d as u32))
        .map(|d| (corpus.line(d), corpus.line_hash(d)))
        .collect();
    keep.sort_unstable();

    let removed_count = write_removed(&corpus, &clusters, jaccard.as_deref(), removed.as_mut())?;

    between_passes_hook();
    let reader = source.reopen()?;
    let max = input.max_record_bytes;
    let mut lines = LineReader::new(reader, max);
    let (mut buf, mut raw) = (Vec::new(), Vec::new());
    let mut wanted = keep.iter().peekable();
    let mut written = 0u64;
    while let Some(status) = lines
        .next_line(&mut buf, Some(&mut raw))
        .with_context(|| format!("{}: read error", source.name))?
    {
        let header = status == LineStatus::Ok && records.skips_header(lines.line, &buf);
        if header || wanted.peek().is_some_and(|w| w.0 == lines.line) {
            if !header {
                let expected = wanted.next().and_then(|w| w.1);
                // The line must be the record that was read and matched in the first pass.
                anyhow::ensure!(
                    status == LineStatus::Ok
                        && expected.is_none_or(|h| h == simhash_io::line_hash(&buf)),
                    "{}:{}: the input changed while it was read (this record differs from \
                     the first pass); nothing was written",
                    source.name,
                    lines.line
                );
                written += 1;
            }
            out.write_all(&raw)?;
            if raw.last() != Some(&b'\n') {
                out.write_all(b"\n")?;
            }
        }
        if lines.line % 4096 == 0 {
            session.reporter.progress(lines.bytes, lines.line);
        }
        if wanted.peek().is_none() {
            break;
        }
        buf.clear();
        raw.clear();
    }
    anyhow::ensure!(
        wanted.peek().is_none(),
        "{}: the input changed while it was read (line {} is gone)",
        source.name,
        wanted.peek().map_or(0, |l| l.0)
    );
    session.summary.removed = removed_count;
    session.summary.written = written;
    session.finish(std::iter::once(out).chain(removed).collect())
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
fn write_removed(
    corpus: &Corpus,
    clusters: &Clusters,
    jaccard: Option<&[f64]>,
    mut removed: Option<&mut Output>,
) -> anyhow::Result<u64> {
    let mut removed_count = 0u64;
    for doc in 0..corpus.len() {
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
