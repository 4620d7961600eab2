//! The `simhash` command line. This library is only the three binaries' entry points
//! (`simhash`, `simhash-find-all`, `simhash-find-clusters`) and what the fuzz targets
//! need; it is not an API: use `simhash-core`, `simhash-index`, `simhash-cluster` and
//! `simhash-io` from code.
//!
//! Layout: `flags` (what the user typed, clap derive) → `settings` (converted once,
//! validated) → `cmd/<command>.rs`, over the shared `session`, `corpus`, `matching` and
//! `report`.

#![warn(missing_docs)]

mod cmd;
mod corpus;
mod flags;
#[doc(hidden)]
pub mod fuzzing;
mod indexing;
mod matching;
mod page;
mod report;
mod rewrite;
mod session;
mod settings;

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
        let _ = flags::Cli::command().print_help();
        return ExitCode::from(2);
    }
    let cli = match flags::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    install_interrupt_handler();
    let result = match cli.command {
        Some(command) => cmd::run(&command),
        None => cmd::fork::run(&cli.cluster),
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
pub fn main_cpp(clusters: bool) -> ExitCode {
    let name = if clusters { "simhash-find-clusters" } else { "simhash-find-all" };
    let about = if clusters {
        "simhash-cpp's find-clusters: decimal hashes in, one JSON array per cluster out"
    } else {
        "simhash-cpp's find-all: decimal hashes in, one JSON pair [a,b] per line out"
    };
    let command = flags::CppCli::command().name(name).bin_name(name).about(about);
    let cli = match command
        .try_get_matches_from(std::env::args_os())
        .and_then(|m| flags::CppCli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    install_interrupt_handler();
    exit_code(
        settings::CppSettings::new(&cli.args)
            .map_err(anyhow::Error::from)
            .and_then(|settings| cmd::cpp::run(&settings, clusters)),
    )
}
