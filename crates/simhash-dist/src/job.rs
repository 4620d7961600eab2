//! The program every worker runs: a fixed sequence of rounds, the same on every worker, each
//! deciding what comes next only from what all workers were told. Each round is a module of
//! [`crate::rounds`], whose doc says what crosses the network and why.
//!
//! 1. Read: each worker reads and fingerprints its share ([`crate::share`]); worker 0
//!    creates the output first, so that a bad path fails before any input is read.
//! 2. [`chunks`]: all-gather each piece's line count and any error; everyone can now number
//!    lines, and stops together if a worker failed.
//! 3. [`ids`]: the first record of the input decides whether records have ids (`id kinds`);
//!    ids are exchanged by hash, and all but the first of each id are skipped (`duplicates`),
//!    as `simhash` skips them.
//! 4. [`census`]: counts are all-gathered; bad records go to worker 0, which reports them in
//!    input order (or stops, with `--strict`).
//! 5. simhash: [`collapse`]: identical fingerprints become one representative with a
//!    multiplicity; 6. [`tables`]: one epoch per permutation table, pairing each prefix
//!    group.
//!    minhash: 5. [`sets`]: identical shingle sets and tokens become one representative;
//!    6. [`bands`]: one band at a time, candidates owned by their first common band, each
//!    verified by the exact Jaccard similarity of the two sets, brought together on one
//!    worker.
//! 7. [`parts`](crate::rounds::parts), driven by [`output`]: the output cut into one part
//!    per piece of the input, each written by the worker that read the piece (`dedup`:
//!    [`mod@dedup`] and [`kept`] first): with `--output-dir` as files, with `-o` into a
//!    temporary file that worker 0 receives a window at a time
//!    ([`stream`](crate::rounds::stream)) and writes, by temp file and rename.
//!
//! `decontaminate` goes from the census to [`crate::rounds::contamination`]
//! (each worker's scans tallied and gathered by every worker, the ids of the documents hit
//! to worker 0), then worker 0 writes `--hits` and, with `-o`, receives every worker's kept
//! lines as `dedup` does ([`decontaminate`]).
//!
//! 8. [`outcome`]: worker 0 tells every worker how the write went, so that every process
//!    exits with the same code (0, 1 when records were skipped, or 2).
//!
//! A round that fails (a read error, `--strict`, settings the planner refuses) fails on
//! every worker alike, and no worker runs a round more. With `--stats`, a last round
//! gathers every worker's figures ([`stats`]).

mod decontaminate;
mod output;
mod stats;

use std::path::PathBuf;
use std::time::Instant;

use simhash_index::lsh::DocSketch;
use simhash_io::{Output, Score};
use timely::worker::Worker;

use crate::args::Matching;
use crate::plan::{End, Mode};
use crate::rounds::all_gather;
use crate::rounds::census::Census;
use crate::rounds::gather::{MatchStats, Matched};
use crate::rounds::outcome::Outcome;
use crate::rounds::parts::Parts;
use crate::rounds::tables::Links;
use crate::rounds::write::Summary;
use crate::rounds::{bands, census, chunks, collapse, dedup, ids, kept, outcome, sets, tables};
use crate::share::{InputPlan, Reading, Share, read_share};
pub(crate) use decontaminate::Decontaminating;
use output::{Dedup, removed_output, walker, write_parts};

/// Everything a worker needs to know, the same in every process.
#[derive(Debug)]
pub(crate) struct Job {
    /// What the job computes and writes.
    pub(crate) mode: Mode,
    /// The input files, directories expanded, in the order given.
    pub(crate) paths: Vec<PathBuf>,
    /// How each line becomes a record (parser, fingerprinter, sketcher).
    pub(crate) reading: Reading,
    /// `--max-record-bytes`: a longer line is a bad record.
    pub(crate) max_record_bytes: u64,
    /// `--strict`: the first bad record fails the job.
    pub(crate) strict: bool,
    /// The method and its settings (none for `decontaminate`, which matches eval n-grams).
    pub(crate) matching: Option<Matching>,
    /// `decontaminate`: the eval sets and the outputs.
    pub(crate) decontaminate: Option<Decontaminating>,
    /// `-o`: the output file, written by process 0.
    pub(crate) output: PathBuf,
    /// `--output-dir`: one part per piece of the input, by its reader
    /// ([`parts`](crate::rounds::parts)).
    pub(crate) output_dir: Option<PathBuf>,
    /// `dedup --removed`.
    pub(crate) removed: Option<PathBuf>,
    /// `dedup --parquet-compression`: the codec of the Parquet parts.
    pub(crate) parquet_compression: simhash_io::ParquetCompression,
    /// `--quiet`: no summary line on standard error.
    pub(crate) quiet: bool,
    /// `--stats`: process 0 writes the workers' figures there.
    pub(crate) stats: Option<PathBuf>,
    /// This process's index (`-p`).
    pub(crate) process: usize,
    /// `--inject-error`: the worker that fails after reading its share (tests only).
    pub(crate) inject_error: Option<usize>,
    /// `--inject-panic`: the worker that panics at the start of the table round (tests only).
    pub(crate) inject_panic: Option<usize>,
    /// `--inject-write-error`: the worker that fails after writing its parts (tests only).
    pub(crate) inject_write_error: Option<usize>,
    /// `--inject-stall`: the worker that stops working, for good, before the last round
    /// (tests only).
    pub(crate) inject_stall: Option<usize>,
    /// The most positions one worker's spanning forest numbers
    /// ([`crate::forest::CAPACITY`]; `--forest-capacity`, tests only).
    pub(crate) forest_capacity: usize,
    /// The bytes of `dedup`'s output worker 0 receives in one round
    /// ([`stream::WINDOW`](crate::rounds::stream::WINDOW)).
    pub(crate) output_window: u64,
    /// The bytes of shingle sets a worker receives in one verification round
    /// ([`bands::VERIFY_ROUND_BYTES`]).
    pub(crate) verify_round_bytes: u64,
    /// `pairs --method minhash`: the band groups larger than this are searched whole
    /// ([`crate::rounds::floods::FLOOD_GROUP`]).
    pub(crate) flood_group: usize,
}

impl Job {
    /// The method and its settings, which every job but `decontaminate` has.
    fn matching(&self) -> Result<&Matching, Vec<String>> {
        self.matching
            .as_ref()
            .ok_or_else(|| vec!["internal error: a job without a matching method".to_owned()])
    }

    /// The MinHash sketcher, which the job has with [`Matching::Minhash`] (made with it:
    /// [`JobArgs::matching`](crate::args::JobArgs::matching)).
    fn sketcher(&self) -> Result<&simhash_index::lsh::Sketcher, Vec<String>> {
        self.reading
            .sketcher
            .as_deref()
            .ok_or_else(|| vec!["internal error: --method minhash without a sketcher".to_owned()])
    }

    /// Empty links for the job's mode ([`Links::new`]).
    fn links(&self) -> Links {
        Links::new(self.mode, self.forest_capacity)
    }

    /// What every process must have alike, setting by setting (a name, and the value as
    /// text): everything that changes the work or what is written. Not this process's
    /// index, `--quiet` (what it prints of itself) or the fault-injection hooks of tests.
    fn agreement(&self) -> Vec<(String, String)> {
        let Reading { parser, fingerprinter, spool, .. } = &self.reading;
        // Each value as the flags that set it are written (never Rust's Debug).
        let fingerprinter = fingerprinter.as_ref().map_or_else(
            || "none (hashes read)".to_owned(),
            |f| format!("--preset {} --window {}", f.preset().name(), f.window()),
        );
        // The sketcher follows from the matching (and the command).
        let matching = match (&self.matching, self.reading.sketcher.as_deref()) {
            (None, _) => "none (eval n-grams)".to_owned(),
            (Some(Matching::Simhash { distance, blocks }), _) => {
                format!("--method simhash -k {distance} --blocks {blocks}")
            }
            (Some(Matching::Minhash { .. }), None) => {
                "--method minhash without a sketcher".to_owned()
            }
            (Some(Matching::Minhash { jaccard, templates, .. }), Some(sketcher)) => {
                let banding = sketcher.banding();
                let keys = match sketcher.band_keys() {
                    simhash_index::lsh::BandKeyWidth::Auto => "auto",
                    simhash_index::lsh::BandKeyWidth::Bits32 => "32",
                    simhash_index::lsh::BandKeyWidth::Bits64 => "64",
                    _ => "another width",
                };
                format!(
                    "--method minhash --jaccard {jaccard} --templates {templates} --num-perm {} \
                     ({} bands of {} rows) --band-key-bits {keys}",
                    sketcher.minhasher().num_perm(),
                    banding.bands,
                    banding.rows,
                )
            }
        };
        let mode = match self.mode {
            Mode::Pairs => "pairs".to_owned(),
            Mode::Cluster { singletons } => {
                if singletons {
                    "cluster --singletons".to_owned()
                } else {
                    "cluster".to_owned()
                }
            }
            Mode::Dedup { keep } => {
                let keep =
                    clap::ValueEnum::to_possible_value(&keep).map(|v| v.get_name().to_owned());
                format!("dedup --keep {}", keep.unwrap_or_default())
            }
            Mode::Decontaminate => "decontaminate".to_owned(),
        };
        let path =
            |p: &std::path::Path| simhash_io::printable(&p.display().to_string()).into_owned();
        let given = |p: &Option<PathBuf>| p.as_deref().map_or_else(|| "not given".to_owned(), path);
        let inputs = self.paths.iter().map(|p| path(p)).collect::<Vec<_>>().join(" ");
        let parser = match parser {
            simhash_io::Parser::Json(columns) => format!(
                "--format json --text-column {} --id-column {}",
                columns.text_name(),
                columns.id_name()
            ),
            simhash_io::Parser::Hash => "--format hash".to_owned(),
            simhash_io::Parser::CppHash => "simhash-cpp's hashes".to_owned(),
        };
        let settings: [(&str, String); 13] = [
            ("the command and its mode (--keep, --singletons)", mode),
            ("the inputs", inputs),
            ("the input format and columns (--format, --text, --id)", parser),
            ("the fingerprinter (--preset, --window)", fingerprinter),
            (
                "the matching (--method, -k, --blocks, --jaccard, --lsh-threshold, --num-perm, \
                 --band-key-bits)",
                matching,
            ),
            ("the second pass over standard input", spool.to_string()),
            ("--max-record-bytes", self.max_record_bytes.to_string()),
            ("--strict", self.strict.to_string()),
            ("--output", path(&self.output)),
            ("--output-dir", given(&self.output_dir)),
            ("--removed", given(&self.removed)),
            ("--parquet-compression", self.parquet_compression.to_string()),
            ("--stats", given(&self.stats)),
        ];
        let mut all: Vec<(String, String)> =
            settings.into_iter().map(|(name, value)| (name.to_owned(), value)).collect();
        all.push(("the output window".to_owned(), self.output_window.to_string()));
        all.push(("the verification round".to_owned(), self.verify_round_bytes.to_string()));
        all.push(("the flooded band groups".to_owned(), self.flood_group.to_string()));
        if let Some(dec) = &self.decontaminate {
            let e = &dec.eval;
            all.push((
                "the eval sets (--eval, --eval-field, --ngram, --min-overlap, --max-df)".to_owned(),
                format!(
                    "{} items, {} distinct n-grams, --ngram {} --min-overlap {} --max-df {}",
                    e.items(),
                    e.ngrams(),
                    e.ngram(),
                    e.min_overlap(),
                    e.max_df()
                ),
            ));
            all.push(("--hits".to_owned(), given(&dec.hits)));
            all.push(("-o".to_owned(), given(&dec.output)));
        }
        all
    }
}

/// Every process's settings ([`Job::agreement`]), exchanged before anything is read: a
/// setting that differs is named, with each process's value, on every worker alike (so
/// every process exits 2 with the same message, and none waits for a round another does
/// not run).
fn agree(worker: &mut Worker, job: &Job) -> Result<(), Vec<String>> {
    crate::rounds::label("agreement");
    let mine = (job.process, job.agreement());
    let all = all_gather(worker, &mine);
    let Some((first, settings)) = all.first() else {
        return Ok(());
    };
    let mut messages = Vec::new();
    for (process, other) in &all[1..] {
        for ((name, value), (_, theirs)) in settings.iter().zip(other) {
            let message = format!(
                "the processes were started with different settings: {name} is {value} on \
                 process {first} and {theirs} on process {process}; give every process the \
                 same flags"
            );
            if value != theirs && !messages.contains(&message) {
                messages.push(message);
            }
        }
    }
    if messages.is_empty() { Ok(()) } else { Err(messages) }
}

/// Runs the job's rounds on this worker, once every process agrees on the settings.
pub(crate) fn run(worker: &mut Worker, job: &Job) -> End {
    if let Err(messages) = agree(worker, job) {
        return End::Failed(messages);
    }
    let end = match rounds(worker, job) {
        Ok(written) => {
            stall(worker, job);
            outcome::run(worker, &written)
        }
        Err(messages) => End::Failed(messages),
    };
    match (&end, &job.stats) {
        (End::Done(_), Some(path)) => stats::write(worker, job, path, end),
        _ => end,
    }
}

/// The test hook `--inject-stall`: the worker stops, for good, before the outcome round
/// (after worker 0's commit), as a hung host would; its process stays alive and answers.
fn stall(worker: &Worker, job: &Job) {
    if job.inject_stall == Some(worker.index()) {
        loop {
            std::thread::park();
        }
    }
}

/// The rounds up to the write: worker 0's outcome (the others': the exit code), or the
/// messages a round failed with, on every worker alike.
fn rounds(worker: &mut Worker, job: &Job) -> Result<Outcome, Vec<String>> {
    let started = Instant::now();
    let Read { plan, mut share, out, contaminated, error } = read(worker, job)?;
    let mut out = out;
    let read_seconds = started.elapsed().as_secs_f64();
    stats::RECORDS.with(|r| r.set(share.docs.pos.len() as u64));
    crate::rounds::label("chunks");
    let all_chunks = chunks::run(worker, &plan, &mut share, error)?;
    crate::rounds::label("ids");
    ids::kinds(worker, &mut share);
    ids::duplicates(worker, &plan, &mut share);
    crate::rounds::label("census");
    let census = census::run(worker, &plan, &share, &all_chunks, job.strict)?;
    if let Some(dec) = &job.decontaminate {
        // No matching: decontaminate's summary reads the counts, the workers and the times
        // (no document is featureless: it has nothing to fingerprint).
        let summary = Summary {
            records_read: all_chunks.iter().map(|c| c.records).sum(),
            skipped: census.skipped,
            documents: census.documents,
            featureless: 0,
            workers: worker.peers(),
            bytes: all_chunks.iter().map(|c| c.bytes).sum(),
            matching: String::new(),
            measure: simhash_io::Measure::Jaccard,
            read_seconds,
            match_seconds: 0.0,
            started,
        };
        let shared = (&plan, &mut share, &census);
        return decontaminate::write(worker, job, dec, shared, contaminated, &summary);
    }
    crate::rounds::label("matching");
    let matching_start = Instant::now();
    let key_bits = band_key_bits(job, &census);
    let (matched, matching) = match *job.matching()? {
        Matching::Simhash { distance, blocks } => {
            simhash(worker, job, (distance, blocks), &census, &share.docs)?
        }
        Matching::Minhash { jaccard, templates, .. } => {
            let banding = job.sketcher()?.banding();
            assert!(
                job.inject_panic != Some(worker.index()),
                "worker {}: injected panic (--inject-panic)",
                worker.index()
            );
            if key_bits == Some(32) {
                // The high halves of the band hashes are not needed: 4 bytes a band less.
                share.docs.sketch.iter_mut().flatten().for_each(DocSketch::narrow);
            }
            let keys = (banding.bands, key_bits.unwrap_or(32));
            (
                minhash(worker, job, &plan, &share.docs, keys, (jaccard, templates))?,
                format!(
                    "{} bands x {} rows, {}-bit band keys",
                    banding.bands, banding.rows, keys.1
                ),
            )
        }
    };
    let summary = Summary {
        records_read: all_chunks.iter().map(|c| c.records).sum(),
        skipped: census.skipped,
        documents: census.documents,
        featureless: census.featureless,
        workers: worker.peers(),
        bytes: all_chunks.iter().map(|c| c.bytes).sum(),
        matching,
        measure: simhash_jobs::matching::measure(job.matching()?),
        read_seconds,
        match_seconds: matching_start.elapsed().as_secs_f64(),
        started,
    };
    // Gathering, parts, the dedup walk and the kept lines: records and their ids.
    crate::rounds::label("records");
    if let Mode::Dedup { keep } = job.mode {
        let outputs = out.take().map(|o| (o, removed_output(job)));
        let bands = job.reading.sketcher.as_ref().map_or(0, |s| s.banding().bands);
        let walker = walker(job.matching()?, bands, key_bits.unwrap_or(32));
        let d = Dedup { plan: &plan, share: &share, keep, walker, census: &census };
        return output::dedup(worker, job, &d, matched, outputs, &summary);
    }
    // Every worker knows the census, so every worker knows the exit code.
    let code = u8::from(census.exits_1());
    let parts = match &job.output_dir {
        Some(dir) => Ok(Parts::new(dir, &plan, "tsv")),
        None => Parts::spooled(&plan),
    };
    let (parts, error) = match parts {
        Ok(parts) => (Some(parts), matched.links.full(worker.index())),
        Err(e) => (None, Some(format!("worker {}: {e:#}", worker.index()))),
    };
    kept::agree(worker, error.as_deref())?;
    let parts = parts.ok_or_else(|| vec!["internal error: no parts".to_string()])?;
    let outputs = out.map(|o| (o, None));
    write_parts(worker, job, parts, (&plan, &share.docs), matched, (&summary, outputs, code))
}

/// The simhash matching: identical fingerprints collapsed, then the permutation tables.
/// Returns what it matched and its settings as the summary shows them.
fn simhash(
    worker: &mut Worker,
    job: &Job,
    settings: (u32, simhash_index::Blocks),
    census: &Census,
    docs: &crate::share::Docs,
) -> Result<(Matched, String), Vec<String>> {
    let collapsed = collapse::run(worker, docs);
    let fingerprinted = census.documents - census.featureless;
    let found =
        tables::run(worker, (job.links(), job.inject_panic), settings, fingerprinted, &collapsed)?;
    let stats = MatchStats {
        record_pairs: found.matches.record_pairs + collapsed.copy_pairs,
        largest_group: found.matches.largest_group,
        received: found.matches.received,
        representatives: collapsed.reps.len() as u64,
        ..MatchStats::default()
    };
    let shown = format!("{} blocks / {} tables", found.tables.blocks(), found.tables.len());
    let matched = Matched {
        links: found.links,
        copies: collapsed.copies,
        copy_code: Score::Distance(0).code(),
        stats,
    };
    Ok((matched, shown))
}

/// The width of the MinHash band keys (`None` for simhash): the sketcher's choice for the
/// job's documents and bands, as `simhash` makes it for its store
/// ([`simhash_index::lsh::BandKeyWidth::bits`] of the documents read).
fn band_key_bits(job: &Job, census: &Census) -> Option<u32> {
    let sketcher = job.reading.sketcher.as_ref()?;
    Some(sketcher.band_keys().bits(census.documents, sketcher.banding().bands))
}

/// The MinHash matching: identical shingle sets collapsed, then the bands (`keys`: bands
/// and key bits). `pairs` verifies every candidate; `cluster` and `dedup` join the records
/// sharing a key unverified, and verify per candidate component as `simhash` does: `cluster`
/// here ([`dedup::verified_edges`]), `dedup` in its walk.
fn minhash(
    worker: &mut Worker,
    job: &Job,
    plan: &InputPlan,
    docs: &crate::share::Docs,
    keys: (usize, u32),
    (jaccard, templates): (f64, simhash_index::lsh::Templates),
) -> Result<Matched, Vec<String>> {
    crate::rounds::label("sets");
    let sets = sets::run(worker, plan, docs);
    let mut links = job.links();
    let verifying = match job.mode {
        Mode::Pairs => bands::Verifying::Pairs {
            jaccard,
            round_bytes: job.verify_round_bytes,
            flood_group: job.flood_group,
            templates,
        },
        Mode::Cluster { .. } | Mode::Dedup { .. } | Mode::Decontaminate => bands::Verifying::Groups,
    };
    if let (Links::Forest(forest), Mode::Dedup { .. }) = (&mut links, job.mode) {
        // The walk reads each copy with its set's component.
        for &(rep, member) in &sets.copies {
            forest.union(rep, member);
        }
    }
    let (mut found, failed) = bands::run(worker, plan, docs, &sets, keys, verifying, &mut links);
    kept::agree(worker, failed.or_else(|| links.full(worker.index())).as_deref())?;
    if let (Links::Forest(groups), Mode::Cluster { .. }) = (&mut links, job.mode) {
        let edges = std::mem::take(&mut groups.edges);
        crate::rounds::label("candidate_components");
        let settings = (jaccard, templates, keys.0, keys.1);
        let verified = dedup::verified_edges(worker, plan, docs, edges, settings);
        let (edges, engine) = match verified {
            Ok(found) => (found, None),
            Err(e) => ((Vec::new(), simhash_index::lsh::MatchStats::default()), Some(e)),
        };
        kept::agree(worker, engine.as_deref())?;
        let (edges, engine) = edges;
        (found.candidates, found.verified, found.pairs) =
            (engine.candidates, engine.verified, engine.pairs);
        let mut forest = crate::forest::Forest::with_capacity(job.forest_capacity);
        for (a, b) in sets.copies.iter().copied().chain(edges) {
            forest.union(a, b);
        }
        links = Links::Forest(forest);
    }
    let stats = MatchStats {
        record_pairs: found.pairs + sets.copies.len() as u64,
        largest_group: found.largest_group,
        received: found.received,
        representatives: sets.distinct,
        candidates: found.candidates,
        verified: found.verified,
        flooded: found.flooded,
        ..MatchStats::default()
    };
    Ok(Matched { links, copies: sets.copies, copy_code: Score::Jaccard(1.0).code(), stats })
}

/// What step 1 leaves: the plan, this worker's share, worker 0's output (or
/// `decontaminate`'s), and the error that stops the job in round `chunks` (on every
/// worker).
struct Read {
    plan: InputPlan,
    share: Share,
    out: Option<Output>,
    contaminated: decontaminate::Outputs,
    error: Option<String>,
}

/// Step 1: worker 0 creates the output, then each worker reads its share. A bad plan
/// fails every worker alike at once; a failed read is told to all in round `chunks`.
fn read(worker: &Worker, job: &Job) -> Result<Read, Vec<String>> {
    let (me, peers) = (worker.index(), worker.peers());
    let mut out = None;
    let mut contaminated = decontaminate::Outputs::default();
    let mut error = None;
    let create =
        |flag: &str, path: &std::path::Path, error: &mut Option<String>| match Output::create_for(
            flag, path,
        ) {
            Ok(o) => Some(o),
            Err(e) => {
                error.get_or_insert(format!("{:#}", anyhow::Error::from(e)));
                None
            }
        };
    if me == 0 {
        if let Some(dec) = &job.decontaminate {
            // As `simhash decontaminate` creates them: --hits, then -o.
            if let Some(hits) = &dec.hits {
                contaminated.hits = create("--hits", hits, &mut error);
            }
            if let Some(clean) = &dec.output {
                contaminated.clean = create("--output", clean, &mut error);
            }
        } else if job.output_dir.is_none() {
            out = create("--output", &job.output, &mut error);
        }
    }
    // Every worker fails the same way on the same flags: no round is needed.
    let plan = InputPlan::new(&job.paths, peers).map_err(|e| vec![format!("{e:#}")])?;
    let mut share = Share::default();
    if error.is_none() {
        match read_share(&plan, me, &job.reading, job.max_record_bytes) {
            Ok(s) => share = s,
            Err(e) => error = Some(format!("worker {me}: {e:#}")),
        }
    }
    if job.inject_error == Some(me) {
        error = Some(format!("worker {me}: injected failure (--inject-error)"));
    }
    Ok(Read { plan, share, out, contaminated, error })
}
