//! The on-disk index (`simhash_index::disk`) at scale, MinHash with the `simhash` command's
//! defaults: add N generated documents (families of near-duplicates) in bounded memory,
//! bytes on disk per document, open time, single-core query throughput of new documents
//! against the index, and the baseline in the same run: re-running the MinHash dedup walk
//! over old + new sketches (single core too). `--adds K` adds the documents in K commits
//! (K segments, one per add), as an index grown by several runs is.
//!
//! ```text
//! cargo run --release -p benches --bin bench_disk_index -- --n 1000000 --queries 20000 [--shingles 20] [--flush-mb 256] [--adds 1] [--dir PATH] [--baseline 1]
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use benches::{SplitMix, peak_rss_kib};
use rayon::prelude::*;
use simhash_index::MinHasher;
use simhash_index::disk::{DiskIndex, MinHashSettings, Settings, Writer};
use simhash_index::lsh::Banding;
use simhash_index::lsh::{
    DEFAULT_JACCARD, DEFAULT_LSH_THRESHOLD, DEFAULT_NUM_PERM, DocSketch, MemoryStore, SketchStore,
    Sketcher, walk,
};

/// Documents sketched per parallel step.
const CHUNK: u64 = 1 << 16;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_disk_index: {e}");
            ExitCode::from(2)
        }
    }
}

/// Document `i`: a member of family `family(i)`, whose base set has `shingles` shingles;
/// each member replaces about one in ten by shingles of its own. Deterministic.
fn shingles(i: u64, family: u64, shingles: usize, out: &mut Vec<u64>) {
    out.clear();
    let mut family = SplitMix(family);
    let mut own = SplitMix(i ^ 0x5555_5555);
    for _ in 0..shingles {
        let s = family.next_u64();
        if own.below(10) == 0 {
            out.push(own.next_u64());
        } else {
            out.push(s);
        }
    }
}

/// Documents `range` of a corpus of `n` indexed documents: those below `n` in families of
/// 8; the later ones (the queries) alternately join an indexed family or start their own.
fn sketch_range(
    sk: &Sketcher,
    range: std::ops::Range<u64>,
    n: u64,
    size: usize,
) -> Vec<Option<DocSketch>> {
    let families = n.div_ceil(8);
    range
        .into_par_iter()
        .map_init(Vec::new, |buf, i| {
            let family = match i.checked_sub(n) {
                None => i / 8,
                Some(j) if j % 2 == 0 => j.wrapping_mul(7919) % families,
                Some(j) => families + j,
            };
            shingles(i, family, size, buf);
            sk.sketch_shingles(buf.iter().copied())
        })
        .collect()
}

/// The command line.
struct Opts {
    n: u64,
    queries: u64,
    size: usize,
    flush_mb: usize,
    baseline: u8,
    adds: u64,
    dir: Option<std::path::PathBuf>,
}

fn parse_args() -> Result<Opts, Box<dyn std::error::Error>> {
    let mut o = Opts {
        n: 1_000_000,
        queries: 20_000,
        size: 20,
        flush_mb: 256,
        baseline: 1,
        adds: 1,
        dir: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => o.n = value.parse()?,
            "--queries" => o.queries = value.parse()?,
            "--shingles" => o.size = value.parse()?,
            "--flush-mb" => o.flush_mb = value.parse()?,
            "--adds" => o.adds = value.parse::<u64>()?.max(1),
            "--dir" => o.dir = Some(value.into()),
            "--baseline" => o.baseline = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    Ok(o)
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let o = parse_args()?;
    let tmp = tempfile::tempdir()?;
    let dir = o.dir.clone().unwrap_or_else(|| tmp.path().join("index"));
    let minhasher = MinHasher::new(DEFAULT_NUM_PERM, 0);
    let banding = Banding::for_threshold(DEFAULT_LSH_THRESHOLD, DEFAULT_NUM_PERM)?;
    let sk = Sketcher::new(minhasher, banding)?;
    let settings = Settings::MinHash(MinHashSettings {
        preset: "bench".into(),
        window: 1,
        num_perm: DEFAULT_NUM_PERM,
        bands: banding.bands,
        rows: banding.rows,
        lsh_threshold: DEFAULT_LSH_THRESHOLD,
        jaccard: DEFAULT_JACCARD,
        seed: 0,
        band_key_bits: 32,
        extra: BTreeMap::new(),
    });
    println!(
        "corpus: {} documents of {} shingles (families of 8 near-duplicates), {} bands × {} rows, jaccard {DEFAULT_JACCARD}, {} threads",
        o.n,
        o.size,
        banding.bands,
        banding.rows,
        rayon::current_num_threads()
    );
    add(&o, &sk, &settings, &dir)?;
    report_open(&dir)?;
    let q_sketches = sketch_range(&sk, o.n..o.n + o.queries, o.n, o.size);
    let (query_secs, compacted_secs) = query(&o, &q_sketches, &settings, &dir)?;
    if o.baseline == 1 {
        baseline(&o, &sk, &q_sketches, query_secs, compacted_secs)?;
    }
    Ok(())
}

/// Adds the corpus in `o.adds` commits, in chunks sketched in parallel: memory is the chunk
/// and the writer's budget.
fn add(
    o: &Opts,
    sk: &Sketcher,
    settings: &Settings,
    dir: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let n = o.n;
    let rss_before = peak_rss_kib();
    let (mut sketch_secs, mut add_secs) = (0.0, 0.0);
    let mut refused = 0;
    for a in 0..o.adds {
        let (from, to) = (n * a / o.adds, n * (a + 1) / o.adds);
        let mut w = Writer::builder().flush_bytes(o.flush_mb << 20).open(dir, settings)?;
        let mut start = from;
        while start < to {
            let end = (start + CHUNK).min(to);
            let t = Instant::now();
            let sketches = sketch_range(sk, start..end, n, o.size);
            sketch_secs += t.elapsed().as_secs_f64();
            let t = Instant::now();
            for (i, s) in (start..end).zip(&sketches) {
                w.add_sketch(&format!("doc-{i}"), s.as_ref())?;
            }
            add_secs += t.elapsed().as_secs_f64();
            start = end;
        }
        let t = Instant::now();
        refused += w.commit()?.refused.len();
        add_secs += t.elapsed().as_secs_f64();
    }
    let add_rss = peak_rss_kib();
    let stats = DiskIndex::open(dir)?.stats();
    println!(
        "add: {n} documents in {add_secs:.1} s ({:.0} docs/s, writer only; sketching {sketch_secs:.1} s more), {} segments, {} refused",
        n as f64 / add_secs,
        stats.segments,
        refused
    );
    println!(
        "disk: {} bytes, {:.1} bytes/document; peak RSS {} MiB after the add ({} MiB before it)",
        stats.bytes,
        stats.bytes as f64 / n as f64,
        add_rss >> 10,
        rss_before >> 10
    );
    Ok(())
}

/// Queries of new documents (half of them members of indexed families) on one core, before
/// and after a compaction; returns the two times.
fn query(
    o: &Opts,
    q_sketches: &[Option<DocSketch>],
    settings: &Settings,
    dir: &std::path::Path,
) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    let queries = o.queries;
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let index = DiskIndex::open(dir)?;
    let t = Instant::now();
    let answers = one.install(|| index.query_sketches(q_sketches))?;
    let query_secs = t.elapsed().as_secs_f64();
    let matched = answers.iter().filter(|a| !a.is_empty()).count();
    println!(
        "query ({} segments): {queries} documents in {query_secs:.2} s on one core: {:.0} docs/s; {matched} have a match",
        index.stats().segments,
        queries as f64 / query_secs
    );
    let t = Instant::now();
    let firsts = one.install(|| {
        q_sketches.iter().flatten().map(|s| index.first_sketch(s)).collect::<Result<Vec<_>, _>>()
    })?;
    let first_secs = t.elapsed().as_secs_f64();
    println!(
        "first match: {queries} documents in {first_secs:.2} s on one core: {:.0} docs/s ({} found)",
        queries as f64 / first_secs,
        firsts.iter().flatten().count()
    );
    drop(index);

    let t = Instant::now();
    Writer::open(dir, settings)?.compact()?;
    let compact_secs = t.elapsed().as_secs_f64();
    let index = DiskIndex::open(dir)?;
    let t = Instant::now();
    let compacted = one.install(|| index.query_sketches(q_sketches))?;
    let compacted_secs = t.elapsed().as_secs_f64();
    assert_eq!(compacted, answers, "compaction changed the answers");
    println!(
        "compact: {compact_secs:.1} s, peak RSS {} MiB; query after: {:.0} docs/s on one core",
        peak_rss_kib() >> 10,
        queries as f64 / compacted_secs
    );
    report_open(dir)?;
    Ok((query_secs, compacted_secs))
}

/// The baseline: the dedup walk over old + new, single core, from sketches in memory.
fn baseline(
    o: &Opts,
    sk: &Sketcher,
    q_sketches: &[Option<DocSketch>],
    query_secs: f64,
    compacted_secs: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    let (n, queries) = (o.n, o.queries);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let t = Instant::now();
    let mut store = MemoryStore::new(sk.banding().bands);
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        for s in sketch_range(sk, start..end, n, o.size) {
            store.push(s.as_ref())?;
        }
        start = end;
    }
    for s in q_sketches {
        store.push(s.as_ref())?;
    }
    store.finish()?;
    let fill_secs = t.elapsed().as_secs_f64();
    let rank: Vec<u32> = (0..store.len() as u32).collect();
    let t = Instant::now();
    one.install(|| walk(&store, DEFAULT_JACCARD, &rank, simhash_index::lsh::Templates::Remove))?;
    let walk_secs = t.elapsed().as_secs_f64();
    println!(
        "baseline: dedup walk over old + new ({} documents) on one core: {walk_secs:.1} s (+ {fill_secs:.1} s to sketch and store them, all threads)",
        store.len()
    );
    println!(
        "ratio: querying {queries} new documents against the index takes {:.4}× the walk's time ({:.0}× faster; compacted {:.0}×); the walk alone is {:.0} new docs/s",
        query_secs / walk_secs,
        walk_secs / query_secs,
        walk_secs / compacted_secs,
        queries as f64 / walk_secs
    );
    Ok(())
}

/// Open time: the median of 21 opens.
fn report_open(dir: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut times = Vec::new();
    for _ in 0..21 {
        let t = Instant::now();
        let index = DiskIndex::open(dir)?;
        times.push(t.elapsed().as_secs_f64());
        drop(index);
    }
    times.sort_by(f64::total_cmp);
    println!("open: {:.3} ms (median of 21)", times[10] * 1e3);
    Ok(())
}
