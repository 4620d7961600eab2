//! [`HammingTable`]: the online Hamming index (`simhash_index::Index`) over slot numbers;
//! `simhash_rs.SimhashIndex` maps its Python ids to them.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use simhash_core::Fingerprint;
use simhash_index::settings::{self, Matching};
use simhash_index::{AllPairs, Index};

use crate::interrupt::run;

/// The number of fingerprints an index with `blocks=None` plans its tables for: an online
/// index's size is not known when it is made, and any number of blocks finds the same
/// matches.
const PLAN_FINGERPRINTS: u64 = 1_000_000;

/// Fingerprints under slot numbers; every stored fingerprint within `k` bits of a query.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct HammingTable {
    index: Index<u64>,
}

#[pymethods]
impl HammingTable {
    /// Within `k` bits over `blocks` blocks, each `None` when not given: the settings
    /// contract's simhash settings fill them in and check them.
    #[new]
    #[pyo3(signature = (k=None, blocks=None))]
    fn new(k: Option<u32>, blocks: Option<usize>) -> PyResult<HammingTable> {
        let asked =
            crate::settings::asked(Some("simhash"), None, None, None, None, k, blocks, None)?;
        let Matching::Simhash { distance, blocks } = crate::settings::resolve(&asked)? else {
            unreachable!("method='simhash' resolves to simhash")
        };
        let tables = settings::tables(distance, blocks, PLAN_FINGERPRINTS as usize)
            .map_err(|e| crate::settings::error(&e))?;
        Ok(HammingTable { index: Index::new(tables) })
    }

    #[getter]
    fn k(&self) -> u32 {
        self.index.tables().max_distance()
    }

    #[getter]
    fn blocks(&self) -> usize {
        self.index.tables().blocks()
    }

    fn __len__(&self) -> usize {
        self.index.len()
    }

    /// Stores `fp` under `slot`; returns the fingerprint it replaces, if any.
    fn insert(&mut self, slot: u64, fp: u64) -> Option<u64> {
        self.index.insert(slot, Fingerprint(fp)).map(|f| f.0)
    }

    /// Removes `slot`; returns its fingerprint, if it was stored.
    fn remove(&mut self, slot: u64) -> Option<u64> {
        self.index.remove(&slot).map(|f| f.0)
    }

    /// The fingerprint stored under `slot`.
    fn get(&self, slot: u64) -> Option<u64> {
        self.index.get(&slot).map(|f| f.0)
    }

    /// `(slot, distance)` of every stored fingerprint within `k` bits of `fp`, nearest
    /// first (then by slot).
    fn query(&self, fp: u64) -> Vec<(u64, u32)> {
        self.index.find_all(Fingerprint(fp)).map(|h| (h.id, h.distance)).collect()
    }

    /// Every pair of stored fingerprints within `k` bits, as slot arrays `(a, b, distance)`
    /// with `a < b`, sorted; identical fingerprints are pairs at distance 0.
    #[allow(clippy::type_complexity)]
    fn find_all<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u32>>)>
    {
        let mut stored: Vec<(u64, Fingerprint)> = self.index.iter().map(|(&s, f)| (s, f)).collect();
        stored.sort_unstable_by_key(|&(s, _)| s);
        let tables = self.index.tables().clone();
        let pairs = run(py, move || {
            let fps: Vec<Fingerprint> = stored.iter().map(|&(_, f)| f).collect();
            let mut pairs: Vec<(u64, u64, u32)> = Vec::new();
            let all = AllPairs::new(&tables).run(&fps, |batch| {
                pairs.extend(
                    batch
                        .iter()
                        .map(|p| (stored[p.a as usize].0, stored[p.b as usize].0, p.distance)),
                );
            });
            pairs.sort_unstable();
            all.map(|()| pairs)
        })?
        .map_err(crate::errors::value)?;
        let a: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        let b: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        let d: Vec<u32> = pairs.iter().map(|p| p.2).collect();
        Ok((a.into_pyarray(py), b.into_pyarray(py), d.into_pyarray(py)))
    }
}
