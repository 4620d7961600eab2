//! Online index throughput: build an index of N random fingerprints with planted near copies,
//! then time single queries (one thread), bulk queries (all threads), and single inserts.
//!
//! ```text
//! cargo run --release -p benches --bin bench_index_queries -- --n 10000000 --k 3 --blocks 4 --queries 1000000 [--threads 1]
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;
use std::time::Instant;

use benches::{SplitMix, peak_rss_kib};
use simhash_core::Fingerprint;
use simhash_index::{Hit, Index, Tables};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_index_queries: {e}");
            ExitCode::from(2)
        }
    }
}

/// `queries` fingerprints: half near copies (0..=k bits flipped) of `fps`, half random.
fn queries_of(fps: &[Fingerprint], queries: usize, k: u32, rng: &mut SplitMix) -> Vec<Fingerprint> {
    let n = fps.len() as u64;
    (0..queries)
        .map(|i| {
            if i % 2 == 0 {
                let of = fps[(rng.next_u64() % n.max(1)) as usize];
                let mut x = of.0;
                for _ in 0..(rng.next_u64() % u64::from(k + 1)) {
                    x ^= 1 << (rng.next_u64() % 64);
                }
                Fingerprint(x)
            } else {
                Fingerprint(rng.next_u64())
            }
        })
        .collect()
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let (mut n, mut k, mut blocks, mut queries, mut seed) =
        (1_000_000u64, 3u32, 4usize, 1_000_000usize, 1u64);
    let mut threads: usize = 0;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--n" => n = value.parse()?,
            "--k" => k = value.parse()?,
            "--blocks" => blocks = value.parse()?,
            "--queries" => queries = value.parse()?,
            "--seed" => seed = value.parse()?,
            "--threads" => threads = value.parse()?,
            _ => return Err(format!("unknown flag {flag}").into()),
        }
    }
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global()?;
    let tables = Tables::new(blocks, k)?;
    let mut rng = SplitMix(seed);
    let fps: Vec<Fingerprint> = (0..n).map(|_| Fingerprint(rng.next_u64())).collect();

    let t = Instant::now();
    let mut index: Index<u64> = Index::new(tables.clone());
    index.insert_many(fps.iter().enumerate().map(|(i, &f)| (i as u64, f)));
    println!("n={n} k={k} blocks={blocks} tables={} build={:.2?}", tables.len(), t.elapsed());

    // Half the queries are near copies (0..=k bits) of stored fingerprints, half random.
    let qs = queries_of(&fps, queries, k, &mut rng);

    // Single queries, one thread, the allocation-free form.
    let t = Instant::now();
    let mut hits: Vec<Hit> = Vec::new();
    let mut found = 0usize;
    for &q in &qs {
        index.find_all_into(q, &mut hits);
        found += hits.len();
    }
    let single = t.elapsed().as_secs_f64();
    // find_first, one thread.
    let t = Instant::now();
    let firsts = qs.iter().filter(|&&q| index.find_first(q).is_some()).count();
    let first = t.elapsed().as_secs_f64();
    // Bulk queries, all threads.
    let threads = rayon::current_num_threads();
    let t = Instant::now();
    let bulk_hits: usize = index.find_all_many(&qs).iter().map(Vec::len).sum();
    let bulk = t.elapsed().as_secs_f64();
    // Baseline in the same run: a linear scan, on a sample of the queries.
    let sample = &qs[..qs.len().min(200)];
    let t = Instant::now();
    let brute_hits: usize =
        sample.iter().map(|q| fps.iter().filter(|f| q.distance(**f) <= k).count()).sum();
    let brute = t.elapsed().as_secs_f64() / sample.len().max(1) as f64;
    let q = queries as f64;
    println!(
        "single find_all_into: {:.0}/s ({found} hits); find_first: {:.0}/s ({firsts} found); \
         bulk find_all_many: {:.0}/s on {threads} threads = {:.0}/s per core ({bulk_hits} hits); \
         linear scan: {:.0}/s ({brute_hits} hits on {} queries); single speedup {:.0}x",
        q / single,
        q / first,
        q / bulk,
        q / bulk / threads as f64,
        1.0 / brute,
        sample.len(),
        brute / (single / q),
    );

    // Single inserts into the full index, then removes.
    let extra = 100_000u64;
    let t = Instant::now();
    for i in 0..extra {
        index.insert(n + i, Fingerprint(rng.next_u64()));
    }
    let ins = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for i in 0..extra {
        index.remove(&(n + i));
    }
    let rem = t.elapsed().as_secs_f64();
    println!(
        "single insert: {:.0}/s; remove: {:.0}/s; peak_rss={}MiB",
        extra as f64 / ins,
        extra as f64 / rem,
        peak_rss_kib() / 1024
    );
    Ok(())
}
