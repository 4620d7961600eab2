//! The persistent index on disk (`simhash_index::disk`), the one `simhash index` and
//! `simhash dedup --against` use: [`NativeIndex`] reads and queries, [`NativeWriter`] adds
//! and commits.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use simhash_core::Fingerprinter;
use simhash_index::Blocks;
use simhash_index::disk::{
    DiskErrorKind, DiskIndex, MinHashSettings, Settings, SimhashSettings, Writer,
};
use simhash_index::lsh::{DocSketch, Sketcher};

use crate::errors::disk;
use crate::interrupt::{detached, run};
use crate::texts::Texts;

/// Settings asked for by the caller; `None` keeps the index's (or takes the default for a
/// new index).
#[derive(Clone, Debug, Default, FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct Asked {
    method: Option<String>,
    preset: Option<String>,
    window: Option<usize>,
    jaccard: Option<f64>,
    lsh_threshold: Option<f64>,
    num_perm: Option<usize>,
    k: Option<u32>,
    blocks: Option<usize>,
}

impl Asked {
    /// The settings of a new index: the `simhash` command's defaults for what is not asked.
    fn new_settings(&self) -> PyResult<Settings> {
        let preset = self.preset.as_deref().unwrap_or("default");
        let fingerprinter = crate::sketch::fingerprinter(preset, self.window)?;
        let method = self.method.as_deref().unwrap_or("minhash");
        Ok(match method {
            "minhash" => Settings::MinHash(
                MinHashSettings::new(
                    &fingerprinter,
                    self.jaccard.unwrap_or(simhash_index::lsh::DEFAULT_JACCARD),
                    self.lsh_threshold.unwrap_or(simhash_index::lsh::DEFAULT_LSH_THRESHOLD),
                    crate::sketch::num_perm(
                        self.num_perm.unwrap_or(simhash_index::lsh::DEFAULT_NUM_PERM),
                    )?,
                )
                .map_err(disk)?,
            ),
            "simhash" => Settings::Simhash(
                SimhashSettings::new(
                    &fingerprinter,
                    self.k.unwrap_or(3),
                    self.blocks.map_or(Blocks::Auto, Blocks::Fixed),
                )
                .map_err(disk)?,
            ),
            other => {
                return Err(PyValueError::new_err(format!(
                    "method must be \"minhash\" or \"simhash\", not {other:?}"
                )));
            }
        })
    }

    /// The index's settings with the asked ones laid over them (opening then names each
    /// that differs).
    fn laid_over(&self, stored: &Settings) -> PyResult<Settings> {
        if let Some(method) = self.method.as_deref().filter(|&m| m != stored.method()) {
            return Err(PyValueError::new_err(format!(
                "method={method:?}: the index holds {} sketches",
                stored.method()
            )));
        }
        let simhash_asked = self.k.is_some() || self.blocks.is_some();
        let minhash_asked =
            self.jaccard.is_some() || self.lsh_threshold.is_some() || self.num_perm.is_some();
        match stored {
            Settings::MinHash(_) if simhash_asked => {
                return Err(PyValueError::new_err(
                    "k and blocks apply to method='simhash': the index holds minhash sketches",
                ));
            }
            Settings::Simhash(_) if minhash_asked => {
                return Err(PyValueError::new_err(
                    "jaccard, lsh_threshold and num_perm apply to method='minhash': the index \
                     holds simhash sketches",
                ));
            }
            _ => {}
        }
        let mut settings = stored.clone();
        let (preset, window) = match &mut settings {
            Settings::MinHash(s) => {
                if let Some(j) = self.jaccard {
                    s.jaccard = j;
                }
                if self.num_perm.is_some() || self.lsh_threshold.is_some() {
                    let banding = simhash_index::Banding::for_threshold(
                        self.lsh_threshold.unwrap_or(s.lsh_threshold),
                        crate::sketch::num_perm(self.num_perm.unwrap_or(s.num_perm))?,
                    )
                    .map_err(crate::errors::value)?;
                    s.num_perm = self.num_perm.unwrap_or(s.num_perm);
                    s.lsh_threshold = self.lsh_threshold.unwrap_or(s.lsh_threshold);
                    (s.bands, s.rows) = (banding.bands, banding.rows);
                }
                (&mut s.preset, &mut s.window)
            }
            Settings::Simhash(s) => {
                if let Some(k) = self.k {
                    s.max_distance = k;
                }
                if let Some(b) = self.blocks {
                    s.blocks = b;
                }
                (&mut s.preset, &mut s.window)
            }
        };
        if self.preset.is_some() || self.window.is_some() {
            // A new preset without a window takes the preset's own window.
            let name = self.preset.clone().unwrap_or_else(|| preset.clone());
            let window_now = if self.preset.is_some() { None } else { Some(*window) };
            let f = crate::sketch::fingerprinter(&name, self.window.or(window_now))?;
            f.preset().name().clone_into(preset);
            *window = f.window();
        }
        Ok(settings)
    }
}

/// How an index's documents were made: the fingerprinter and (MinHash) the sketcher.
#[derive(Clone)]
struct Making {
    fingerprinter: Fingerprinter,
    sketcher: Option<Arc<Sketcher>>,
}

impl Making {
    fn of(settings: &Settings) -> PyResult<Making> {
        Ok(Making {
            fingerprinter: settings.fingerprinter().map_err(disk)?,
            sketcher: settings.sketcher().map_err(disk)?.map(Arc::new),
        })
    }
}

/// A document as the index stores it.
enum Doc {
    Sketch(Option<DocSketch>),
    Fingerprint(Option<simhash_core::Fingerprint>),
}

impl Making {
    /// The documents of a chunk, in parallel.
    fn docs(&self, texts: &Texts) -> Vec<Doc> {
        match &self.sketcher {
            Some(sketcher) => texts
                .par_iter()
                .map(|t| Doc::Sketch(sketcher.sketch(&self.fingerprinter, t).1))
                .collect(),
            None => texts
                .par_iter()
                .map(|t| Doc::Fingerprint(self.fingerprinter.fingerprint(t)))
                .collect(),
        }
    }
}

/// A committed state of an index on disk: queries, stats, verify; writers and compaction.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct NativeIndex {
    path: PathBuf,
    index: Arc<DiskIndex>,
    making: Making,
}

#[pymethods]
impl NativeIndex {
    /// Opens the index at `path` with the asked settings laid over its own (a `ValueError`
    /// names each that differs); a missing index is created with the asked settings when
    /// `create`, else `FileNotFoundError`.
    #[staticmethod]
    #[allow(clippy::needless_pass_by_value)] // extracted from Python
    fn open(py: Python<'_>, path: PathBuf, create: bool, asked: Asked) -> PyResult<NativeIndex> {
        let opened = detached(py, || DiskIndex::open(&path))?;
        let index = match opened {
            Ok(index) => {
                let wanted = asked.laid_over(index.settings())?;
                index.check_settings(&wanted).map_err(disk)?;
                index
            }
            Err(e) if e.kind() == DiskErrorKind::NotFound && create => {
                let settings = asked.new_settings()?;
                detached(py, || -> Result<DiskIndex, simhash_index::disk::DiskError> {
                    Writer::open(&path, &settings)?.commit()?;
                    DiskIndex::open_with(&path, &settings)
                })?
                .map_err(disk)?
            }
            Err(e) => return Err(disk(e)),
        };
        let making = Making::of(index.settings())?;
        Ok(NativeIndex { path, index: Arc::new(index), making })
    }

    fn __len__(&self) -> usize {
        self.index.len() as usize
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The settings the index was made with, as a dict.
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        settings_dict(py, self.index.settings())
    }

    /// Documents, segments, bytes on disk, generation, and the settings.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.index.stats();
        let dict = PyDict::new(py);
        dict.set_item("documents", stats.documents)?;
        dict.set_item("segments", stats.segments)?;
        dict.set_item("bytes", stats.bytes)?;
        dict.set_item("generation", stats.generation)?;
        dict.set_item("settings", settings_dict(py, &stats.settings)?)?;
        Ok(dict)
    }

    /// Reads the index again: what writers committed since it was opened.
    fn reload(&mut self, py: Python<'_>) -> PyResult<()> {
        let settings = self.index.settings().clone();
        let index = detached(py, || DiskIndex::open_with(&self.path, &settings))?.map_err(disk)?;
        self.index = Arc::new(index);
        Ok(())
    }

    /// The one writer (the index's lock; `IndexLockedError` if another holds it).
    #[pyo3(signature = (flush_bytes=None))]
    fn writer(&self, py: Python<'_>, flush_bytes: Option<usize>) -> PyResult<NativeWriter> {
        let settings = self.index.settings().clone();
        let mut builder = Writer::builder();
        if let Some(bytes) = flush_bytes {
            builder.flush_bytes(bytes);
        }
        let writer = detached(py, || builder.open(&self.path, &settings))?.map_err(disk)?;
        Ok(NativeWriter { writer: Some(writer), making: self.making.clone(), added: 0 })
    }

    /// The matches of a chunk of texts: `(position, indexed_id, score)` for each text and
    /// each indexed document it matches (exact Jaccard at least the index's threshold, or
    /// within its distance: the score is the Jaccard similarity or the bits apart), in
    /// position order, then index order; with `first`, only the earliest-added match.
    fn query(
        &self,
        py: Python<'_>,
        chunk: &Bound<'_, PyAny>,
        start: usize,
        first: bool,
    ) -> PyResult<Vec<(usize, String, f64)>> {
        let texts = Texts::from_py(chunk, start)?;
        let (index, making) = (Arc::clone(&self.index), self.making.clone());
        let found = run(
            py,
            move || -> Result<Vec<(usize, String, f64)>, simhash_index::disk::DiskError> {
                let docs = making.docs(&texts);
                let hits: Vec<Vec<(u64, f64)>> = docs
                    .par_iter()
                    .map(|doc| hits_of(&index, doc, first))
                    .collect::<Result<_, _>>()?;
                let mut found = Vec::new();
                for (i, hits) in hits.into_iter().enumerate() {
                    for (doc, score) in hits {
                        found.push((start + i, index.id(doc)?.to_owned(), score));
                    }
                }
                Ok(found)
            },
        )?;
        found.map_err(disk)
    }

    /// Reads and checks every byte of every file (`CorruptIndexError` names a damaged one).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let index = Arc::clone(&self.index);
        run(py, move || index.verify())?.map_err(disk)
    }

    /// A dedup against this index's committed state.
    fn deduper(&self) -> NativeDedup {
        NativeDedup {
            index: Arc::clone(&self.index),
            making: self.making.clone(),
            docs: Vec::new(),
            matched: Vec::new(),
            lens: Vec::new(),
        }
    }

    /// Merges every segment into one (takes the lock), then reads the index again.
    fn compact<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let settings = self.index.settings().clone();
        let path = self.path.clone();
        let commit = detached(py, || Writer::open(&path, &settings).and_then(Writer::compact))?
            .map_err(disk)?;
        self.reload(py)?;
        let dict = PyDict::new(py);
        dict.set_item("documents", commit.documents)?;
        dict.set_item("generation", commit.generation)?;
        dict.set_item("segments", self.index.stats().segments)?;
        Ok(dict)
    }
}

/// A document's matches in the index.
fn hits_of(
    index: &DiskIndex,
    doc: &Doc,
    first: bool,
) -> Result<Vec<(u64, f64)>, simhash_index::disk::DiskError> {
    Ok(match doc {
        Doc::Sketch(None) | Doc::Fingerprint(None) => Vec::new(),
        Doc::Sketch(Some(s)) if first => {
            index.first_sketch(s)?.map(|h| (h.id, h.jaccard)).into_iter().collect()
        }
        Doc::Sketch(Some(s)) => {
            index.query_sketch(s)?.into_iter().map(|h| (h.id, h.jaccard)).collect()
        }
        Doc::Fingerprint(Some(fp)) if first => index
            .first_fingerprint(*fp)?
            .map(|h| (h.id, f64::from(h.distance)))
            .into_iter()
            .collect(),
        Doc::Fingerprint(Some(fp)) => index
            .query_fingerprint(*fp)?
            .into_iter()
            .map(|h| (h.id, f64::from(h.distance)))
            .collect(),
    })
}

fn settings_dict<'py>(py: Python<'py>, settings: &Settings) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("method", settings.method())?;
    match settings {
        Settings::MinHash(s) => {
            dict.set_item("preset", &s.preset)?;
            dict.set_item("window", s.window)?;
            dict.set_item("jaccard", s.jaccard)?;
            dict.set_item("lsh_threshold", s.lsh_threshold)?;
            dict.set_item("num_perm", s.num_perm)?;
            dict.set_item("bands", s.bands)?;
            dict.set_item("rows", s.rows)?;
            dict.set_item("seed", s.seed)?;
            dict.set_item("band_key_bits", s.band_key_bits)?;
        }
        Settings::Simhash(s) => {
            dict.set_item("preset", &s.preset)?;
            dict.set_item("window", s.window)?;
            dict.set_item("k", s.max_distance)?;
            dict.set_item("blocks", s.blocks)?;
        }
    }
    Ok(dict)
}

/// The index's one writer: adds in order, then commits (or rolls back).
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct NativeWriter {
    writer: Option<Writer>,
    making: Making,
    added: u64,
}

impl NativeWriter {
    fn writer(&mut self) -> PyResult<&mut Writer> {
        self.writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this writer has committed or rolled back"))
    }
}

#[pymethods]
impl NativeWriter {
    /// Adds a chunk of texts under `ids` (one per text), sketched in parallel.
    #[allow(clippy::needless_pass_by_value)] // extracted from Python
    fn add(
        &mut self,
        py: Python<'_>,
        chunk: &Bound<'_, PyAny>,
        ids: Vec<String>,
        start: usize,
    ) -> PyResult<()> {
        let texts = Texts::from_py(chunk, start)?;
        if ids.len() != texts.len() {
            return Err(PyValueError::new_err(format!(
                "{} ids for {} texts",
                ids.len(),
                texts.len()
            )));
        }
        let making = self.making.clone();
        let docs = detached(py, || making.docs(&texts))?;
        let writer = self.writer()?;
        let added = detached(py, || -> Result<u64, simhash_index::disk::DiskError> {
            for (id, doc) in ids.iter().zip(&docs) {
                match doc {
                    Doc::Sketch(s) => writer.add_sketch(id, s.as_ref())?,
                    Doc::Fingerprint(fp) => writer.add_fingerprint(id, *fp)?,
                }
            }
            Ok(ids.len() as u64)
        })?
        .map_err(disk)?;
        self.added += added;
        Ok(())
    }

    /// Commits what was added: `(added, documents, generation, refused)`, each refused add
    /// as `(position among this writer's adds, id, the document that holds the id)`.
    #[allow(clippy::type_complexity)]
    fn commit(&mut self, py: Python<'_>) -> PyResult<(u64, u64, u64, Vec<(u64, String, u64)>)> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this writer has committed or rolled back"))?;
        let commit = detached(py, || writer.commit())?.map_err(disk)?;
        let refused = commit.refused.into_iter().map(|r| (r.position, r.id, r.doc)).collect();
        Ok((commit.added, commit.documents, commit.generation, refused))
    }

    /// Drops what was added and releases the lock.
    fn rollback(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(writer) = self.writer.take() {
            detached(py, move || drop(writer))?;
        }
        Ok(())
    }
}

/// `Index.dedup`: texts added in chunks, each searched in the index as it comes (its first,
/// earliest-added match), then the dedup walk over the texts that matched nothing, as
/// `simhash dedup --against` runs it.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct NativeDedup {
    index: Arc<DiskIndex>,
    making: Making,
    docs: Vec<Doc>,
    /// Each text's first match in the index: its id and the score.
    matched: Vec<Option<(String, f64)>>,
    lens: Vec<u64>,
}

/// Per text, the kept text it duplicates (-1 when kept or removed against the index), the
/// similarity, and the indexed id it duplicates.
type Decided<'py> =
    (Bound<'py, numpy::PyArray1<i64>>, Bound<'py, numpy::PyArray1<f32>>, Vec<Option<String>>);

#[pymethods]
impl NativeDedup {
    fn __len__(&self) -> usize {
        self.docs.len()
    }

    /// Adds a chunk of texts: sketched and searched in the index in parallel.
    fn add(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>, start: usize) -> PyResult<()> {
        let texts = Texts::from_py(chunk, start)?;
        let (index, making) = (Arc::clone(&self.index), self.making.clone());
        let (docs, matched) = run(py, move || {
            let docs = making.docs(&texts);
            let matched: Result<Vec<Option<(String, f64)>>, simhash_index::disk::DiskError> = docs
                .par_iter()
                .map(|doc| match hits_of(&index, doc, true)?.first() {
                    Some(&(indexed, score)) => Ok(Some((index.id(indexed)?.to_owned(), score))),
                    None => Ok(None),
                })
                .collect();
            let lens: Vec<u64> = (0..texts.len()).map(|i| texts.get(i).len() as u64).collect();
            (docs, matched.map(|m| (m, lens)))
        })?;
        let (matched, lens) = matched.map_err(disk)?;
        self.docs.extend(docs);
        self.matched.extend(matched);
        self.lens.extend(lens);
        Ok(())
    }

    /// The decisions, for a keep policy's ranks (`rank[d]`: 0 first; `None`: input
    /// order, or `longest`).
    #[pyo3(signature = (keep="first", rank=None))]
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
        keep: &str,
        rank: Option<Vec<u32>>,
    ) -> PyResult<Decided<'py>> {
        let rank = crate::matcher::rank_of(&self.lens, keep, rank)?;
        let hidden: Vec<bool> = self.matched.iter().map(Option::is_some).collect();
        let docs = std::mem::take(&mut self.docs);
        let settings = self.index.settings().clone();
        let (docs, walked) = run(py, move || {
            let walked = walk_unmatched(&settings, &docs, &hidden, &rank);
            (docs, walked)
        })?;
        self.docs = docs;
        let (mut of, mut similarity) = walked?;
        let mut indexed = vec![None; self.matched.len()];
        for (d, m) in self.matched.iter().enumerate() {
            if let Some((id, score)) = m {
                of[d] = -1;
                similarity[d] = *score as f32;
                indexed[d] = Some(id.clone());
            }
        }
        Ok((
            numpy::IntoPyArray::into_pyarray(of, py),
            numpy::IntoPyArray::into_pyarray(similarity, py),
            indexed,
        ))
    }

    /// Adds texts `docs` (positions) under `ids` to `writer`, as they were sketched here.
    #[allow(clippy::needless_pass_by_value)] // extracted from Python
    fn add_to(
        &self,
        mut writer: PyRefMut<'_, NativeWriter>,
        docs: Vec<usize>,
        ids: Vec<String>,
    ) -> PyResult<()> {
        if docs.len() != ids.len() || docs.iter().any(|&d| d >= self.docs.len()) {
            return Err(PyValueError::new_err("internal error: documents and ids differ"));
        }
        let writer = writer.writer()?;
        for (&d, id) in docs.iter().zip(&ids) {
            match &self.docs[d] {
                Doc::Sketch(s) => writer.add_sketch(id, s.as_ref()),
                Doc::Fingerprint(fp) => writer.add_fingerprint(id, *fp),
            }
            .map_err(disk)?;
        }
        Ok(())
    }
}

/// The dedup walk over the documents not `hidden` (those that matched the index), with
/// the index's method and threshold: each document's kept document (-1: itself) and
/// similarity (NaN when kept).
fn walk_unmatched(
    settings: &Settings,
    docs: &[Doc],
    hidden: &[bool],
    rank: &[u32],
) -> PyResult<(Vec<i64>, Vec<f32>)> {
    let pairs: Vec<(i64, f32)> = match settings {
        Settings::MinHash(s) => {
            let mut store = simhash_index::lsh::MemoryStore::new(s.bands);
            for doc in docs {
                let Doc::Sketch(sketch) = doc else {
                    return Err(PyRuntimeError::new_err(
                        "internal error: a fingerprint in a MinHash dedup",
                    ));
                };
                simhash_index::lsh::SketchStore::push(&mut store, sketch.as_ref())
                    .map_err(crate::errors::engine)?;
            }
            simhash_index::lsh::SketchStore::finish(&mut store).map_err(crate::errors::engine)?;
            let masked = simhash_index::lsh::Masked { inner: &store, hidden };
            let (walk, _) = simhash_index::lsh::walk(&masked, s.jaccard, rank)
                .map_err(crate::errors::engine)?;
            walk.center
                .iter()
                .zip(&walk.jaccard)
                .enumerate()
                .map(
                    |(d, (&c, &j))| {
                        if c as usize == d { (-1, f32::NAN) } else { (i64::from(c), j as f32) }
                    },
                )
                .collect()
        }
        Settings::Simhash(s) => {
            let fps: Vec<Option<simhash_core::Fingerprint>> = docs
                .iter()
                .zip(hidden)
                .map(|(doc, &h)| match doc {
                    Doc::Fingerprint(fp) if !h => *fp,
                    _ => None,
                })
                .collect();
            let walk = simhash_index::DedupWalk::new(&fps, rank);
            let tables = simhash_index::Tables::new(s.blocks, s.max_distance)
                .map_err(crate::errors::value)?;
            let center = walk.run(&tables, |_, _| {}).center;
            crate::matcher::simhash_decisions(&center, &fps)
        }
    };
    Ok(pairs.into_iter().unzip())
}
