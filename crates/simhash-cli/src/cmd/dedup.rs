//! `simhash dedup`: the input without its near-duplicates, each kept record byte for byte
//! (or every record, annotated: `--annotate`). The input is read twice: once to match,
//! once to copy the records ([`simhash_jobs::rewrite`]). Several input files are read as one
//! (their concatenation): the output holds the kept lines of each in turn, and one hash
//! TSV header, the first file's; or, with `--output-dir`, each file's go to an output of
//! its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use simhash_index::disk::DiskIndex;
use simhash_index::lsh::{Relation, SpillStore};
use simhash_io::{IdValue, Measure, Output, Score};

use simhash_cluster::Clusters;

use simhash_jobs::Corpus;
use simhash_jobs::Session;
use simhash_jobs::against::{Against, IndexMatches};
use simhash_jobs::matching::{
    Grouped, clusters, priority, removal_relation, removal_score, star_clusters_without,
};
use simhash_jobs::page::Report;
use simhash_jobs::rewrite::{self, CreatedDirs, Notes, Pass, Target};

use crate::settings::DedupSettings;

/// Runs `simhash dedup`: matches, writes `--removed` and the report, then the kept (or annotated)
/// records in a second pass.
pub fn run(settings: &DedupSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    write_plan(settings).check()?;
    simhash_io::run::register_inputs(&input.inputs.paths())?;
    let mut session = crate::progress::session("dedup", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    session.summary.note_matching(&settings.matching);
    input.note(&mut session.summary);
    let parquet = parquet_output(settings)?;
    // Declared first, dropped last: after the outputs (whose temporary files are in them).
    let mut created = CreatedDirs::default();
    let out = open_output(settings, &mut created)?;
    let mut removed =
        settings.removed.as_deref().map(|p| Output::create_for("--removed", p)).transpose()?;
    let mut report = Report::open(&settings.report, "dedup", &settings.matching)?;
    // The lock first (--update): a second writer fails before anything is read.
    let mut against =
        settings.against.as_ref().map(|a| Against::open(a, settings.update)).transpose()?;
    let mut sources = input.inputs.sources();
    let mut corpus = session.read(&mut sources, input.reading.clone(), Some(input), true)?;
    if against.is_some() {
        // Records without ids: ids that differ between the inputs added to one index.
        corpus.tag_line_ids(&input.inputs.paths());
    }
    let (Grouped { clusters, jaccard, relation }, matched) =
        decide(&mut session, &corpus, &sources, settings, against.as_ref())?;
    let kept = |d: usize| {
        clusters.is_representative(d as u32)
            && matched.as_ref().is_none_or(|m| m.first[d].is_none())
    };

    session.reporter.phase("writing", sources.iter().map(|s| s.size).sum());
    let index_matches = match (&against, &matched) {
        (Some(against), Some(matched)) => against.index().map(|index| (index, matched)),
        _ => None,
    };
    let mut dups = settings.annotate.then(|| vec![None; corpus.len()]);
    // Once --removed is scored the sketches are needed no more, unless --against adds them
    // to its index.
    let sketches = if against.is_none() { corpus.sketches.take() } else { None };
    if let Some(report) = &mut report {
        let sketches = sketches.as_ref().or(corpus.sketches.as_ref());
        let scores = (jaccard.as_deref(), relation.as_deref());
        report.dedup(&corpus, sketches, &clusters, scores, matched.as_ref())?;
    }
    let (removed_count, by_relation) = write_removed(
        &corpus,
        sketches.as_ref().or(corpus.sketches.as_ref()),
        &clusters,
        (jaccard.as_deref(), relation.as_deref()),
        index_matches,
        removed.as_mut(),
        dups.as_deref_mut(),
    )?;
    session.summary.removed_by_relation = by_relation;
    rewrite::drop_in_background(sketches);
    // The records to write, in order: every document that is kept (all with --annotate).
    let wanted = if settings.annotate {
        rewrite::wanted(&corpus, 0..corpus.len())
    } else {
        rewrite::wanted(&corpus, (0..corpus.len()).filter(|&d| kept(d)))
    };
    let notes = notes(dups, settings);

    between_passes_hook();
    let pass = Pass {
        parser: &input.reading.parser,
        max_record_bytes: input.max_record_bytes,
        sources: &sources,
        corpus: &corpus,
        notes: &notes,
        reporter: &session.reporter,
        pool: &session.pool,
        parquet,
        compression: settings.parquet_compression,
    };
    let target = match (out, &settings.output_dir) {
        (Some(out), _) => Target::One(out),
        (None, Some(root)) => Target::Dir { root, files: input.inputs.files() },
        (None, None) => anyhow::bail!("no output"),
    };
    let (outputs, written) = rewrite::write(&pass, &wanted, target)?;
    session.summary.removed = removed_count;
    session.summary.written = written;
    session.summary.annotated = settings.annotate;
    if let Some(report) = report {
        report.finish(&mut session, &corpus, &sources, input);
    }
    if let Some(against) = &mut against {
        add_kept(against, &mut session, &corpus, &sources, settings, kept)?;
    }
    let outputs = outputs.into_iter().chain(removed).collect();
    let code = match against {
        // The outputs and the index's additions as one commit (see `Against::commit`).
        Some(against) => crate::progress::finished(&against.commit(session, outputs)?),
        None => crate::progress::finish(session, outputs)?,
    };
    created.keep();
    Ok(code)
}

/// Whether the one output is Parquet: one output has one format, the inputs'; `--output-dir`
/// writes each file in its own (`rewrite::Target::Dir`), so its inputs may mix JSONL and
/// Parquet (false).
fn parquet_output(settings: &DedupSettings) -> anyhow::Result<bool> {
    Ok(match settings.output_dir {
        None => rewrite::parquet_inputs(
            &settings.input.inputs,
            "dedup writes one output of the inputs' format (--output-dir writes one per input, \
             each in its own)",
        )?,
        Some(_) => false,
    })
}

/// What `--annotate` adds (`dups`: each document's kept record and similarity, with it).
fn notes<'a>(
    dups: Option<Vec<Option<(IdValue<'a>, Score)>>>,
    settings: &DedupSettings,
) -> Notes<'a> {
    match dups {
        None => Notes::None,
        Some(of) => Notes::Dedup {
            of,
            jaccard: simhash_jobs::matching::measure(&settings.matching) == Measure::Jaccard,
        },
    }
}

/// `--update`: adds the kept records to the index, in the keep policy's order, as the walk
/// kept them: a later record matching several names the first kept, as the walk would
/// (the same with `--keep first`).
fn add_kept(
    against: &mut Against,
    session: &mut Session,
    corpus: &Corpus,
    sources: &[simhash_io::Source],
    settings: &DedupSettings,
    kept: impl Fn(usize) -> bool,
) -> anyhow::Result<()> {
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    let rank = priority(corpus, settings.grouping.keep)?;
    let mut kept_docs: Vec<usize> = (0..corpus.len()).filter(|&d| kept(d)).collect();
    kept_docs.sort_by_key(|&d| rank[d]);
    Ok(against.add_kept(session, corpus, &names, kept_docs)?)
}

/// Every file the run writes: `--output` or the `--output-dir` entries, `--removed`,
/// `--stats`; none may be in the index (`--against`).
fn write_plan(settings: &DedupSettings) -> simhash_io::WritePlan {
    let input = &settings.input;
    let mut plan = input.write_plan(&settings.run);
    match &settings.output_dir {
        None => {
            plan.output("--output", &settings.output);
        }
        Some(root) => {
            for file in input.inputs.files() {
                plan.output_dir_entry(&root.join(&file.relative), &file.path);
            }
        }
    }
    if let Some(removed) = &settings.removed {
        plan.output("--removed", removed);
    }
    simhash_jobs::page::plan(&mut plan, &settings.report);
    if let Some((index, _)) = &settings.against {
        if settings.update {
            plan.forbid_written_dir("the index", index);
        } else {
            plan.forbid_dir("the index", index);
        }
    }
    plan
}

/// The output file, or (`--output-dir`) none, once the directories of the mirrored files
/// are created (removed again unless the run succeeds).
fn open_output(
    settings: &DedupSettings,
    created: &mut CreatedDirs,
) -> anyhow::Result<Option<Output>> {
    Ok(match &settings.output_dir {
        None => Some(Output::create_for("--output", &settings.output)?),
        Some(dir) => {
            for file in settings.input.inputs.files() {
                created.create(parent_of(&dir.join(&file.relative)))?;
            }
            None
        }
    })
}

/// The clusters of the walk, and with `--against` each record's first match in the index
/// (those records are removed, and passed over by the walk, as are the records the index
/// holds: kept before the others).
fn decide(
    session: &mut Session,
    corpus: &Corpus,
    sources: &[simhash_io::Source],
    settings: &DedupSettings,
    against: Option<&Against>,
) -> anyhow::Result<(Grouped, Option<IndexMatches>)> {
    let (m, g) = (&settings.matching, &settings.grouping);
    let Some(against) = against else {
        return Ok((clusters(session, corpus, m, g)?, None));
    };
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    let matched = against.matches(session, corpus, &names, settings.matching.templates())?;
    let hidden = matched.passed_over();
    Ok((star_clusters_without(session, corpus, m, g, &hidden)?, Some(matched)))
}

/// The directory of `path` (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
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
/// Documents that matched the on-disk index (`--against`) are removed as duplicates of
/// the indexed document named in `index` (with the id as this run read it when that
/// document is a record of this run: a rerun's).
fn write_removed<'a>(
    corpus: &'a Corpus,
    sketches: Option<&SpillStore>,
    clusters: &Clusters,
    (jaccard, relation): (Option<&[f64]>, Option<&[Relation]>),
    index: Option<(&DiskIndex, &IndexMatches)>,
    mut removed: Option<&mut Output>,
    mut dups: Option<&mut [Option<(IdValue<'a>, Score)>]>,
) -> anyhow::Result<(u64, Option<BTreeMap<String, u64>>)> {
    let mut removed_count = 0u64;
    let mut by_relation: Option<BTreeMap<String, u64>> = sketches.map(|_| BTreeMap::new());
    let own = index.map(|(_, matched)| matched.own_docs()).unwrap_or_default();
    for doc in 0..corpus.len() {
        if let Some((index, matched)) = index
            && let Some(m) = matched.first[doc]
        {
            removed_count += 1;
            if let (Some(r), Some(counts)) = (m.relation, &mut by_relation) {
                *counts.entry(r.name().to_string()).or_default() += 1;
            }
            if removed.is_some() || dups.is_some() {
                // The index keeps ids as text; a record of this run, as it was read.
                let kept = match own.get(&m.doc) {
                    Some(&rep) => corpus.id_value(rep),
                    None => IdValue { text: index.id(m.doc)?.to_owned().into(), number: false },
                };
                if let Some(out) = removed.as_deref_mut() {
                    let relation = m.relation.map(Relation::name);
                    simhash_io::write_removed(
                        out,
                        &corpus.id_value(doc),
                        &kept,
                        m.score,
                        relation,
                    )?;
                }
                if let Some(dups) = dups.as_deref_mut() {
                    dups[doc] = Some((kept, m.score));
                }
            }
            continue;
        }
        let rep = clusters.representative(clusters.cluster_of(doc as u32)) as usize;
        if rep == doc {
            continue;
        }
        removed_count += 1;
        let related = removal_relation(sketches, relation, doc, rep)?;
        if let (Some(r), Some(counts)) = (related, &mut by_relation) {
            *counts.entry(r.name().to_string()).or_default() += 1;
        }
        if removed.is_some() || dups.is_some() {
            let score = removal_score(corpus, sketches, jaccard, doc, rep)?;
            if let Some(out) = removed.as_deref_mut() {
                simhash_io::write_removed(
                    out,
                    &corpus.id_value(doc),
                    &corpus.id_value(rep),
                    score,
                    related.map(Relation::name),
                )?;
            }
            if let Some(dups) = dups.as_deref_mut() {
                dups[doc] = Some((corpus.id_value(rep), score));
            }
        }
    }
    Ok((removed_count, by_relation))
}
