//! Reading simhash-cpp's input: 2M decimal hashes, one a line, through the reader before the
//! fast path (UTF-8 check, trim, `Fingerprint::from_decimal`) and through `parse_cpp_hash`
//! (`parse_u64_fast` first). Throughput in input bytes. A smoke run ([`benches::smoke`])
//! reads 20k lines.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use simhash_core::Fingerprint;

fn input() -> Vec<u8> {
    let mut x: u64 = 17;
    let mut out = Vec::new();
    for _ in 0..benches::scaled(2_000_000) {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let v = x ^ (x >> 29);
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn old(line: &[u8]) -> Option<Fingerprint> {
    let line = std::str::from_utf8(line).ok()?;
    Fingerprint::from_decimal(line.trim()).ok()
}

fn bench(c: &mut Criterion) {
    let data = input();
    let mut group = c.benchmark_group("hashin");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.sample_size(10);
    let sum = |f: &dyn Fn(&[u8]) -> Option<Fingerprint>| {
        data.split(|&b| b == b'\n').filter_map(f).fold(0u64, |a, fp| a ^ fp.get())
    };
    group.bench_function("decimal_2m/old", |b| b.iter(|| sum(&old)));
    group.bench_function("decimal_2m/parse_cpp_hash", |b| {
        b.iter(|| sum(&|l| simhash_io::parse_cpp_hash(l).ok()));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
