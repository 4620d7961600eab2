//! `decontaminate`: which documents of a training corpus contain the text of eval sets
//! (benchmarks), exactly, with where it is written ([`simhash_index::contamination`]).
//!
//! The job reads the eval sets ([`EvalSource`], each record an item), then the corpus once
//! through the read pipeline, each text scanned for the eval n-grams on the worker
//! threads and the scans tallied in input order. The hits are decided only at the end of
//! the corpus (an n-gram's document frequency, `--max-df`, needs every document); so the
//! outputs that write the corpus again (`-o`, annotated or not, and `--cut`) and the `--report`
//! page's passages read it a second time, as `dedup`'s kept records are, each record
//! checked against the first pass.
//!
//! Outputs ([`Settings`]): the hits (JSONL, one line per contaminated (document, item),
//! [`write_hits`]), the corpus without its contaminated documents (or every record annotated
//! with its hits), every record with the matched spans cut out, the HTML page, and each
//! eval set's figures in the run's [`Summary`](crate::Summary)
//! ([`Decontamination`]). All are outputs of the write plan
//! ([`write_plan`]): never over an input, put in place together or not at all.
//!
//! ```
//! use simhash_jobs::decontaminate::{self, EvalReading, EvalSource, Settings};
//! use simhash_jobs::{Input, Reading, Run, Session, Silent};
//!
//! let dir = tempfile::tempdir()?;
//! let (corpus, quiz) = (dir.path().join("corpus.jsonl"), dir.path().join("quiz.jsonl"));
//! std::fs::write(&corpus, "{\"id\":\"a\",\"text\":\"Trivia: which planet is known as the red planet? Mars.\"}\n\
//!                          {\"id\":\"b\",\"text\":\"Nothing to see here.\"}\n")?;
//! std::fs::write(&quiz, "{\"id\":\"q1\",\"text\":\"Which planet is known as the Red Planet?\"}\n")?;
//! let hits = dir.path().join("hits.jsonl");
//!
//! let parser = simhash_io::Parser::Json(simhash_io::Columns::new("text", "id"));
//! let input = Input {
//!     inputs: simhash_io::Inputs::expand(&[&corpus])?,
//!     named: vec![corpus.clone()],
//!     strict: false,
//!     max_record_bytes: simhash_io::DEFAULT_MAX_RECORD_BYTES,
//!     sample: None,
//!     reading: Reading { parser, fingerprinter: None, sketcher: None, eval: None },
//! };
//! let settings = Settings {
//!     input,
//!     evals: vec![EvalSource::parse(quiz.to_str().unwrap())?],
//!     eval_reading: EvalReading {
//!         fields: vec!["text".into()],
//!         id_column: "id".into(),
//!         max_record_bytes: simhash_io::DEFAULT_MAX_RECORD_BYTES,
//!     },
//!     ngram: Some(4),
//!     min_overlap: None,
//!     max_df: None,
//!     hits: Some(hits.clone()),
//!     ..Settings::default()
//! };
//! let run = Run { threads: 2, quiet: true, stats: None, memory: None };
//! decontaminate::write_plan(&settings, &run).check()?;
//! let mut session = Session::new("decontaminate", &run, false, Box::new(Silent))?;
//! let outputs = decontaminate::run(&mut session, &settings)?;
//! session.finish(outputs)?;
//! assert_eq!(
//!     std::fs::read_to_string(&hits)?,
//!     "{\"id\":\"a\",\"eval\":\"quiz\",\"item\":\"q1\",\"overlap\":1.0,\"longest\":8,\
//!      \"spans\":[[8,47]],\"matched\":5,\"ngrams\":5}\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use simhash_index::contamination::{EvalSets, Hit, MaxDf, Report};
use simhash_io::{Output, ParquetCompression, Parser};

use crate::corpus::{Corpus, Reading};
use crate::decontaminate_marks::{Annotations, Cuts};
use crate::error::{Context, ErrorKind, JobError, Result, bail};
use crate::rewrite::{self, Notes, Pass, Target};
use crate::session::Session;
use crate::settings::{Input, Run};
use crate::summary::{Decontamination, EvalFigures};

mod evals;
#[cfg(feature = "clap")]
mod flags;
mod page;

pub use crate::decontaminate_marks::cut_text;
pub use evals::{EvalReading, EvalSource};

/// What a `decontaminate` run reads and writes.
#[derive(Debug)]
pub struct Settings {
    /// The corpus (its records read as the text and id columns say).
    pub input: Input,
    /// The eval sets, in order.
    pub evals: Vec<EvalSource>,
    /// How eval records become items.
    pub eval_reading: EvalReading,
    /// `--ngram` (none: the library's default).
    pub ngram: Option<usize>,
    /// `--min-overlap` (none: the library's default).
    pub min_overlap: Option<f64>,
    /// `--max-df` (none: the library's default).
    pub max_df: Option<MaxDf>,
    /// `--hits`: the hits as JSONL.
    pub hits: Option<PathBuf>,
    /// `-o`: the corpus without its contaminated documents.
    pub output: Option<PathBuf>,
    /// `--annotate`: `-o` keeps every record, each with its hits.
    pub annotate: bool,
    /// `--cut`: every record with the matched spans cut out of its text.
    pub cut: Option<PathBuf>,
    /// `--cut-window`: characters cut on each side of a span.
    pub cut_window: usize,
    /// `--report`: the HTML page.
    pub report: Option<PathBuf>,
    /// `--parquet-compression`: the codec of Parquet outputs.
    pub parquet_compression: ParquetCompression,
}

impl Default for Settings {
    /// No corpus (standard input), no eval set, no output: a base to fill.
    fn default() -> Settings {
        let parser = Parser::Json(simhash_io::Columns::new("text", "id"));
        Settings {
            input: Input {
                inputs: simhash_io::Inputs::default(),
                named: Vec::new(),
                strict: false,
                max_record_bytes: simhash_io::DEFAULT_MAX_RECORD_BYTES,
                sample: None,
                reading: Reading { parser, fingerprinter: None, sketcher: None, eval: None },
            },
            evals: Vec::new(),
            eval_reading: EvalReading {
                fields: vec!["text".into()],
                id_column: "id".into(),
                max_record_bytes: simhash_io::DEFAULT_MAX_RECORD_BYTES,
            },
            ngram: None,
            min_overlap: None,
            max_df: None,
            hits: None,
            output: None,
            annotate: false,
            cut: None,
            cut_window: 0,
            report: None,
            parquet_compression: ParquetCompression::default(),
        }
    }
}

impl Settings {
    /// Whether an output writes the corpus again (`-o`, `--cut`).
    fn rewrites(&self) -> bool {
        self.output.is_some() || self.cut.is_some()
    }
}

/// Every file the run reads and writes: the corpus and the eval sets are inputs; the hits,
/// `-o`, `--cut`, `--report` and `--stats` outputs, none over an input or
/// another output. Check it before anything is read.
pub fn write_plan(settings: &Settings, run: &Run) -> simhash_io::WritePlan {
    let mut plan = settings.input.write_plan(run);
    plan.inputs(settings.evals.iter().map(|e| e.path.as_path()));
    // And the files a directory of an eval set holds, as the corpus's are: an output
    // written there by an earlier run is refused before anything is read. (One that
    // cannot be listed is reported when the set is read.)
    for e in &settings.evals {
        if let Ok(files) = simhash_io::Inputs::expand(std::slice::from_ref(&e.path)) {
            plan.inputs(files.paths());
        }
    }
    for (flag, path) in outputs(settings) {
        plan.output(flag, path);
    }
    plan
}

/// The outputs asked for, with their flags.
fn outputs(settings: &Settings) -> Vec<(&'static str, &std::path::Path)> {
    [
        ("--hits", &settings.hits),
        ("--output", &settings.output),
        ("--cut", &settings.cut),
        ("--report", &settings.report),
    ]
    .into_iter()
    .filter_map(|(flag, path)| path.as_deref().map(|p| (flag, p)))
    .collect()
}

/// Runs the job in `session`: reads the eval sets and the corpus, writes every output
/// asked for, and notes the figures in the session's summary. Returns the outputs, to be
/// put in place with [`Session::finish`] (all or none).
pub fn run(session: &mut Session, settings: &Settings) -> Result<Vec<Output>> {
    let input = &settings.input;
    let Parser::Json(columns) = &input.reading.parser else {
        bail!(Settings, "decontaminate reads text records (JSONL or Parquet), not hashes");
    };
    let parquet = if settings.rewrites() {
        rewrite::parquet_inputs(&input.inputs, "decontaminate writes the corpus in its format")?
    } else {
        false
    };
    if parquet && settings.cut.is_some() {
        bail!(Settings, "--cut rewrites JSONL records only, not Parquet rows");
    }
    session.reporter.phase("eval sets", None);
    let (eval, eval_skipped) = eval_sets(settings, &mut session.reporter)?;
    let eval = Arc::new(eval);
    session.reporter.end_phase();

    // Created before the corpus is read: a path that cannot be written fails first.
    let create = |flag: &str, path: &Option<PathBuf>| {
        path.as_deref().map(|p| Output::create_for(flag, p)).transpose()
    };
    let mut hits_out = create("--hits", &settings.hits)?;
    let kept_out = create("--output", &settings.output)?;
    let cut_out = create("--cut", &settings.cut)?;
    let page_out = create("--report", &settings.report)?;

    let mut sources = input.inputs.sources();
    let reading = Reading {
        parser: input.reading.parser.clone(),
        fingerprinter: None,
        sketcher: None,
        eval: Some(Arc::clone(&eval)),
    };
    let second_pass = settings.rewrites() || settings.report.is_some();
    let mut corpus = session.read(&mut sources, reading, Some(input), second_pass)?;
    // No document is featureless here: it has no fingerprint to have.
    session.summary.featureless = 0;
    let tally = corpus.tally.take().context("internal error: the corpus was not tallied")?;
    session.reporter.phase("matching", None);
    let report = eval.finish(tally).map_err(|e| JobError::wrap(ErrorKind::Engine, e))?;
    session.summary.decontamination =
        Some(Decontamination { eval_records_skipped: eval_skipped, ..figures(&eval, &report) });

    let mut outputs = Vec::new();
    if let Some(mut out) = hits_out.take() {
        session.reporter.phase("hits", None);
        write_hits(&mut out, &corpus, &report.hits).context("cannot write --hits")?;
        outputs.push(out);
    }
    let hit_docs = docs_hit(&report.hits);
    let mut rewriting =
        Rewriting { session: &mut *session, settings, sources: &sources, corpus: &corpus, parquet };
    let every = || rewrite::wanted(&corpus, 0..corpus.len());
    if let Some(out) = kept_out {
        let (written, records) = if settings.annotate {
            let notes = Notes::Contamination(annotations(&report.hits)?);
            rewriting.write("annotating", &notes, &every(), out)?
        } else {
            let clean = (0..corpus.len()).filter(|d| hit_docs.binary_search(&(*d as u32)).is_err());
            let wanted = rewrite::wanted(&corpus, clean);
            rewriting.write("writing", &Notes::None, &wanted, out)?
        };
        // The same documents count as removed with --annotate (as dedup's).
        rewriting.session.summary.removed = hit_docs.len() as u64;
        rewriting.session.summary.written = records;
        rewriting.session.summary.annotated = settings.annotate;
        outputs.extend(written);
    }
    if let Some(out) = cut_out {
        let notes = Notes::Cut(Cuts::new(columns.clone(), settings.cut_window, spans(&report)));
        outputs.extend(rewriting.write("cutting", &notes, &every(), out)?.0);
    }
    if let Some(mut out) = page_out {
        session.reporter.phase("report", sources.iter().map(|s| s.size).sum());
        let max = input.max_record_bytes;
        let html = page::page(&report, &corpus, &sources, &input.reading.parser, max, session);
        out.write_all(html.as_bytes()).context("cannot write --report")?;
        outputs.push(out);
    }
    session.reporter.end_phase();
    Ok(outputs)
}

/// Reads the eval sets of `settings` and builds them with its n-gram length, minimum
/// overlap and document-frequency limit. Their bad records are reported through
/// `reporter` as every bad record is (`FILE:LINE: what`, or an error with `--strict`), and
/// counted apart from the corpus's: returns the eval sets and how many eval records were
/// left out. [`run`] starts with it; a front end that scans the corpus its own way
/// (`simhash-dist`, each process its share) calls it to have the same eval sets.
pub fn eval_sets(settings: &Settings, reporter: &mut crate::Reporter) -> Result<(EvalSets, u64)> {
    let mut builder = EvalSets::builder();
    if let Some(n) = settings.ngram {
        builder.ngram(n);
    }
    if let Some(share) = settings.min_overlap {
        builder.min_overlap(share);
    }
    if let Some(max_df) = settings.max_df {
        builder.max_df(max_df);
    }
    let before = reporter.skipped_now();
    let eval = evals::load(builder, &settings.evals, &settings.eval_reading, reporter)?;
    Ok((eval, reporter.skipped_since(before)))
}

/// A second pass over the corpus, writing its records again.
struct Rewriting<'a> {
    session: &'a mut Session,
    settings: &'a Settings,
    sources: &'a [simhash_io::Source],
    corpus: &'a Corpus,
    parquet: bool,
}

impl Rewriting<'_> {
    /// Writes the `wanted` records to `out` with `notes`, as the phase `phase`: returns
    /// the output and how many records it holds.
    fn write(
        &mut self,
        phase: &'static str,
        notes: &Notes<'_>,
        wanted: &rewrite::Wanted,
        out: Output,
    ) -> Result<(Vec<Output>, u64)> {
        self.session.reporter.phase(phase, self.sources.iter().map(|s| s.size).sum());
        let input = &self.settings.input;
        let pass = Pass {
            parser: &input.reading.parser,
            max_record_bytes: input.max_record_bytes,
            sources: self.sources,
            corpus: self.corpus,
            notes,
            reporter: &self.session.reporter,
            pool: &self.session.pool,
            parquet: self.parquet,
            compression: self.settings.parquet_compression,
        };
        rewrite::write(&pass, wanted, Target::One(out))
    }
}

/// The documents with a hit, ascending (hits come by document).
fn docs_hit(hits: &[Hit<'_>]) -> Vec<u32> {
    let mut docs: Vec<u32> = hits.iter().map(|h| h.doc as u32).collect();
    docs.dedup();
    docs
}

/// The summary's figures: totals, and each set's (the eval records left out are the
/// caller's to fill in).
pub fn figures(eval: &EvalSets, report: &Report<'_>) -> Decontamination {
    let mut evals: Vec<EvalFigures> = report
        .sets
        .iter()
        .map(|s| EvalFigures {
            name: s.name.to_string(),
            items: s.items as u64,
            items_found: 0,
            documents_hit: 0,
            ngrams: s.ngrams as u64,
            ngrams_dropped: s.dropped as u64,
            unmatchable: s.unmatchable as u64,
        })
        .collect();
    let index = |name: &str| report.sets.iter().position(|s| s.name == name);
    let mut items = std::collections::HashSet::new();
    let mut docs = std::collections::HashSet::new();
    for hit in &report.hits {
        let Some(set) = index(hit.set) else { continue };
        if items.insert((set, hit.item)) {
            evals[set].items_found += 1;
        }
        if docs.insert((set, hit.doc)) {
            evals[set].documents_hit += 1;
        }
    }
    Decontamination {
        ngram: eval.ngram(),
        min_overlap: eval.min_overlap(),
        max_df: eval.max_df().to_string(),
        hits: report.hits.len() as u64,
        documents_hit: docs_hit(&report.hits).len() as u64,
        ngrams: report.ngrams as u64,
        ngrams_dropped: report.dropped as u64,
        eval_records_skipped: 0,
        evals,
    }
}

/// Writes one JSON line per hit: `{"id", "eval", "item", "overlap", "longest", "spans",
/// "matched", "ngrams"}`, in the report's order (by document, then set and item in the
/// order read). `spans` are `[start, end]` code points of the document's text, end
/// exclusive.
pub fn write_hits(out: &mut dyn Write, corpus: &Corpus, hits: &[Hit<'_>]) -> Result<()> {
    let mut line = Vec::new();
    for hit in hits {
        line.clear();
        hit_line(&mut line, &corpus.id_value(hit.doc as usize), hit)?;
        out.write_all(&line)?;
    }
    Ok(())
}

/// One line of [`write_hits`], with its line end, for the document whose id is `id`
/// (`simhash-dist` writes its hits with ids gathered from the workers that read them).
pub fn hit_line(line: &mut Vec<u8>, id: &simhash_io::IdValue<'_>, hit: &Hit<'_>) -> Result<()> {
    line.extend_from_slice(b"{\"id\":");
    simhash_io::write_json_id(line, id)?;
    line.push(b',');
    hit_fields(hit, line)?;
    write!(line, ",\"matched\":{},\"ngrams\":{}}}", hit.matched, hit.ngrams)?;
    line.push(b'\n');
    Ok(())
}

/// `"eval":…,"item":…,"overlap":…,"longest":…,"spans":[[…]]`.
fn hit_fields(hit: &Hit<'_>, out: &mut Vec<u8>) -> Result<()> {
    out.extend_from_slice(b"\"eval\":");
    serde_json::to_writer(&mut *out, hit.set)?;
    out.extend_from_slice(b",\"item\":");
    serde_json::to_writer(&mut *out, hit.item)?;
    out.extend_from_slice(b",\"overlap\":");
    serde_json::to_writer(&mut *out, &hit.overlap)?;
    write!(out, ",\"longest\":{},\"spans\":[", hit.longest)?;
    for (i, s) in hit.spans.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        write!(out, "{comma}[{},{}]", s.start, s.end)?;
    }
    out.push(b']');
    Ok(())
}

/// `--annotate`'s field of each document with hits: the list of its hits.
fn annotations(hits: &[Hit<'_>]) -> Result<Annotations> {
    let mut docs = Vec::new();
    for group in hits.chunk_by(|a, b| a.doc == b.doc) {
        let mut json = vec![b'['];
        for (i, hit) in group.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            json.push(b'{');
            hit_fields(hit, &mut json)?;
            json.push(b'}');
        }
        json.push(b']');
        let json = String::from_utf8(json).ok().context("internal error: hits are not UTF-8")?;
        docs.push((group[0].doc as u32, json));
    }
    Ok(Annotations::new(docs))
}

/// Each document's spans, of all its hits.
fn spans(report: &Report<'_>) -> Vec<(u32, Vec<Range<usize>>)> {
    report
        .hits
        .chunk_by(|a, b| a.doc == b.doc)
        .map(|group| (group[0].doc as u32, group.iter().flat_map(|h| h.spans.clone()).collect()))
        .collect()
}
