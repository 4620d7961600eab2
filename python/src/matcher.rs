//! [`Matcher`]: a corpus added chunk by chunk, then its verified pairs, dedup decisions or
//! clusters, by either method, as the `simhash` command decides them.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use simhash_cluster::{Representative, UnionFind};
use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::lsh::{MemoryStore, SketchStore, Sketcher, SpillStore};
use simhash_index::settings::Matching;
use simhash_io::Score;
use simhash_jobs::Summary;
use simhash_jobs::matching::{self, Features, Steps};

use crate::interrupt::{detached, run};
use crate::page::{DedupRun, Figures};
use crate::texts::Texts;

/// Per document, the kept document it duplicates, their similarity and relation, and the
/// run for its page.
type Decided<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<i8>>,
    Bound<'py, DedupRun>,
);

/// What the matcher holds of the corpus: what the application layer's matching steps
/// ([`simhash_jobs::matching`]) read, the binary's from its corpus and these from texts.
enum Engine {
    /// The sketches of `simhash dedup --method minhash`, made by the settings' sketcher.
    MinHash { fingerprinter: Fingerprinter, sketcher: Sketcher, store: Box<dyn SketchStore> },
    /// Fingerprints (`None`: a text without features).
    Simhash { fingerprinter: Fingerprinter, fps: Vec<Option<Fingerprint>> },
}

impl Engine {
    /// The features the matching steps read, the sketches finished first (the store is
    /// searched; a spilled one takes no more texts).
    fn features(&mut self) -> PyResult<Features<'_>> {
        Ok(match self {
            Engine::MinHash { store, .. } => {
                store.finish().map_err(crate::errors::engine)?;
                Features::Sketches(&**store)
            }
            Engine::Simhash { fps, .. } => Features::Fingerprints(fps),
        })
    }
}

/// Texts added in chunks, then matched. Every search runs on a worker thread that Ctrl-C
/// interrupts ([`run`]); an interrupted matcher is spent.
#[pyclass(module = "simhash_rs._native")]
pub(crate) struct Matcher {
    engine: Option<Engine>,
    /// The method and its settings, as the contract resolved the arguments.
    matching: Matching,
    /// Text lengths in bytes (UTF-8), for `keep="longest"`.
    lens: Vec<u64>,
    /// Each text's hash, so that a report can tell the texts handed back are the same.
    hashes: Vec<u64>,
    /// Texts without features.
    featureless: u64,
    /// When the matcher was made: a run's time, for its page.
    started: std::time::Instant,
}

impl Matcher {
    fn take(&mut self) -> PyResult<Engine> {
        self.engine.take().ok_or_else(spent)
    }

    /// Each document's priority (0 first) for a keep policy ([`rank_of`]).
    fn rank(&self, keep: &str, rank: Option<Vec<u32>>) -> PyResult<Vec<u32>> {
        rank_of(&self.lens, keep, rank)
    }

    /// What a run's page says of the matcher: the preset, the LSH banding, the bytes and
    /// the texts without features.
    fn figures(&self) -> PyResult<Figures> {
        let (fingerprinter, lsh) = match self.engine.as_ref().ok_or_else(spent)? {
            Engine::MinHash { fingerprinter, sketcher, store } => {
                let banding = sketcher.banding();
                let bands = format!("{} x {}", banding.bands, banding.rows);
                (fingerprinter, Some((bands, store.band_key_bits())))
            }
            Engine::Simhash { fingerprinter, .. } => (fingerprinter, None),
        };
        Ok(Figures {
            preset: format!("{} (window {})", fingerprinter.preset(), fingerprinter.window()),
            lsh,
            bytes: self.lens.iter().sum(),
            featureless: self.featureless,
            started: self.started,
        })
    }
}

/// Each document's priority (0 first) for a keep policy: input order, longest text first
/// (ties in input order; `lens`: the texts' lengths), or the ranks given. The policies are
/// the `simhash` command's, from one definition ([`Representative::ranks`]).
pub(crate) fn rank_of(lens: &[u64], keep: &str, rank: Option<Vec<u32>>) -> PyResult<Vec<u32>> {
    let n = lens.len();
    match (keep, rank) {
        (_, Some(rank)) if rank.len() != n => {
            Err(PyValueError::new_err(format!("{} ranks for {n} documents", rank.len())))
        }
        (_, Some(rank)) => Ok(rank),
        ("first", None) => Representative::First.ranks(n).map_err(crate::errors::value),
        ("longest", None) => Representative::Longest(lens).ranks(n).map_err(crate::errors::value),
        (other, None) => Err(PyValueError::new_err(format!(
            "keep must be \"first\", \"longest\" or \"lowest-id\", not {other:?}"
        ))),
    }
}

fn spent() -> PyErr {
    PyRuntimeError::new_err("this matcher's search was interrupted: make a new one")
}

#[pymethods]
impl Matcher {
    /// The arguments as the caller gave them, each `None` when not given: `method`
    /// (`"auto"`, `"minhash"` or `"simhash"`), `jaccard`, `lsh_threshold`, `num_perm` and
    /// `templates` (minhash: `"remove"`, same documents and template siblings are removed,
    /// listed and joined, or `"keep"`, same documents only; a text with content of its own
    /// never is), `k` and `blocks` (simhash), resolved once by the settings contract
    /// ([`crate::settings`]), which fills in the defaults. `spill` (minhash): the shingle
    /// sets in temporary files instead of memory. Texts become features by `preset` and
    /// `window`.
    #[new]
    #[pyo3(signature = (
        method=None, preset="default", window=None, jaccard=None, lsh_threshold=None,
        num_perm=None, k=None, blocks=None, spill=false, templates=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        method: Option<&str>,
        preset: &str,
        window: Option<usize>,
        jaccard: Option<f64>,
        lsh_threshold: Option<f64>,
        num_perm: Option<usize>,
        k: Option<u32>,
        blocks: Option<usize>,
        spill: bool,
        templates: Option<&str>,
    ) -> PyResult<Matcher> {
        let asked = crate::settings::asked(
            method,
            Some(preset),
            jaccard,
            lsh_threshold,
            num_perm,
            k,
            blocks,
            templates,
        )?;
        let matching = crate::settings::resolve(&asked)?;
        if spill && matches!(matching, Matching::Simhash { .. }) {
            return Err(PyValueError::new_err(
                "spill applies to method='minhash' (simhash keeps 8 bytes a text)",
            ));
        }
        let fingerprinter = crate::sketch::fingerprinter(preset, window)?;
        // The sketcher and stores of the binary's corpus: the contract's sketcher.
        let engine = match matching.sketcher(false).map_err(|e| crate::settings::error(&e))? {
            Some(sketcher) => {
                let bands = sketcher.banding().bands;
                let store: Box<dyn SketchStore> = if spill {
                    Box::new(SpillStore::new(bands).map_err(crate::errors::engine)?)
                } else {
                    Box::new(MemoryStore::new(bands))
                };
                Engine::MinHash { fingerprinter, sketcher, store }
            }
            None => Engine::Simhash { fingerprinter, fps: Vec::new() },
        };
        Ok(Matcher {
            engine: Some(engine),
            matching,
            lens: Vec::new(),
            hashes: Vec::new(),
            featureless: 0,
            started: std::time::Instant::now(),
        })
    }

    /// The method the settings resolved to: `"minhash"` or `"simhash"`.
    #[getter]
    fn method(&self) -> &'static str {
        self.matching.method()
    }

    /// The resolved settings: the method, and its settings with the defaults filled in
    /// ([`crate::settings::matching_dict`]).
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::settings::matching_dict(py, &self.matching)
    }

    fn __len__(&self) -> usize {
        self.lens.len()
    }

    /// Adds a chunk of texts (`Texts::from_py`), sketched in parallel.
    fn add(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>, start: usize) -> PyResult<()> {
        let texts = Texts::from_py(chunk, start)?;
        // The field alone: the counts beside it are updated too.
        let engine = self.engine.as_mut().ok_or_else(spent)?;
        match engine {
            Engine::MinHash { fingerprinter, sketcher, store } => {
                let (fingerprinter, sketcher) = (&*fingerprinter, &*sketcher);
                let sketches: Vec<_> = detached(py, || {
                    texts.par_iter().map(|t| sketcher.sketch(fingerprinter, t).1).collect()
                })?;
                for sketch in &sketches {
                    store.push(sketch.as_ref()).map_err(crate::errors::engine)?;
                }
                self.featureless += sketches.iter().filter(|s| s.is_none()).count() as u64;
            }
            Engine::Simhash { fingerprinter, fps } => {
                let fingerprinter = &*fingerprinter;
                let new: Vec<Option<Fingerprint>> = detached(py, || {
                    texts.par_iter().map(|t| fingerprinter.fingerprint(t)).collect()
                })?;
                self.featureless += new.iter().filter(|f| f.is_none()).count() as u64;
                fps.extend(new);
            }
        }
        let hashes: Vec<u64> = detached(py, || {
            texts.par_iter().map(|t| simhash_io::line_hash(t.as_bytes())).collect()
        })?;
        self.hashes.extend(hashes);
        self.lens.extend((0..texts.len()).map(|i| texts.get(i).len() as u64));
        Ok(())
    }

    /// Every matching pair `(a, b, score)`, `a < b`, sorted: Jaccard similarity (minhash)
    /// or bits apart (simhash). Documents identical to an earlier one (the same shingle
    /// set, or fingerprint) are paired with the first of them only, and other pairs are
    /// listed between such first documents, as `simhash pairs` lists them.
    #[allow(clippy::type_complexity)]
    fn pairs<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>)>
    {
        let engine = self.take()?;
        let matching = self.matching;
        let (engine, found) = run(py, move || {
            let mut engine = engine;
            let found = pairs(&mut engine, &matching);
            (engine, found)
        })?;
        self.engine = Some(engine);
        let found: Vec<(usize, usize, f64)> = found?;
        let a: Vec<i64> = found.iter().map(|p| p.0 as i64).collect();
        let b: Vec<i64> = found.iter().map(|p| p.1 as i64).collect();
        let score: Vec<f64> = found.iter().map(|p| p.2).collect();
        Ok((a.into_pyarray(py), b.into_pyarray(py), score.into_pyarray(py)))
    }

    /// The dedup walk: documents in the keep policy's order, each kept unless it matches
    /// one already kept. Returns, per document, the kept document it duplicates (-1 when
    /// kept), their similarity (Jaccard, or bits apart; NaN when kept) and their relation
    /// (minhash: 0 same, 1 template; -1 when kept or for simhash), and the run, for its
    /// page ([`DedupRun`]).
    #[pyo3(signature = (keep="first", rank=None))]
    fn dedup<'py>(
        &mut self,
        py: Python<'py>,
        keep: &str,
        rank: Option<Vec<u32>>,
    ) -> PyResult<Decided<'py>> {
        let rank = self.rank(keep, rank)?;
        let engine = self.take()?;
        let matching = self.matching;
        let (engine, decided) = run(py, move || {
            let mut engine = engine;
            let decided = dedup(&mut engine, &matching, &rank);
            (engine, decided)
        })?;
        self.engine = Some(engine);
        let Deduped { of, similarity, relation, walked, scores, summary } = decided?;
        let figures = self.figures()?;
        let page =
            DedupRun::new(self.matching, walked, scores, self.hashes.clone(), summary, &figures)?;
        Ok((
            of.into_pyarray(py),
            similarity.into_pyarray(py),
            relation.into_pyarray(py),
            Bound::new(py, page)?,
        ))
    }

    /// Connected components of the matches: each document's cluster, named by its first
    /// document.
    fn clusters<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let engine = self.take()?;
        let matching = self.matching;
        let (engine, labels) = run(py, move || {
            let mut engine = engine;
            let labels = clusters(&mut engine, &matching);
            (engine, labels)
        })?;
        self.engine = Some(engine);
        Ok(labels?.into_pyarray(py))
    }
}

/// The pairs, sorted, as `simhash pairs` lists them ([`matching::pairs`]; see
/// [`Matcher::pairs`]).
fn pairs(engine: &mut Engine, matching: &Matching) -> PyResult<Vec<(usize, usize, f64)>> {
    let mut summary = Summary::default();
    let mut found: Vec<(usize, usize, f64)> = Vec::new();
    matching::pairs(&mut Steps::new(&mut summary), engine.features()?, matching, |a, b, s, _| {
        found.push((a as usize, b as usize, score(s)));
    })
    .map_err(crate::errors::job)?;
    found.par_sort_unstable_by_key(|&(a, b, _)| (a, b));
    Ok(found)
}

/// A score as Python gets it: bits apart, or the Jaccard similarity.
pub(crate) fn score(s: Score) -> f64 {
    match s {
        Score::Distance(d) => f64::from(d),
        Score::Jaccard(j) => j,
    }
}

/// What the dedup walk decided, as Python gets it and as its page needs it.
struct Deduped {
    /// Per document, the kept document it duplicates (-1 when kept).
    of: Vec<i64>,
    /// Per document, its similarity to it (NaN when kept).
    similarity: Vec<f32>,
    /// Per document, the relation's code (-1 when kept, or with simhash).
    relation: Vec<i8>,
    /// The walk.
    walked: matching::Walked,
    /// Each removed document's score as `--removed` prints it (kept ones': 0 bits).
    scores: Vec<Score>,
    /// What the matching steps noted.
    summary: Summary,
}

/// Each document's kept document (-1: itself), similarity (NaN when kept) and relation
/// (-1 when kept or for simhash): the dedup walk ([`matching::walk`]).
fn dedup(engine: &mut Engine, matching: &Matching, rank: &[u32]) -> PyResult<Deduped> {
    let mut summary = Summary::default();
    let features = engine.features()?;
    let walked = matching::walk(&mut Steps::new(&mut summary), features, matching, rank, None)
        .map_err(crate::errors::job)?;
    let (of, similarity, relation) = decisions(&walked, features);
    let scores = walked
        .center
        .iter()
        .enumerate()
        .map(|(d, &c)| match (&walked.jaccard, features) {
            (Some(jaccard), _) => Score::Jaccard(jaccard[d]),
            (None, Features::Fingerprints(fps)) => {
                Score::Distance(match (fps[d], fps[c as usize]) {
                    (Some(a), Some(b)) => a.distance(b),
                    _ => 0,
                })
            }
            (None, Features::Sketches(_)) => Score::Distance(0),
        })
        .collect();
    Ok(Deduped { of, similarity, relation, walked, scores, summary })
}

/// Per document of a walk, the kept document it duplicates (-1 when kept), their
/// similarity (the walk's Jaccard, or the bits apart of the fingerprints; NaN when kept)
/// and their relation's code (-1 when kept, or with simhash).
pub(crate) fn decisions(
    walked: &matching::Walked,
    features: Features<'_>,
) -> (Vec<i64>, Vec<f32>, Vec<i8>) {
    let n = walked.center.len();
    let mut out = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for (d, &c) in walked.center.iter().enumerate() {
        let (of, similarity, relation) = if c as usize == d {
            (-1, f32::NAN, -1)
        } else {
            let similarity = match (&walked.jaccard, features) {
                (Some(jaccard), _) => jaccard[d] as f32,
                (None, Features::Fingerprints(fps)) => {
                    let (a, b) = (fps[d].unwrap_or_default(), fps[c as usize].unwrap_or_default());
                    a.distance(b) as f32
                }
                (None, Features::Sketches(_)) => f32::NAN,
            };
            let relation = walked.relation.as_ref().map_or(-1, |r| r[d].code() as i8);
            (i64::from(c), similarity, relation)
        };
        out.0.push(of);
        out.1.push(similarity);
        out.2.push(relation);
    }
    out
}

/// Each document's cluster (connected components of the matches,
/// [`matching::components`]), named by its first document.
fn clusters(engine: &mut Engine, matching: &Matching) -> PyResult<Vec<i64>> {
    let mut summary = Summary::default();
    let mut forest: UnionFind =
        matching::components(&mut Steps::new(&mut summary), engine.features()?, matching)
            .map_err(crate::errors::job)?;
    // Labels are each group's smallest document, whatever the roots.
    let n = forest.len();
    let mut first = vec![i64::MAX; n];
    let roots: Vec<usize> = (0..n).map(|d| forest.root(d as u32) as usize).collect();
    for (d, &root) in roots.iter().enumerate() {
        first[root] = first[root].min(d as i64);
    }
    Ok(roots.iter().map(|&root| first[root]).collect())
}
