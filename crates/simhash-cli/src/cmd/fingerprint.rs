//! `simhash fingerprint`: JSONL in, TSV `id<TAB>hash` out.

use std::process::ExitCode;

use simhash_core::Fingerprint;
use simhash_io::{HashTsv, Output};

use crate::settings::FingerprintSettings;

/// Runs `simhash fingerprint`: each record's id and fingerprint.
pub fn run(settings: &FingerprintSettings) -> anyhow::Result<ExitCode> {
    let input = &settings.input;
    input.write_plan(&settings.run).output("--output", &settings.output).check()?;
    simhash_io::run::register_inputs(&input.inputs.paths())?;
    let mut session = crate::progress::session("fingerprint", &settings.run, input.strict)?;
    session.note_skipped(&input.inputs);
    input.note(&mut session.summary);
    let out = Output::create_for("--output", &settings.output)?;
    let mut sources = input.inputs.sources();
    let corpus = session.read(&mut sources, input.reading.clone(), Some(input), false)?;
    session.reporter.phase("writing", None);
    let mut tsv = HashTsv::new(out)?;
    for doc in 0..corpus.len() {
        tsv.record(&corpus.id(doc), corpus.fingerprint(doc).map(Fingerprint::get))?;
    }
    session.summary.written = corpus.len() as u64;
    crate::progress::finish(session, vec![tsv.into_inner()])
}
