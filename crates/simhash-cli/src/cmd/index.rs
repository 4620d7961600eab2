//! `simhash index add|query|stats|compact|verify`: the persistent index on disk
//! ([`simhash_index::disk`]; the format is in `docs/index-format.md`).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use rayon::prelude::*;
use simhash_core::Fingerprint;
use simhash_index::disk::{DiskErrorKind, DiskIndex, Writer};
use simhash_index::lsh::SketchStore;
use simhash_io::{Output, Score};
use simhash_jobs::Corpus;
use simhash_jobs::against::{add_documents, doc_sketch};

use crate::flags::{IndexAddArgs, IndexCommand, IndexDirArgs, IndexQueryArgs, IndexStatsArgs};
use crate::settings::{IndexAddSettings, IndexInput, IndexQuerySettings, StoredSettings};

/// Runs `simhash index add` or `simhash index query`.
pub fn run(command: &IndexCommand) -> anyhow::Result<ExitCode> {
    match command {
        IndexCommand::Add(args) => add(args),
        IndexCommand::Query(args) => query(args),
        IndexCommand::Stats(args) => stats(args),
        IndexCommand::Compact(args) => compact(args),
        IndexCommand::Verify(args) => verify(args),
    }
}

/// The index at `dir`, or none when there is none yet.
pub fn open_if_any(dir: &Path) -> anyhow::Result<Option<DiskIndex>> {
    match DiskIndex::open(dir) {
        Ok(index) => Ok(Some(index)),
        Err(e) if e.kind() == DiskErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The names of the input files, as messages name them.
fn names(sources: &[simhash_io::Source]) -> Vec<String> {
    sources.iter().map(|s| s.name.clone()).collect()
}

fn add(args: &IndexAddArgs) -> anyhow::Result<ExitCode> {
    let settings = IndexAddSettings::new(args);
    let existing = open_if_any(&settings.index)?;
    let IndexInput { stored, matching, input } =
        settings.input(existing.as_ref().map(DiskIndex::settings))?;
    drop(existing);
    input.write_plan(&settings.run).forbid_written_dir("the index", &settings.index).check()?;
    simhash_io::run::register_inputs(&input.inputs.paths())?;
    let mut session = crate::progress::session("index add", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    session.summary.note_matching(&matching);
    input.note(&mut session.summary);
    // The lock first: a second writer fails before reading anything.
    let mut writer = Writer::open(&settings.index, &stored)?;
    session.summary.index_documents = Some(writer.documents());
    let mut sources = input.inputs.sources();
    let mut corpus = session.read_for_index(&mut sources, input.reading.clone(), &input)?;
    // Records without ids: ids that differ between the inputs added to one index.
    corpus.tag_line_ids(&input.inputs.paths());
    session.reporter.phase("indexing", None);
    let names = names(&sources);
    let docs = 0..corpus.len();
    let added = add_documents(
        &mut writer,
        &corpus,
        &mut session.reporter,
        &names,
        docs,
        Some("not added"),
    )?;
    session.reporter.phase("committing", None);
    // Signals held off from just before the manifest is replaced: interrupted, the add is
    // either not committed (exit 128 + the signal) or committed and reported as usual.
    let (_, hold) = writer
        .commit_with(|| Ok::<_, simhash_index::disk::DiskError>(simhash_io::run::hold_signals()))
        .with_context(|| format!("{}: nothing was added", settings.index.display()))?;
    simhash_io::run::note_committed("its additions to the index");
    drop(hold);
    session.summary.index_added = Some(added.added);
    session.summary.index_already = Some(added.already);
    crate::progress::finish(session, Vec::new())
}

fn query(args: &IndexQueryArgs) -> anyhow::Result<ExitCode> {
    let settings = IndexQuerySettings::new(args);
    let index = DiskIndex::open(&settings.index)?;
    let IndexInput { stored, matching, input } = settings.input(index.settings())?;
    index.check_settings(&stored)?;
    let mut plan = input.write_plan(&settings.run);
    plan.output("--output", &settings.output).forbid_dir("the index", &settings.index).check()?;
    simhash_io::run::register_inputs(&input.inputs.paths())?;
    let mut session = crate::progress::session("index query", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    session.summary.note_matching(&matching);
    input.note(&mut session.summary);
    session.summary.index_documents = Some(index.len());
    let mut out = Output::create_for("--output", &settings.output)?;
    let mut sources = input.inputs.sources();
    let corpus = session.read(&mut sources, input.reading.clone(), Some(&input), false)?;
    session.reporter.phase("matching", None);
    let hits = session.pool.install(|| all_hits(&corpus, &index))?;
    let listed = listed_hits(&corpus, &index, hits)?;
    session.reporter.phase("writing", None);
    let measure = if corpus.sketches.is_some() { "jaccard" } else { "distance" };
    writeln!(out, "id\tindexed_id\t{measure}")?;
    let (mut pairs, mut matched) = (0u64, 0u64);
    for (doc, hits) in listed.iter().enumerate() {
        matched += u64::from(!hits.is_empty());
        for &(indexed, score) in hits {
            writeln!(out, "{}\t{}\t{score}", corpus.id(doc), index.id(indexed)?)?;
            pairs += 1;
        }
    }
    session.summary.pairs = pairs;
    session.summary.index_matched = Some(matched);
    session.summary.written = pairs;
    crate::progress::finish(session, vec![out])
}

/// Every indexed document each document of the corpus matches, in index order.
fn all_hits(corpus: &Corpus, index: &DiskIndex) -> anyhow::Result<Vec<Vec<(u64, Score)>>> {
    (0..corpus.len())
        .into_par_iter()
        .map(|doc| -> anyhow::Result<Vec<(u64, Score)>> {
            Ok(match &corpus.sketches {
                Some(store) => match doc_sketch(store, doc)? {
                    Some(sketch) => index
                        .query_sketch(&sketch)?
                        .into_iter()
                        .map(|h| (h.id, Score::Jaccard(h.jaccard)))
                        .collect(),
                    None => Vec::new(),
                },
                None => match corpus.fingerprint(doc) {
                    Some(fp) => index
                        .query_fingerprint(fp)?
                        .into_iter()
                        .map(|h| (h.id, Score::Distance(h.distance)))
                        .collect(),
                    None => Vec::new(),
                },
            })
        })
        .collect()
}

/// What `index query` lists of each document's hits: what `simhash pairs` lists of the
/// pairs between the index's documents and the input's, had it read them one after the
/// other. `pairs` lists identical documents (the same shingle set, or fingerprint) once,
/// with the first of them, and pairs distinct ones through the first of each group, so:
///
/// * a document identical to indexed ones is listed with the first of them only;
/// * otherwise, a document identical to an earlier document of the input is not listed
///   (that one is);
/// * otherwise each group of identical indexed documents it matches is listed once, with
///   its first member.
fn listed_hits(
    corpus: &Corpus,
    index: &DiskIndex,
    hits: Vec<Vec<(u64, Score)>>,
) -> anyhow::Result<Vec<Vec<(u64, Score)>>> {
    let identical =
        |s: Score| matches!(s, Score::Jaccard(j) if j >= 1.0) || s == Score::Distance(0);
    let mut earlier = EarlierCopies::default();
    let mut listed = Vec::with_capacity(hits.len());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (doc, mut hits) in hits.into_iter().enumerate() {
        let copy_of_earlier = earlier.seen(corpus, doc)?;
        if let Some(&first) = hits.iter().find(|&&(_, s)| identical(s)) {
            hits = vec![first];
        } else if copy_of_earlier {
            hits.clear();
        } else {
            // Two indexed documents can be identical only if they score the same.
            let mut kept: Vec<(u64, Score)> = Vec::with_capacity(hits.len());
            'hit: for &(indexed, score) in &hits {
                for &(other, _) in kept.iter().filter(|&&(_, s)| s == score) {
                    index.read_payload(other, &mut a)?;
                    index.read_payload(indexed, &mut b)?;
                    if a == b {
                        continue 'hit;
                    }
                }
                kept.push((indexed, score));
            }
            hits = kept;
        }
        listed.push(hits);
    }
    Ok(listed)
}

/// The documents of the input seen so far, by the hash of their shingle set (or their
/// fingerprint), to tell whether a document is identical to an earlier one.
#[derive(Default)]
struct EarlierCopies {
    by_hash: HashMap<u64, Vec<usize>>,
    a: Vec<u64>,
    b: Vec<u64>,
}

impl EarlierCopies {
    /// Whether `doc` is identical to an earlier document; records it.
    fn seen(&mut self, corpus: &Corpus, doc: usize) -> anyhow::Result<bool> {
        let key = match &corpus.sketches {
            Some(store) if store.has(doc) => store.set_hash(doc),
            Some(_) => return Ok(false),
            None => match corpus.fingerprint(doc) {
                Some(Fingerprint(fp)) => fp,
                None => return Ok(false),
            },
        };
        let same = self.by_hash.entry(key).or_default();
        let copy = match &corpus.sketches {
            // Equal fingerprints are equal keys.
            None => !same.is_empty(),
            // Sets are read only when their hash was seen before, and compared whole.
            Some(_) if same.is_empty() => false,
            Some(store) => {
                store.read_set(doc, &mut self.a)?;
                let mut copy = false;
                for &other in same.iter() {
                    store.read_set(other, &mut self.b)?;
                    if self.a == self.b {
                        copy = true;
                        break;
                    }
                }
                copy
            }
        };
        if !copy {
            same.push(doc);
        }
        Ok(copy)
    }
}

fn stats(args: &IndexStatsArgs) -> anyhow::Result<ExitCode> {
    let index = DiskIndex::open(&args.index)?;
    let stats = index.stats();
    let mut plan = simhash_io::WritePlan::new();
    plan.output("--output", &args.output.output).forbid_dir("the index", &args.index).check()?;
    let mut out = Output::create_for("--output", &args.output.output)?;
    let settings = settings_fields(&stats.settings);
    if args.json {
        let mut map = serde_json::Map::new();
        map.insert("index".into(), args.index.display().to_string().into());
        map.insert("documents".into(), stats.documents.into());
        map.insert("segments".into(), stats.segments.into());
        map.insert("bytes".into(), stats.bytes.into());
        map.insert("generation".into(), stats.generation.into());
        let settings: serde_json::Map<String, serde_json::Value> = settings.into_iter().collect();
        map.insert("settings".into(), settings.into());
        serde_json::to_writer_pretty(&mut out, &map)?;
        out.write_all(b"\n")?;
    } else {
        writeln!(out, "index\t{}", args.index.display())?;
        writeln!(out, "documents\t{}", stats.documents)?;
        writeln!(out, "segments\t{}", stats.segments)?;
        writeln!(out, "bytes\t{}", stats.bytes)?;
        if stats.documents > 0 {
            writeln!(
                out,
                "bytes_per_document\t{:.1}",
                stats.bytes as f64 / stats.documents as f64
            )?;
        }
        writeln!(out, "generation\t{}", stats.generation)?;
        for (name, value) in settings {
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            writeln!(out, "{name}\t{value}")?;
        }
    }
    simhash_io::commit_all(vec![out])?;
    Ok(ExitCode::SUCCESS)
}

/// The settings as named fields, in a fixed order.
fn settings_fields(settings: &StoredSettings) -> Vec<(String, serde_json::Value)> {
    let mut fields: Vec<(String, serde_json::Value)> =
        vec![("method".into(), settings.method().into())];
    match settings {
        StoredSettings::MinHash(s) => {
            fields.extend([
                ("preset".into(), s.preset.clone().into()),
                ("window".into(), s.window.into()),
                ("num_perm".into(), s.num_perm.into()),
                ("bands".into(), s.bands.into()),
                ("rows".into(), s.rows.into()),
                ("lsh_threshold".into(), s.lsh_threshold.into()),
                ("jaccard".into(), s.jaccard.into()),
                ("seed".into(), s.seed.into()),
                ("band_key_bits".into(), s.band_key_bits.into()),
            ]);
        }
        StoredSettings::Simhash(s) => {
            fields.extend([
                ("preset".into(), s.preset.clone().into()),
                ("window".into(), s.window.into()),
                ("distance".into(), s.max_distance.into()),
                ("blocks".into(), s.blocks.into()),
            ]);
        }
    }
    fields
}

fn compact(args: &IndexDirArgs) -> anyhow::Result<ExitCode> {
    let index = DiskIndex::open(&args.index)?;
    let (settings, before) = (index.settings().clone(), index.stats());
    drop(index);
    let writer = Writer::open_existing(&args.index, &settings)?;
    let (commit, hold) = writer.compact_with(|| {
        Ok::<_, simhash_index::disk::DiskError>(simhash_io::run::hold_signals())
    })?;
    simhash_io::run::note_committed("the compacted index");
    drop(hold);
    if !args.quiet.quiet {
        let after = DiskIndex::open(&args.index)?.stats();
        eprintln!(
            "simhash: {}: {} documents, {} segments ({} bytes) compacted into {} ({} bytes)",
            args.index.display(),
            commit.documents,
            before.segments,
            before.bytes,
            after.segments,
            after.bytes
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(args: &IndexDirArgs) -> anyhow::Result<ExitCode> {
    let index = DiskIndex::open(&args.index)?;
    index.verify()?;
    if !args.quiet.quiet {
        let stats = index.stats();
        eprintln!(
            "simhash: {}: ok: {} documents in {} segments, {} bytes, every checksum verified",
            args.index.display(),
            stats.documents,
            stats.segments,
            stats.bytes
        );
    }
    Ok(ExitCode::SUCCESS)
}
