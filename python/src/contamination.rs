//! [`Contamination`]: eval sets, then a corpus scanned chunk by chunk, then the hits: the
//! library's exact contamination search (`simhash_index::contamination`).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;
use simhash_index::contamination::{
    ContaminationError, EvalSets, EvalSetsBuilder, MaxDf, SetId, Tally,
};

use crate::interrupt::{detached, run};
use crate::texts::Texts;

/// The search's state: eval sets being added, then the corpus being scanned.
enum State {
    /// The builder, and the sets made so far by name.
    Adding(EvalSetsBuilder, Vec<(String, SetId)>),
    Scanning(std::sync::Arc<EvalSets>, Tally),
    Spent,
}

/// Eval sets, added item by item; then the corpus, scanned a chunk at a time (in
/// parallel, the GIL released); then the hits. Spent once finished.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct Contamination {
    state: State,
}

/// A hit as the native side hands it over: document, eval set, item, overlap, longest run,
/// spans, n-grams found and kept.
type Row = (u64, String, String, f64, usize, Vec<(usize, usize)>, u32, u32);

fn value(e: &ContaminationError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn spent() -> PyErr {
    PyRuntimeError::new_err("this contamination search is finished (make a new one)")
}

#[pymethods]
impl Contamination {
    /// A search with `ngram` words an n-gram, the share of an item's n-grams a document
    /// must hold (`min_overlap`), and `max_df` (`"none"`, a count such as `"1000"`, or a
    /// share of the documents such as `"0.01"`); the library's defaults for those not
    /// given. Errors: `ValueError` for a setting out of range.
    #[new]
    #[pyo3(signature = (ngram=None, min_overlap=None, max_df=None))]
    fn new(
        ngram: Option<usize>,
        min_overlap: Option<f64>,
        max_df: Option<&str>,
    ) -> PyResult<Contamination> {
        let mut builder = EvalSets::builder();
        if let Some(ngram) = ngram {
            builder.ngram(ngram);
        }
        if let Some(share) = min_overlap {
            builder.min_overlap(share);
        }
        if let Some(max_df) = max_df {
            builder.max_df(max_df.parse::<MaxDf>().map_err(|e| value(&e))?);
        }
        Ok(Contamination { state: State::Adding(builder, Vec::new()) })
    }

    /// Adds item `id` of eval set `set` (the set is made on its first item). Errors:
    /// `ValueError` for an item id repeated within its set.
    fn add_item(&mut self, set: &str, id: &str, text: &str) -> PyResult<()> {
        let State::Adding(builder, sets) = &mut self.state else {
            return Err(PyRuntimeError::new_err("items are added before the corpus is scanned"));
        };
        let set_id = if let Some(&(_, known)) = sets.iter().find(|(name, _)| name == set) {
            known
        } else {
            let made = builder.add_set(set).map_err(|e| value(&e))?;
            sets.push((set.to_string(), made));
            made
        };
        builder.add_item(set_id, id, text).map_err(|e| value(&e))
    }

    /// Scans `chunk` (texts numbered from `start`, in order with the chunks before it).
    /// Errors: `ValueError` for settings the eval sets refuse (checked on the first chunk).
    fn scan(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>, start: usize) -> PyResult<()> {
        if let State::Adding(..) = self.state {
            let State::Adding(builder, _) = std::mem::replace(&mut self.state, State::Spent) else {
                return Err(spent());
            };
            let eval = builder.build().map_err(|e| value(&e))?;
            let tally = Tally::new(&eval);
            self.state = State::Scanning(std::sync::Arc::new(eval), tally);
        }
        let State::Scanning(eval, tally) = &mut self.state else {
            return Err(spent());
        };
        let texts = Texts::from_py(chunk, start)?;
        let eval = &**eval;
        let hits = detached(py, || texts.par_iter().map(|t| eval.scan(t)).collect::<Vec<_>>())?;
        for (i, doc) in hits.into_iter().enumerate() {
            tally.add((start + i) as u64, doc);
        }
        Ok(())
    }

    /// The hits: a list of dicts (`doc`, `eval`, `item`, `overlap`, `longest`, `spans`,
    /// `matched`, `ngrams`) in document order, and the figures (`documents`, `ngrams`,
    /// `dropped`, `items`, `unmatchable`). Ctrl-C interrupts it.
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
        if let State::Adding(..) = self.state {
            // No corpus: every item unmatched, the settings still checked.
            let empty = PyList::empty(py);
            self.scan(py, empty.as_any(), 0)?;
        }
        let State::Scanning(eval, tally) = std::mem::replace(&mut self.state, State::Spent) else {
            return Err(spent());
        };
        let shared = std::sync::Arc::clone(&eval);
        let (rows, figures) = run(py, move || {
            shared.finish(tally).map(|report| {
                let rows: Vec<Row> = report
                    .hits
                    .iter()
                    .map(|h| {
                        let spans = h.spans.iter().map(|s| (s.start, s.end)).collect();
                        let (set, item) = (h.set.to_string(), h.item.to_string());
                        (h.doc, set, item, h.overlap, h.longest, spans, h.matched, h.ngrams)
                    })
                    .collect();
                let figures = (
                    report.documents,
                    report.ngrams,
                    report.dropped,
                    report.items,
                    report.unmatchable,
                );
                (rows, figures)
            })
        })?
        .map_err(|e| value(&e))?;
        let hits = PyList::empty(py);
        for (doc, set, item, overlap, longest, spans, matched, ngrams) in rows {
            let hit = PyDict::new(py);
            hit.set_item("doc", doc)?;
            hit.set_item("eval", set)?;
            hit.set_item("item", item)?;
            hit.set_item("overlap", overlap)?;
            hit.set_item("longest", longest)?;
            hit.set_item("spans", spans)?;
            hit.set_item("matched", matched)?;
            hit.set_item("ngrams", ngrams)?;
            hits.append(hit)?;
        }
        let (documents, ngrams, dropped, items, unmatchable) = figures;
        let summary = PyDict::new(py);
        summary.set_item("documents", documents)?;
        summary.set_item("ngrams", ngrams)?;
        summary.set_item("dropped", dropped)?;
        summary.set_item("items", items)?;
        summary.set_item("unmatchable", unmatchable)?;
        Ok((hits, summary))
    }
}
