//! The `simhash` command line. This library is the binaries' implementation, not an API:
//! use the `simhash-core`, `simhash-index` and `simhash-cluster` crates from code.

mod args;
mod corpus;
mod eval;
#[doc(hidden)]
pub mod fuzzing;
mod report;
mod run;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use std::io::IsTerminal;

use clap::{CommandFactory, FromArgMatches, Parser};

/// Runs the `simhash` command line with `args` (the first is the program name) and returns
/// its exit code: 0 success, 1 records skipped, 2 error. A closed output pipe counts as
/// success.
pub fn main_with<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // A bare `simhash` at a terminal would wait for standard input: show the help instead.
    if args.len() <= 1 && std::io::stdin().is_terminal() {
        let _ = args::Cli::command().print_help();
        return ExitCode::from(2);
    }
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    install_interrupt_handler();
    let result = match cli.command {
        Some(command) => run::run(command),
        None => run::run_fork_style(&cli.cluster),
    };
    exit_code(result)
}

fn usage_error(err: &clap::Error) -> ExitCode {
    let code = if err.use_stderr() { 2 } else { 0 };
    let _ = err.print();
    ExitCode::from(code)
}

fn install_interrupt_handler() {
    // SIGINT, SIGTERM, SIGHUP: remove the temporary files of unfinished outputs (targets are
    // never touched before they are complete), then exit with 128 + the signal.
    simhash_io::install_signal_handler();
    simhash_io::begin_run();
}

fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            if simhash_io::is_broken_pipe(err.as_ref()) {
                return ExitCode::SUCCESS;
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "simhash: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs simhash-cpp's `simhash-find-all` (`clusters` false) or `simhash-find-clusters`,
/// with simhash-cpp's flags (`-i`, `-o`, `-b`, `-d`).
pub fn main_seed(clusters: bool) -> ExitCode {
    let name = if clusters { "simhash-find-clusters" } else { "simhash-find-all" };
    let about = if clusters {
        "simhash-cpp's find-clusters: decimal hashes in, one JSON array per cluster out"
    } else {
        "simhash-cpp's find-all: decimal hashes in, one JSON pair [a,b] per line out"
    };
    let command = args::SeedCli::command().name(name).bin_name(name).about(about);
    let cli = match command
        .try_get_matches_from(std::env::args_os())
        .and_then(|m| args::SeedCli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    install_interrupt_handler();
    exit_code(run::run_seed(&cli.args, clusters))
}
