//! A flood of records that share a long boilerplate and each have a sentence of their own:
//! every pair verifies, every relation is `overlap`, and every record is kept. The dedup
//! walk must not compare each record with every record kept before it (what it did: about
//! N²/2 candidate pairs), nor the components of `cluster` each pair; counted in candidate
//! pairs and verifications, not timed.

use simhash_core::{Fingerprinter, MinHasher};
use simhash_index::lsh::{
    Banding, MemoryStore, SketchStore, Sketcher, Templates, components, walk,
};

#[path = "support/own_flood.rs"]
mod own_flood;

#[test]
fn a_flood_of_records_with_content_of_their_own_costs_about_one_look_a_record() {
    let mut flood = own_flood::OwnFlood::new();
    let n = 3_000;
    let texts: Vec<String> = (0..n).map(|_| flood.document()).collect();
    let fp = Fingerprinter::new();
    let banding = Banding::for_threshold(0.3, 128).expect("banding");
    let sketcher = Sketcher::new(MinHasher::new(128, 0), banding).expect("sketcher");
    let mut store = MemoryStore::new(banding.bands);
    for text in &texts {
        store.push(sketcher.sketch(&fp, text).1.as_ref()).expect("push");
    }
    store.finish().expect("finish");
    let rank = vec![0; n];
    let (walked, stats) = walk(&store, 0.4, &rank, Templates::Remove).expect("walk");
    assert!((0..n).all(|d| walked.center[d] as usize == d), "a record was removed");
    // Most records are known to be kept before their candidates are listed.
    assert!(stats.unlisted as usize > n / 2, "{stats:?}");
    // About N²/2 = 4.5M candidate pairs when each is compared with every record kept
    // before it; a record's chunk (1,024 records) bounds what is left.
    assert!(stats.candidates < 400 * n as u64, "{stats:?}");
    assert!(stats.spared > 0, "{stats:?}");
    // `cluster`: nothing joins, and two records each with content no other has are not
    // compared (every pair was verified and its relation read both ways: 4.5M).
    let (edges, stats) = components(&store, 0.4, Templates::Remove).expect("components");
    assert!(edges.is_empty(), "{} edges", edges.len());
    assert!(stats.verified < 10 * n as u64 && stats.own_skipped > 0, "{stats:?}");
}
