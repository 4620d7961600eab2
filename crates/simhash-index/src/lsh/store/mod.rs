//! Where the sketches of a corpus live while it is searched: the [`SketchStore`] trait, and
//! two stores, [`MemoryStore`] (`memory.rs`) and [`SpillStore`] (`spill.rs`: band hashes
//! and shingle sets in unnamed temporary files, whose formats are `files.rs`).

mod files;
mod memory;
mod spill;

pub use files::{SetPlace, SetWriter};
pub use memory::MemoryStore;
pub use spill::{SPILL_CACHE_BYTES, SpillStore};

pub(crate) use super::buffers::trim;
use super::{BandKeyWidth, DocSketch, EngineError, EngineErrorKind};

/// The sketches of a corpus, indexed by document (`0..len`, in the order they were pushed;
/// documents without features have none). The searches ([`find_matches`](super::find_matches),
/// [`walk`](fn@super::walk), [`components`](fn@super::components)) read them through this trait,
/// from rayon's worker threads.
///
/// Contract: [`push`](SketchStore::push) in document order, then
/// [`finish`](SketchStore::finish) (idempotent) before any read; the reads of a document
/// return what was pushed for it. A store may refuse pushes after `finish`
/// ([`EngineErrorKind::Finished`]). Two stores holding the same sketches give every search
/// the same result.
pub trait SketchStore: Send + Sync {
    /// Band hashes per sketch.
    fn bands(&self) -> usize;

    /// Documents pushed (with or without a sketch).
    fn len(&self) -> usize;

    /// True when no document was pushed.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the next document's sketch (none when it has no features).
    ///
    /// Errors: [`EngineErrorKind::Mismatch`] for a sketch of another number of bands,
    /// [`EngineErrorKind::TooManyDocuments`] past `u32::MAX` documents, and I/O errors.
    fn push(&mut self, sketch: Option<&DocSketch>) -> Result<(), EngineError>;

    /// Ends writing: sketches can be read from now on.
    fn finish(&mut self) -> Result<(), EngineError>;

    /// Whether `doc` has a sketch.
    fn has(&self, doc: usize) -> bool;

    /// A hash of `doc`'s shingle set (equal sets, equal hashes; 0 without a sketch).
    fn set_hash(&self, doc: usize) -> u64;

    /// Reads `doc`'s shingle set into `out` (cleared first; empty without a sketch).
    fn read_set(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), EngineError>;

    /// Reads `doc`'s tokens ([`DocSketch::tokens`]: what the [`Relation`](super::Relation)
    /// of its pairs is read from) into `out` (cleared first; empty without a sketch or
    /// when they are not known). By default, none: every verified pair reads as
    /// [`Relation::Same`](super::Relation::Same).
    fn read_tokens(&self, doc: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        let _ = doc;
        out.clear();
        Ok(())
    }

    /// The size of `doc`'s shingle set (0 without a sketch), without reading it where the
    /// store knows it: a size filter before verification. By default, reads the set.
    fn set_len(&self, doc: usize) -> Result<usize, EngineError> {
        let mut set = Vec::new();
        self.read_set(doc, &mut set)?;
        Ok(set.len())
    }

    /// One band's key of each of `docs` (ascending): 0 for a document without a sketch.
    /// With 64-bit keys ([`band_key_bits`](SketchStore::band_key_bits)), 32-bit values
    /// that are equal exactly when the keys are, among the keys of this call.
    fn column(&self, band: usize, docs: &[u32]) -> Result<Vec<u32>, EngineError>;

    /// Appends the first `band` keys of each of `docs` (ascending) to `out`, row after
    /// row (`band` may be every band). With 64-bit keys, values that are equal exactly when
    /// the keys of the same band are, among the keys of this call.
    fn rows(&self, docs: &[u32], band: usize, out: &mut Vec<u32>) -> Result<(), EngineError>;

    /// The bits of the band keys the searches group by: 32 (64-bit band hashes folded,
    /// whose chance collisions only add candidates) or 64 (the whole band hashes). Known
    /// once the store is [finished](SketchStore::finish). By default, 32.
    fn band_key_bits(&self) -> u32 {
        32
    }
}

/// The high halves of the band hashes a store keeps, by its [`BandKeyWidth`]: none for
/// `Bits32`; for `Auto`, until a sketch without them comes (then its keys are 32-bit).
fn keeps_high(width: BandKeyWidth, sketch: Option<&DocSketch>) -> Result<bool, EngineError> {
    match (width, sketch) {
        (BandKeyWidth::Bits32, _) => Ok(false),
        (_, None) => Ok(true),
        (_, Some(s)) if s.has_wide_keys() => Ok(true),
        (BandKeyWidth::Bits64, Some(_)) => Err(EngineError::other(
            EngineErrorKind::Mismatch,
            "a sketch of 32-bit band keys for a store of 64-bit keys",
        )),
        (_, Some(_)) => Ok(false),
    }
}

/// What every store keeps in memory: 17 bytes a document.
#[derive(Debug)]
struct DocIndex {
    set_hashes: Vec<u64>,
    /// Start of each document's set, in shingles; one more entry at the end.
    offsets: Vec<u64>,
    has: Vec<bool>,
}

impl DocIndex {
    fn new() -> DocIndex {
        DocIndex { set_hashes: Vec::new(), offsets: vec![0], has: Vec::new() }
    }

    /// Checks `sketch` (whose set has `set_len` shingles) and records it.
    fn push(
        &mut self,
        bands: usize,
        sketch: Option<&DocSketch>,
        set_len: usize,
    ) -> Result<(), EngineError> {
        if self.has.len() >= u32::MAX as usize {
            return Err(EngineError::other(
                EngineErrorKind::TooManyDocuments,
                format!("a store holds at most {} documents", u32::MAX),
            ));
        }
        let end = self.offsets[self.offsets.len() - 1];
        if let Some(s) = sketch {
            if s.bands.len() != bands {
                return Err(EngineError::other(
                    EngineErrorKind::Mismatch,
                    format!("a sketch has {} band hashes, the store {bands}", s.bands.len()),
                ));
            }
            self.set_hashes.push(s.set_hash());
            self.offsets.push(end + set_len as u64);
        } else {
            self.set_hashes.push(0);
            self.offsets.push(end);
        }
        self.has.push(sketch.is_some());
        Ok(())
    }

    /// The range of `doc`'s set, in shingles.
    fn range(&self, doc: usize) -> (u64, u64) {
        (self.offsets[doc], self.offsets[doc + 1])
    }

    /// The size of `doc`'s set.
    fn set_len(&self, doc: usize) -> usize {
        (self.offsets[doc + 1] - self.offsets[doc]) as usize
    }
}

/// The error for a push after [`SketchStore::finish`] on a [`SpillStore`].
fn finished() -> EngineError {
    EngineError::other(
        EngineErrorKind::Finished,
        "documents cannot be added to a spilled store after it is searched",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets of 0 to 40 shingles (none: featureless), by a splitmix sequence.
    fn docs(n: usize, seed: u64) -> Vec<Option<DocSketch>> {
        let mut x = seed;
        let mut next = move || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        (0..n)
            .map(|_| {
                let len = next() % 41;
                let mut set: Vec<u64> = (0..len).map(|_| next()).collect();
                set.sort_unstable();
                set.dedup();
                let bands = (0..3).map(|_| next() as u32).collect();
                (len > 0).then(|| DocSketch::from_parts(bands, set))
            })
            .collect()
    }

    #[test]
    fn sets_written_by_set_writers_read_as_pushed() {
        let docs = docs(500, 17);
        let mut memory = MemoryStore::new(3);
        for d in &docs {
            memory.push(d.as_ref()).unwrap();
        }
        for cache in [0, 1 << 30] {
            let mut store = SpillStore::with_cache_bytes(3, cache).unwrap();
            let writer = store.set_writer().unwrap();
            // Batches of 7 documents; every third one pushed with its set, the others
            // written by two threads in no particular order, with sets never pushed between.
            let batches: Vec<Vec<Option<DocSketch>>> = docs.chunks(7).map(<[_]>::to_vec).collect();
            let placed: Vec<Option<Vec<SetPlace>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batches
                    .iter()
                    .enumerate()
                    .map(|(i, batch)| {
                        let writer = writer.clone();
                        let mut batch = batch.clone();
                        scope.spawn(move || {
                            if i % 3 == 0 {
                                return None;
                            }
                            let mut buf = Vec::new();
                            let mut unused = docs_unused(i);
                            writer.write(unused.iter_mut(), &mut buf).unwrap();
                            Some(writer.write(batch.iter_mut().flatten(), &mut buf).unwrap())
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (batch, places) in batches.iter().zip(placed) {
                match places {
                    None => batch.iter().for_each(|d| store.push(d.as_ref()).unwrap()),
                    Some(places) => {
                        let mut places = places.into_iter();
                        for d in batch {
                            match d {
                                Some(d) => {
                                    let mut hollow = d.clone();
                                    hollow.set = Vec::new();
                                    store.push_placed(&hollow, places.next().unwrap()).unwrap();
                                }
                                None => store.push(None).unwrap(),
                            }
                        }
                    }
                }
            }
            store.finish().unwrap();
            assert_eq!(store.cached().1, cache > 0);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (doc, sketch) in docs.iter().enumerate() {
                memory.read_set(doc, &mut a).unwrap();
                store.read_set(doc, &mut b).unwrap();
                assert_eq!(a, b, "doc {doc}, cache {cache}");
                assert_eq!(store.set_len(doc).unwrap(), a.len());
                assert_eq!(store.set_hash(doc), memory.set_hash(doc));
                assert_eq!(&store.sketch(doc).unwrap(), sketch, "doc {doc}");
            }
        }
    }

    /// Sketches whose sets are written and never pushed.
    fn docs_unused(seed: usize) -> Vec<DocSketch> {
        docs(3, 1000 + seed as u64).into_iter().flatten().collect()
    }
}
