//! `simhash decontaminate`: which corpus documents contain eval-set text; the job is
//! [`simhash_jobs::decontaminate`], this is its flags and its terminal output (the summary
//! of each eval set on stderr).

use std::io::Write;
use std::process::ExitCode;

use crate::settings::DecontaminateSettings;

/// Runs `simhash decontaminate`.
pub fn run(settings: &DecontaminateSettings) -> anyhow::Result<ExitCode> {
    let job = &settings.job;
    simhash_jobs::decontaminate::write_plan(job, &settings.run).check()?;
    simhash_io::run::register_inputs(&job.input.inputs.paths())?;
    let mut session = crate::progress::session("decontaminate", &settings.run, job.input.strict)?;
    session.note_skipped(&job.input.inputs);
    let outputs = simhash_jobs::decontaminate::run(&mut session, job)?;
    let finished = session.finish(outputs)?;
    if !finished.quiet
        && let Some(d) = &finished.summary.decontamination
    {
        let mut err = std::io::stderr().lock();
        for line in d.table() {
            let _ = writeln!(err, "simhash: {line}");
        }
    }
    Ok(crate::progress::finished(&finished))
}
