//! What the commands ask of an on-disk index ([`simhash_index::disk`]): the sketches of the
//! corpus's documents, adding them, each document's first indexed match, and the corpus
//! with the matched documents hidden for the dedup walk.

use std::path::PathBuf;

use anyhow::Context;
use rayon::prelude::*;
use simhash_index::disk::{DiskIndex, Writer};
use simhash_index::lsh::{DocSketch, EngineError, SpillStore};
use simhash_io::{Problem, Reason, Score};

use crate::corpus::Corpus;
use crate::report::Reporter;
use crate::session::Session;
use crate::settings::StoredSettings;

/// The sketch of `doc` as the corpus's store holds it (none for a featureless document).
pub fn doc_sketch(store: &SpillStore, doc: usize) -> Result<Option<DocSketch>, EngineError> {
    store.sketch(doc)
}

/// The input file and line of `doc` (`names`: the files' names, in reading order).
pub fn locate<'a>(corpus: &Corpus, names: &'a [String], doc: usize) -> (&'a str, u64) {
    let mut line = corpus.line(doc);
    for (name, &lines) in names.iter().zip(corpus.shard_lines()) {
        if line <= lines {
            return (name, line);
        }
        line -= lines;
    }
    (names.last().map_or("-", String::as_str), line)
}

/// Adds `docs` of the corpus to the index, in order. A document whose id the index already
/// holds is reported as `FILE:LINE` (with `what` said of it) and not added; with --strict
/// that ends the run before anything is committed. Returns the number added.
pub fn add_documents(
    writer: &mut Writer,
    corpus: &Corpus,
    reporter: &mut Reporter,
    names: &[String],
    docs: impl IntoIterator<Item = usize>,
    what: &str,
) -> anyhow::Result<u64> {
    let mut added = 0u64;
    for doc in docs {
        let id = corpus.id(doc);
        if let Some(index) = writer.index()
            && let Some(held) = index.find_id(&id)?
        {
            let problem = Problem::new(
                Reason::DuplicateId,
                format!("id {id:?} is already in the index (its document {held}): {what}"),
            );
            let (file, line) = locate(corpus, names, doc);
            reporter.problem(file, line, &problem)?;
            continue;
        }
        match &corpus.sketches {
            Some(store) => writer.add_sketch(&id, doc_sketch(store, doc)?.as_ref())?,
            None => writer.add_fingerprint(&id, corpus.fingerprint(doc))?,
        }
        added += 1;
    }
    Ok(added)
}

/// An indexed document matched by a document of the corpus, and how near they are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexMatch {
    /// The indexed document (its number in the index: the order of adds).
    pub doc: u64,
    pub score: Score,
}

/// For each document of the corpus, the earliest-added indexed document it matches (exact
/// Jaccard at least the index's threshold, or within its distance), if any; in parallel.
pub fn first_matches(
    pool: &rayon::ThreadPool,
    corpus: &Corpus,
    index: &DiskIndex,
) -> anyhow::Result<Vec<Option<IndexMatch>>> {
    let found: anyhow::Result<Vec<Option<IndexMatch>>> = pool.install(|| {
        (0..corpus.len())
            .into_par_iter()
            .map(|doc| -> anyhow::Result<Option<IndexMatch>> {
                Ok(match &corpus.sketches {
                    Some(store) => match doc_sketch(store, doc)? {
                        Some(sketch) => index.first_sketch(&sketch)?.map(|hit| IndexMatch {
                            doc: hit.id,
                            score: Score::Jaccard(hit.jaccard),
                        }),
                        None => None,
                    },
                    None => match corpus.fingerprint(doc) {
                        Some(fp) => index.first_fingerprint(fp)?.map(|hit| IndexMatch {
                            doc: hit.id,
                            score: Score::Distance(hit.distance),
                        }),
                        None => None,
                    },
                })
            })
            .collect()
    });
    found.context("cannot search the index")
}

/// `dedup --against INDEX [--update]`: the index read, or (with --update) held by its one
/// writer, which adds the kept records when the run succeeds.
pub enum Against {
    Reading(Box<DiskIndex>),
    /// The writer; its index is none when the index is new.
    Writing(Box<Writer>),
}

impl Against {
    /// Opens the index with `stored` settings (an error names each that differs); with
    /// `update`, as its writer (the lock; an index is created only where nothing is: a
    /// missing directory, whose parent exists, or an empty one). A directory that holds
    /// files but no MANIFEST, or a segment of another index, is an error (exit 2), and
    /// nothing is written into it.
    pub fn open(
        (path, stored): &(PathBuf, StoredSettings),
        update: bool,
    ) -> anyhow::Result<Against> {
        Ok(if update {
            Against::Writing(Box::new(Writer::open(path, stored)?))
        } else {
            let index = DiskIndex::open(path)?;
            index.check_settings(stored)?;
            Against::Reading(Box::new(index))
        })
    }

    /// The committed index (none for a new one).
    pub fn index(&self) -> Option<&DiskIndex> {
        match self {
            Against::Reading(index) => Some(index),
            Against::Writing(writer) => writer.index(),
        }
    }

    /// Each document's first match in the index ([`first_matches`]); counted in the summary.
    pub fn matches(
        &self,
        session: &mut Session,
        corpus: &Corpus,
    ) -> anyhow::Result<Vec<Option<IndexMatch>>> {
        session.reporter.phase("matching the index", None);
        let matched = match self.index() {
            Some(index) => first_matches(&session.pool, corpus, index)?,
            None => vec![None; corpus.len()],
        };
        session.summary.index_documents = Some(self.index().map_or(0, DiskIndex::len));
        session.summary.index_matched = Some(matched.iter().filter(|m| m.is_some()).count() as u64);
        Ok(matched)
    }

    /// With --update, adds the kept `docs` to the index (not yet committed); a kept record
    /// whose id the index holds stays in the output and is reported.
    pub fn add_kept(
        &mut self,
        session: &mut Session,
        corpus: &Corpus,
        names: &[String],
        docs: impl IntoIterator<Item = usize>,
    ) -> anyhow::Result<()> {
        if let Against::Writing(writer) = self {
            session.reporter.phase("indexing", None);
            let what = "kept in the output, not added to the index";
            let added = add_documents(writer, corpus, &mut session.reporter, names, docs, what)?;
            session.summary.index_added = Some(added);
        }
        Ok(())
    }

    /// With --update, commits the added records.
    pub fn commit(self) -> anyhow::Result<()> {
        if let Against::Writing(writer) = self {
            let dir = writer.index().map(|i| i.dir().display().to_string());
            writer.commit().with_context(|| {
                format!(
                    "{}: the output is written, but the kept records were not added to the index",
                    dir.unwrap_or_else(|| "--against".into())
                )
            })?;
        }
        Ok(())
    }
}
