//! [`Writer`]: the one writer of an index. Adds go to a new *run* (a segment file no
//! manifest lists) every [`flush_bytes`](WriterBuilder::flush_bytes); [`commit`](Writer::commit)
//! merges the runs into one segment (one segment per add) and writes the manifest that
//! lists it, and nothing is visible before; a writer dropped without committing removes
//! its files.

use std::fs::{self, File, TryLockError};
use std::path::{Path, PathBuf};

use simhash_core::Fingerprint;

use super::index::Method;
use super::manifest::{self, Contents, LOCK, Manifest, SegmentEntry};
use super::segment::{self, Batch, Segment, Shape, Source};
use super::{DiskError, DiskErrorKind, DiskIndex, Settings};
use crate::lsh::DocSketch;

/// By default, a writer writes a segment when its documents take about this much memory.
pub const DEFAULT_FLUSH_BYTES: usize = 256 << 20;

/// An add that was refused: its id is already in the index, or was added earlier by this
/// writer. Refused documents are not added; every one is reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The add's position among this writer's adds (from 0).
    pub position: u64,
    /// The id.
    pub id: String,
    /// The document that holds the id: committed before, or added earlier by this writer.
    pub doc: u64,
}

/// What a commit did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Commit {
    /// The generation now committed.
    pub generation: u64,
    /// Documents added by this writer.
    pub added: u64,
    /// Documents in the index now.
    pub documents: u64,
    /// The refused adds, in the order they were made.
    pub refused: Vec<Refused>,
}

/// Settings of a [`Writer`].
#[derive(Clone, Debug)]
pub struct WriterBuilder {
    flush_bytes: usize,
    /// The id of a new index (tests: two indexes of the same documents, byte for byte).
    new_id: Option<u128>,
}

impl Default for WriterBuilder {
    fn default() -> WriterBuilder {
        WriterBuilder { flush_bytes: DEFAULT_FLUSH_BYTES, new_id: None }
    }
}

impl WriterBuilder {
    /// Writes a segment whenever the added documents take about this many bytes of memory
    /// (at least one document a segment). By default, [`DEFAULT_FLUSH_BYTES`].
    pub fn flush_bytes(&mut self, bytes: usize) -> &mut WriterBuilder {
        self.flush_bytes = bytes;
        self
    }

    /// A new index gets this id rather than a random one.
    #[cfg(test)]
    pub(crate) fn new_index_id(&mut self, id: u128) -> &mut WriterBuilder {
        self.new_id = Some(id);
        self
    }

    /// Opens the index in `dir` for writing, or creates one where nothing is: takes its
    /// lock, checks that it was made with `settings` (a new index is made with them), and
    /// removes what earlier writers left uncommitted.
    ///
    /// *Nothing is* at `dir` when it does not exist (then it is created; its parent must
    /// exist) or is an empty directory (or holds only what a creation interrupted before
    /// its first manifest leaves: an empty `LOCK`, a `MANIFEST.tmp`). A new index gets a
    /// random id and an empty manifest (generation 0) at once, so every file a writer makes
    /// afterwards is under a manifest. A directory that holds other files and no manifest
    /// (segments whose manifest was lost, or anything else) is never written into: a
    /// [`Corrupt`](DiskErrorKind::Corrupt) error naming it.
    ///
    /// Errors: [`Locked`](DiskErrorKind::Locked) when another writer holds the lock,
    /// [`SettingsMismatch`](DiskErrorKind::SettingsMismatch),
    /// [`Invalid`](DiskErrorKind::Invalid) settings (for a new index), and the errors of
    /// [`DiskIndex::open`].
    pub fn open(&self, dir: impl AsRef<Path>, settings: &Settings) -> Result<Writer, DiskError> {
        self.open_as(dir.as_ref(), settings, Mode::OpenOrCreate)
    }

    /// Creates an index in `dir`, only where nothing is (as [`open`](WriterBuilder::open)
    /// says), and opens it for writing.
    ///
    /// Errors: [`Exists`](DiskErrorKind::Exists) when `dir` holds an index, and those of
    /// [`open`](WriterBuilder::open).
    pub fn create(&self, dir: impl AsRef<Path>, settings: &Settings) -> Result<Writer, DiskError> {
        self.open_as(dir.as_ref(), settings, Mode::Create)
    }

    /// Opens the index in `dir` for writing, never creating one.
    ///
    /// Errors: [`NotFound`](DiskErrorKind::NotFound) when nothing is at `dir`, and those
    /// of [`open`](WriterBuilder::open).
    pub fn open_existing(
        &self,
        dir: impl AsRef<Path>,
        settings: &Settings,
    ) -> Result<Writer, DiskError> {
        self.open_as(dir.as_ref(), settings, Mode::Existing)
    }

    fn open_as(&self, dir: &Path, settings: &Settings, mode: Mode) -> Result<Writer, DiskError> {
        // Before anything is written: what is there, and whether this may write into it.
        check_before_lock(dir, settings, mode)?;
        let lock = lock(dir)?;
        // Under the lock, again: another writer may have made the index meanwhile.
        let (committed, id) = if let Some(m) = Manifest::read(dir)? {
            if mode == Mode::Create {
                return Err(exists(dir));
            }
            // An index of format version 1 gets an id at its first commit.
            let id = m.index.unwrap_or_else(manifest::new_index_id);
            let index = DiskIndex::from_manifest(dir, m)?;
            index.check_settings(settings)?;
            remove_uncommitted(dir, Some(index.manifest()))?;
            (Some(index), id)
        } else {
            if let Contents::Other(file) = manifest::contents(dir)? {
                return Err(manifest::not_an_index(dir, &file));
            }
            if mode == Mode::Existing {
                return Err(super::index::no_manifest(dir)?);
            }
            settings.validate()?;
            remove_uncommitted(dir, None)?;
            let id = self.new_id.unwrap_or_else(manifest::new_index_id);
            let empty = Manifest {
                generation: 0,
                settings: settings.clone(),
                index: Some(id),
                segments: Vec::new(),
            };
            manifest::sync_dir(dir)?;
            empty.write(dir)?;
            (None, id)
        };
        let method = Method::of(settings);
        let shape = method.shape(settings);
        Ok(Writer {
            dir: dir.to_path_buf(),
            lock,
            settings: settings.clone(),
            id,
            generation: committed.as_ref().map_or(0, DiskIndex::generation) + 1,
            committed,
            method,
            shape,
            new_segments: Vec::new(),
            files: 0,
            batch: Batch::new(shape.columns),
            flush_bytes: self.flush_bytes.max(1),
            adds: 0,
            added: 0,
            refused: Vec::new(),
            keys: Vec::new(),
            done: false,
        })
    }
}

/// What is at `dir`, checked before anything is written or locked: an index made with the
/// same settings (unless `mode` creates), or nothing, or a missing directory (created, unless
/// `mode` opens an existing index), never other files.
fn check_before_lock(dir: &Path, settings: &Settings, mode: Mode) -> Result<(), DiskError> {
    if let Some(m) = Manifest::read(dir)? {
        if mode == Mode::Create {
            return Err(exists(dir));
        }
        // A mismatch first: the stored settings are valid, the given may not be.
        let differing = m.settings.differences(settings);
        if !differing.is_empty() {
            return Err(DiskError::mismatch(&dir.join(manifest::MANIFEST), differing));
        }
    } else {
        let contents = manifest::contents(dir)?;
        if let Contents::Other(file) = &contents {
            return Err(manifest::not_an_index(dir, file));
        }
        if mode == Mode::Existing {
            return Err(super::index::no_manifest(dir)?);
        }
        settings.validate()?;
        if contents == Contents::Missing {
            match fs::create_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(DiskError::io(dir, "cannot create the index directory", e));
                }
            }
        }
    }
    Ok(())
}

/// The index's lock file, opened (created when missing) and locked: one writer at a time.
fn lock(dir: &Path) -> Result<File, DiskError> {
    let lock_path = dir.join(LOCK);
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| DiskError::io(&lock_path, "cannot open the lock file", e))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            return Err(DiskError::new(
                DiskErrorKind::Locked,
                Some(&lock_path),
                "another writer is using the index",
            ));
        }
        Err(TryLockError::Error(e)) => {
            return Err(DiskError::io(&lock_path, "cannot lock the index", e));
        }
    }
    Ok(lock)
}

/// How a writer may open a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    OpenOrCreate,
    Create,
    Existing,
}

fn exists(dir: &Path) -> DiskError {
    DiskError::new(
        DiskErrorKind::Exists,
        Some(dir),
        "an index is already there (this creates an index only where nothing is)",
    )
}

/// Removes the segment and temporary files no manifest lists (left by a writer that
/// crashed or was killed). Other files are left alone.
fn remove_uncommitted(dir: &Path, manifest: Option<&Manifest>) -> Result<(), DiskError> {
    let listed = |name: &str| manifest.is_some_and(|m| m.segments.iter().any(|s| s.name == name));
    let entries =
        fs::read_dir(dir).map_err(|e| DiskError::io(dir, "cannot list the index directory", e))?;
    let mut removed = false;
    for entry in entries {
        let entry = entry.map_err(|e| DiskError::io(dir, "cannot list the index directory", e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if manifest::is_index_file(name) && !listed(name) {
            let path = entry.path();
            fs::remove_file(&path)
                .map_err(|e| DiskError::io(&path, "cannot remove an uncommitted file", e))?;
            removed = true;
        }
    }
    if removed {
        manifest::sync_dir(dir)?;
    }
    Ok(())
}

/// The one writer of an index (it holds the index's lock until dropped).
///
/// [`add_sketch`](Writer::add_sketch) or [`add_fingerprint`](Writer::add_fingerprint) adds
/// documents in order; [`commit`](Writer::commit) makes them visible at once, to readers
/// opened afterwards; [`compact`](Writer::compact) commits and merges every segment into
/// one. Dropped without a commit, the writer removes what it wrote: the index stays as it
/// was. A process killed at any moment leaves the last committed state.
#[derive(Debug)]
pub struct Writer {
    dir: PathBuf,
    lock: File,
    settings: Settings,
    /// The index's id, in the manifest and every segment this writer writes.
    id: u128,
    generation: u64,
    committed: Option<DiskIndex>,
    method: Method,
    shape: Shape,
    /// Segments written by this writer, not yet committed: its runs, until a commit
    /// merges them.
    new_segments: Vec<(Segment, SegmentEntry)>,
    /// Files written by this writer (each gets its own name).
    files: usize,
    batch: Batch,
    flush_bytes: usize,
    /// Adds made (the next add's position).
    adds: u64,
    /// Documents added (not refused) and flushed.
    added: u64,
    refused: Vec<Refused>,
    keys: Vec<u64>,
    done: bool,
}

impl Writer {
    /// A [`WriterBuilder`] with the default settings.
    pub fn builder() -> WriterBuilder {
        WriterBuilder::default()
    }

    /// [`WriterBuilder::open`] with the default settings: opens the index, or creates one
    /// where nothing is.
    pub fn open(dir: impl AsRef<Path>, settings: &Settings) -> Result<Writer, DiskError> {
        WriterBuilder::default().open(dir, settings)
    }

    /// [`WriterBuilder::create`] with the default settings: creates an index only where
    /// nothing is.
    pub fn create(dir: impl AsRef<Path>, settings: &Settings) -> Result<Writer, DiskError> {
        WriterBuilder::default().create(dir, settings)
    }

    /// [`WriterBuilder::open_existing`] with the default settings: opens an index, never
    /// creating one.
    pub fn open_existing(dir: impl AsRef<Path>, settings: &Settings) -> Result<Writer, DiskError> {
        WriterBuilder::default().open_existing(dir, settings)
    }

    /// The committed index as this writer found it (none for a new index): the state that
    /// queries should see while this writer adds.
    pub fn index(&self) -> Option<&DiskIndex> {
        self.committed.as_ref()
    }

    /// The index's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Adds a document to a MinHash index: its id and its sketch (none for a document
    /// without features, which is stored as an id only). An id already in the index, or
    /// added earlier by this writer, is refused and reported by [`commit`](Writer::commit).
    ///
    /// Errors: a simhash index, a sketch of another number of bands
    /// ([`Invalid`](DiskErrorKind::Invalid)), and the errors of writing a segment.
    pub fn add_sketch(&mut self, id: &str, sketch: Option<&DocSketch>) -> Result<(), DiskError> {
        let Method::MinHash { bands, key_bits, tokens, .. } = self.method else {
            return Err(DiskError::invalid("a MinHash sketch added to a simhash index"));
        };
        self.keys.clear();
        let mut encoded = Vec::new();
        let payload: &[u64] = match sketch {
            Some(s) if tokens => {
                self.keys = super::index::stored_keys(s, bands, key_bits)?;
                super::index::payload::encode(s.set(), s.tokens(), &mut encoded);
                &encoded
            }
            Some(s) => {
                self.keys = super::index::stored_keys(s, bands, key_bits)?;
                s.set()
            }
            None => &[],
        };
        self.batch.push(id, self.adds, payload, &self.keys);
        self.after_add()
    }

    /// Adds a document to a simhash index: its id and its fingerprint (none for a document
    /// without features). Refusals and errors as [`add_sketch`](Writer::add_sketch).
    pub fn add_fingerprint(&mut self, id: &str, fp: Option<Fingerprint>) -> Result<(), DiskError> {
        let Method::Simhash { tables } = &self.method else {
            return Err(DiskError::invalid("a fingerprint added to a MinHash index"));
        };
        self.keys.clear();
        if let Some(fp) = fp {
            self.keys.extend(tables.iter().map(|t| t.permute(fp)));
        }
        let payload = fp.map(|f| [f.0]);
        self.batch.push(id, self.adds, payload.as_ref().map_or(&[][..], |p| &p[..]), &self.keys);
        self.after_add()
    }

    fn after_add(&mut self) -> Result<(), DiskError> {
        self.adds += 1;
        if self.batch.bytes() >= self.flush_bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// Documents in the index with this writer's adds so far (refusals counted when found,
    /// at each segment's flush).
    pub fn documents(&self) -> u64 {
        self.committed.as_ref().map_or(0, DiskIndex::len) + self.added + self.batch.len() as u64
    }

    /// The segments a new document's id is looked up in: `(segment, base)`.
    fn existing(&self) -> Vec<(&Segment, u64)> {
        let mut out = Vec::new();
        let mut base = 0;
        let committed = self.committed.iter().flat_map(DiskIndex::segments);
        for seg in committed.chain(self.new_segments.iter().map(|(s, _)| s)) {
            out.push((seg, base));
            base += seg.docs() as u64;
        }
        out
    }

    /// Writes the buffered documents as a new (uncommitted) segment, without the refused.
    fn flush(&mut self) -> Result<(), DiskError> {
        if self.batch.len() == 0 {
            return Ok(());
        }
        let n = self.batch.len();
        let sorted = self.batch.sorted_id_hashes();
        // The document already holding each refused add's id: indexed, or in this batch.
        let mut holder: Vec<Option<Holder>> = vec![None; n];
        for (seg, base) in self.existing() {
            seg.ids_with_hashes(&sorted, |i, d| {
                let doc = sorted[i].1 as usize;
                if holder[doc].is_none()
                    && seg.id_bytes(d as usize)? == self.batch.id_str(doc).as_bytes()
                {
                    holder[doc] = Some(Holder::Indexed(base + u64::from(d)));
                }
                Ok(())
            })?;
        }
        for run in sorted.chunk_by(|a, b| a.0 == b.0) {
            for (j, &(_, doc)) in run.iter().enumerate() {
                let doc = doc as usize;
                if holder[doc].is_some() {
                    continue;
                }
                let id = self.batch.id_str(doc);
                if let Some(&(_, first)) = run[..j].iter().find(|&&(_, e)| {
                    holder[e as usize].is_none() && self.batch.id_str(e as usize) == id
                }) {
                    holder[doc] = Some(Holder::Batch(first as usize));
                }
            }
        }
        let base = self.documents() - n as u64;
        let keep: Vec<bool> = holder.iter().map(Option::is_none).collect();
        // Batch documents' numbers once the refused are left out.
        let mut number = vec![0u64; n];
        let mut next = base;
        for d in 0..n {
            number[d] = next;
            next += u64::from(keep[d]);
        }
        for (d, h) in holder.iter().enumerate() {
            if let Some(h) = h {
                let doc = match *h {
                    Holder::Indexed(doc) => doc,
                    Holder::Batch(first) => number[first],
                };
                let id = self.batch.id_str(d).to_string();
                self.refused.push(Refused { position: self.batch.positions[d], id, doc });
            }
        }
        let batch = std::mem::replace(&mut self.batch, Batch::new(self.shape.columns));
        let batch = if keep.iter().all(|&k| k) { batch } else { batch.retain(&keep) };
        if batch.len() > 0 {
            self.write_segment(&[&batch])?;
            self.added += batch.len() as u64;
        }
        Ok(())
    }

    /// Writes `sources` as this writer's next segment file.
    fn write_segment(&mut self, sources: &[&dyn Source]) -> Result<(), DiskError> {
        let name = self.next_name();
        let written = write_and_open(&self.dir, name, self.shape, self.id, sources)?;
        self.new_segments.push(written);
        Ok(())
    }

    /// The name of this writer's next file.
    fn next_name(&mut self) -> String {
        self.files += 1;
        format!("g{:08}-{:04}.seg", self.generation, self.files - 1)
    }

    /// Merges this writer's runs, when it flushed more than one, into one segment by the
    /// streaming merge a compaction uses (memory does not grow with the runs), and removes
    /// the runs. No manifest ever listed them: a crash meanwhile leaves files that the next
    /// writer removes. The documents keep their numbers, so every answer stays the same.
    fn merge_runs(&mut self) -> Result<(), DiskError> {
        if self.new_segments.len() <= 1 {
            return Ok(());
        }
        let name = self.next_name();
        let merged = {
            let runs: Vec<&dyn Source> =
                self.new_segments.iter().map(|(s, _)| s as &dyn Source).collect();
            write_and_open(&self.dir, name, self.shape, self.id, &runs)?
        };
        for (run, _) in std::mem::replace(&mut self.new_segments, vec![merged]) {
            let path = run.path().to_path_buf();
            drop(run);
            // A run left behind is unlisted: the next writer removes it.
            let _ = fs::remove_file(path);
        }
        Ok(())
    }

    /// Commits: writes the remaining documents, merges this writer's runs into one segment
    /// (so each add is one segment, however many times it flushed; this needs the runs'
    /// size again in free disk space, for a moment), then writes the manifest that lists
    /// every segment (the old ones and this writer's), atomically. Readers opened from now on see the
    /// new state; readers already open keep theirs.
    pub fn commit(self) -> Result<Commit, DiskError> {
        self.commit_with(|| Ok::<(), DiskError>(())).map(|(commit, ())| commit)
    }

    /// [`commit`](Writer::commit), calling `before_publish` once everything is written and
    /// synced, just before the manifest is replaced (the commit point). An error from it
    /// commits nothing (the writer removes what it wrote); what it returns is handed back
    /// with the commit. A front end uses it to make other files part of the same commit:
    /// to put its outputs in place (written under temporary names) and hold off signals
    /// until the manifest is written, so that an interrupted run committed both or
    /// neither of its outputs and its additions to the index, or at worst (killed between
    /// the two) its outputs alone, which a rerun writes again.
    pub fn commit_with<T, E: From<DiskError>>(
        mut self,
        before_publish: impl FnOnce() -> Result<T, E>,
    ) -> Result<(Commit, T), E> {
        self.flush()?;
        self.merge_runs()?;
        let mut segments: Vec<SegmentEntry> =
            self.committed.as_ref().map(|i| i.manifest().segments.clone()).unwrap_or_default();
        segments.extend(self.new_segments.iter().map(|(_, e)| e.clone()));
        let ready = before_publish()?;
        Ok((self.publish(segments)?, ready))
    }

    /// Commits, and merges every segment into one (a streaming merge of their sorted
    /// columns: memory does not grow with the index). Document numbers and every query's
    /// answer stay the same; the old segment files are removed once the new manifest is
    /// durable (readers that have them open keep reading them).
    pub fn compact(self) -> Result<Commit, DiskError> {
        self.compact_with(|| Ok::<(), DiskError>(())).map(|(commit, ())| commit)
    }

    /// [`compact`](Writer::compact), calling `before_publish` just before the manifest is
    /// replaced, as [`commit_with`](Writer::commit_with) does.
    pub fn compact_with<T, E: From<DiskError>>(
        mut self,
        before_publish: impl FnOnce() -> Result<T, E>,
    ) -> Result<(Commit, T), E> {
        self.flush()?;
        let old: Vec<PathBuf> = self
            .committed
            .iter()
            .flat_map(DiskIndex::segments)
            .chain(self.new_segments.iter().map(|(s, _)| s))
            .map(|s| s.path().to_path_buf())
            .collect();
        // One segment is compacted already, unless it is of format 1 (no index id): a
        // compaction rewrites those.
        let legacy =
            self.committed.as_ref().is_some_and(|i| i.manifest().segments.iter().any(|s| s.legacy));
        if old.len() <= 1 && !legacy {
            return self.commit_with(before_publish);
        }
        let name = self.next_name();
        let (segment, merged) = {
            let sources: Vec<&dyn Source> = self
                .committed
                .iter()
                .flat_map(DiskIndex::segments)
                .chain(self.new_segments.iter().map(|(s, _)| s))
                .map(|s| s as &dyn Source)
                .collect();
            write_and_open(&self.dir, name, self.shape, self.id, &sources)?
        };
        self.new_segments.push((segment, merged.clone()));
        let ready = before_publish()?;
        let commit = self.publish_keeping(vec![merged])?;
        // The old files: no manifest lists them now. A failure here leaves them for the
        // next writer to remove.
        for path in old {
            let _ = fs::remove_file(path);
        }
        let _ = manifest::sync_dir(&self.dir);
        Ok((commit, ready))
    }

    fn publish(mut self, segments: Vec<SegmentEntry>) -> Result<Commit, DiskError> {
        self.publish_keeping(segments)
    }

    /// Writes the manifest listing `segments`; from then on the writer's files are the
    /// index's and are not removed on drop.
    fn publish_keeping(&mut self, segments: Vec<SegmentEntry>) -> Result<Commit, DiskError> {
        manifest::sync_dir(&self.dir)?;
        let manifest = Manifest {
            generation: self.generation,
            settings: self.settings.clone(),
            index: Some(self.id),
            segments,
        };
        manifest.write(&self.dir)?;
        self.done = true;
        let mut refused = std::mem::take(&mut self.refused);
        refused.sort_by_key(|r| r.position);
        Ok(Commit {
            generation: self.generation,
            added: self.added,
            documents: manifest.documents(),
            refused,
        })
    }
}

/// Writes `sources` as the segment file `name` in `dir` and opens it; a file that does
/// not open is removed.
fn write_and_open(
    dir: &Path,
    name: String,
    shape: Shape,
    id: u128,
    sources: &[&dyn Source],
) -> Result<(Segment, SegmentEntry), DiskError> {
    let path = dir.join(&name);
    let written = segment::write(&path, shape, id, sources)?;
    let docs = sources.iter().map(|s| s.docs() as u64).sum();
    let entry = SegmentEntry {
        name,
        docs,
        bytes: written.bytes,
        checksum: written.checksum,
        legacy: false,
    };
    match Segment::open(&path, entry.bytes, entry.docs, shape, Some(id)) {
        Ok(segment) => Ok((segment, entry)),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(e)
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Holder {
    Indexed(u64),
    Batch(usize),
}

impl Drop for Writer {
    /// Without a commit, removes the segments this writer wrote: the index stays as it was.
    /// Then releases the lock (explicitly: a child process forked meanwhile may share the
    /// lock's file description until it runs its program).
    fn drop(&mut self) {
        self.release();
    }
}

impl Writer {
    fn release(&mut self) {
        if !self.done {
            for (seg, _) in self.new_segments.drain(..) {
                let path = seg.path().to_path_buf();
                drop(seg);
                let _ = fs::remove_file(path);
            }
        }
        let _ = self.lock.unlock();
    }
}
