//! What the commands ask of an on-disk index ([`simhash_index::disk`]): the sketches of the
//! corpus's documents, adding them, each document's first indexed match, and the corpus
//! with the matched documents hidden for the dedup walk.

use std::path::PathBuf;

use rayon::prelude::*;
use simhash_core::Fingerprint;
use simhash_index::disk::{DiskIndex, Writer};
use simhash_index::lsh::{
    DocSketch, EngineError, MemoryStore, Relation, SketchStore, SpillStore, Templates,
};
use simhash_io::{Output, Problem, Reason, Score};

use simhash_index::disk::Settings as StoredSettings;

use crate::corpus::Corpus;
use crate::error::{Context, ErrorKind, JobError, Result};
use crate::matching::Features;
use crate::reporter::Reporter;
use crate::session::{Finished, Session};

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

/// Documents added to an index, and those it already held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// Documents added to the index.
    pub added: u64,
    /// Records whose id the index holds with the same content: a rerun's, already there.
    pub already: u64,
}

/// A document as an index stores it: its MinHash sketch or its fingerprint (none for a
/// document without features). A front end makes it from its own documents (a corpus's
/// record: [`stored`]; Python's texts), and the steps below search and add it alike.
#[derive(Clone, Debug)]
pub enum Stored {
    /// A MinHash index's document.
    Sketch(Option<DocSketch>),
    /// A simhash index's document.
    Fingerprint(Option<Fingerprint>),
}

impl Stored {
    /// Adds the document to `writer` under `id`.
    pub fn add_to(&self, writer: &mut Writer, id: &str) -> Result<()> {
        match self {
            Stored::Sketch(s) => writer.add_sketch(id, s.as_ref())?,
            Stored::Fingerprint(fp) => writer.add_fingerprint(id, *fp)?,
        }
        Ok(())
    }
}

/// Documents held as an index stores them ([`Stored`]: a front end's own, such as Python's
/// texts), as the matching steps read them ([`StoredFeatures::features`]): a store of their
/// sketches, or their fingerprints. What `dedup` against an index walks its unmatched
/// documents with, when they are not a corpus read from files.
#[derive(Debug)]
pub enum StoredFeatures {
    /// The sketches of a MinHash index's documents.
    Sketches(MemoryStore),
    /// The fingerprints of a simhash index's documents.
    Fingerprints(Vec<Option<Fingerprint>>),
}

impl StoredFeatures {
    /// The features of `docs`: a MinHash index's sketches when `bands` (its bands) is
    /// given, a simhash index's fingerprints otherwise (as [`StoredSettings::sketcher`]
    /// tells them apart). Errors: a document of the other method (an internal error), or
    /// the store's.
    pub fn of(docs: &[Stored], bands: Option<usize>) -> Result<StoredFeatures> {
        let other = || JobError::new(ErrorKind::Internal, "a document of the other method");
        Ok(match bands {
            Some(bands) => {
                let mut store = MemoryStore::new(bands);
                for doc in docs {
                    let Stored::Sketch(sketch) = doc else { return Err(other()) };
                    store.push(sketch.as_ref())?;
                }
                store.finish()?;
                StoredFeatures::Sketches(store)
            }
            None => StoredFeatures::Fingerprints(
                docs.iter()
                    .map(|doc| match doc {
                        Stored::Fingerprint(fp) => Ok(*fp),
                        Stored::Sketch(_) => Err(other()),
                    })
                    .collect::<Result<_>>()?,
            ),
        })
    }

    /// The features, as the matching steps take them.
    pub fn features(&self) -> Features<'_> {
        match self {
            StoredFeatures::Sketches(store) => Features::Sketches(store),
            StoredFeatures::Fingerprints(fps) => Features::Fingerprints(fps),
        }
    }
}

/// The stored form of the corpus's document `doc`: its sketch when the corpus has
/// sketches, else its fingerprint.
pub fn stored(corpus: &Corpus, doc: usize) -> Result<Stored> {
    Ok(match &corpus.sketches {
        Some(store) => Stored::Sketch(doc_sketch(store, doc)?),
        None => Stored::Fingerprint(corpus.fingerprint(doc)),
    })
}

/// The indexed document that is this very record, if any: the index holds its `id`, with
/// the same content (the same shingle set, or the same fingerprint; both featureless
/// counts). Such a record is not a duplicate of itself: a rerun of a committed run finds
/// its kept records there.
pub fn held_copy(index: &DiskIndex, id: &str, doc: &Stored) -> Result<Option<u64>> {
    Ok(held_id(index, id, doc)?.copy())
}

/// What an index holds under a record's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldId {
    /// Nothing.
    Not,
    /// This very record ([`held_copy`]): its indexed document.
    Copy(u64),
    /// A document with other content (its number): the record's id is taken.
    Other(u64),
}

impl HeldId {
    /// The indexed document that is this record.
    pub fn copy(self) -> Option<u64> {
        match self {
            HeldId::Copy(doc) => Some(doc),
            HeldId::Not | HeldId::Other(_) => None,
        }
    }

    /// The indexed document that has this record's id with other content.
    pub fn other(self) -> Option<u64> {
        match self {
            HeldId::Other(doc) => Some(doc),
            HeldId::Not | HeldId::Copy(_) => None,
        }
    }
}

/// What `index` holds under `id`, of the record `doc` ([`HeldId`]).
pub fn held_id(index: &DiskIndex, id: &str, doc: &Stored) -> Result<HeldId> {
    // Most records' ids are not indexed: no payload is made for them.
    let Some(held) = index.find_id(id)? else {
        return Ok(HeldId::Not);
    };
    let payload = match doc {
        Stored::Sketch(s) => s.as_ref().map(|s| s.set().to_vec()).unwrap_or_default(),
        Stored::Fingerprint(fp) => fp.map(|fp| vec![fp.get()]).unwrap_or_default(),
    };
    Ok(match index.find_copy(id, &payload)? {
        Some(copy) => HeldId::Copy(copy),
        None => HeldId::Other(held),
    })
}

/// The problem of a record whose id `index` holds with other content (its document
/// `held`), as `FILE:LINE` reports it: `what` is done with it.
fn other_content(id: &str, held: u64, what: &str) -> Problem {
    Problem::new(
        Reason::DuplicateId,
        format!("id {id:?} is already in the index (its document {held}) with other content{what}"),
    )
}

/// The earliest-added indexed document that `doc` matches (exact Jaccard at least the
/// index's threshold, or within its distance), passing over document `own` (the record
/// itself, [`held_copy`]), and for MinHash in a relation `templates` acts on (never a
/// record with content of its own).
pub fn first_match(
    index: &DiskIndex,
    doc: &Stored,
    own: Option<u64>,
    templates: Templates,
) -> Result<Option<IndexMatch>> {
    Ok(match doc {
        // MinHash: a record the index holds matches only what was added before it
        // (relations are directed).
        Stored::Sketch(Some(sketch)) => {
            index.first_sketch_acted(sketch, own, templates)?.map(|(hit, relation)| IndexMatch {
                doc: hit.id,
                score: Score::Jaccard(hit.jaccard),
                relation: Some(relation),
            })
        }
        Stored::Fingerprint(Some(fp)) => index.first_fingerprint_except(*fp, own)?.map(|hit| {
            IndexMatch { doc: hit.id, score: Score::Distance(hit.distance), relation: None }
        }),
        Stored::Sketch(None) | Stored::Fingerprint(None) => None,
    })
}

/// Adds `docs` of the corpus to the index, in order. A document that the index already
/// holds ([`held_copy`]: same id, same content) is counted and not added again. A document
/// whose id the index holds with other content is not added, and reported as `FILE:LINE`
/// (with `what` said of it; not when `what` is none: reported already); with --strict that
/// ends the run before anything is committed.
pub fn add_documents(
    writer: &mut Writer,
    corpus: &Corpus,
    reporter: &mut Reporter,
    names: &[String],
    docs: impl IntoIterator<Item = usize>,
    what: Option<&str>,
) -> Result<Added> {
    let mut counts = Added::default();
    for doc in docs {
        let id = corpus.id(doc);
        let document = stored(corpus, doc)?;
        if let Some(index) = writer.index() {
            match held_id(index, &id, &document)? {
                HeldId::Not => {}
                HeldId::Copy(_) => {
                    counts.already += 1;
                    continue;
                }
                HeldId::Other(held) => {
                    if let Some(what) = what {
                        let problem = other_content(&id, held, &format!(": {what}"));
                        let (file, line) = locate(corpus, names, doc);
                        reporter.id_taken(file, line, &problem)?;
                    }
                    continue;
                }
            }
        }
        document.add_to(writer, &id)?;
        counts.added += 1;
    }
    Ok(counts)
}

/// An indexed document matched by a document of the corpus, and how near they are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexMatch {
    /// The indexed document (its number in the index: the order of adds).
    pub doc: u64,
    /// How near: the distance or the Jaccard similarity.
    pub score: Score,
    /// MinHash: what the record is to it ([`DiskIndex::first_sketch_acted`]).
    pub relation: Option<Relation>,
}

/// What the index says of each document of the corpus.
#[derive(Clone, Debug, Default)]
pub struct IndexMatches {
    /// The earliest-added indexed document it matches, itself excepted.
    pub first: Vec<Option<IndexMatch>>,
    /// The indexed document that is this record ([`held_copy`]).
    pub own: Vec<Option<u64>>,
    /// The indexed document that has this record's id with other content
    /// ([`HeldId::Other`]).
    pub other: Vec<Option<u64>>,
}

impl IndexMatches {
    /// No document matched or held (a new index's).
    fn none(len: usize) -> IndexMatches {
        IndexMatches { first: vec![None; len], own: vec![None; len], other: vec![None; len] }
    }

    /// The records the dedup walk passes over (each stays its own cluster): those removed
    /// for their [`first`](IndexMatches::first) match, and the records the index holds
    /// ([`own`](IndexMatches::own)), kept: an indexed document counts as kept before any
    /// record of the input, so a later-read record cannot remove it in the walk (the index
    /// has already compared every record with it).
    pub fn passed_over(&self) -> Vec<bool> {
        passed_over(&self.first, &self.own)
    }

    /// The corpus document that an indexed document is, where a record of this run is one
    /// ([`held_copy`]): a removed record names it with the id as this run read it.
    pub fn own_docs(&self) -> std::collections::HashMap<u64, usize> {
        self.own.iter().enumerate().filter_map(|(doc, own)| own.map(|held| (held, doc))).collect()
    }
}

/// For each document of the corpus, its [`first_match`] in the index other than the record
/// itself ([`held_copy`]); in parallel.
pub fn first_matches(
    pool: &rayon::ThreadPool,
    corpus: &Corpus,
    index: &DiskIndex,
    templates: Templates,
) -> Result<IndexMatches> {
    let found: Result<Vec<(Option<IndexMatch>, HeldId)>> = pool.install(|| {
        (0..corpus.len())
            .into_par_iter()
            .map(|doc| -> Result<(Option<IndexMatch>, HeldId)> {
                let document = stored(corpus, doc)?;
                let held = held_id(index, &corpus.id(doc), &document)?;
                Ok((first_match(index, &document, held.copy(), templates)?, held))
            })
            .collect()
    });
    let found = found.context("cannot search the index")?;
    let mut matches = IndexMatches::none(0);
    for (first, held) in found {
        matches.first.push(first);
        matches.own.push(held.copy());
        matches.other.push(held.other());
    }
    Ok(matches)
}

/// Which records the dedup walk passes over, from each record's first match in the index
/// (`first`: removed for it) and its own indexed copy (`own`: kept before the input's
/// records); see [`IndexMatches::passed_over`]. A front end that keeps these apart (Python's
/// texts) decides as the CLI does.
pub fn passed_over<M, H>(first: &[Option<M>], own: &[Option<H>]) -> Vec<bool> {
    first.iter().zip(own).map(|(first, own)| first.is_some() || own.is_some()).collect()
}

/// `dedup --against INDEX [--update]`: the index read, or (with --update) held by its one
/// writer, which adds the kept records when the run succeeds.
#[allow(missing_debug_implementations)]
pub enum Against {
    /// The index, read only.
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
    pub fn open((path, stored): &(PathBuf, StoredSettings), update: bool) -> Result<Against> {
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
    /// A record whose id the index holds with other content is reported as `FILE:LINE`
    /// (`names`: the input files' names), kept or removed (exit 1; with --strict an error
    /// before anything is committed), and never added.
    pub fn matches(
        &self,
        session: &mut Session,
        corpus: &Corpus,
        names: &[String],
        templates: Templates,
    ) -> Result<IndexMatches> {
        session.reporter.phase("matching the index", None);
        let matched = match self.index() {
            Some(index) => first_matches(&session.pool, corpus, index, templates)?,
            None => IndexMatches::none(corpus.len()),
        };
        let what = match self {
            Against::Writing(_) => ": not added to the index",
            Against::Reading(_) => "",
        };
        for (doc, held) in matched.other.iter().enumerate() {
            if let Some(held) = *held {
                let (file, line) = locate(corpus, names, doc);
                let problem = other_content(&corpus.id(doc), held, what);
                session.reporter.id_taken(file, line, &problem)?;
            }
        }
        session.summary.index_documents = Some(self.index().map_or(0, DiskIndex::len));
        session.summary.index_matched =
            Some(matched.first.iter().filter(|m| m.is_some()).count() as u64);
        Ok(matched)
    }

    /// With --update, adds the kept `docs` to the index (not yet committed); a kept record
    /// whose id the index holds with other content stays in the output, not added (reported
    /// by [`Against::matches`]).
    pub fn add_kept(
        &mut self,
        session: &mut Session,
        corpus: &Corpus,
        names: &[String],
        docs: impl IntoIterator<Item = usize>,
    ) -> Result<()> {
        if let Against::Writing(writer) = self {
            session.reporter.phase("indexing", None);
            let counts = add_documents(writer, corpus, &mut session.reporter, names, docs, None)?;
            session.summary.index_added = Some(counts.added);
            session.summary.index_already = Some(counts.already);
        }
        Ok(())
    }

    /// Commits the run: the outputs (through [`Session::finish`]) and, with --update, the
    /// added records, as one commit. The index's new segment is written and synced first;
    /// then, with signals held off, the outputs are moved into place and the manifest is
    /// replaced. Interrupted before that, nothing is committed (exit 128 + the signal);
    /// after it, the run finishes and exits as usual. Only `kill -9` (or a failure to
    /// write the manifest) between the two leaves the outputs without the index's
    /// additions, and a rerun then writes the same outputs and adds them.
    pub fn commit(self, session: Session, outputs: Vec<Output>) -> Result<Finished> {
        let Against::Writing(writer) = self else {
            return session.finish(outputs);
        };
        let dir =
            writer.index().map_or_else(|| "--against".into(), |i| i.dir().display().to_string());
        let mut outputs_in_place = false;
        let done = writer.commit_with(|| -> Result<_> {
            let hold = simhash_io::run::hold_signals();
            let code = session.finish(outputs)?;
            outputs_in_place = true;
            Ok((hold, code))
        });
        match done {
            Ok((_, (hold, code))) => {
                simhash_io::run::note_committed("its outputs and its additions to the index");
                drop(hold);
                Ok(code)
            }
            Err(e) if outputs_in_place => Err(e.context(format_args!(
                "{dir}: the output is written, but the kept records were not added to the index"
            ))),
            Err(e) => Err(e.context("nothing was committed")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simhash_core::Fingerprinter;
    use simhash_index::lsh::{Banding, Sketcher};

    /// A front end's documents become the features of their index's method, in order; a
    /// document of the other method is refused, and no documents are no documents.
    #[test]
    fn stored_documents_become_their_methods_features() {
        let fp = Fingerprinter::new();
        let banding = Banding::new(16, 8).unwrap();
        let sketcher = Sketcher::new(simhash_core::MinHasher::new(128, 1), banding).unwrap();
        let texts = ["one text here", "", "another text, longer than the first one"];
        let sketches: Vec<Stored> =
            texts.iter().map(|t| Stored::Sketch(sketcher.sketch(&fp, t).1)).collect();
        let fingerprints: Vec<Stored> =
            texts.iter().map(|t| Stored::Fingerprint(fp.fingerprint(t))).collect();
        let features = StoredFeatures::of(&sketches, Some(16)).unwrap();
        let Features::Sketches(store) = features.features() else { panic!("not sketches") };
        assert_eq!(store.len(), 3);
        let features = StoredFeatures::of(&fingerprints, None).unwrap();
        let Features::Fingerprints(fps) = features.features() else { panic!("not fingerprints") };
        let want: Vec<_> = texts.iter().map(|t| fp.fingerprint(t)).collect();
        assert_eq!(fps, &want[..]);
        for (docs, bands) in [(&sketches, None), (&fingerprints, Some(16))] {
            let err = StoredFeatures::of(docs, bands).expect_err("refused");
            assert_eq!(err.kind(), ErrorKind::Internal);
        }
        let none = StoredFeatures::of(&[], Some(16)).unwrap();
        let Features::Sketches(empty) = none.features() else { panic!("not sketches") };
        assert_eq!(empty.len(), 0);
    }
}
