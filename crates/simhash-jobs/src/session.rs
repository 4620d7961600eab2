//! What every command shares: the thread pool, the reporter, the summary and the --stats
//! file, from the first read to the last output put in place.

use std::io::Write;

use simhash_io::{Inputs, Output, Source};

use crate::corpus::{self, Corpus, ReadOptions, Reading};
use crate::error::{Context, Result};
use crate::reporter::{Progress, Reporter};
use crate::settings::{Input, Run};
use crate::summary::Summary;

/// An output made at the end with the run's summary (the `--report` page): returns it to
/// be committed with the others.
pub type Finisher = Box<dyn FnOnce(&Summary) -> Result<Output>>;

/// What every command shares: the thread count, reporter and summary.
#[allow(missing_debug_implementations)]
pub struct Session {
    /// Worker threads (`-j`).
    pub threads: usize,
    /// The pool of those threads.
    pub pool: rayon::ThreadPool,
    /// Progress, warnings and the skipped records.
    pub reporter: Reporter,
    /// The run's counts.
    pub summary: Summary,
    /// `--quiet`: no progress and no summary.
    pub quiet: bool,
    /// `--memory`: the budget of all pairs within k bits.
    pub memory: Option<u64>,
    /// The --stats file, created up front so that a bad path fails before any work.
    stats: Option<Output>,
    /// The `--report` page, written with the summary at the end.
    pub page: Option<Finisher>,
}

impl Session {
    /// The session of `command` with `run`'s settings (`strict`: the first bad record fails the
    /// run), showing its progress through `progress`: the thread pool, and the `--stats`
    /// file created up front.
    pub fn new(
        command: &'static str,
        run: &Run,
        strict: bool,
        progress: Box<dyn Progress>,
    ) -> Result<Session> {
        let threads = run.threads;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .context("cannot start the thread pool")?;
        Ok(Session {
            threads,
            pool,
            reporter: Reporter::new(strict, run.quiet, progress),
            summary: Summary { command, ..Summary::default() },
            quiet: run.quiet,
            memory: run.memory,
            stats: run.stats.as_deref().map(|p| Output::create_for("--stats", p)).transpose()?,
            page: None,
        })
    }

    /// Reads the corpus from `sources`, as if concatenated; `input` gives the record limit
    /// and the sample (none: no limit, no sample).
    pub fn read(
        &mut self,
        sources: &mut [Source],
        reading: Reading,
        input: Option<&Input>,
        spool: bool,
    ) -> Result<Corpus> {
        let options = ReadOptions {
            reading,
            threads: self.threads,
            max_record_bytes: input.map_or(u64::MAX, |i| i.max_record_bytes),
            sample: input.and_then(|i| i.sample),
            spool,
            compact: false,
            line_hashes: false,
        };
        self.read_with(sources, &options)
    }

    /// [`Session::read`] once, keeping each record's line hash, as a run that adds to a
    /// persistent index needs for [`Corpus::tag_line_ids`].
    pub fn read_for_index(
        &mut self,
        sources: &mut [Source],
        reading: Reading,
        input: &Input,
    ) -> Result<Corpus> {
        let options = ReadOptions {
            reading,
            threads: self.threads,
            max_record_bytes: input.max_record_bytes,
            sample: input.sample,
            spool: false,
            compact: false,
            line_hashes: true,
        };
        self.read_with(sources, &options)
    }

    /// Reads simhash-cpp's input keeping only the hashes (8 bytes a record), in input order:
    /// see [`Corpus::take_hashes`].
    pub fn read_hashes(
        &mut self,
        sources: &mut [Source],
    ) -> Result<Vec<simhash_core::Fingerprint>> {
        let options = ReadOptions {
            reading: Reading::hashes(simhash_io::Parser::CppHash),
            threads: self.threads,
            max_record_bytes: u64::MAX,
            sample: None,
            spool: false,
            compact: true,
            line_hashes: false,
        };
        Ok(self.read_with(sources, &options)?.take_hashes())
    }

    fn read_with(&mut self, sources: &mut [Source], options: &ReadOptions) -> Result<Corpus> {
        self.summary.input = inputs_label(sources);
        self.reporter.phase("reading", sources.iter().map(|s| s.size).sum());
        let corpus = corpus::read(sources, options, &mut self.reporter)?;
        self.summary.bytes_read = corpus.bytes;
        self.summary.records_read = corpus.records;
        self.summary.records_not_sampled = corpus.not_sampled;
        self.summary.blank_lines = corpus.blank_lines;
        self.summary.documents = corpus.len() as u64;
        self.summary.featureless = corpus.featureless() as u64;
        if let Some(sketches) = &corpus.sketches {
            self.summary.band_key_bits =
                Some(simhash_index::lsh::SketchStore::band_key_bits(sketches));
        }
        if corpus.records == 0 {
            self.reporter.empty_input(&self.summary.input)?;
        }
        Ok(corpus)
    }

    /// Reports the files of the input directories that are not read (not with --quiet): a
    /// line each, up to 20, then how many more.
    pub fn note_skipped(&self, inputs: &Inputs) {
        const SHOWN: usize = 20;
        let skipped = inputs.skipped();
        for file in skipped.iter().take(SHOWN) {
            self.reporter.warning(&format!("{}: not read: {}", file.path.display(), file.why));
        }
        if skipped.len() > SHOWN {
            self.reporter.warning(&format!(
                "{} more files in the input directories not read",
                skipped.len() - SHOWN
            ));
        }
    }

    /// Ends the run: puts `outputs` and the --stats file in place together (all or none;
    /// see [`simhash_io::commit_all`]); returns the summary and how many inputs or records
    /// were skipped or reported (a command line prints the summary unless quiet, and exits 1
    /// when some were).
    pub fn finish(mut self, outputs: Vec<Output>) -> Result<Finished> {
        // An eval set's bad records are counted apart from the input's, and end in exit 1
        // all the same.
        let eval_skipped =
            self.summary.decontamination.as_ref().map_or(0, |d| d.eval_records_skipped);
        let skipped = self.reporter.skipped_total()
            + self.reporter.empty_inputs()
            + self.reporter.ids_taken()
            + eval_skipped;
        let summary = self.reporter.finish(std::mem::take(&mut self.summary));
        let mut outputs = outputs;
        if let Some(mut out) = self.stats.take() {
            serde_json::to_writer_pretty(&mut out, &summary).context("cannot write --stats")?;
            out.write_all(b"\n")?;
            outputs.push(out);
        }
        if let Some(page) = self.page.take() {
            outputs.push(page(&summary)?);
        }
        simhash_io::commit_all(outputs)?;
        Ok(Finished { summary, skipped, quiet: self.quiet })
    }
}

/// How a run ended ([`Session::finish`]): its outputs are in place.
#[derive(Debug)]
pub struct Finished {
    /// The run's figures.
    pub summary: Summary,
    /// Bad records skipped and empty inputs: a command line exits 1 when there are any.
    pub skipped: u64,
    /// `--quiet`: the summary is not shown.
    pub quiet: bool,
}

/// The inputs as the summary names them: the file, or how many and the first and last.
fn inputs_label(sources: &[Source]) -> String {
    let names: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
    inputs_label_of(&names)
}

/// The inputs named `names` as a summary names them (and an empty input's message): the
/// file, or how many and the first and last.
pub fn inputs_label_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [first, .., last] => format!("{} files, {first} to {last}", names.len()),
    }
}
