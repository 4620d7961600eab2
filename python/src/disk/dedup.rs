//! [`NativeDedup`] (`Index.dedup`): texts searched in the index as they come, then
//! deduplicated among themselves, as `simhash dedup --against` does.

use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use simhash_index::disk::{DiskIndex, Settings};
use simhash_index::lsh::{Relation, Templates};
use simhash_jobs::matching;

use simhash_jobs::JobError;
use simhash_jobs::against::{StoredFeatures, first_match, held_copy, passed_over};

use super::{Doc, Making, NativeWriter, add_unless_held};
use crate::interrupt::{detached, run};
use crate::texts::Texts;

/// `Index.dedup`: texts added in chunks, each searched in the index as it comes (its first,
/// earliest-added match, its own indexed copy excepted), then the dedup walk over the texts
/// that matched nothing, as `simhash dedup --against` runs it.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct NativeDedup {
    index: Arc<DiskIndex>,
    making: Making,
    /// Which relations remove a text (MinHash).
    templates: Templates,
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

impl NativeDedup {
    /// A dedup against `index` (a committed state), its texts' documents made as `making`.
    pub(super) fn new(index: Arc<DiskIndex>, making: Making, templates: Templates) -> NativeDedup {
        NativeDedup {
            index,
            making,
            templates,
            docs: Vec::new(),
            matched: Vec::new(),
            own: Vec::new(),
            lens: Vec::new(),
            rank: None,
        }
    }
}

/// A text's first match in the index: the indexed document, its id, the score, and
/// (MinHash) the relation the text is in to it.
struct Matched {
    doc: u64,
    id: String,
    score: f64,
    relation: Option<Relation>,
}

/// Per text, the kept text it duplicates (-1 when kept or removed against the index), the
/// similarity, the indexed id it duplicates, and the relation's code (-1 when kept, or with
/// simhash).
type Decided<'py> = (
    Bound<'py, numpy::PyArray1<i64>>,
    Bound<'py, numpy::PyArray1<f32>>,
    Vec<Option<String>>,
    Bound<'py, numpy::PyArray1<i8>>,
);

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
        let (index, making, templates) =
            (Arc::clone(&self.index), self.making.clone(), self.templates);
        let (docs, searched, lens) = run(py, move || {
            let docs = making.docs(&texts);
            let searched: Result<Searched, JobError> = docs
                .par_iter()
                .enumerate()
                .map(|(i, doc)| {
                    let own = match &ids {
                        Some(ids) => held_copy(&index, &ids[i], doc)?,
                        None => None,
                    };
                    let matched = match first_match(&index, doc, own, templates)? {
                        Some(m) => {
                            let id = index.id(m.doc)?.to_owned();
                            let score = crate::matcher::score(m.score);
                            Some(Matched { doc: m.doc, id, score, relation: m.relation })
                        }
                        None => None,
                    };
                    Ok((matched, own))
                })
                .collect();
            let lens: Vec<u64> = (0..texts.len()).map(|i| texts.get(i).len() as u64).collect();
            (docs, searched, lens)
        })?;
        let (matched, own) = searched.map_err(crate::errors::job)?;
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
        // Texts that matched the index go for it; texts it holds are kept before the others.
        let hidden = passed_over(&self.matched, &self.own);
        let docs = std::mem::take(&mut self.docs);
        let (settings, templates) = (self.index.settings().clone(), self.templates);
        let walk_rank = rank.clone();
        let (docs, walked) = run(py, move || {
            let walked = walk_unmatched(&settings, &docs, &hidden, &walk_rank, templates);
            (docs, walked)
        })?;
        self.docs = docs;
        self.rank = Some(rank);
        let (mut of, mut similarity, mut relation) = walked?;
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
                relation[d] = m.relation.map_or(-1, |r| r.code() as i8);
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
            numpy::IntoPyArray::into_pyarray(relation, py),
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
        let added = detached(py, || -> Result<(Vec<usize>, u64), JobError> {
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
        added.map_err(crate::errors::job)
    }
}

/// The dedup walk over the documents not `hidden` (those that matched the index, and those
/// it holds: kept), with the index's method and threshold, as `simhash dedup --against`
/// runs it ([`simhash_jobs::matching::walk`]): each document's kept document (-1: itself),
/// similarity (NaN when kept) and relation's code (-1 when kept, or with simhash).
fn walk_unmatched(
    settings: &Settings,
    docs: &[Doc],
    hidden: &[bool],
    rank: &[u32],
    templates: Templates,
) -> PyResult<(Vec<i64>, Vec<f32>, Vec<i8>)> {
    let matching = simhash_index::settings::Matching::of_stored(settings, templates);
    let mut summary = simhash_jobs::Summary::default();
    let steps = &mut simhash_jobs::matching::Steps::new(&mut summary);
    let bands = settings.sketcher().map_err(crate::errors::disk)?.map(|s| s.banding().bands);
    let stored = StoredFeatures::of(docs, bands).map_err(crate::errors::job)?;
    let walked = matching::walk(steps, stored.features(), &matching, rank, Some(hidden))
        .map_err(crate::errors::job)?;
    Ok(crate::matcher::decisions(&walked, stored.features()))
}
