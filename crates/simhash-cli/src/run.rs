//! The commands: read, match, cluster, write.

use std::io::Write;
use std::num::NonZeroUsize;
use std::process::ExitCode;

use anyhow::Context;
use simhash_cluster::{Clusters, Representative, UnionFind};
use simhash_core::{Fingerprint, Fingerprinter, Preset};
use simhash_index::lsh::{self, MatchSink, Sketcher, SpillStore};
use simhash_index::{Blocks, Tables};

use crate::args::{
    ClusterArgs, ClusterMode, ClusterOpts, Command, DedupArgs, FingerprintArgs, FingerprintOpts,
    InputArgs, KeepPolicy, MatchOpts, Matching, PairsArgs, RunOpts, SeedArgs,
};
use simhash_io::{
    ClustersTsv, HashTsv, LineReader, LineStatus, Measure, Output, PairsTsv, Score, Source,
};

use crate::corpus::{self, Corpus, ReadOptions, Reading};
use crate::report::{self, Reporter, Summary};

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
            stats: run.stats.as_deref().map(|p| Output::create_for("--stats", p)).transpose()?,
        })
    }

    fn read(
        &mut self,
        source: &mut Source,
        reading: Reading,
        input: Option<&InputArgs>,
        spool: bool,
    ) -> anyhow::Result<Corpus> {
        self.summary.input.clone_from(&source.name);
        self.reporter.phase("reading", source.size);
        let options = ReadOptions {
            reading,
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

    /// Ends the run: puts `outputs` and the --stats file in place together (all or none;
    /// see [`simhash_io::commit_all`]), then the summary line and the exit code.
    fn finish(mut self, outputs: Vec<Output>) -> anyhow::Result<ExitCode> {
        let skipped = self.reporter.skipped_total() + self.reporter.empty_inputs();
        let summary = self.reporter.finish(std::mem::take(&mut self.summary), true);
        let mut outputs = outputs;
        if let Some(mut out) = self.stats.take() {
            serde_json::to_writer_pretty(&mut out, &summary).context("cannot write --stats")?;
            out.write_all(b"\n")?;
            outputs.push(out);
        }
        simhash_io::commit_all(outputs)?;
        if !self.quiet {
            summary.print();
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
) -> anyhow::Result<Reading> {
    Ok(match input.format() {
        crate::args::Format::Hash => Reading::hashes(simhash_io::Parser::Hash),
        crate::args::Format::Json => {
            let fingerprinter = Fingerprinter::with_settings(
                opts.preset.unwrap_or(default),
                opts.window.map(usize::from),
            );
            let sketcher = match matching {
                Some(&Matching::Minhash { lsh_threshold, num_perm, .. }) => {
                    // --num-perm is range-checked when resolved (`MatchOpts::resolve`).
                    let minhasher =
                        simhash_core::MinHasher::new(num_perm, crate::args::defaults::MINHASH_SEED);
                    let banding = simhash_index::Banding::for_threshold(lsh_threshold, num_perm)
                        .context("invalid --lsh-threshold")?;
                    let sketcher = Sketcher::new(minhasher, banding)
                        .context("invalid --lsh-threshold")?
                        .with_fingerprints(fingerprints);
                    Some(std::sync::Arc::new(sketcher))
                }
                _ => None,
            };
            Reading {
                parser: simhash_io::Parser::Json(simhash_io::Columns::new(
                    &input.text_column,
                    &input.id_column,
                )),
                fingerprinter: Some(fingerprinter),
                sketcher,
            }
        }
    })
}

fn note_preset(summary: &mut Summary, reading: &Reading) {
    if let Some(fingerprinter) = &reading.fingerprinter {
        summary.preset =
            Some(format!("{} (window {})", fingerprinter.preset(), fingerprinter.window()));
        if let Some(s) = &reading.sketcher {
            summary.lsh_bands = Some(format!("{} x {}", s.banding().bands, s.banding().rows));
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
    simhash_io::register_inputs(&[args.input.path()])?;
    let mut session = Session::new("fingerprint", &args.run, args.input.strict)?;
    let parser = parser_for(&args.input, &args.fingerprint, Preset::default(), None, false)?;
    note_preset(&mut session.summary, &parser);
    let out = Output::create_for("--output", &args.output.output)?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), false)?;
    session.reporter.phase("writing", None);
    let mut tsv = HashTsv::new(out)?;
    for doc in 0..corpus.len() {
        tsv.record(corpus.id(doc), corpus.fingerprint(doc).map(Fingerprint::get))?;
    }
    session.summary.written = corpus.len() as u64;
    session.finish(vec![tsv.into_inner()])
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
) -> anyhow::Result<(Matching, Reading)> {
    let seed_mode = default == Preset::Fork;
    let matching = resolve_matching(summary, matching, input, fingerprint, seed_mode)?;
    let parser = parser_for(input, fingerprint, default, Some(&matching), fingerprints)?;
    note_preset(summary, &parser);
    Ok((matching, parser))
}

/// Fails early, before any input is read, on settings the index would refuse.
fn check_matching(matching: &Matching) -> anyhow::Result<()> {
    match *matching {
        Matching::Simhash { distance, blocks } => {
            blocks.validate(distance).context(blocks_context(blocks))
        }
        // --num-perm is range-checked when resolved; the MinHasher is built once reading starts.
        Matching::Minhash { lsh_threshold, num_perm, .. } => {
            simhash_index::Banding::for_threshold(lsh_threshold, num_perm)
                .map(drop)
                .context("invalid --lsh-threshold")
        }
    }
}

/// The flags to blame when `--blocks` and `-k/--distance` are refused: `--blocks auto` can
/// only fail on the distance.
fn blocks_context(blocks: Blocks) -> &'static str {
    match blocks {
        Blocks::Fixed(_) => "invalid --blocks/--distance",
        Blocks::Auto => "invalid --distance",
    }
}

/// The tables for `n` fingerprints: the planner's choice for `--blocks auto`.
fn tables(k: u32, blocks: Blocks, n: usize, summary: &mut Summary) -> anyhow::Result<Tables> {
    let tables = blocks.tables(n as u64, k).context(blocks_context(blocks))?;
    summary.blocks = Some(tables.blocks());
    summary.distance = Some(k);
    summary.tables = Some(tables.len());
    Ok(tables)
}

/// Finds the matching pairs of documents and calls `sink` with each pair of positions
/// `(a, b, score)`, `a < b`, once. Documents with identical fingerprints (simhash) or
/// identical shingle sets (minhash) are collapsed first: each is listed once with the
/// first of its group, and the pairs of distinct texts are listed between the groups'
/// first members only (every other pair they imply is not repeated), so a flood of
/// identical documents gives one line per document, not one per pair.
fn match_docs(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    mut sink: impl FnMut(u32, u32, Score) + Send,
) -> anyhow::Result<()> {
    match *matching {
        Matching::Simhash { distance, blocks } => {
            let (reps, duplicates) = collapse_fingerprints(corpus, None);
            for &(doc, rep) in &duplicates {
                sink(rep, doc, Score::Distance(0));
            }
            let fps = fingerprints_of(corpus, &reps);
            let found = match_fingerprints(session, &fps, distance, blocks, |a, b, d| {
                sink(reps[a as usize], reps[b as usize], Score::Distance(d));
            })?;
            session.summary.exact_duplicates = Some(duplicates.len() as u64);
            session.summary.pairs = found + duplicates.len() as u64;
            Ok(())
        }
        Matching::Minhash { jaccard, .. } => {
            /// Lists matches as they come.
            struct List<F> {
                sink: F,
            }
            impl<F: FnMut(u32, u32, Score) + Send> MatchSink for List<F> {
                fn duplicate(&mut self, doc: u32, of: u32) {
                    (self.sink)(of, doc, Score::Jaccard(1.0));
                }
                fn pair(&mut self, a: u32, b: u32, jaccard: f64) {
                    (self.sink)(a, b, Score::Jaccard(jaccard));
                }
            }
            let sketches = sketches_of(corpus)?;
            session.reporter.phase("matching", None);
            let stats = session
                .pool
                .install(|| lsh::find_matches(sketches, jaccard, &mut List { sink }))?;
            note_match_stats(&mut session.summary, &stats);
            Ok(())
        }
    }
}

fn sketches_of(corpus: &Corpus) -> anyhow::Result<&SpillStore> {
    corpus.sketches.as_ref().context("internal error: no MinHash sketches")
}

/// The MinHash search's counts in the summary: matches are exact duplicates and verified
/// pairs.
fn note_match_stats(s: &mut Summary, stats: &lsh::MatchStats) {
    s.exact_duplicates = Some(stats.duplicates);
    s.candidates = Some(stats.candidates);
    s.verified = Some(stats.verified);
    s.pairs = stats.duplicates + stats.pairs;
    if stats.largest_component > 0 {
        s.largest_candidate_component = Some(stats.largest_component);
    }
}

/// The documents that have a fingerprint, with identical fingerprints collapsed: the
/// representatives (ascending) and `(doc, representative)` for the others. A group's
/// representative is its member of lowest `rank` (the first without ranks).
fn collapse_fingerprints(corpus: &Corpus, rank: Option<&[u32]>) -> (Vec<u32>, Vec<(u32, u32)>) {
    let rank_of = |d: usize| rank.map_or(d as u32, |r| r[d]);
    let mut by_fp: Vec<(u64, u32, u32)> = (0..corpus.len())
        .filter_map(|d| corpus.fingerprint(d).map(|fp| (fp.get(), rank_of(d), d as u32)))
        .collect();
    rayon::slice::ParallelSliceMut::par_sort_unstable(&mut by_fp[..]);
    let mut reps = Vec::new();
    let mut duplicates = Vec::new();
    for group in by_fp.chunk_by(|x, y| x.0 == y.0) {
        let rep = group[0].2;
        reps.push(rep);
        duplicates.extend(group[1..].iter().map(|&(_, _, doc)| (doc, rep)));
    }
    reps.sort_unstable();
    duplicates.sort_unstable();
    (reps, duplicates)
}

fn fingerprints_of(corpus: &Corpus, docs: &[u32]) -> Vec<Fingerprint> {
    docs.iter().map(|&d| corpus.fingerprint(d as usize).unwrap_or_default()).collect()
}

/// Runs the index over `fps` and calls `sink` with each pair of positions `(a, b,
/// distance)`, `a < b`, each pair once; returns the number of pairs.
fn match_fingerprints(
    session: &mut Session,
    fps: &[Fingerprint],
    distance: u32,
    blocks: Blocks,
    mut sink: impl FnMut(u32, u32, u32) + Send,
) -> anyhow::Result<u64> {
    let tables = tables(distance, blocks, fps.len(), &mut session.summary)?;
    session.reporter.phase("matching", None);
    let mut count = 0u64;
    let reporter = &session.reporter;
    let (n, total) = (fps.len(), tables.len());
    session.pool.install(|| {
        simhash_index::all_pairs_with_progress(
            fps,
            &tables,
            |batch| {
                count += batch.len() as u64;
                for p in batch {
                    sink(p.a, p.b, p.distance);
                }
            },
            |t| reporter.message(format!("{n} fingerprints, table {} of {total}", t + 1)),
        );
    });
    Ok(count)
}

/// Each document's place in the keep policy's priority order (0 first): input order,
/// longest text first (ties in input order), or lowest id first.
fn priority(corpus: &Corpus, keep: KeepPolicy) -> Vec<u32> {
    let n = corpus.len();
    let order: Vec<u32> = match keep {
        KeepPolicy::First => return (0..n as u32).collect(),
        KeepPolicy::LowestId => return id_ranks(corpus).into_iter().map(|r| r as u32).collect(),
        KeepPolicy::Longest => {
            let lens = corpus.lens();
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.sort_by_key(|&d| (std::cmp::Reverse(lens[d as usize]), d));
            order
        }
    };
    let mut rank = vec![0u32; n];
    for (r, &d) in order.iter().enumerate() {
        rank[d as usize] = r as u32;
    }
    rank
}

/// Near-duplicate clusters, and for the star walk with minhash each removed document's
/// Jaccard similarity to its kept one.
struct Grouped {
    clusters: Clusters,
    jaccard: Option<Vec<f64>>,
}

/// Documents decided together by the simhash walk: each is looked up in parallel among the
/// documents kept before the chunk, then the chunk is settled in order among its own.
const WALK_CHUNK: usize = 8192;

/// The simhash dedup walk: documents in priority order, each kept unless an already kept
/// one is within `distance` bits, then it joins the first such in priority order (identical
/// fingerprints collapse first). Only kept fingerprints are indexed, and a document is
/// looked up among them: the pairs within `distance` are never enumerated, so a flood of
/// `N` near-identical fingerprints with `K` kept costs about `N` lookups in an index of `K`.
/// The lookups of a chunk run in parallel against the index as it stood before the chunk;
/// the outcome does not depend on the thread count. Returns each document's center.
fn simhash_walk(
    session: &mut Session,
    corpus: &Corpus,
    distance: u32,
    blocks: Blocks,
    rank: &[u32],
) -> anyhow::Result<Vec<u32>> {
    use rayon::prelude::*;
    let (mut reps, duplicates) = collapse_fingerprints(corpus, Some(rank));
    reps.sort_unstable_by_key(|&d| rank[d as usize]);
    let tables = tables(distance, blocks, reps.len(), &mut session.summary)?;
    session.reporter.phase("matching", None);
    let mut center: Vec<u32> = (0..corpus.len() as u32).collect();
    // Kept documents by ordinal (priority order), and the index of their fingerprints.
    let mut kept: Vec<u32> = Vec::new();
    let mut index = simhash_index::Index::<u32>::new(tables.clone());
    let fp_of = |d: u32| corpus.fingerprint(d as usize).unwrap_or_default();
    let mut matched = 0u64;
    for chunk in reps.chunks(WALK_CHUNK) {
        let before: Vec<Option<u32>> = session.pool.install(|| {
            chunk
                .par_iter()
                .map_init(Vec::new, |hits, &d| {
                    index.find_all_into(fp_of(d), hits);
                    hits.iter().map(|h| h.id).min()
                })
                .collect()
        });
        // Settle the chunk in order: a document not matched before the chunk may match one
        // kept earlier in it.
        let mut local = simhash_index::Index::<u32>::new(tables.clone());
        let mut hits = Vec::new();
        let mut new_kept = Vec::new();
        for (&d, first) in chunk.iter().zip(before) {
            let first = first.or_else(|| {
                local.find_all_into(fp_of(d), &mut hits);
                hits.iter().map(|h| h.id).min()
            });
            if let Some(ordinal) = first {
                center[d as usize] = kept[ordinal as usize];
                matched += 1;
            } else {
                let ordinal = kept.len() as u32;
                kept.push(d);
                local.insert(ordinal, fp_of(d));
                new_kept.push((ordinal, fp_of(d)));
            }
        }
        index.insert_many(new_kept);
        session.reporter.message(format!("{} of {} fingerprints", kept.len(), reps.len()));
    }
    for (doc, rep) in &duplicates {
        center[*doc as usize] = center[*rep as usize];
    }
    session.summary.exact_duplicates = Some(duplicates.len() as u64);
    session.summary.pairs = matched + duplicates.len() as u64;
    Ok(center)
}

/// Near-duplicate clusters of the corpus, in the mode and with the representatives asked.
fn clusters(
    session: &mut Session,
    corpus: &Corpus,
    matching: &Matching,
    opts: &ClusterOpts,
    mode: ClusterMode,
) -> anyhow::Result<Grouped> {
    let mut jaccard_of = None;
    let clusters = match mode {
        ClusterMode::Components => {
            let keys;
            let policy = match opts.keep {
                KeepPolicy::First => Representative::First,
                KeepPolicy::Longest => Representative::Longest(corpus.lens()),
                KeepPolicy::LowestId => {
                    keys = id_ranks(corpus);
                    Representative::Lowest(&keys)
                }
            };
            let mut uf = UnionFind::try_new(corpus.len()).context("too many documents")?;
            match *matching {
                Matching::Minhash { jaccard, .. } => {
                    let sketches = sketches_of(corpus)?;
                    session.reporter.phase("matching", None);
                    let (edges, stats) =
                        session.pool.install(|| lsh::components(sketches, jaccard))?;
                    note_match_stats(&mut session.summary, &stats);
                    uf.union_all(edges).context("clustering failed")?;
                }
                Matching::Simhash { .. } => {
                    // Copies join their group's first; the other pairs join the firsts.
                    let mut error = None;
                    match_docs(session, corpus, matching, |a, b, _| {
                        if let Err(e) = uf.union(a, b) {
                            error.get_or_insert(e);
                        }
                    })?;
                    if let Some(e) = error {
                        return Err(e).context("clustering failed");
                    }
                }
            }
            session.reporter.phase("clustering", None);
            uf.into_clusters_with(&policy).context("clustering failed")?
        }
        ClusterMode::Star => {
            let rank = priority(corpus, opts.keep);
            let center = match *matching {
                Matching::Minhash { jaccard, .. } => {
                    let sketches = sketches_of(corpus)?;
                    session.reporter.phase("matching", None);
                    let (walk, stats) =
                        session.pool.install(|| lsh::walk(sketches, jaccard, &rank))?;
                    note_match_stats(&mut session.summary, &stats);
                    jaccard_of = Some(walk.jaccard);
                    walk.center
                }
                Matching::Simhash { distance, blocks } => {
                    simhash_walk(session, corpus, distance, blocks, &rank)?
                }
            };
            session.reporter.phase("clustering", None);
            Clusters::from_centers(center).context("clustering failed")?
        }
    };
    let stats = clusters.stats(opts.big_cluster);
    let s = &mut session.summary;
    s.clusters = stats.clusters as u64;
    s.documents_in_clusters = stats.clustered as u64;
    s.largest_cluster = stats.largest as u64;
    s.big_cluster_size = Some(opts.big_cluster as u64);
    s.big_clusters = Some(stats.oversized as u64);
    warn_big_clusters(session, corpus, &clusters, opts.big_cluster);
    Ok(Grouped { clusters, jaccard: jaccard_of })
}

/// How many of the largest clusters a warning names.
const BIG_CLUSTERS_NAMED: usize = 5;

/// Names the largest clusters over `big` members and their kept records, in the summary
/// (for --stats) and on stderr, so that a template flood does not vanish silently.
fn warn_big_clusters(session: &mut Session, corpus: &Corpus, clusters: &Clusters, big: usize) {
    let mut sizes: Vec<(usize, u32)> = (0..clusters.len() as u32)
        .map(|c| (clusters.size(c), c))
        .filter(|&(size, _)| size > big)
        .collect();
    if sizes.is_empty() {
        return;
    }
    let count = sizes.len();
    sizes.sort_unstable_by_key(|&(size, c)| (std::cmp::Reverse(size), c));
    sizes.truncate(BIG_CLUSTERS_NAMED);
    let named: Vec<report::BigCluster> = sizes
        .iter()
        .map(|&(size, c)| report::BigCluster {
            size: size as u64,
            kept: corpus.id(clusters.representative(c) as usize).to_owned(),
        })
        .collect();
    let list: Vec<String> =
        named.iter().map(|b| format!("{} records (kept: {:?})", b.size, b.kept)).collect();
    session.reporter.warning(&format!(
        "{count} cluster{} larger than {big} records (--big-cluster): {}{}",
        if count == 1 { " is" } else { "s are" },
        list.join(", "),
        if count > named.len() { ", ..." } else { "" }
    ));
    session.summary.largest_clusters = named;
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
    simhash_io::register_inputs(&[args.input.path()])?;
    let mut session = Session::new("pairs", &args.run, args.input.strict)?;
    let (matching, parser) = matching_and_parser(
        &mut session.summary,
        &args.input,
        &args.fingerprint,
        &args.matching,
        Preset::default(),
        false,
    )?;
    let out = Output::create_for("--output", &args.output.output)?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), false)?;
    // 12 bytes a pair: the score as its 32-bit code.
    let mut pairs: Vec<(u32, u32, u32)> = Vec::new();
    match_docs(&mut session, &corpus, &matching, |a, b, d| pairs.push((a, b, d.code())))?;
    session.reporter.phase("writing", None);
    session.pool.install(|| rayon::slice::ParallelSliceMut::par_sort_unstable(&mut pairs[..]));
    let measure = match matching {
        Matching::Simhash { .. } => Measure::Distance,
        Matching::Minhash { .. } => Measure::Jaccard,
    };
    let mut tsv = PairsTsv::new(out, measure)?;
    for &(a, b, code) in &pairs {
        tsv.pair(corpus.id(a as usize), corpus.id(b as usize), code)?;
    }
    session.summary.written = pairs.len() as u64;
    session.finish(vec![tsv.into_inner()])
}

fn cluster(args: &ClusterArgs, default: Preset) -> anyhow::Result<ExitCode> {
    simhash_io::register_inputs(&[args.input.path()])?;
    let mut session = Session::new("cluster", &args.run, args.input.strict)?;
    let (matching, parser) = matching_and_parser(
        &mut session.summary,
        &args.input,
        &args.fingerprint,
        &args.matching,
        default,
        true,
    )?;
    let out = Output::create_for("--output", &args.output.output)?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), false)?;
    let mode = args.cluster.mode.unwrap_or(ClusterMode::Components);
    let clusters = clusters(&mut session, &corpus, &matching, &args.cluster, mode)?.clusters;
    session.reporter.phase("writing", None);
    let mut tsv = ClustersTsv::new(out)?;
    let mut next_id = 0u64;
    let mut written = 0u64;
    for members in &clusters {
        if members.len() < 2 && !args.singletons {
            continue;
        }
        for &doc in members {
            let doc = doc as usize;
            tsv.member(corpus.id(doc), corpus.fingerprint(doc).map(Fingerprint::get), next_id)?;
            written += 1;
        }
        next_id += 1;
    }
    session.summary.written = written;
    session.finish(vec![tsv.into_inner()])
}

fn dedup(args: &DedupArgs) -> anyhow::Result<ExitCode> {
    simhash_io::register_inputs(&[args.input.path()])?;
    let mut session = Session::new("dedup", &args.run, args.input.strict)?;
    let (matching, parser) = matching_and_parser(
        &mut session.summary,
        &args.input,
        &args.fingerprint,
        &args.matching,
        Preset::default(),
        false,
    )?;
    let records = parser.parser.clone();
    let mut out = Output::create_for("--output", &args.output.output)?;
    let mut removed =
        args.removed.as_deref().map(|p| Output::create_for("--removed", p)).transpose()?;
    let mut source = Source::new(args.input.path());
    let corpus = session.read(&mut source, parser, Some(&args.input), true)?;
    let mode = args.cluster.mode.unwrap_or(ClusterMode::Star);
    let Grouped { clusters, jaccard } =
        clusters(&mut session, &corpus, &matching, &args.cluster, mode)?;

    session.reporter.phase("writing", source.size);
    // The lines to keep, in order: every document that is its cluster's representative.
    let mut keep: Vec<(u64, Option<u64>)> = (0..corpus.len())
        .filter(|&d| clusters.is_representative(d as u32))
        .map(|d| (corpus.line(d), corpus.line_hash(d)))
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
            let score = match (&corpus.sketches, &jaccard) {
                (_, Some(jaccard)) => Score::Jaccard(jaccard[doc]),
                (Some(sketches), None) => {
                    Score::Jaccard(lsh::similarity(sketches, doc as u32, rep as u32)?)
                }
                (None, None) => {
                    Score::Distance(match (corpus.fingerprint(doc), corpus.fingerprint(rep)) {
                        (Some(a), Some(b)) => a.distance(b),
                        _ => 0,
                    })
                }
            };
            simhash_io::write_removed(out, &corpus.id_value(doc), &corpus.id_value(rep), score)?;
        }
    }

    between_passes_hook();
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
        let header = status == LineStatus::Ok && records.skips_header(lines.line, &buf);
        if header || wanted.peek().is_some_and(|w| w.0 == lines.line) {
            if !header {
                let expected = wanted.next().and_then(|w| w.1);
                // The line must be the record that was read and matched in the first pass.
                anyhow::ensure!(
                    status == LineStatus::Ok
                        && expected.is_none_or(|h| h == simhash_io::line_hash(&buf)),
                    "{}:{}: the input changed while it was read (this record differs from \
                     the first pass); nothing was written",
                    source.name,
                    lines.line
                );
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
        wanted.peek().map_or(0, |l| l.0)
    );
    session.summary.removed = removed_count;
    session.summary.written = written;
    session.finish(std::iter::once(out).chain(removed).collect())
}

/// Tests only (debug builds): with `SIMHASH_TEST_BETWEEN_PASSES=PATH`, dedup creates PATH
/// after its first pass and waits (up to 30 s) until it is removed, so that a test can
/// change the input between the passes.
fn between_passes_hook() {
    #[cfg(debug_assertions)]
    if let Some(path) = std::env::var_os("SIMHASH_TEST_BETWEEN_PASSES") {
        let path = std::path::PathBuf::from(path);
        if std::fs::write(&path, b"").is_ok() {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while path.exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// simhash-cpp's `find-all` and `find-clusters`.
fn seed(args: &SeedArgs, clusters_out: bool) -> anyhow::Result<ExitCode> {
    simhash_io::register_inputs(&[&args.input])?;
    let command = if clusters_out { "find-clusters" } else { "find-all" };
    let mut session = Session::new(command, &args.run, args.strict)?;
    let matching = Matching::Simhash { distance: args.distance, blocks: args.blocks };
    check_matching(&matching)?;
    session.summary.method = Some("simhash");
    let mut out = Output::create_for("--output", &args.output.output)?;
    let mut source = Source::new(&args.input);
    let corpus =
        session.read(&mut source, Reading::hashes(simhash_io::Parser::CppHash), None, false)?;
    let hash = |d: u32| corpus.fingerprint(d as usize).unwrap_or_default().get();
    if clusters_out {
        let opts = ClusterOpts { mode: None, keep: KeepPolicy::First, big_cluster: 1000 };
        let clusters =
            clusters(&mut session, &corpus, &matching, &opts, ClusterMode::Components)?.clusters;
        session.reporter.phase("writing", None);
        for members in clusters.iter().filter(|m| m.len() > 1) {
            let hashes: Vec<u64> = members.iter().map(|&d| hash(d)).collect();
            simhash_io::write_hash_list(&mut out, &hashes)?;
            session.summary.written += 1;
        }
    } else {
        // Each line `[h(a),h(b)]` once, in order of the first pair of lines `a < b` that
        // gives it, as simhash-cpp's set of hash pairs does: a group of identical hashes
        // gives `[h,h]` once, and two groups within k bits give `[h1,h2]` if a line of h1
        // comes before one of h2 (and `[h2,h1]` if one of h2 comes before one of h1),
        // without pairing every line of one group with every line of the other.
        let mut members: std::collections::HashMap<u32, Vec<u32>> =
            std::collections::HashMap::new();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        match_docs(&mut session, &corpus, &matching, |a, b, _| {
            if hash(a) == hash(b) {
                members.entry(a).or_insert_with(|| vec![a]).push(b);
            } else {
                pairs.push((a, b));
            }
        })?;
        session.reporter.phase("writing", None);
        let mut lines: Vec<(u32, u32)> = Vec::with_capacity(pairs.len() + members.len());
        lines.extend(members.values().map(|m| (m[0], m[1])));
        for &(a, b) in &pairs {
            lines.push((a, b));
            // The first line of b's group after a's first line of a's group, reversed.
            if let Some(group) = members.get(&a) {
                let at = group.partition_point(|&d| d < b);
                if let Some(&later) = group.get(at) {
                    lines.push((b, later));
                }
            }
        }
        lines.sort_unstable();
        for &(a, b) in &lines {
            simhash_io::write_hash_pair(&mut out, hash(a), hash(b))?;
        }
        let pairs = lines;
        session.summary.written = pairs.len() as u64;
    }
    session.finish(vec![out])
}
