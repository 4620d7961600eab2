//! `simhash cluster` and the top-level fork-style command: TSV `id<TAB>hash<TAB>cluster`.

use std::process::ExitCode;

use simhash_core::Fingerprint;
use simhash_io::{ClustersTsv, Output};

use crate::matching::clusters;
use crate::session::Session;
use crate::settings::ClusterSettings;

pub fn run(settings: &ClusterSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    simhash_io::register_inputs(&input.inputs.paths())?;
    let mut session = Session::new("cluster", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    settings.matching.note(&mut session.summary);
    input.note(&mut session.summary);
    let out = Output::create_for("--output", &settings.output)?;
    let mut sources = input.inputs.sources();
    let corpus = session.read(&mut sources, input.reading.clone(), Some(input), false)?;
    let clusters =
        clusters(&mut session, &corpus, &settings.matching, &settings.grouping)?.clusters;
    session.reporter.phase("writing", None);
    let mut tsv = ClustersTsv::new(out)?;
    let mut next_id = 0u64;
    let mut written = 0u64;
    for members in &clusters {
        if members.len() < 2 && !settings.singletons {
            continue;
        }
        for &doc in members {
            let doc = doc as usize;
            tsv.member(corpus.id(doc), corpus.fingerprint(doc).map(Fingerprint::get), next_id)?;
            written += 1;
        }
        next_id += 1;
    }
    session.summary.written = written;
    session.finish(vec![tsv.into_inner()])
}
