//! Prints the planner's recommendations as the Markdown table in `docs/index.md`.
//!
//! ```text
//! cargo run --release -p benches --bin bench_index_plan
//! ```
#![allow(clippy::print_stdout)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "| n | k | blocks | tables | prefix bits | expected candidates | peak memory | model CPU-s |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (name, n) in [
        ("1M", 1_000_000u64),
        ("10M", 10_000_000),
        ("100M", 100_000_000),
        ("1B", 1_000_000_000),
        ("8B", 8_000_000_000),
    ] {
        for k in 3..=8 {
            let p = simhash_index::plan(n, k)?;
            println!(
                "| {name} | {k} | {} | {} | {} | {:.2e} | {} | {:.1} |",
                p.blocks,
                p.tables,
                p.prefix_bits,
                p.expected_candidates,
                bytes(p.peak_bytes),
                p.estimated_cpu_seconds,
            );
        }
    }
    Ok(())
}

fn bytes(b: u64) -> String {
    if b >= 1_000_000_000 {
        format!("{:.1} GB", b as f64 / 1e9)
    } else {
        format!("{} MB", b / 1_000_000)
    }
}
