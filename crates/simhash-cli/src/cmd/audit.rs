//! `simhash audit REPORT.html LABELS.jsonl`: the share of each label per similarity bucket
//! and weighted over the run, with 95% intervals, the documents lost as distinct, and the
//! tool's relation against the labels ([`simhash_jobs::audit`] does the work).

use std::io::Write;
use std::process::ExitCode;

use simhash_io::Output;

use crate::flags::AuditArgs;

/// Runs `simhash audit`: exit 0, or 1 when lines of the labels file were left out (each
/// reported as `FILE:LINE: what`); labels of another run are an error (exit 2).
pub fn run(args: &AuditArgs) -> anyhow::Result<ExitCode> {
    let inputs = [args.report.as_path(), args.labels.as_path()];
    simhash_io::WritePlan::new().inputs(inputs).output("--output", &args.output.output).check()?;
    simhash_io::run::register_inputs(&inputs)?;
    let mut out = Output::create_for("--output", &args.output.output)?;
    let estimate = simhash_jobs::audit::audit(&args.report, &args.labels)?;
    {
        let mut err = std::io::stderr().lock();
        for problem in &estimate.bad_lines {
            let _ = writeln!(err, "simhash: {}", simhash_io::printable(problem));
        }
    }
    let text = if args.json { estimate.json() } else { estimate.text() };
    out.write_all(text.as_bytes())?;
    out.commit()?;
    Ok(if estimate.bad_lines.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
