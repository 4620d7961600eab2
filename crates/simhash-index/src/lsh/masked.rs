//! [`Masked`]: a sketch store seen with some documents hidden.

use super::{DocSketch, EngineError, EngineErrorKind, SketchStore};

/// A read-only view of a finished [`SketchStore`] with some documents hidden: a hidden
/// document has no sketch, so every search passes it over as it passes over a featureless
/// one. For a walk that must leave out documents decided elsewhere (records of a new
/// crawl already matched against an on-disk index), without copying the store.
///
/// ```
/// use simhash_core::MinHasher;
/// use simhash_index::lsh::Banding;
/// use simhash_index::lsh::{Masked, MemoryStore, SketchStore, Sketcher, Templates, walk};
///
/// let sketcher = Sketcher::new(MinHasher::new(64, 0), Banding::new(16, 4)?)?;
/// let mut store = MemoryStore::new(sketcher.banding().bands);
/// for shingles in [[1u64, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]] {
///     store.push(sketcher.sketch_shingles(shingles).as_ref())?;
/// }
/// store.finish()?;
/// // Document 1 is decided elsewhere: the walk keeps 0 and removes 2 as its copy.
/// let hidden = [false, true, false];
/// let masked = Masked { inner: &store, hidden: &hidden };
/// assert!(!masked.has(1));
/// let (walk, _) = walk(&masked, 0.5, &[0, 1, 2], Templates::Remove)?;
/// assert_eq!(walk.center, [0, 1, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Masked<'a, S: SketchStore + ?Sized> {
    /// The store shown.
    pub inner: &'a S,
    /// `hidden[doc]`: the document is hidden (documents past the end are shown).
    pub hidden: &'a [bool],
}

impl<S: SketchStore + ?Sized> Masked<'_, S> {
    fn hidden(&self, doc: usize) -> bool {
        self.hidden.get(doc).copied().unwrap_or(false)
    }
}

impl<S: SketchStore + ?Sized> SketchStore for Masked<'_, S> {
    fn bands(&self) -> usize {
        self.inner.bands()
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn band_key_bits(&self) -> u32 {
        self.inner.band_key_bits()
    }

    /// Refused ([`EngineErrorKind::Finished`]): a view is read-only.
    fn push(&mut self, _: Option<&DocSketch>) -> Result<(), EngineError> {
        Err(EngineError::other(EngineErrorKind::Finished, "a masked store is read-only"))
    }

    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }

    fn has(&self, doc: usize) -> bool {
        !self.hidden(doc) && self.inner.has(doc)
    }

    fn set_hash(&self, doc: usize) -> u64 {
        if self.hidden(doc) { 0 } else { self.inner.set_hash(doc) }
    }

    fn read_set(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), EngineError> {
        if self.hidden(doc) {
            out.clear();
            return Ok(());
        }
        self.inner.read_set(doc, out)
    }

    fn read_tokens(&self, doc: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        if self.hidden(doc) {
            out.clear();
            return Ok(());
        }
        self.inner.read_tokens(doc, out)
    }

    fn set_len(&self, doc: usize) -> Result<usize, EngineError> {
        if self.hidden(doc) { Ok(0) } else { self.inner.set_len(doc) }
    }

    fn column(&self, band: usize, docs: &[u32]) -> Result<Vec<u32>, EngineError> {
        let mut column = self.inner.column(band, docs)?;
        for (key, &doc) in column.iter_mut().zip(docs) {
            if self.hidden(doc as usize) {
                *key = 0;
            }
        }
        Ok(column)
    }

    fn rows(&self, docs: &[u32], band: usize, out: &mut Vec<u32>) -> Result<(), EngineError> {
        let start = out.len();
        self.inner.rows(docs, band, out)?;
        for (row, &doc) in out[start..].chunks_mut(band.max(1)).zip(docs) {
            if self.hidden(doc as usize) {
                row.fill(0);
            }
        }
        Ok(())
    }
}
