//! Messages about bad records, progress bars and the phases' times; the end-of-run
//! summary line (the figures themselves are `summary.rs`'s).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use simhash_io::{Problem, Reason};

use crate::summary::Summary;

/// Reports bad records as `FILE:LINE: message` on stderr, counts them by reason, shows
/// progress, and times the phases of the run.
pub struct Reporter {
    strict: bool,
    quiet: bool,
    show_progress: bool,
    bar: Option<ProgressBar>,
    skipped: BTreeMap<Reason, u64>,
    empty: u64,
    phases: Vec<(&'static str, f64)>,
    phase_start: Option<(&'static str, Instant)>,
}

impl Reporter {
    /// A reporter that stops at the first bad record when `strict` and shows no progress or
    /// warnings when `quiet`.
    pub fn new(strict: bool, quiet: bool) -> Reporter {
        Reporter {
            strict,
            quiet,
            show_progress: !quiet && std::io::stderr().is_terminal(),
            bar: None,
            skipped: BTreeMap::new(),
            empty: 0,
            phases: Vec::new(),
            phase_start: None,
        }
    }

    /// Reports a bad record. With --strict it is an error that ends the run.
    pub fn problem(&mut self, file: &str, line: u64, problem: &Problem) -> anyhow::Result<()> {
        let message = problem.at(file, line).to_string();
        if self.strict {
            anyhow::bail!("{message} (stopped by --strict)");
        }
        *self.skipped.entry(problem.reason).or_default() += 1;
        self.print(&message);
        Ok(())
    }

    /// Reports an input file that cannot be read as records (its message names it), counted
    /// as one skipped record. With --strict it is an error that ends the run.
    pub fn bad_file(&mut self, problem: &Problem) -> anyhow::Result<()> {
        if self.strict {
            anyhow::bail!("{problem} (stopped by --strict)");
        }
        *self.skipped.entry(problem.reason).or_default() += 1;
        self.print(&problem.message);
        Ok(())
    }

    /// `simhash: MESSAGE` on stderr, above the progress bar if one is drawn.
    fn print(&self, message: &str) {
        let print = || {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "simhash: {}", simhash_io::printable(message));
        };
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// Reports an input with no records at all (likely the wrong file): exit code 1, or an
    /// error with --strict.
    pub fn empty_input(&mut self, file: &str) -> anyhow::Result<()> {
        let message = format!("{file}: empty input, no records");
        if self.strict {
            anyhow::bail!("{message} (stopped by --strict)");
        }
        self.empty += 1;
        self.print(&message);
        Ok(())
    }

    /// Says, unless quiet, that standard input is about to be read from a terminal (a
    /// run given no input file would otherwise wait there without a word).
    pub fn reading_terminal(&mut self) {
        if !self.quiet && std::io::stdin().is_terminal() {
            self.print(
                "reading standard input from the terminal (no input file given): type or \
                 paste records, then Ctrl-D; Ctrl-C to stop",
            );
        }
    }

    /// How many input files were empty.
    pub fn empty_inputs(&self) -> u64 {
        self.empty
    }

    /// How many records were skipped, for every reason.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    /// Starts a phase: ends the previous one, and shows a spinner (or a byte bar when the
    /// total is known) while it runs.
    pub fn phase(&mut self, name: &'static str, total_bytes: Option<u64>) {
        self.end_phase();
        self.phase_start = Some((name, Instant::now()));
        if !self.show_progress {
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

    /// Progress while reading: bytes and records so far.
    pub fn progress(&self, bytes: u64, records: u64) {
        if let (Some(bar), Some((_, start))) = (&self.bar, &self.phase_start) {
            bar.set_position(bytes);
            let secs = start.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{records} records, {:.0} docs/s", records as f64 / secs));
        }
    }

    /// A warning on stderr (not with --quiet): `simhash: warning: MESSAGE`.
    pub fn warning(&self, message: &str) {
        if !self.quiet {
            self.print(&format!("warning: {message}"));
        }
    }

    /// A message on the current phase's spinner.
    pub fn message(&self, msg: String) {
        if let Some(bar) = &self.bar {
            bar.set_message(msg);
        }
    }

    /// Ends the phase running: clears its progress bar and notes its time.
    pub fn end_phase(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some((name, start)) = self.phase_start.take() {
            self.phases.push((name, start.elapsed().as_secs_f64()));
        }
    }

    /// Ends the run: the summary on stderr (unless quiet) and in the --stats file.
    pub fn finish(&mut self, mut summary: Summary, quiet: bool) -> Summary {
        self.end_phase();
        summary.skipped = self.skipped.iter().map(|(r, n)| (r.key().to_string(), *n)).collect();
        summary.records_skipped = self.skipped_total();
        summary.seconds = self.phases.iter().map(|(n, s)| ((*n).to_string(), round3(*s))).collect();
        summary.seconds_total = round3(self.phases.iter().map(|(_, s)| s).sum());
        summary.peak_memory_bytes = simhash_io::peak_memory();
        if !quiet {
            summary.print();
        }
        summary
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
