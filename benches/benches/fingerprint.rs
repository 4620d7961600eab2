//! Fingerprinting throughput in MB/s for each preset, next to a naive per-bit baseline
//! measured in the same run.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use simhash_core::{Accumulator, Fingerprinter, Preset};

fn presets(c: &mut Criterion) {
    for (corpus, text) in
        [("english", benches::english()), ("multilingual", benches::multilingual())]
    {
        let mut group = c.benchmark_group(format!("fingerprint/{corpus}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        for preset in Preset::ALL {
            let fp = Fingerprinter::builder().preset(preset).build();
            group.bench_function(preset.name(), |b| b.iter(|| fp.fingerprint(black_box(&text))));
        }
        // Baseline: the same default-v1 features, added up one bit at a time.
        let fp = Fingerprinter::new();
        group.bench_function("default-v1-naive-accumulator", |b| {
            b.iter(|| {
                let mut features = Vec::new();
                fp.for_each_feature(black_box(&text), |h, w| features.push((h, w)));
                benches::naive_simhash(features)
            });
        });
        group.finish();

        // The fork preset's bulk path against the per-gram path it replaced: one `jenkins64`
        // call per gram (`for_each_feature`) voted into an `Accumulator`.
        let mut group = c.benchmark_group(format!("fork/{corpus}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        let fp = Fingerprinter::builder().preset(Preset::Fork).build();
        group.bench_function("bulk", |b| b.iter(|| fp.fingerprint(black_box(&text))));
        group.bench_function("per-gram", |b| {
            b.iter(|| {
                let mut acc = Accumulator::new();
                fp.for_each_feature(black_box(&text), |h, w| acc.add(h, w));
                acc.finish()
            });
        });
        group.finish();
    }

    // Many small documents: the per-document overhead (CLI-like workload).
    let text = benches::english();
    let docs: Vec<&str> = text.split("\n\n").filter(|d| !d.trim().is_empty()).collect();
    let bytes: usize = docs.iter().map(|d| d.len()).sum();
    let mut group = c.benchmark_group("fingerprint/paragraphs");
    group.throughput(Throughput::Bytes(bytes as u64));
    let fp = Fingerprinter::new();
    group.bench_function("default-v1", |b| {
        b.iter(|| docs.iter().filter_map(|d| fp.fingerprint(black_box(d))).count());
    });
    group.finish();
}

criterion_group!(benches, presets);
criterion_main!(benches);
