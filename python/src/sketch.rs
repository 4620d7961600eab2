//! Texts to fingerprints and MinHash signatures: [`Fingerprinter`], [`MinHasher`],
//! [`hamming`].

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use simhash_core::{EMPTY, MAX_WINDOW, Preset};
use simhash_index::lsh::DEFAULT_NUM_PERM;
use simhash_index::settings;

use crate::interrupt::detached;
use crate::texts::Texts;

/// The core fingerprinter for a preset name (`default`, `default-v1`, `moz`, `fork`) and a
/// window (tokens per shingle; bytes for `fork`; the preset's own when `None`). Errors
/// (`ValueError`): an unknown preset, a window out of `1..=MAX_WINDOW`.
pub(crate) fn fingerprinter(
    preset: &str,
    window: Option<usize>,
) -> PyResult<simhash_core::Fingerprinter> {
    let preset: Preset = preset.parse().map_err(crate::errors::value)?;
    if let Some(w) = window
        && !(1..=MAX_WINDOW).contains(&w)
    {
        return Err(PyValueError::new_err(format!(
            "window must be between 1 and {MAX_WINDOW}, not {w}"
        )));
    }
    Ok(simhash_core::Fingerprinter::with_settings(preset, window))
}

/// The preset's name as the index stores it and the window it uses (`window`, or the
/// preset's own): how `Fingerprinter` resolves its settings.
#[pyfunction]
#[pyo3(signature = (preset, window=None))]
pub(crate) fn preset_window(preset: &str, window: Option<usize>) -> PyResult<(String, usize)> {
    let f = fingerprinter(preset, window)?;
    Ok((f.preset().name().to_owned(), f.window()))
}

/// The number of bits in which two 64-bit fingerprints differ.
#[pyfunction]
pub(crate) fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// Which texts have features.
type Mask = PyArray1<bool>;

/// Texts to 64-bit simhash fingerprints, in parallel.
#[pyclass(module = "simhash_rs._native", frozen)]
pub(crate) struct Fingerprinter {
    inner: simhash_core::Fingerprinter,
}

#[pymethods]
impl Fingerprinter {
    #[new]
    #[pyo3(signature = (preset="default", window=None))]
    fn new(preset: &str, window: Option<usize>) -> PyResult<Fingerprinter> {
        Ok(Fingerprinter { inner: fingerprinter(preset, window)? })
    }

    /// The preset's name (`default` resolves to its current version, e.g. `default-v1`).
    #[getter]
    fn preset(&self) -> String {
        self.inner.preset().name().to_owned()
    }

    #[getter]
    fn window(&self) -> usize {
        self.inner.window()
    }

    /// The fingerprint of one text; `None` when it has no features.
    fn fingerprint(&self, py: Python<'_>, text: &str) -> PyResult<Option<u64>> {
        let fp = if text.len() < 4096 {
            self.inner.fingerprint(text)
        } else {
            detached(py, || self.inner.fingerprint(text))?
        };
        Ok(fp.map(|f| f.0))
    }

    /// The fingerprints of a chunk (`Texts::from_py`) and which texts have features.
    fn fingerprints<'py>(
        &self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
        start: usize,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, Mask>)> {
        let texts = Texts::from_py(chunk, start)?;
        let fps: Vec<Option<u64>> = detached(py, || {
            texts.par_iter().map(|t| self.inner.fingerprint(t).map(|f| f.0)).collect()
        })?;
        let present: Vec<bool> = fps.iter().map(Option::is_some).collect();
        let values: Vec<u64> = fps.into_iter().map(Option::unwrap_or_default).collect();
        Ok((values.into_pyarray(py), present.into_pyarray(py)))
    }
}

/// Texts to MinHash signatures of the shingles a fingerprinter makes of them.
#[pyclass(module = "simhash_rs._native", frozen)]
pub(crate) struct MinHasher {
    fingerprinter: simhash_core::Fingerprinter,
    minhasher: simhash_core::MinHasher,
}

#[pymethods]
impl MinHasher {
    /// `num_perm` slots (`None`: the settings contract's default, as the matching methods
    /// take it), checked as the contract checks it.
    #[new]
    #[pyo3(signature = (num_perm=None, seed=0, preset="default", window=None))]
    fn new(
        num_perm: Option<usize>,
        seed: u64,
        preset: &str,
        window: Option<usize>,
    ) -> PyResult<MinHasher> {
        let num_perm = settings::num_perm(num_perm.unwrap_or(DEFAULT_NUM_PERM))
            .map_err(|e| crate::settings::error(&e))?;
        Ok(MinHasher {
            fingerprinter: fingerprinter(preset, window)?,
            minhasher: simhash_core::MinHasher::new(num_perm, seed),
        })
    }

    #[getter]
    fn num_perm(&self) -> usize {
        self.minhasher.num_perm()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.minhasher.seed()
    }

    #[getter]
    fn preset(&self) -> String {
        self.fingerprinter.preset().name().to_owned()
    }

    #[getter]
    fn window(&self) -> usize {
        self.fingerprinter.window()
    }

    /// The distinct shingle hashes of a text, sorted: the set whose exact Jaccard
    /// similarity verifies a match.
    fn shingles<'py>(&self, py: Python<'py>, text: &str) -> Bound<'py, PyArray1<u64>> {
        let mut features = Vec::new();
        self.fingerprinter.for_each_feature(text, |h, _| features.push(h));
        simhash_core::shingle_set(features).into_pyarray(py)
    }

    /// The signatures of a chunk, one row per text; a text without shingles gets a row of
    /// `EMPTY` (`2**32 - 1`), a value no other row's slot takes.
    fn signatures<'py>(
        &self,
        py: Python<'py>,
        chunk: &Bound<'py, PyAny>,
        start: usize,
    ) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let texts = Texts::from_py(chunk, start)?;
        let k = self.minhasher.num_perm();
        let mut out = vec![0u32; texts.len() * k];
        detached(py, || {
            out.par_chunks_mut(k.max(1)).zip(texts.par_iter()).for_each(|(row, text)| {
                let mut features = Vec::new();
                self.fingerprinter.for_each_feature(text, |h, _| features.push(h));
                if !self.minhasher.signature_into(features.iter().copied(), row) {
                    row.fill(EMPTY);
                }
            });
        })?;
        let rows = texts.len();
        let array = Array2::from_shape_vec((rows, k), out)
            .map_err(|e| PyValueError::new_err(format!("internal error: {e}")))?;
        Ok(array.into_pyarray(py))
    }
}
