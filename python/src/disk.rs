//! The persistent index on disk (`simhash_index::disk`), the one `simhash index` and
//! `simhash dedup --against` use: [`NativeIndex`] reads and queries, [`NativeWriter`] adds
//! and commits.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use simhash_core::Fingerprinter;
use simhash_index::Blocks;
use simhash_index::disk::{
    DiskError, DiskErrorKind, DiskIndex, MinHashSettings, Settings, SimhashSettings, Writer,
};
use simhash_index::lsh::{DocSketch, Sketcher};

use crate::errors::{CorruptIndexError, disk};
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
        // The matching settings by the one contract; the preset and window here.
        let asked = crate::settings::asked(
            self.method.as_deref().unwrap_or("auto"),
            None,
            self.jaccard,
            self.lsh_threshold,
            self.num_perm,
            self.k,
            self.blocks,
        )?;
        let mut settings = asked.lay_over(stored).map_err(|e| crate::settings::error(&e))?;
        let (preset, window) = match &mut settings {
            Settings::MinHash(s) => (&mut s.preset, &mut s.window),
            Settings::Simhash(s) => (&mut s.preset, &mut s.window),
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
        Ok(NativeWriter {
            writer: Some(writer),
            making: this.making.clone(),
            index: slf.clone().unbind(),
            outcome: Outcome::Open,
            positions: Vec::new(),
            already: 0,
        })
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

    /// A dedup against this index's committed state.
    fn deduper(&self) -> NativeDedup {
        NativeDedup {
            index: self.current(),
            making: self.making.clone(),
            docs: Vec::new(),
            matched: Vec::new(),
            own: Vec::new(),
            lens: Vec::new(),
            rank: None,
        }
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

/// What a writer's commit did: `(added, documents, generation, refused)`, each refused add
/// as `(position among this writer's adds, id, the document that holds the id)`.
type Committed = (u64, u64, u64, Vec<(u64, String, u64)>);

/// The index's one writer: adds in order, then commits (or rolls back), or compacts.
///
/// The commit point is the manifest's rename inside the library's commit. A pending
/// interrupt is raised just before a commit starts (nothing committed); once it starts it is
/// finished, with the GIL released, and an interrupt that comes meanwhile is raised after
/// it returns: `committed` (set before the call returns, so the Python side can tell which
/// exceptions came after the commit point) says whether the change is on disk.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct NativeWriter {
    writer: Option<Writer>,
    making: Making,
    /// The index whose state the commit replaces.
    index: Py<NativeIndex>,
    /// Whether the manifest names this writer's change.
    outcome: Outcome,
    /// The positions of the texts [`add`](NativeWriter::add) added, in the order added (a
    /// refused add's position, among the commit's adds, is an index into these).
    positions: Vec<usize>,
    /// Texts [`add`](NativeWriter::add) did not add: the index already holds them (the
    /// same id and content, as [`held_copy`] tells: a rerun's).
    already: u64,
}

/// Whether a writer's change is on disk.
enum Outcome {
    /// Not committed (yet).
    Open,
    /// Committed: what the commit did.
    Committed(Committed),
    /// Committed, but the commit then failed (syncing the directory after the manifest's
    /// rename), so what it did is not known here.
    CommittedWithError,
}

impl NativeWriter {
    fn writer(&mut self) -> PyResult<&mut Writer> {
        self.writer
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this writer has committed or rolled back"))
    }

    /// Commits (`compact`: and merges every segment), then makes the index see the new
    /// state. Errors after the manifest named the change leave `committed` set.
    fn finish(&mut self, py: Python<'_>, compact: bool) -> PyResult<Committed> {
        // The last moment an interrupt stops the change: from here it is finished.
        py.check_signals()?;
        let writer = self
            .writer
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this writer has committed or rolled back"))?;
        let before = writer.index().map_or(0, DiskIndex::generation);
        let settings = writer.settings().clone();
        let path = self.index.get().path.clone();
        let (done, reopened) = detached(py, move || {
            let done = if compact { writer.compact() } else { writer.commit() };
            // After a commit, or an error that may have come after the manifest's rename
            // (syncing the directory): the index as it is now.
            let reopened = DiskIndex::open_with(&path, &settings);
            (done, reopened)
        })?;
        let done = match done {
            Ok(commit) => {
                let refused =
                    commit.refused.into_iter().map(|r| (r.position, r.id, r.doc)).collect();
                let done = (commit.added, commit.documents, commit.generation, refused);
                self.outcome = Outcome::Committed(done.clone());
                done
            }
            Err(e) => {
                if reopened.as_ref().is_ok_and(|i| i.generation() > before) {
                    // The manifest names a newer generation than the writer found, and the
                    // writer held the lock: it is this writer's.
                    self.outcome = Outcome::CommittedWithError;
                    if let Ok(index) = reopened {
                        self.index.get().replace(index);
                    }
                }
                return Err(disk(e));
            }
        };
        self.index.get().replace(reopened.map_err(disk)?);
        Ok(done)
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
        let (positions, already) = detached(py, || -> Result<(Vec<usize>, u64), DiskError> {
            let (mut positions, mut already) = (Vec::with_capacity(docs.len()), 0);
            for (i, (id, doc)) in ids.iter().zip(&docs).enumerate() {
                // Other content under a held id is refused by the commit.
                if add_unless_held(writer, id, doc)? {
                    positions.push(start + i);
                } else {
                    already += 1;
                }
            }
            Ok((positions, already))
        })?
        .map_err(disk)?;
        self.positions.extend(positions);
        self.already += already;
        Ok(())
    }

    /// The positions of the texts `add` added, in the order added.
    #[getter]
    fn positions(&self) -> Vec<usize> {
        self.positions.clone()
    }

    /// Texts `add` did not add: the index already held them (the same id and content).
    #[getter]
    fn already(&self) -> u64 {
        self.already
    }

    /// Commits what was added (a pending interrupt is raised first, committing nothing),
    /// and makes the index see the new state: `(added, documents, generation, refused)`.
    fn commit(&mut self, py: Python<'_>) -> PyResult<Committed> {
        self.finish(py, false)
    }

    /// Commits what was added and merges every segment into one, as `commit` does:
    /// `(added, documents, generation, refused)`.
    fn compact(&mut self, py: Python<'_>) -> PyResult<Committed> {
        self.finish(py, true)
    }

    /// Whether the manifest names this writer's change (also after an exception).
    #[getter]
    fn committed(&self) -> bool {
        !matches!(self.outcome, Outcome::Open)
    }

    /// What the commit did, once committed (`None` before, or when the commit's error came
    /// after the manifest named the change).
    #[getter]
    fn result(&self) -> Option<Committed> {
        match &self.outcome {
            Outcome::Committed(done) => Some(done.clone()),
            Outcome::Open | Outcome::CommittedWithError => None,
        }
    }

    /// Drops what was added and releases the lock (nothing after a commit).
    fn rollback(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(writer) = self.writer.take() {
            detached(py, move || drop(writer))?;
        }
        Ok(())
    }
}

/// `Index.dedup`: texts added in chunks, each searched in the index as it comes (its first,
/// earliest-added match, its own indexed copy excepted), then the dedup walk over the texts
/// that matched nothing, as `simhash dedup --against` runs it.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct NativeDedup {
    index: Arc<DiskIndex>,
    making: Making,
    docs: Vec<Doc>,
    /// Each text's first match in the index, its own copy excepted.
    matched: Vec<Option<Matched>>,
    /// Each text's own indexed copy ([`held_copy`]): a rerun's texts are not duplicates of
    /// themselves.
    own: Vec<Option<u64>>,
    lens: Vec<u64>,
    /// The keep policy's ranks, once [`finish`](NativeDedup::finish) has run: the order in
    /// which kept texts are added.
    rank: Option<Vec<u32>>,
}

/// A text's first match in the index: the indexed document, its id, and the score.
struct Matched {
    doc: u64,
    id: String,
    score: f64,
}

/// The indexed document that is this very text, if any: the index holds `id` with the same
/// content (the same shingle set, or the same fingerprint; featureless both counts), as
/// `simhash dedup --against` tells a rerun's records from their duplicates.
fn held_copy(index: &DiskIndex, id: &str, doc: &Doc) -> Result<Option<u64>, DiskError> {
    // Most ids are not indexed: no payload is made for them.
    if index.find_id(id)?.is_none() {
        return Ok(None);
    }
    let payload = match doc {
        Doc::Sketch(s) => s.as_ref().map(|s| s.set().to_vec()).unwrap_or_default(),
        Doc::Fingerprint(fp) => fp.map(|fp| vec![fp.get()]).unwrap_or_default(),
    };
    index.find_copy(id, &payload)
}

/// Adds `doc` under `id` to `writer`, unless the writer's index already holds it (the same
/// id and content, [`held_copy`]: a rerun's), as `simhash index add` passes over it; true
/// when added.
fn add_unless_held(writer: &mut Writer, id: &str, doc: &Doc) -> Result<bool, DiskError> {
    if let Some(index) = writer.index()
        && held_copy(index, id, doc)?.is_some()
    {
        return Ok(false);
    }
    match doc {
        Doc::Sketch(s) => writer.add_sketch(id, s.as_ref())?,
        Doc::Fingerprint(fp) => writer.add_fingerprint(id, *fp)?,
    }
    Ok(true)
}

/// A document's earliest-added match in the index, passing over document `except` (its own
/// copy).
fn first_hit_except(
    index: &DiskIndex,
    doc: &Doc,
    except: Option<u64>,
) -> Result<Option<(u64, f64)>, DiskError> {
    Ok(match doc {
        Doc::Sketch(None) | Doc::Fingerprint(None) => None,
        Doc::Sketch(Some(s)) => index.first_sketch_except(s, except)?.map(|h| (h.id, h.jaccard)),
        Doc::Fingerprint(Some(fp)) => {
            index.first_fingerprint_except(*fp, except)?.map(|h| (h.id, f64::from(h.distance)))
        }
    })
}

/// Per text, the kept text it duplicates (-1 when kept or removed against the index), the
/// similarity, and the indexed id it duplicates.
type Decided<'py> =
    (Bound<'py, numpy::PyArray1<i64>>, Bound<'py, numpy::PyArray1<f32>>, Vec<Option<String>>);

/// What a chunk's search found: each text's first match and its own copy.
type Searched = (Vec<Option<Matched>>, Vec<Option<u64>>);

#[pymethods]
impl NativeDedup {
    fn __len__(&self) -> usize {
        self.docs.len()
    }

    /// Adds a chunk of texts, under `ids` (one per text; `None`: texts without ids, none of
    /// which is its own indexed copy): sketched and searched in the index in parallel.
    #[pyo3(signature = (chunk, start, ids=None))]
    fn add(
        &mut self,
        py: Python<'_>,
        chunk: &Bound<'_, PyAny>,
        start: usize,
        ids: Option<Vec<String>>,
    ) -> PyResult<()> {
        let texts = Texts::from_py(chunk, start)?;
        if let Some(ids) = ids.as_ref().filter(|ids| ids.len() != texts.len()) {
            return Err(PyValueError::new_err(format!(
                "{} ids for {} texts",
                ids.len(),
                texts.len()
            )));
        }
        let (index, making) = (Arc::clone(&self.index), self.making.clone());
        let (docs, searched, lens) = run(py, move || {
            let docs = making.docs(&texts);
            let searched: Result<Searched, DiskError> = docs
                .par_iter()
                .enumerate()
                .map(|(i, doc)| {
                    let own = match &ids {
                        Some(ids) => held_copy(&index, &ids[i], doc)?,
                        None => None,
                    };
                    let matched = match first_hit_except(&index, doc, own)? {
                        Some((indexed, score)) => {
                            Some(Matched { doc: indexed, id: index.id(indexed)?.to_owned(), score })
                        }
                        None => None,
                    };
                    Ok((matched, own))
                })
                .collect();
            let lens: Vec<u64> = (0..texts.len()).map(|i| texts.get(i).len() as u64).collect();
            (docs, searched, lens)
        })?;
        let (matched, own) = searched.map_err(disk)?;
        self.docs.extend(docs);
        self.matched.extend(matched);
        self.own.extend(own);
        self.lens.extend(lens);
        Ok(())
    }

    /// The decisions, for a keep policy's ranks (`rank[d]`: 0 first; `None`: input
    /// order, or `longest`). A text whose first match in the index is the own copy of a
    /// text kept here (a rerun's) names that text, as the CLI names it with the id as the
    /// run read it: a rerun decides what the first run decided.
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
        let walk_rank = rank.clone();
        let (docs, walked) = run(py, move || {
            let walked = walk_unmatched(&settings, &docs, &hidden, &walk_rank);
            (docs, walked)
        })?;
        self.docs = docs;
        self.rank = Some(rank);
        let (mut of, mut similarity) = walked?;
        // The indexed documents that are texts kept here: the first such text of each.
        let mut kept_copies = std::collections::HashMap::new();
        for (d, own) in self.own.iter().enumerate() {
            if let Some(held) = own
                && of[d] < 0
                && self.matched[d].is_none()
            {
                kept_copies.entry(*held).or_insert(d);
            }
        }
        let mut indexed = vec![None; self.matched.len()];
        for (d, m) in self.matched.iter().enumerate() {
            if let Some(m) = m {
                similarity[d] = m.score as f32;
                if let Some(&kept) = kept_copies.get(&m.doc) {
                    of[d] = kept as i64;
                } else {
                    of[d] = -1;
                    indexed[d] = Some(m.id.clone());
                }
            }
        }
        Ok((
            numpy::IntoPyArray::into_pyarray(of, py),
            numpy::IntoPyArray::into_pyarray(similarity, py),
            indexed,
        ))
    }

    /// Adds the kept texts `docs` (positions) under `ids` to `writer`, as they were
    /// sketched here, in the keep policy's order (as the walk kept them, so that a later
    /// text matching several names the first kept). A text that the writer's index already
    /// holds ([`held_copy`]: the same id and content) is not added again. Returns the
    /// texts added, in the order added (a refused add's position is among these), and how
    /// many were already held.
    #[allow(clippy::needless_pass_by_value)] // extracted from Python
    fn add_to(
        &self,
        py: Python<'_>,
        mut writer: PyRefMut<'_, NativeWriter>,
        docs: Vec<usize>,
        ids: Vec<String>,
    ) -> PyResult<(Vec<usize>, u64)> {
        if docs.len() != ids.len() || docs.iter().any(|&d| d >= self.docs.len()) {
            return Err(PyValueError::new_err("internal error: documents and ids differ"));
        }
        let rank = self
            .rank
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("internal error: add_to before finish"))?;
        let mut order: Vec<(usize, String)> = docs.into_iter().zip(ids).collect();
        order.sort_by_key(|&(d, _)| rank[d]);
        let writer = writer.writer()?;
        let added = detached(py, || -> Result<(Vec<usize>, u64), DiskError> {
            let (mut added, mut already) = (Vec::with_capacity(order.len()), 0u64);
            for (d, id) in &order {
                // An id the index holds with other content is refused by the commit (and
                // listed): the text stays kept, as the CLI keeps it in its output.
                if add_unless_held(writer, id, &self.docs[*d])? {
                    added.push(*d);
                } else {
                    already += 1;
                }
            }
            Ok((added, already))
        })?;
        added.map_err(disk)
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
