//! [`NativeWriter`]: the index's one writer, which adds texts in order and commits them
//! (or rolls back), or compacts the index.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use simhash_index::disk::{DiskIndex, Writer};

use simhash_jobs::JobError;

use super::{Making, NativeIndex, add_unless_held};
use crate::errors::disk;
use crate::interrupt::detached;
use crate::texts::Texts;

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
    /// same id and content, as [`held_copy`](super::held_copy) tells: a rerun's).
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
    /// A writer of `index` through the library's `writer`, its documents made as `making`.
    pub(super) fn new(writer: Writer, making: Making, index: Py<NativeIndex>) -> NativeWriter {
        NativeWriter {
            writer: Some(writer),
            making,
            index,
            outcome: Outcome::Open,
            positions: Vec::new(),
            already: 0,
        }
    }

    /// The library's writer, until this writer commits or rolls back.
    pub(super) fn writer(&mut self) -> PyResult<&mut Writer> {
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
        let (positions, already) = detached(py, || -> Result<(Vec<usize>, u64), JobError> {
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
        .map_err(crate::errors::job)?;
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
