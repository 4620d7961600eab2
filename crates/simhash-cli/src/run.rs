//! The commands: read, match, cluster, write.

use std::io::Write;
use std::num::NonZeroUsize;
use std::process::ExitCode;

use anyhow::Context;
use simhash_cluster::{Clusters, Representative, UnionFind};
use simhash_core::{Fingerprint, Fingerprinter, Preset};
use simhash_index::Tables;

use crate::args::{
    Blocks, ClusterArgs, ClusterMode, ClusterOpts, Command, DedupArgs, FingerprintArgs,
    FingerprintOpts, InputArgs, KeepPolicy, MatchOpts, Matching, PairsArgs, RunOpts, SeedArgs,
};
use crate::corpus::{self, Corpus, Parser, ReadOptions};
use crate::input::{LineReader, LineStatus, Source};
use crate::output::Output;
use crate::report::{Reporter, Summary};
use crate::sketch::{self, MatchSink, Sketcher};

/// simhash-cpp's `find-all` (`clusters` false) or `find-clusters`.
pub fn run_seed(args: &SeedArgs, clusters: bool) -> anyhow::Result<ExitCode> {
    seed(args, clusters)
}

pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Fingerprint(args) => fingerprint(&args),
        Command::Pairs(args) => pairs(&args),
        Command::Dedup(args) => dedup(&args),
        Command::Cluster(args) => cluster(&args, Preset::default()),
        Command::FindAll(args) => seed(&args, false),
        Command::FindClusters(args) => seed(&args, true),
        Command::Eval(args) => crate::eval::run(&crate::eval::EvalOptions {
            prediction: &args.prediction,
            truth: &args.truth,
            tiers: args.tiers.as_deref(),
            json: args.json,
            output: &args.output.output,
        }),
    }
}

/// The top-level command: the fork's job, with the fork's fingerprints by default.
pub fn run_fork_style(args: &ClusterArgs) -> anyhow::Result<ExitCode> {
    cluster(args, Preset::Fork)
}

/// What every command shares: the thread count, reporter and summary.
struct Session {
    threads: usize,
    pool: rayon::ThreadPool,
    reporter: Reporter,
    summary: Summary,
    quiet: bool,
    /// The --stats file, created up front so that a bad path fails before any work.
    stats: Option<Output>,
}

impl Session {
    fn new(command: &'static str, run: &RunOpts, strict: bool) -> anyhow::Result<Session> {
        let threads = run
            .threads
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, NonZeroUsize::get);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .context("cannot start the thread pool")?;
        Ok(Session {
            threads,
            pool,
            reporter: Reporter::new(strict, run.quiet),
            summary: Summary { command, ..Summary::default() },
            quiet: run.quiet,
            stats: run.stats.as_deref().map(Output::create).transpose()?,
        })
    }

    fn read(
        &mut self,
        source: &mut Source,
        parser: Parser,
        input: Option<&InputArgs>,
        spool: bool,
    ) -> anyhow::Result<Corpus> {
        self.summary.input.clone_from(&source.name);
        self.reporter.phase("reading", source.size);
        let options = ReadOptions {
            parser,
            threads: self.threads,
            max_record_bytes: input.map_or(u64::MAX, |i| i.max_record_bytes),
            sample: input.and_then(|i| i.sample.map(|n| (n, i.seed))),
            spool,
        };
        let corpus = corpus::read(source, &options, &mut self.reporter)?;
        self.summary.bytes_read = corpus.bytes;
        self.summary.records_read = corpus.records;
        self.summary.records_not_sampled = corpus.not_sampled;
        self.summary.blank_lines = corpus.blank_lines;
        self.summary.documents = corpus.len() as u64;
        self.summary.featureless = corpus.featureless() as u64;
        if corpus.records == 0 {
            self.reporter.empty_input(&source.name)?;
        }
        Ok(corpus)
    }

    /// Ends the run: summary, --stats file, exit code.
    fn finish(mut self) -> anyhow::Result<ExitCode> {
        let skipped = self.reporter.skipped_total() + self.reporter.empty_inputs();
        let summary = self.reporter.finish(std::mem::take(&mut self.summary), self.quiet);
        if let Some(mut out) = self.stats.take() {
            serde_json::to_writer_pretty(&mut out, &summary).context("cannot write --stats")?;
            out.write_all(b"\n")?;
            out.commit()?;
        }
        Ok(if skipped > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
    }
}

/// How records are read: `matching` (when given) decides whether they are also sketched
/// for MinHash, with their fingerprints too when `fingerprints`.
fn parser_for(
    input: &InputArgs,
    opts: &FingerprintOpts,
    default: Preset,
    matching: Option<&Matching>,
    fingerprints: bool,
) -> anyhow::Result<Parser> {
    Ok(match input.format() {
        crate::args::Format::Hash => Parser::Hash,
        crate::args::Format::Json => {
            let mut builder = Fingerprinter::builder();
            builder.preset(opts.preset.unwrap_or(default));
            if let Some(w) = opts.window {
                builder.window(usize::from(w));
            }
            let sketcher = match matching {
                Some(&Matching::Minhash { lsh_threshold, num_perm, .. }) => {
                    let minhasher =
                        simhash_core::MinHasher::new(num_perm, crate::args::defaults::MINHASH_SEED)
                            .context("invalid --num-perm")?;
                    let banding = simhash_index::Banding::for_threshold(lsh_threshold, num_perm)
                        .context("invalid --lsh-threshold")?;
                    Some(std::sync::Arc::new(Sketcher { minhasher, banding, fingerprints }))
                }
                _ => None,
            };
            Parser::Json {
                columns: crate::record::Columns::new(&input.text_column, &input.id_column),
                fingerprinter: builder.build(),
                sketcher,
            }
        }
    })
}

fn note_preset(summary: &mut Summary, parser: &Parser) {
    if let Parser::Json { fingerprinter, sketcher, .. } = parser {
        summary.preset =
            Some(format!("{} (window {})", fingerprinter.preset(), fingerprinter.window()));
        if let Some(s) = sketcher {
            summary.lsh_bands = Some(format!("{} x {}", s.banding.bands, s.banding.rows));
        }
    }
}

/// The matching settings of a command, checked before any input is read.
fn resolve_matching(
    summary: &mut Summary,
    matching: &MatchOpts,
    input: &InputArgs,
    fingerprint: &FingerprintOpts,
    seed_mode: bool,
) -> anyhow::Result<Matching> {
    let resolved = matching
        .resolve(input.format(), fingerprint.preset, seed_mode)
        .map_err(|e| anyhow::anyhow!(e))?;
    check_matching(&resolved)?;
    match resolved {
        Matching::Simhash { .. } => summary.method = Some("simhash"),
        Matching::Minhash { jaccard, .. } => {
            summary.method = Some("minhash");
            summary.jaccard = Some(jaccard);
        }
    }
    Ok(resolved)
}

fn fingerprint(args: &FingerprintArgs) -> anyhow::Result<ExitCode> {
    let mut session = Session::new("fingerprint", &args.run, args.input.strict)?;
    let parser = parser_for(&args.input, &args.fingerprint, Preset::default(), None, false)?;
    note_preset(&mut session.summary, &parser);
    let mut out = Output::create(&args.output.output)?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), false)?;
    session.reporter.phase("writing", None);
    out.write_all(b"id\thash\n")?;
    for doc in 0..corpus.len() {
        out.write_all(corpus.id(doc).as_bytes())?;
        match corpus.fingerprint(doc) {
            Some(fp) => writeln!(out, "\t{}", fp.get())?,
            None => out.write_all(b"\t\n")?,
        }
    }
    out.commit()?;
    session.summary.written = corpus.len() as u64;
    session.finish()
}

/// The matching settings and the record parser of a matching command (`seed_mode`: the
/// fork-style top level; `fingerprints`: the output shows them), noted in the summary.
fn matching_and_parser(
    summary: &mut Summary,
    input: &InputArgs,
    fingerprint: &FingerprintOpts,
    matching: &MatchOpts,
    default: Preset,
    fingerprints: bool,
) -> anyhow::Result<(Matching, Parser)> {
    let seed_mode = default == Preset::Fork;
    let matching = resolve_matching(summary, matching, input, fingerprint, seed_mode)?;
    let parser = parser_for(input, fingerprint, default, Some(&matching), fingerprints)?;
    note_preset(summary, &parser);
    Ok((matching, parser))
}

/// Fails early, before any input is read, on settings the index would refuse.
fn check_matching(matching: &Matching) -> anyhow::Result<()> {
    match *matching {
        Matching::Simhash { distance, blocks: Blocks::Fixed(m) } => {
            Tables::new(m, distance).map(drop).context("invalid --blocks/--distance")
        }
        Matching::Simhash { distance, blocks: Blocks::Auto } => {
            simhash_index::plan(1, distance).map(drop).context("invalid --distance")
        }
        // --num-perm is range-checked when resolved; the MinHasher is built once reading starts.
        Matching::Minhash { lsh_threshold, num_perm, .. } => {
            simhash_index::Banding::for_threshold(lsh_threshold, num_perm)
                .map(drop)
                .context("invalid --lsh-threshold")
        }
    }
}

/// How strongly a pair matched: bits apart (simhash) or Jaccard similarity (minhash).
#[derive(Clone, Copy, Debug)]
enum Score {
    Distance(u32),
    Jaccard(f64),
}

impl Score {
    /// The score in 32 bits, for pairs held by the million: the distance, or the Jaccard
    /// similarity in units of 0.0001, rounded exactly as `Display` prints it.
    fn code(self) -> u32 {
        match self {
            Score::Distance(d) => d,
            Score::Jaccard(_) => {
                let text = self.to_string();
                let (whole, frac) = text.split_once('.').unwrap_or((&text, "0"));
                whole.parse::<u32>().unwrap_or(0) * 10_000 + frac.parse::<u32>().unwrap_or(0)
            }
        }
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Distance(d) => write!(f, "{d}"),
            Score::Jaccard(j) => write!(f, "{j:.4}"),
        }
    }
}

/// The tables for `n` fingerprints: the planner's choice for `--blocks auto`.
fn tables(k: u32, blocks: Blocks, n: usize, summary: &mut Summary) -> anyhow::Result<Tables> {
    let blocks = match blocks {
        Blocks::Fixed(m) => m,
        Blocks::Auto => simhash_index::plan(n as u64, k).context("invalid --distance")?.blocks,
    };
    let tables = Tables::new(blocks, k).context("invalid --blocks/--distance")?;
    summary.blocks = Some(blocks);
    summary.distance = Some(k);
    summary.tables = Some(tables.len());
    Ok(tables)
}

/// Finds every matching pair of documents and calls `sink` with the pair of positions
/// `(a, b, score)`, `a < b`, each pair once.
fn match_docs(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    mut sink: impl FnMut(u32, u32, Score) + Send,
) -> anyhow::Result<()> {
    match *matching {
        Matching::Simhash { distance, blocks } => {
            match_fingerprints(session, corpus, distance, blocks, |a, b, d| {
                sink(a, b, Score::Distance(d));
            })
        }
        Matching::Minhash { jaccard, .. } => {
            /// Expands each exact-duplicate group into all its pairs.
            struct Expand<F> {
                groups: std::collections::HashMap<u32, Vec<u32>>,
                sink: F,
                count: u64,
            }
            impl<F: FnMut(u32, u32, Score) + Send> MatchSink for Expand<F> {
                fn duplicate(&mut self, doc: u32, of: u32) {
                    let group = self.groups.entry(of).or_default();
                    for &x in std::iter::once(&of).chain(group.iter()) {
                        (self.sink)(x, doc, Score::Jaccard(1.0));
                        self.count += 1;
                    }
                    group.push(doc);
                }
                fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
                    let none = Vec::new();
                    let ga = self.groups.get(&a).unwrap_or(&none);
                    let gb = self.groups.get(&b).unwrap_or(&none);
                    for &x in std::iter::once(&a).chain(ga) {
                        for &y in std::iter::once(&b).chain(gb) {
                            (self.sink)(x.min(y), x.max(y), Score::Jaccard(jaccard));
                            self.count += 1;
                        }
                    }
                }
            }
            let mut expand = Expand { groups: std::collections::HashMap::new(), sink, count: 0 };
            match_sketches(session, corpus, jaccard, &mut expand)?;
            session.summary.pairs = expand.count;
            Ok(())
        }
    }
}

/// The MinHash search over the corpus's sketches, with its counts in the summary.
fn match_sketches(
    session: &mut Session,
    corpus: &Corpus,
    jaccard: f64,
    sink: &mut dyn MatchSink,
) -> anyhow::Result<()> {
    let sketches = corpus.sketches.as_ref().context("internal error: no MinHash sketches")?;
    session.reporter.phase("matching", None);
    let stats = session.pool.install(|| sketch::find_matches(sketches, jaccard, sink))?;
    let s = &mut session.summary;
    s.exact_duplicates = Some(stats.duplicates);
    s.candidates = Some(stats.candidates);
    s.verified = Some(stats.verified);
    // Matches found: exact duplicates and verified pairs (the pair-listing commands count
    // the pairs among duplicates instead).
    s.pairs = stats.duplicates + stats.pairs;
    Ok(())
}

/// Runs the index over the documents that have a fingerprint and calls `sink` with each
/// pair of document positions `(a, b, distance)`, `a < b`, each pair once.
fn match_fingerprints(
    session: &mut Session,
    corpus: &Corpus,
    distance: u32,
    blocks: Blocks,
    mut sink: impl FnMut(u32, u32, u32) + Send,
) -> anyhow::Result<()> {
    let docs: Vec<u32> =
        (0..corpus.len()).filter(|&d| corpus.fingerprint(d).is_some()).map(|d| d as u32).collect();
    let fps: Vec<Fingerprint> =
        docs.iter().map(|&d| corpus.fingerprint(d as usize).unwrap_or_default()).collect();
    let tables = tables(distance, blocks, fps.len(), &mut session.summary)?;
    session.reporter.phase("matching", None);
    let mut count = 0u64;
    let reporter = &session.reporter;
    let (n, total) = (fps.len(), tables.len());
    session.pool.install(|| {
        simhash_index::all_pairs_with_progress(
            &fps,
            &tables,
            |batch| {
                count += batch.len() as u64;
                for p in batch {
                    sink(docs[p.a as usize], docs[p.b as usize], p.distance);
                }
            },
            |t| reporter.message(format!("{n} fingerprints, table {} of {total}", t + 1)),
        );
    });
    session.summary.pairs = count;
    Ok(())
}

/// Near-duplicate clusters of the corpus, in the mode and with the representatives asked.
fn clusters(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    opts: &ClusterOpts,
) -> anyhow::Result<Clusters> {
    let keys;
    let policy = match opts.keep {
        KeepPolicy::First => Representative::First,
        KeepPolicy::Longest => Representative::Longest(corpus.lens()),
        KeepPolicy::LowestId => {
            keys = id_ranks(corpus);
            Representative::Lowest(&keys)
        }
    };
    let clusters = match opts.mode {
        ClusterMode::Components => {
            let mut uf = UnionFind::try_new(corpus.len()).context("too many documents")?;
            let mut error = None;
            if let Matching::Minhash { jaccard, .. } = *matching {
                /// Joins matches as they come, and skips verifying pairs already joined.
                struct Join<'a> {
                    uf: &'a mut UnionFind,
                    error: &'a mut Option<simhash_cluster::ClusterError>,
                }
                impl Join<'_> {
                    fn union(&mut self, a: u32, b: u32) {
                        if let Err(e) = self.uf.union(a, b) {
                            self.error.get_or_insert(e);
                        }
                    }
                }
                impl MatchSink for Join<'_> {
                    fn duplicate(&mut self, doc: u32, of: u32) {
                        self.union(of, doc);
                    }
                    fn joined(&mut self, a: u32, b: u32) -> bool {
                        self.uf.same(a, b).unwrap_or(false)
                    }
                    fn pair(&mut self, a: u32, b: u32, _: f64) {
                        self.union(a, b);
                    }
                }
                let mut join = Join { uf: &mut uf, error: &mut error };
                // Pairs inside a cluster already joined are not verified, nor counted.
                match_sketches(session, corpus, jaccard, &mut join)?;
            } else {
                match_docs(session, corpus, matching, |a, b, _| {
                    if let Err(e) = uf.union(a, b) {
                        error.get_or_insert(e);
                    }
                })?;
            }
            if let Some(e) = error {
                return Err(e).context("clustering failed");
            }
            session.reporter.phase("clustering", None);
            uf.into_clusters_with(&policy).context("clustering failed")?
        }
        ClusterMode::Star => {
            let mut pairs = Vec::new();
            match_docs(session, corpus, matching, |a, b, _| pairs.push((a, b)))?;
            session.reporter.phase("clustering", None);
            Clusters::star(corpus.len(), pairs, &policy).context("clustering failed")?
        }
    };
    let stats = clusters.stats(opts.big_cluster);
    let s = &mut session.summary;
    s.clusters = stats.clusters as u64;
    s.documents_in_clusters = stats.clustered as u64;
    s.largest_cluster = stats.largest as u64;
    s.big_cluster_size = Some(opts.big_cluster as u64);
    s.big_clusters = Some(stats.oversized as u64);
    Ok(clusters)
}

/// Each document's rank when ids are sorted: numerically when both ids are integers,
/// bytewise otherwise (numbers before other ids).
fn id_ranks(corpus: &Corpus) -> Vec<u64> {
    let mut order: Vec<u32> = (0..corpus.len() as u32).collect();
    let key = |d: u32| {
        let id = corpus.id(d as usize);
        match id.parse::<i128>() {
            Ok(n) => (0, n, id),
            Err(_) => (1, 0, id),
        }
    };
    order.sort_by(|&a, &b| key(a).cmp(&key(b)).then(a.cmp(&b)));
    let mut ranks = vec![0u64; corpus.len()];
    for (rank, &doc) in order.iter().enumerate() {
        ranks[doc as usize] = rank as u64;
    }
    ranks
}

fn pairs(args: &PairsArgs) -> anyhow::Result<ExitCode> {
    let mut session = Session::new("pairs", &args.run, args.input.strict)?;
    let (matching, parser) = matching_and_parser(
        &mut session.summary,
        &args.input,
        &args.fingerprint,
        &args.matching,
        Preset::default(),
        false,
    )?;
    let mut out = Output::create(&args.output.output)?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), false)?;
    // 12 bytes a pair: the score as its 32-bit code.
    let mut pairs: Vec<(u32, u32, u32)> = Vec::new();
    match_docs(&mut session, &corpus, &matching, |a, b, d| pairs.push((a, b, d.code())))?;
    session.reporter.phase("writing", None);
    session.pool.install(|| rayon::slice::ParallelSliceMut::par_sort_unstable(&mut pairs[..]));
    out.write_all(match matching {
        Matching::Simhash { .. } => b"id_a\tid_b\tdistance\n",
        Matching::Minhash { .. } => b"id_a\tid_b\tjaccard\n",
    })?;
    for &(a, b, code) in &pairs {
        write!(out, "{}\t{}\t", corpus.id(a as usize), corpus.id(b as usize))?;
        match matching {
            Matching::Simhash { .. } => writeln!(out, "{code}")?,
            Matching::Minhash { .. } => writeln!(out, "{}.{:04}", code / 10_000, code % 10_000)?,
        }
    }
    out.commit()?;
    session.summary.written = pairs.len() as u64;
    session.finish()
}

fn cluster(args: &ClusterArgs, default: Preset) -> anyhow::Result<ExitCode> {
    let mut session = Session::new("cluster", &args.run, args.input.strict)?;
    let (matching, parser) = matching_and_parser(
        &mut session.summary,
        &args.input,
        &args.fingerprint,
        &args.matching,
        default,
        true,
    )?;
    let mut out = Output::create(&args.output.output)?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), false)?;
    let clusters = clusters(&mut session, &corpus, &matching, &args.cluster)?;
    session.reporter.phase("writing", None);
    out.write_all(b"id\thash\tcluster\n")?;
    let mut next_id = 0u64;
    let mut written = 0u64;
    for members in &clusters {
        if members.len() < 2 && !args.singletons {
            continue;
        }
        for &doc in members {
            let doc = doc as usize;
            out.write_all(corpus.id(doc).as_bytes())?;
            match corpus.fingerprint(doc) {
                Some(fp) => write!(out, "\t{}", fp.get())?,
                None => out.write_all(b"\t")?,
            }
            writeln!(out, "\t{next_id}")?;
            written += 1;
        }
        next_id += 1;
    }
    out.commit()?;
    session.summary.written = written;
    session.finish()
}

fn dedup(args: &DedupArgs) -> anyhow::Result<ExitCode> {
    let mut session = Session::new("dedup", &args.run, args.input.strict)?;
    let (matching, parser) = matching_and_parser(
        &mut session.summary,
        &args.input,
        &args.fingerprint,
        &args.matching,
        Preset::default(),
        false,
    )?;
    let is_hash = matches!(parser, Parser::Hash);
    let mut out = Output::create(&args.output.output)?;
    let mut removed = args.removed.as_deref().map(Output::create).transpose()?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), true)?;
    let clusters = clusters(&mut session, &corpus, &matching, &args.cluster)?;

    session.reporter.phase("writing", source.size);
    // The lines to keep, in order: every document that is its cluster's representative.
    let mut keep: Vec<u64> = (0..corpus.len())
        .filter(|&d| clusters.is_representative(d as u32))
        .map(|d| corpus.line(d))
        .collect();
    keep.sort_unstable();

    let mut removed_count = 0u64;
    for doc in 0..corpus.len() {
        let rep = clusters.representative(clusters.cluster_of(doc as u32)) as usize;
        if rep == doc {
            continue;
        }
        removed_count += 1;
        if let Some(out) = &mut removed {
            let score = match &corpus.sketches {
                Some(sketches) => {
                    Score::Jaccard(sketch::similarity(sketches, doc as u32, rep as u32)?)
                }
                None => Score::Distance(match (corpus.fingerprint(doc), corpus.fingerprint(rep)) {
                    (Some(a), Some(b)) => a.distance(b),
                    _ => 0,
                }),
            };
            write_removed(out, &corpus, doc, rep, score)?;
        }
    }

    let reader = source.reopen()?;
    let max = args.input.max_record_bytes;
    let mut lines = LineReader::new(reader, max);
    let (mut buf, mut raw) = (Vec::new(), Vec::new());
    let mut wanted = keep.iter().peekable();
    let mut written = 0u64;
    while let Some(status) = lines
        .next_line(&mut buf, Some(&mut raw))
        .with_context(|| format!("{}: read error", source.name))?
    {
        let header =
            is_hash && lines.line == 1 && status == LineStatus::Ok && corpus::is_hash_header(&buf);
        if header || wanted.peek() == Some(&&lines.line) {
            if !header {
                wanted.next();
                written += 1;
            }
            out.write_all(&raw)?;
            if raw.last() != Some(&b'\n') {
                out.write_all(b"\n")?;
            }
        }
        if lines.line % 4096 == 0 {
            session.reporter.progress(lines.bytes, lines.line);
        }
        if wanted.peek().is_none() {
            break;
        }
        buf.clear();
        raw.clear();
    }
    anyhow::ensure!(
        wanted.peek().is_none(),
        "{}: the input changed while it was read (line {} is gone)",
        source.name,
        wanted.peek().map_or(0, |l| **l)
    );
    // The kept records first: if they cannot be put in place, neither is --removed.
    out.commit()?;
    if let Some(removed) = removed {
        removed.commit()?;
    }
    session.summary.removed = removed_count;
    session.summary.written = written;
    session.finish()
}

/// `{"id": .., "duplicate_of": .., "distance": ..}` (simhash) or `.., "jaccard": ..}`
/// (minhash), each id as it appeared in the input: a JSON number or a string.
fn write_removed(
    out: &mut Output,
    corpus: &Corpus,
    doc: usize,
    kept: usize,
    score: Score,
) -> anyhow::Result<()> {
    let id = |out: &mut Output, doc: usize| -> anyhow::Result<()> {
        if corpus.id_is_number(doc) {
            out.write_all(corpus.id(doc).as_bytes())?;
        } else {
            serde_json::to_writer(&mut *out, corpus.id(doc))?;
        }
        Ok(())
    };
    out.write_all(b"{\"id\":")?;
    id(out, doc)?;
    out.write_all(b",\"duplicate_of\":")?;
    id(out, kept)?;
    match score {
        Score::Distance(d) => writeln!(out, ",\"distance\":{d}}}")?,
        Score::Jaccard(_) => writeln!(out, ",\"jaccard\":{score}}}")?,
    }
    Ok(())
}

/// simhash-cpp's `find-all` and `find-clusters`.
fn seed(args: &SeedArgs, clusters_out: bool) -> anyhow::Result<ExitCode> {
    let command = if clusters_out { "find-clusters" } else { "find-all" };
    let mut session = Session::new(command, &args.run, args.strict)?;
    let matching = Matching::Simhash { distance: args.distance, blocks: args.blocks };
    check_matching(&matching)?;
    session.summary.method = Some("simhash");
    let mut out = Output::create(&args.output.output)?;
    let mut source = Source::new(&args.input);
    let corpus = session.read(&mut source, Parser::SeedHash, None, false)?;
    let hash = |d: u32| corpus.fingerprint(d as usize).unwrap_or_default().get();
    if clusters_out {
        let opts = ClusterOpts {
            mode: ClusterMode::Components,
            keep: KeepPolicy::First,
            big_cluster: 1000,
        };
        let clusters = clusters(&mut session, &corpus, &matching, &opts)?;
        session.reporter.phase("writing", None);
        for members in clusters.iter().filter(|m| m.len() > 1) {
            let items: Vec<String> = members.iter().map(|&d| hash(d).to_string()).collect();
            writeln!(out, "[{}]", items.join(","))?;
            session.summary.written += 1;
        }
    } else {
        let mut pairs = Vec::new();
        match_docs(&mut session, &corpus, &matching, |a, b, _| pairs.push((a, b)))?;
        session.reporter.phase("writing", None);
        pairs.sort_unstable();
        for &(a, b) in &pairs {
            writeln!(out, "[{},{}]", hash(a), hash(b))?;
        }
        session.summary.written = pairs.len() as u64;
    }
    out.commit()?;
    session.finish()
}
