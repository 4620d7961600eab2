//! Index benchmarks (placeholder, filled in below).
fn main() {}
