//! The persistent index on disk (`simhash_index::disk`), the one `simhash index` and
//! `simhash dedup --against` use: [`NativeIndex`] (here) reads and queries,
//! [`NativeWriter`] ([`writer`]) adds and commits, [`NativeDedup`] ([`dedup`]) deduplicates
//! texts against the index and among themselves.

mod dedup;
mod writer;

pub(crate) use dedup::NativeDedup;
pub(crate) use writer::NativeWriter;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyFileNotFoundError, PyOSError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use simhash_core::Fingerprinter;
use simhash_index::disk::{DiskError, DiskErrorKind, DiskIndex, PLAN_DOCUMENTS, Settings, Writer};
use simhash_index::lsh::Sketcher;
use simhash_index::settings;
/// A document as the index stores it: the application layer's, which searches and adds it
/// as `simhash dedup --against` and `simhash index add` do.
use simhash_jobs::against::Stored as Doc;

use simhash_jobs::JobError;
use simhash_jobs::against::held_copy;

use crate::errors::{CorruptIndexError, disk};
use crate::interrupt::{detached, run};
use crate::texts::Texts;

/// Settings asked for by the caller, each `None` when not given: for an existing index, its
/// own are kept; for a new one, the settings contract fills in the rest.
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
    /// The matching settings asked, for the contract: with `preset` (a new index: a preset
    /// can make `auto` simhash), or without (laid over an index's: the preset is laid over
    /// here, by name).
    fn contract(&self, preset: Option<&str>) -> PyResult<settings::Asked> {
        crate::settings::asked(
            self.method.as_deref(),
            preset,
            self.jaccard,
            self.lsh_threshold,
            self.num_perm,
            self.k,
            self.blocks,
            None,
        )
    }

    /// The settings of a new index: the asked ones resolved by the contract (its defaults
    /// for what is not asked), as `simhash index add` makes a new index.
    fn new_settings(&self) -> PyResult<Settings> {
        let matching = crate::settings::resolve(&self.contract(self.preset.as_deref())?)?;
        let preset = self.preset.as_deref().unwrap_or("default");
        let fingerprinter = crate::sketch::fingerprinter(preset, self.window)?;
        // Blocks that make no tables for the documents a new index plans for are named as
        // the contract names them.
        matching
            .to_stored(&fingerprinter, PLAN_DOCUMENTS as usize)
            .map_err(|e| crate::settings::error(&e))?
            .map_err(disk)
    }

    /// The index's settings with the asked ones laid over them (opening then names each
    /// that differs).
    fn laid_over(&self, stored: &Settings) -> PyResult<Settings> {
        // The matching settings by the one contract; the preset and window here.
        let mut settings =
            self.contract(None)?.lay_over(stored).map_err(|e| crate::settings::error(&e))?;
        let (preset, window) = settings.preset_window_mut();
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

/// An index on disk: its committed state as of the last open, reload or commit through it
/// (a snapshot each call takes at its start, so queries run concurrently with each other and
/// with a writer: they see the previous commit until the writer's commit swaps the snapshot);
/// writers and compaction.
///
/// Frozen: no method takes a borrow that another thread's call could find taken (the
/// snapshot is behind a mutex held only to copy or swap it, never while the GIL is released).
#[pyclass(module = "simhash_rs._native", frozen)]
pub(crate) struct NativeIndex {
    path: PathBuf,
    current: Mutex<Arc<DiskIndex>>,
    making: Making,
}

impl NativeIndex {
    /// The committed state calls see now.
    fn current(&self) -> Arc<DiskIndex> {
        Arc::clone(&self.current.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Makes `index` the state calls see, unless the one they see is newer (two reloads
    /// that finish out of order never go back to an older commit).
    fn replace(&self, index: DiskIndex) {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if index.generation() >= current.generation() {
            *current = Arc::new(index);
        }
    }
}

/// The files a writer makes before an index's first commit, which hold no documents: a
/// directory with only these (or nothing) is where a new index may be made.
const BEFORE_FIRST_COMMIT: [&str; 2] = ["LOCK", "MANIFEST.tmp"];

/// What is at `path`, where no manifest is: nothing (missing, or an empty directory, or
/// one with only what a first commit that never finished leaves), or the names of other
/// files (a directory that holds something else, or an index whose manifest was lost).
fn without_manifest(path: &Path) -> PyResult<Vec<String>> {
    let cannot = |e: std::io::Error| {
        PyOSError::new_err(format!("{}: cannot list the index directory: {e}", path.display()))
    };
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(cannot(e)),
    };
    let mut others = Vec::new();
    for entry in entries {
        let entry = entry.map_err(cannot)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !BEFORE_FIRST_COMMIT.contains(&name.as_str()) {
            others.push(name);
        }
    }
    others.sort();
    Ok(others)
}

#[pymethods]
impl NativeIndex {
    /// Opens the index at `path` with the asked settings laid over its own (a `ValueError`
    /// names each that differs). Where there is no index (no directory, an empty one):
    /// created with the asked settings when `create`, else `FileNotFoundError`. A directory
    /// that holds other files but no manifest is a `CorruptIndexError` either way, and is
    /// left as it is.
    #[staticmethod]
    #[allow(clippy::needless_pass_by_value)] // extracted from Python
    fn open(py: Python<'_>, path: PathBuf, create: bool, asked: Asked) -> PyResult<NativeIndex> {
        // Names the contract cannot read (a method, a preset) are refused before the disk
        // is read.
        asked.contract(asked.preset.as_deref())?;
        let opened = detached(py, || DiskIndex::open(&path))?;
        let index = match opened {
            Ok(index) => {
                let wanted = asked.laid_over(index.settings())?;
                index.check_settings(&wanted).map_err(disk)?;
                index
            }
            Err(e) if e.kind() == DiskErrorKind::NotFound => {
                let others = detached(py, || without_manifest(&path))??;
                if !others.is_empty() {
                    let shown: Vec<&str> = others.iter().take(3).map(String::as_str).collect();
                    return Err(CorruptIndexError::new_err(format!(
                        "{}: no MANIFEST, but the directory holds {} file(s) ({}{}): not an \
                         index, or an index whose manifest was lost; nothing was changed",
                        path.display(),
                        others.len(),
                        shown.join(", "),
                        if others.len() > shown.len() { ", ..." } else { "" },
                    )));
                }
                if !create {
                    return Err(PyFileNotFoundError::new_err(format!(
                        "{}: no index here (create=True makes a new one)",
                        path.display()
                    )));
                }
                let settings = asked.new_settings()?;
                detached(py, || -> Result<DiskIndex, DiskError> {
                    Writer::open(&path, &settings)?.commit()?;
                    DiskIndex::open_with(&path, &settings)
                })?
                .map_err(disk)?
            }
            Err(e) => return Err(disk(e)),
        };
        let making = Making::of(index.settings())?;
        Ok(NativeIndex { path, current: Mutex::new(Arc::new(index)), making })
    }

    fn __len__(&self) -> usize {
        self.current().len() as usize
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The settings the index was made with, as a dict.
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        settings_dict(py, self.current().settings())
    }

    /// Documents, segments, bytes on disk, generation, and the settings.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.current().stats();
        let dict = PyDict::new(py);
        dict.set_item("documents", stats.documents)?;
        dict.set_item("segments", stats.segments)?;
        dict.set_item("bytes", stats.bytes)?;
        dict.set_item("generation", stats.generation)?;
        dict.set_item("settings", settings_dict(py, &stats.settings)?)?;
        Ok(dict)
    }

    /// Reads the index again: what writers committed since it was opened.
    fn reload(&self, py: Python<'_>) -> PyResult<()> {
        let settings = self.current().settings().clone();
        let index = detached(py, || DiskIndex::open_with(&self.path, &settings))?.map_err(disk)?;
        self.replace(index);
        Ok(())
    }

    /// The one writer (the index's lock; `IndexLockedError` if another holds it). Its
    /// commit makes this index see the new state.
    #[pyo3(signature = (flush_bytes=None))]
    fn writer(
        slf: &Bound<'_, NativeIndex>,
        py: Python<'_>,
        flush_bytes: Option<usize>,
    ) -> PyResult<NativeWriter> {
        let this = slf.get();
        let settings = this.current().settings().clone();
        let mut builder = Writer::builder();
        if let Some(bytes) = flush_bytes {
            builder.flush_bytes(bytes);
        }
        let writer = detached(py, || builder.open(&this.path, &settings))?.map_err(disk)?;
        Ok(NativeWriter::new(writer, this.making.clone(), slf.clone().unbind()))
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
        let (index, making) = (self.current(), self.making.clone());
        let found = run(py, move || -> Result<Vec<(usize, String, f64)>, DiskError> {
            let docs = making.docs(&texts);
            let hits: Vec<Vec<(u64, f64)>> =
                docs.par_iter().map(|doc| hits_of(&index, doc, first)).collect::<Result<_, _>>()?;
            let mut found = Vec::new();
            for (i, hits) in hits.into_iter().enumerate() {
                for (doc, score) in hits {
                    found.push((start + i, index.id(doc)?.to_owned(), score));
                }
            }
            Ok(found)
        })?;
        found.map_err(disk)
    }

    /// Reads and checks every byte of every file (`CorruptIndexError` names a damaged one).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let index = self.current();
        run(py, move || index.verify())?.map_err(disk)
    }

    /// A dedup against this index's committed state, removing (MinHash) for the relations
    /// `templates` (`"remove"` or `"keep"`) acts on.
    /// `None` when not given (the contract's default); given with a simhash index, refused
    /// as the contract refuses `--templates` with `dedup --against` such an index.
    #[pyo3(signature = (templates=None))]
    fn deduper(&self, templates: Option<&str>) -> PyResult<NativeDedup> {
        let index = self.current();
        let asked = crate::settings::asked(None, None, None, None, None, None, None, templates)?;
        asked.lay_over(index.settings()).map_err(|e| crate::settings::error(&e))?;
        Ok(NativeDedup::new(index, self.making.clone(), asked.templates.unwrap_or_default()))
    }
}

/// A document's matches in the index.
fn hits_of(index: &DiskIndex, doc: &Doc, first: bool) -> Result<Vec<(u64, f64)>, DiskError> {
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

/// Adds `doc` under `id` to `writer`, unless the writer's index already holds it (the same
/// id and content, [`held_copy`]: a rerun's), as `simhash index add` passes over it; true
/// when added.
fn add_unless_held(writer: &mut Writer, id: &str, doc: &Doc) -> Result<bool, JobError> {
    if let Some(index) = writer.index()
        && held_copy(index, id, doc)?.is_some()
    {
        return Ok(false);
    }
    doc.add_to(writer, id)?;
    Ok(true)
}
