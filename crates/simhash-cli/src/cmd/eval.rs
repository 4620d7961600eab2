//! `simhash eval`: scores predicted pairs or clusters against ground truth; the job is
//! [`simhash_jobs::eval`], this is its inputs, outputs and terminal output.

use std::io::Write;
use std::process::ExitCode;

use simhash_io::Output;
use simhash_jobs::eval::{evaluate, render};

use crate::settings::EvalSettings;

/// Runs `simhash eval`: reads the prediction and the truth, scores one against the other, and
/// prints or writes the scores.
pub fn run(opts: &EvalSettings) -> anyhow::Result<ExitCode> {
    let mut inputs = vec![opts.prediction.as_path(), opts.truth.as_path()];
    inputs.extend(opts.tiers.as_deref());
    simhash_io::WritePlan::new().inputs(&inputs).output("--output", &opts.output).check()?;
    simhash_io::run::register_inputs(&inputs)?;
    let mut out = Output::create_for("--output", &opts.output)?;
    let scores = evaluate(&opts.prediction, &opts.truth, opts.tiers.as_deref())?;
    if opts.json {
        serde_json::to_writer_pretty(&mut out, &scores)?;
        out.write_all(b"\n")?;
    } else {
        out.write_all(render(&scores).as_bytes())?;
    }
    out.commit()?;
    Ok(ExitCode::SUCCESS)
}
