//! The terminal side of a run: progress bars on stderr (indicatif; drawn only when stderr
//! is a terminal and not with --quiet), messages as `simhash: MESSAGE` above them, the
//! summary line at the end and the exit code. What is counted and when is
//! [`simhash_jobs::Reporter`]'s; this is its [`Progress`].

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simhash_io::Output;
use simhash_jobs::{Finished, Progress, Run, Session};

/// A session of `command` whose progress and messages go to stderr.
pub fn session(command: &'static str, run: &Run, strict: bool) -> anyhow::Result<Session> {
    let bars = Bars { show: !run.quiet && std::io::stderr().is_terminal(), bar: None };
    Ok(Session::new(command, run, strict, Box::new(bars))?)
}

/// Ends the run ([`Session::finish`]): the summary line on stderr unless quiet, and the
/// exit code (1 when records or inputs were skipped).
pub fn finish(session: Session, outputs: Vec<Output>) -> anyhow::Result<ExitCode> {
    Ok(finished(&session.finish(outputs)?))
}

/// The end of a finished run: the summary line on stderr unless quiet, and the exit code.
pub fn finished(finished: &Finished) -> ExitCode {
    if !finished.quiet {
        let _ = writeln!(std::io::stderr().lock(), "simhash: {}", finished.summary.line());
    }
    if finished.skipped > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

/// Progress bars and messages on stderr.
struct Bars {
    show: bool,
    bar: Option<ProgressBar>,
}

impl Progress for Bars {
    fn phase(&mut self, name: &'static str, total_bytes: Option<u64>) {
        if !self.show {
            return;
        }
        let bar = match total_bytes {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{prefix:>9} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {msg} ({eta})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            ),
            // Reading a stream of unknown size: bytes so far and the rate.
            None if name == "reading" => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template(
                    "{prefix:>9} {spinner} {bytes} {bytes_per_sec} {msg} [{elapsed}]",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{prefix:>9} {spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            ),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        bar.set_prefix(name);
        bar.enable_steady_tick(Duration::from_millis(120));
        self.bar = Some(bar);
    }

    fn end_phase(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn position(&self, bytes: u64, records: u64, seconds: f64) {
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
            let secs = seconds.max(1e-3);
            bar.set_message(format!("{records} records, {:.0} docs/s", records as f64 / secs));
        }
    }

    fn message(&self, message: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        }
    }

    /// `simhash: MESSAGE` on stderr, above the progress bar if one is drawn.
    fn note(&self, message: &str) {
        let print = || {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "simhash: {}", simhash_io::printable(message));
        };
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    fn reading_stdin(&self) {
        if std::io::stdin().is_terminal() {
            self.note(
                "reading standard input from the terminal (no input file given): type or \
                 paste records, then Ctrl-D; Ctrl-C to stop",
            );
        }
    }
}
