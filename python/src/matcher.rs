//! [`Matcher`]: a corpus added chunk by chunk, then its verified pairs, dedup decisions or
//! clusters, by either method, as the `simhash` command decides them.

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use simhash_cluster::{Representative, UnionFind};
use simhash_core::{Fingerprint, Fingerprinter};
use simhash_index::lsh::{Decision, MinHashDedup};
use simhash_index::settings::Matching;
use simhash_index::{AllPairs, Blocks, DedupWalk, Tables, collapse_identical};

use crate::interrupt::{detached, run};
use crate::texts::Texts;

/// Per document, the kept document it duplicates and their similarity.
type Decided<'py> =
    (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<i8>>);

/// What the matcher holds of the corpus.
enum Engine {
    /// The engine of `simhash dedup --method minhash` (shingle sets and band keys).
    MinHash(Box<MinHashDedup>),
    /// Fingerprints (`None`: a text without features), within `distance` bits.
    Simhash {
        fingerprinter: Fingerprinter,
        fps: Vec<Option<Fingerprint>>,
        distance: u32,
        blocks: Blocks,
    },
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
}

/// The tables for `n` fingerprints within `distance` bits. Errors (`ValueError`): blocks
/// that do not fit the distance.
fn tables(blocks: Blocks, n: usize, distance: u32) -> PyResult<Tables> {
    blocks.tables(n as u64, distance).map_err(crate::errors::value)
}

impl Matcher {
    fn engine(&mut self) -> PyResult<&mut Engine> {
        self.engine.as_mut().ok_or_else(spent)
    }

    fn take(&mut self) -> PyResult<Engine> {
        self.engine.take().ok_or_else(spent)
    }

    /// Each document's priority (0 first) for a keep policy ([`rank_of`]).
    fn rank(&self, keep: &str, rank: Option<Vec<u32>>) -> PyResult<Vec<u32>> {
        rank_of(&self.lens, keep, rank)
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
        let engine = match matching {
            Matching::Minhash { jaccard, lsh_threshold, num_perm, templates, .. } => {
                let dedup = MinHashDedup::builder()
                    .jaccard(jaccard)
                    .lsh_threshold(lsh_threshold)
                    .num_perm(num_perm)
                    .fingerprinter(fingerprinter)
                    .spill_to_disk(spill)
                    .templates(templates)
                    .build()
                    .map_err(crate::errors::engine)?;
                Engine::MinHash(Box::new(dedup))
            }
            Matching::Simhash { distance, blocks } => {
                Engine::Simhash { fingerprinter, fps: Vec::new(), distance, blocks }
            }
        };
        Ok(Matcher { engine: Some(engine), matching, lens: Vec::new() })
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
        let engine = self.engine()?;
        match engine {
            Engine::MinHash(dedup) => {
                let texts = &texts;
                let all: Vec<&str> = (0..texts.len()).map(|i| texts.get(i)).collect();
                detached(py, || dedup.extend_texts(&all))?.map_err(crate::errors::engine)?;
            }
            Engine::Simhash { fingerprinter, fps, .. } => {
                let fingerprinter = &*fingerprinter;
                let new: Vec<Option<Fingerprint>> = detached(py, || {
                    texts.par_iter().map(|t| fingerprinter.fingerprint(t)).collect()
                })?;
                fps.extend(new);
            }
        }
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
        let (engine, found) = run(py, move || {
            let mut engine = engine;
            let found = match &mut engine {
                Engine::MinHash(dedup) => dedup
                    .pairs()
                    .map(|pairs| pairs.into_iter().map(|p| (p.a, p.b, p.jaccard)).collect())
                    .map_err(crate::errors::engine),
                Engine::Simhash { fps, distance, blocks, .. } => {
                    simhash_pairs(fps, *distance, *blocks)
                }
            };
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
    /// (minhash: 0 same, 1 template; -1 when kept or for simhash).
    #[pyo3(signature = (keep="first", rank=None))]
    fn dedup<'py>(
        &mut self,
        py: Python<'py>,
        keep: &str,
        rank: Option<Vec<u32>>,
    ) -> PyResult<Decided<'py>> {
        let rank = self.rank(keep, rank)?;
        let engine = self.take()?;
        let (engine, decided) = run(py, move || {
            let mut engine = engine;
            let decided = dedup(&mut engine, &rank);
            (engine, decided)
        })?;
        self.engine = Some(engine);
        let (of, similarity, relation) = decided?;
        Ok((of.into_pyarray(py), similarity.into_pyarray(py), relation.into_pyarray(py)))
    }

    /// Connected components of the matches: each document's cluster, named by its first
    /// document.
    fn clusters<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let engine = self.take()?;
        let n = self.lens.len();
        let (engine, labels) = run(py, move || {
            let mut engine = engine;
            let labels = clusters(&mut engine, n);
            (engine, labels)
        })?;
        self.engine = Some(engine);
        Ok(labels?.into_pyarray(py))
    }
}

/// The simhash pairs, as `simhash pairs` lists them (see [`Matcher::pairs`]).
fn simhash_pairs(
    fps: &[Option<Fingerprint>],
    distance: u32,
    blocks: Blocks,
) -> PyResult<Vec<(usize, usize, f64)>> {
    let identical = collapse_identical(fps, None);
    let reps = identical.representatives;
    let mut found: Vec<(usize, usize, f64)> =
        identical.duplicates.iter().map(|&(doc, rep)| (rep as usize, doc as usize, 0.0)).collect();
    let rep_fps: Vec<Fingerprint> =
        reps.iter().map(|&d| fps[d as usize].unwrap_or_default()).collect();
    let tables = tables(blocks, rep_fps.len(), distance)?;
    AllPairs::new(&tables)
        .run(&rep_fps, |batch| {
            found.extend(batch.iter().map(|p| {
                (reps[p.a as usize] as usize, reps[p.b as usize] as usize, f64::from(p.distance))
            }));
        })
        .map_err(crate::errors::value)?;
    found.par_sort_unstable_by_key(|&(a, b, _)| (a, b));
    Ok(found)
}

/// Each document's kept document (-1: itself) and similarity (NaN when kept).
fn dedup(engine: &mut Engine, rank: &[u32]) -> PyResult<(Vec<i64>, Vec<f32>, Vec<i8>)> {
    match engine {
        Engine::MinHash(dedup) => {
            let decisions = dedup.dedup_by_rank(rank).map_err(crate::errors::engine)?;
            let mut out = (Vec::new(), Vec::new(), Vec::new());
            for d in &decisions {
                let (of, similarity, relation) = match *d {
                    Decision::Keep => (-1, f32::NAN, -1),
                    Decision::Duplicate { of, jaccard, relation } => {
                        (of as i64, jaccard as f32, relation.code() as i8)
                    }
                };
                out.0.push(of);
                out.1.push(similarity);
                out.2.push(relation);
            }
            Ok(out)
        }
        Engine::Simhash { fps, distance, blocks, .. } => {
            let walk = DedupWalk::new(fps, rank);
            let tables = tables(*blocks, walk.distinct(), *distance)?;
            let center = walk.run(&tables, |_, _| {}).center;
            let (of, similarity): (Vec<i64>, Vec<f32>) =
                simhash_decisions(&center, fps).into_iter().unzip();
            let relation = vec![-1; of.len()];
            Ok((of, similarity, relation))
        }
    }
}

/// Each document's cluster (connected components of the matches), named by its first
/// document.
fn clusters(engine: &mut Engine, n: usize) -> PyResult<Vec<i64>> {
    let groups: Vec<Vec<usize>> = match engine {
        Engine::MinHash(dedup) => dedup.clusters().map_err(crate::errors::engine)?,
        Engine::Simhash { fps, distance, blocks, .. } => {
            // Labels are each group's smallest document, whatever the roots.
            let mut forest = UnionFind::new(n);
            for (a, b, _) in simhash_pairs(fps, *distance, *blocks)? {
                forest.join(a as u32, b as u32);
            }
            let mut by_root: Vec<Vec<usize>> = vec![Vec::new(); n];
            for d in 0..n {
                by_root[forest.root(d as u32) as usize].push(d);
            }
            by_root.into_iter().filter(|g| !g.is_empty()).collect()
        }
    };
    let mut label = vec![0i64; n];
    for group in &groups {
        let first = group.iter().copied().min().unwrap_or_default() as i64;
        for &d in group {
            label[d] = first;
        }
    }
    Ok(label)
}

/// Per document of a simhash walk, the kept document it duplicates (-1 when kept) and
/// their bits apart (NaN when kept).
pub(crate) fn simhash_decisions(center: &[u32], fps: &[Option<Fingerprint>]) -> Vec<(i64, f32)> {
    center
        .iter()
        .enumerate()
        .map(|(d, &c)| {
            if c as usize == d {
                (-1, f32::NAN)
            } else {
                let (a, b) = (fps[d].unwrap_or_default(), fps[c as usize].unwrap_or_default());
                (i64::from(c), a.distance(b) as f32)
            }
        })
        .collect()
}
