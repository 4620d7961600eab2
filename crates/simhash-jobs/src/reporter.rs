//! What a run tells its user while it goes, and what it counts: bad records (counted by
//! reason, or an error with `--strict`), warnings, the phases and their times. How any of it
//! is shown is the front end's: a [`Progress`] (the command line's draws bars on stderr;
//! [`Silent`] shows nothing).

use std::collections::BTreeMap;
use std::time::Instant;

use simhash_io::{Problem, Reason};

use crate::error::{JobError, bail};
use crate::summary::Summary;

/// How a front end shows a run's progress and messages. Every method has a default that
/// does nothing, so an embedding that shows nothing implements none ([`Silent`]).
///
/// The [`Reporter`] calls it from the thread that runs the job and, for
/// [`Progress::message`], from worker threads too.
pub trait Progress: Send + Sync {
    /// A phase starts (`reading`, `matching`, `clustering`, `writing`, `report`, …), over
    /// `total_bytes` when the reading's size is known.
    fn phase(&mut self, name: &'static str, total_bytes: Option<u64>) {
        let _ = (name, total_bytes);
    }

    /// The phase is over.
    fn end_phase(&mut self) {}

    /// Reading: `bytes` and `records` so far, `seconds` into the phase.
    fn position(&self, bytes: u64, records: u64, seconds: f64) {
        let _ = (bytes, records, seconds);
    }

    /// A line about the phase's progress (`table 3 of 6`), replacing the last.
    fn message(&self, message: String) {
        let _ = message;
    }

    /// A message for the user: a bad record (`FILE:LINE: what`), an empty input, a warning
    /// (`warning: what`). A command line prints it on stderr.
    fn note(&self, message: &str) {
        let _ = message;
    }

    /// Standard input is about to be read: a command line says so when it is a terminal,
    /// where a run given no input file would otherwise wait without a word.
    fn reading_stdin(&self) {}
}

/// A [`Progress`] that shows nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {}

/// Counts bad records by reason (or ends the run at the first with `--strict`), passes
/// progress and messages to the front end's [`Progress`], and times the phases of the run.
pub struct Reporter {
    strict: bool,
    quiet: bool,
    progress: Box<dyn Progress>,
    skipped: BTreeMap<Reason, u64>,
    empty: u64,
    /// Records reported for an id an index holds with other content, not skipped.
    ids_taken: u64,
    phases: Vec<(&'static str, f64)>,
    phase_start: Option<(&'static str, Instant)>,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter")
            .field("strict", &self.strict)
            .field("quiet", &self.quiet)
            .field("skipped", &self.skipped)
            .field("empty", &self.empty)
            .field("ids_taken", &self.ids_taken)
            .field("phases", &self.phases)
            .finish_non_exhaustive()
    }
}

impl Reporter {
    /// A reporter that stops at the first bad record when `strict`, passes no warnings on
    /// when `quiet`, and shows the rest through `progress`.
    pub fn new(strict: bool, quiet: bool, progress: Box<dyn Progress>) -> Reporter {
        Reporter {
            strict,
            quiet,
            progress,
            skipped: BTreeMap::new(),
            empty: 0,
            ids_taken: 0,
            phases: Vec::new(),
            phase_start: None,
        }
    }

    /// Reports a record whose id an index holds with other content (`problem` says so): not
    /// a bad record, as it is still decided (kept or removed) and counted as a document, but
    /// reported and counted apart ([`Reporter::ids_taken`]; a command line exits 1). With
    /// --strict it is an error that ends the run.
    pub fn id_taken(&mut self, file: &str, line: u64, problem: &Problem) -> Result<(), JobError> {
        let message = problem.at(file, line).to_string();
        if self.strict {
            bail!(Input, "{message} (stopped by --strict)");
        }
        self.ids_taken += 1;
        self.progress.note(&message);
        Ok(())
    }

    /// The records reported by [`Reporter::id_taken`].
    pub fn ids_taken(&self) -> u64 {
        self.ids_taken
    }

    /// Reports a bad record. With --strict it is an error that ends the run.
    pub fn problem(&mut self, file: &str, line: u64, problem: &Problem) -> Result<(), JobError> {
        let message = problem.at(file, line).to_string();
        if self.strict {
            bail!(Input, "{message} (stopped by --strict)");
        }
        *self.skipped.entry(problem.reason).or_default() += 1;
        self.progress.note(&message);
        Ok(())
    }

    /// The bad records counted so far, by reason (see [`Reporter::skipped_since`]).
    pub(crate) fn skipped_now(&self) -> BTreeMap<Reason, u64> {
        self.skipped.clone()
    }

    /// Takes the bad records counted since `then` (from [`Reporter::skipped_now`]) out of
    /// the run's count of skipped input records, and returns how many: records of another
    /// kind of input (an eval set) that the summary counts apart.
    pub(crate) fn skipped_since(&mut self, then: BTreeMap<Reason, u64>) -> u64 {
        let now = std::mem::replace(&mut self.skipped, then);
        now.values().sum::<u64>() - self.skipped.values().sum::<u64>()
    }

    /// Reports an input file that cannot be read as records (its message names it), counted
    /// as one skipped record. With --strict it is an error that ends the run.
    pub fn bad_file(&mut self, problem: &Problem) -> Result<(), JobError> {
        if self.strict {
            bail!(Input, "{problem} (stopped by --strict)");
        }
        *self.skipped.entry(problem.reason).or_default() += 1;
        self.progress.note(&problem.message);
        Ok(())
    }

    /// Reports an input with no records at all (likely the wrong file): counted (a command
    /// line exits 1), or an error with --strict.
    pub fn empty_input(&mut self, file: &str) -> Result<(), JobError> {
        let message = format!("{file}: empty input, no records");
        if self.strict {
            bail!(Input, "{message} (stopped by --strict)");
        }
        self.empty += 1;
        self.progress.note(&message);
        Ok(())
    }

    /// Standard input is about to be read (the front end may say so; not when quiet).
    pub fn reading_stdin(&mut self) {
        if !self.quiet {
            self.progress.reading_stdin();
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

    /// Starts a phase: ends the previous one, and has the front end show it.
    pub fn phase(&mut self, name: &'static str, total_bytes: Option<u64>) {
        self.end_phase();
        self.phase_start = Some((name, Instant::now()));
        self.progress.phase(name, total_bytes);
    }

    /// Progress while reading: bytes and records so far.
    pub fn progress(&self, bytes: u64, records: u64) {
        if let Some((_, start)) = &self.phase_start {
            self.progress.position(bytes, records, start.elapsed().as_secs_f64());
        }
    }

    /// A warning (not with --quiet): `warning: MESSAGE`.
    pub fn warning(&self, message: &str) {
        if !self.quiet {
            self.progress.note(&format!("warning: {message}"));
        }
    }

    /// A message on the current phase.
    pub fn message(&self, msg: String) {
        self.progress.message(msg);
    }

    /// Ends the phase running and notes its time.
    pub fn end_phase(&mut self) {
        self.progress.end_phase();
        if let Some((name, start)) = self.phase_start.take() {
            self.phases.push((name, start.elapsed().as_secs_f64()));
        }
    }

    /// Ends the run: the skipped records, the phases' times and the peak memory noted in
    /// `summary`.
    pub fn finish(&mut self, mut summary: Summary) -> Summary {
        self.end_phase();
        summary.skipped = self.skipped.iter().map(|(r, n)| (r.key().to_string(), *n)).collect();
        summary.records_skipped = self.skipped_total();
        if self.ids_taken > 0 {
            summary.index_ids_taken = Some(self.ids_taken);
        }
        summary.seconds = self.phases.iter().map(|(n, s)| ((*n).to_string(), round3(*s))).collect();
        summary.seconds_total = round3(self.phases.iter().map(|(_, s)| s).sum());
        summary.peak_memory_bytes = simhash_io::peak_memory();
        summary
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
