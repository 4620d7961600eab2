//! `simhash pairs`: every near-duplicate pair, TSV `id_a<TAB>id_b<TAB>score` (and, with
//! minhash, `<TAB>relation`).

use std::process::ExitCode;

use simhash_index::lsh::Relation;
use simhash_io::{Measure, Output, PairsTsv};
use simhash_jobs::matching::match_docs;
use simhash_jobs::page::Report;

use crate::settings::PairsSettings;

/// Runs `simhash pairs`: every near-duplicate pair.
pub fn run(settings: &PairsSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    let mut plan = input.write_plan(&settings.run);
    plan.output("--output", &settings.output);
    simhash_jobs::page::plan(&mut plan, &settings.report);
    plan.check()?;
    simhash_io::run::register_inputs(&input.inputs.paths())?;
    let mut session = crate::progress::session("pairs", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    session.summary.note_matching(&settings.matching);
    input.note(&mut session.summary);
    let out = Output::create_for("--output", &settings.output)?;
    let mut report = Report::open(&settings.report, "pairs", &settings.matching)?;
    let mut sources = input.inputs.sources();
    let corpus = session.read(&mut sources, input.reading.clone(), Some(input), false)?;
    // 13 bytes a pair: the score as its 32-bit code, and the relation.
    let mut pairs: Vec<(u32, u32, u32, Option<Relation>)> = Vec::new();
    match_docs(&mut session, &corpus, &settings.matching, |a, b, d, r| {
        pairs.push((a, b, d.code(), r));
    })?;
    session.reporter.phase("writing", None);
    session.pool.install(|| rayon::slice::ParallelSliceMut::par_sort_unstable(&mut pairs[..]));
    let measure = simhash_jobs::matching::measure(&settings.matching);
    // With minhash, a fourth column: the relation of each pair.
    let mut tsv = match measure {
        Measure::Jaccard => PairsTsv::with_relations(out, measure)?,
        Measure::Distance => PairsTsv::new(out, measure)?,
    };
    for &(a, b, code, relation) in &pairs {
        let (a, b) = (&corpus.id(a as usize), &corpus.id(b as usize));
        match relation {
            Some(r) => tsv.pair_related(a, b, code, r.name())?,
            None => tsv.pair(a, b, code)?,
        }
    }
    session.summary.written = pairs.len() as u64;
    if let Some(mut report) = report.take() {
        for &(a, b, code, relation) in &pairs {
            report.pair(&corpus, (a, b), code, relation);
        }
        report.finish(&mut session, &corpus, &sources, input);
    }
    crate::progress::finish(session, vec![tsv.into_inner()])
}
