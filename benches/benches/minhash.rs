//! MinHash signatures and LSH candidate generation (filled in by the following commits).

use criterion::{Criterion, criterion_group, criterion_main};

fn minhash(_c: &mut Criterion) {}

criterion_group!(benches, minhash);
criterion_main!(benches);
