//! `simhash-dist decontaminate`: the flags checked as `simhash decontaminate` checks them
//! ([`simhash_jobs::decontaminate::Settings::from_flags`], the same write plan), the eval
//! sets loaded by every process alike (process 0 reports their bad records), and the job
//! that scans each worker's share and gathers the scans ([`crate::job`]).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use simhash_jobs::decontaminate::{Settings, eval_sets, write_plan};

use crate::args::DecontaminateArgs;
use crate::job::Decontaminating;
use crate::plan::Mode;
use crate::share::Reading;

/// Shows the messages of loading the eval sets (a bad record, `FILE:LINE: what`; a
/// warning) on process 0's standard error, as `simhash-dist: MESSAGE`.
struct Notes {
    shown: bool,
}

impl simhash_jobs::Progress for Notes {
    fn note(&self, message: &str) {
        if self.shown {
            let line = format!("simhash-dist: {}", simhash_io::printable(message));
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
    }
}

/// Runs the job of `simhash-dist decontaminate` on this process.
pub(crate) fn run(d: &DecontaminateArgs) -> anyhow::Result<ExitCode> {
    let flags = &d.decontaminate;
    let others = [
        (flags.annotate.annotate, "--annotate"),
        (flags.cut.is_some(), "--cut"),
        (flags.page.report.is_some(), "--report"),
    ];
    for (given, flag) in others {
        anyhow::ensure!(
            !given,
            "simhash-dist decontaminate writes --hits and -o; {flag} is written by `simhash \
             decontaminate`"
        );
    }
    let settings = Settings::from_flags(&d.corpus.inputs, &d.corpus.records, flags, None)?;
    let process = d.timely.process;
    crate::warn_skipped(settings.input.inputs.skipped(), process);
    let files = settings.input.inputs.files();
    let paths: Vec<PathBuf> = if files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        files.iter().map(|f| f.path.clone()).collect()
    };
    anyhow::ensure!(
        settings.output.is_none() || !paths.iter().any(|p| simhash_io::is_parquet(p)),
        "simhash-dist decontaminate -o writes JSONL lines: a Parquet corpus is written again by \
         `simhash decontaminate -o`"
    );
    let quiet = d.quiet.quiet;
    // Every output is checked against every input (the corpus and the eval sets) and the
    // other outputs before anything is read, on every process alike.
    let run = simhash_jobs::Run { threads: 1, quiet, stats: d.stats.stats.clone(), memory: None };
    write_plan(&settings, &run).check()?;
    let mut inputs: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
    inputs.extend(settings.evals.iter().map(|e| e.path.as_path()));
    simhash_io::run::register_inputs(&inputs)?;
    let launch = d.timely.launch()?;
    let notes = Box::new(Notes { shown: process == 0 });
    let mut reporter = simhash_jobs::Reporter::new(settings.input.strict, quiet, notes);
    let (eval, eval_skipped) = eval_sets(&settings, &mut reporter)?;
    let eval = Arc::new(eval);
    let reading = Reading {
        parser: settings.input.reading.parser.clone(),
        fingerprinter: None,
        sketcher: None,
        // `-o` reads standard input twice: the first pass keeps a copy.
        spool: settings.output.is_some(),
        eval: Some(Arc::clone(&eval)),
    };
    let mut job = crate::new_job(Mode::Decontaminate, paths, reading, &d.corpus.records, &d.timely);
    job.quiet = quiet;
    job.stats.clone_from(&d.stats.stats);
    job.decontaminate = Some(Decontaminating {
        eval,
        eval_skipped,
        hits: settings.hits.clone(),
        output: settings.output.clone(),
    });
    crate::execute(job, launch, &d.timely, quiet)
}
