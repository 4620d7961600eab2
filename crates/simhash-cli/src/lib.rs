//! The `simhash` command line. This library is the binaries' implementation, not an API:
//! use the `simhash-core`, `simhash-index` and `simhash-cluster` crates from code.

mod args;
mod corpus;
mod input;
mod output;
mod record;
mod report;
mod run;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

/// Runs the `simhash` command line with `args` (the first is the program name) and returns
/// its exit code: 0 success, 1 records skipped, 2 error. A closed output pipe counts as
/// success.
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Some(command) => run::run(command),
        None => run::run_fork_style(&cli.cluster),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            let broken_pipe = err.chain().any(|cause| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "simhash: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs a seed-compatible binary (`simhash-find-all`) as the `simhash` subcommand of that
/// name.
pub fn main_as(subcommand: &str) -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    let program = args.first().cloned().unwrap_or_else(|| "simhash".into());
    args.splice(0..args.len().min(1), [program, subcommand.into()]);
    main_with(args)
}
