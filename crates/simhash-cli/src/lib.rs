//! The `simhash` command line. This library is only the three binaries' entry points
//! (`simhash`, `simhash-find-all`, `simhash-find-clusters`) and what the fuzz targets
//! need; it is not an API: use `simhash-jobs` (whole runs), `simhash-core`,
//! `simhash-index`, `simhash-cluster` and `simhash-io` from code.
//!
//! Layout: `flags` (what the user typed, clap derive) → `settings` (converted once,
//! validated) → `cmd/<command>.rs`, over the application layer, `simhash-jobs` (the
//! session and its summary, the corpus read pipeline, matching and keep order, dedup
//! against an on-disk index, the kept records rewritten, the `--report` page); `progress`
//! is the terminal side of a run (indicatif bars implementing [`simhash_jobs::Progress`],
//! messages and the summary line on stderr, the exit code). No module imports another
//! that imports it back (`scripts/check/module_circles.py`).

#![warn(missing_docs)]
// The workspace's lints, relaxed where this crate differs: it is the one that prints and
// exits, its modules are private (so `pub` is the crate's), and its flag structs are bags
// of switches.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::exit,
    unreachable_pub,
    missing_debug_implementations,
    clippy::struct_excessive_bools,
    clippy::fn_params_excessive_bools
)]

mod cmd;
mod flags;
#[doc(hidden)]
pub mod fuzzing;
mod progress;
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
    if let Some(code) = unknown_subcommand(&args) {
        return code;
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

/// A first argument that is neither a subcommand nor a file that exists, and reads as a
/// word (no `/`, `.` or leading `-`): a mistyped subcommand (`simhash dedupe x.jsonl`), which
/// the fork's job (no subcommand) would read as an input file that cannot be opened. Exit 2
/// naming the closest subcommand.
fn unknown_subcommand(args: &[OsString]) -> Option<ExitCode> {
    let first = args.get(1)?.to_str()?;
    let word = !first.is_empty()
        && !first.starts_with('-')
        && first.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    if !word || std::path::Path::new(first).exists() {
        return None;
    }
    let command = flags::Cli::command();
    let names: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
    if first == "help" || names.contains(&first) {
        return None;
    }
    let closest = names
        .iter()
        .map(|&n| (edit_distance(first, n), n))
        .min()
        .filter(|&(d, n)| d <= 2 || n.starts_with(first) || first.starts_with(n));
    let hint = closest.map(|(_, n)| format!(" (did you mean `{n}`?)")).unwrap_or_default();
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "simhash: `{first}` is not a subcommand{hint}, nor a file that exists\n\
         subcommands: {}; `simhash --help` for more",
        names.join(", ")
    );
    Some(ExitCode::from(2))
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

fn usage_error(err: &clap::Error) -> ExitCode {
    let code = if err.use_stderr() { 2 } else { 0 };
    let _ = err.print();
    ExitCode::from(code)
}

fn install_interrupt_handler() {
    // SIGINT, SIGTERM, SIGHUP: remove the temporary files of unfinished outputs (targets are
    // never touched before they are complete), then exit with 128 + the signal.
    simhash_io::run::install_signal_handler();
    simhash_io::run::begin();
}

fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe anywhere in the chain, or inside a job's error (which displays
            // as the error it wraps, so the chain passes over that one).
            let job_pipe = err.chain().any(|e| {
                e.downcast_ref::<simhash_jobs::JobError>()
                    .is_some_and(simhash_jobs::JobError::is_broken_pipe)
            });
            if job_pipe || simhash_io::is_broken_pipe(err.as_ref()) {
                return ExitCode::SUCCESS;
            }
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "simhash: {}", simhash_io::printable(&format!("{err:#}")));
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
