//! `simhash cluster` and the top-level fork-style command: TSV `id<TAB>hash<TAB>cluster`,
//! or (`--annotate`) the input records with a `cluster` field.

use std::process::ExitCode;

use simhash_cluster::Clusters;
use simhash_core::Fingerprint;
use simhash_io::{ClustersTsv, Output};
use simhash_jobs::Corpus;
use simhash_jobs::matching::clusters;
use simhash_jobs::page::Report;
use simhash_jobs::rewrite::{self, Notes, Pass, Target};

use crate::settings::ClusterSettings;

/// Runs `simhash cluster` (and the top-level fork-style command) with its settings.
pub fn run(settings: &ClusterSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    let mut plan = input.write_plan(&settings.run);
    plan.output("--output", &settings.output);
    simhash_jobs::page::plan(&mut plan, &settings.report);
    plan.check()?;
    simhash_io::run::register_inputs(&input.inputs.paths())?;
    let mut session = crate::progress::session("cluster", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    session.summary.note_matching(&settings.matching);
    input.note(&mut session.summary);
    let out = Output::create_for("--output", &settings.output)?;
    let mut report = Report::open(&settings.report, "cluster", &settings.matching)?;
    let mut sources = input.inputs.sources();
    // --annotate reads the input again to copy its records.
    let annotate = settings.annotate;
    let mut corpus = session.read(&mut sources, input.reading.clone(), Some(input), annotate)?;
    let clusters =
        clusters(&mut session, &corpus, &settings.matching, &settings.grouping)?.clusters;
    rewrite::drop_in_background(corpus.sketches.take());
    if let Some(report) = &mut report {
        report.clusters(&corpus, &clusters);
    }
    if annotate {
        session.reporter.phase("writing", sources.iter().map(|s| s.size).sum());
        let numbers = numbers(&clusters, corpus.len(), settings.singletons);
        let what = "--annotate writes one output of the inputs' format";
        let parquet = rewrite::parquet_inputs(&input.inputs, what)?;
        let notes = Notes::Cluster(numbers);
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
        let wanted = rewrite::wanted(&corpus, 0..corpus.len());
        let (outputs, written) = rewrite::write(&pass, &wanted, Target::One(out))?;
        session.summary.written = written;
        if let Some(report) = report {
            report.finish(&mut session, &corpus, &sources, input);
        }
        return crate::progress::finish(session, outputs);
    }
    session.reporter.phase("writing", None);
    let (out, written) = write_tsv(out, &corpus, &clusters, settings.singletons)?;
    session.summary.written = written;
    if let Some(report) = report {
        report.finish(&mut session, &corpus, &sources, input);
    }
    crate::progress::finish(session, vec![out])
}

/// Each document's cluster number, as the TSV numbers them: the clusters written (of two or
/// more members, or every one with `singletons`) in order; `None` for a document in no
/// cluster written.
fn numbers(clusters: &Clusters, docs: usize, singletons: bool) -> Vec<Option<u64>> {
    let mut numbers = vec![None; docs];
    let mut next = 0u64;
    for members in clusters {
        if members.len() < 2 && !singletons {
            continue;
        }
        for &doc in members {
            numbers[doc as usize] = Some(next);
        }
        next += 1;
    }
    numbers
}

/// The TSV `id<TAB>hash<TAB>cluster`; returns the output and how many records it holds.
fn write_tsv(
    out: Output,
    corpus: &Corpus,
    clusters: &Clusters,
    singletons: bool,
) -> anyhow::Result<(Output, u64)> {
    let mut tsv = ClustersTsv::new(out)?;
    let mut next_id = 0u64;
    let mut written = 0u64;
    for members in clusters {
        if members.len() < 2 && !singletons {
            continue;
        }
        for &doc in members {
            let doc = doc as usize;
            tsv.member(&corpus.id(doc), corpus.fingerprint(doc).map(Fingerprint::get), next_id)?;
            written += 1;
        }
        next_id += 1;
    }
    Ok((tsv.into_inner(), written))
}
