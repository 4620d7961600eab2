//! Segments: the documents of one `add` flush (or of a compaction) in one immutable file.
//!
//! Both methods share one layout. Each document has an id (a string) and a *payload* (a
//! list of `u64`: the shingle set for MinHash, the fingerprint for simhash, empty for a
//! document without features). Each document with a payload has one key per *column* (a
//! band key for MinHash, a permuted fingerprint per table for simhash), and each column is
//! stored sorted by `(key, doc)`, so a query finds its candidates by binary search. Each
//! column has *fences*, the key of every [`FENCE`]th record, read once (a few hundredth of
//! the column) and searched in memory, so a lookup reads one or two pages of the column
//! rather than `log2(records)` pages scattered over it. Ids are
//! found through a table of `(xxh3 of the id, doc)` sorted the same way (equal hashes are
//! compared as strings).
//!
//! A segment is written from [`Source`]s: the writer's in-memory [`Batch`], or for a
//! compaction the segments being merged, by a streaming k-way merge of their sorted
//! columns. The same documents give the same bytes either way.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use xxhash_rust::xxh3::xxh3_64;

use super::DiskError;
use super::file::{FileReader, FileWriter, Header, Written};

/// `kind` in a segment's header.
pub(crate) const KIND_MINHASH: u32 = 1;
/// `kind` in a segment's header.
pub(crate) const KIND_SIMHASH: u32 = 2;

const S_ID_OFFSETS: usize = 0;
const S_IDS: usize = 1;
const S_ID_TABLE: usize = 2;
const S_PAYLOAD_OFFSETS: usize = 3;
const S_PAYLOAD: usize = 4;
const S_COLUMNS: usize = 5;
/// A column's records per fence: fence `i` is the key of record `i × FENCE`. 256 records
/// are 2 KiB (4-byte keys) or 3 KiB (8-byte keys): a lookup between two fences reads one
/// page, two when it straddles one; the fences are 8 bytes per 256 records.
pub(crate) const FENCE: usize = 256;
/// Bytes of an id hash in the id table.
const ID_KEY: usize = 8;

/// Sorted `(key, doc)` entries, each fallible (a read of a segment).
pub(crate) type Entries<'a> = Box<dyn Iterator<Item = Result<(u64, u32), DiskError>> + 'a>;

/// What a segment is written from: documents `0..docs()` in order.
pub(crate) trait Source {
    fn docs(&self) -> usize;
    /// Documents with a payload (the length of each column).
    fn entries(&self) -> u64;
    /// Payload values of all documents.
    fn values(&self) -> u64;
    fn id(&self, doc: usize) -> Result<&[u8], DiskError>;
    /// Clears `out` and reads `doc`'s payload into it.
    fn payload(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), DiskError>;
    /// `(xxh3 of the id, doc)` for every document, sorted.
    fn id_table(&self) -> Entries<'_>;
    /// Column `c`'s `(key, doc)` for every document with a payload, sorted.
    fn column(&self, c: usize) -> Entries<'_>;
}

/// The shape every segment of an index has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) kind: u32,
    pub(crate) columns: usize,
    /// Bytes of a column key: 4 or 8.
    pub(crate) key_bytes: usize,
}

/// Writes the documents of `sources`, in order, as the segment file `path` of the index
/// whose id is `index` (in the header).
pub(crate) fn write(
    path: &Path,
    shape: Shape,
    index: u128,
    sources: &[&dyn Source],
) -> Result<Written, DiskError> {
    let docs: u64 = sources.iter().map(|s| s.docs() as u64).sum();
    if docs > u64::from(u32::MAX) {
        return Err(DiskError::invalid(format!("a segment holds at most {} documents", u32::MAX)));
    }
    let header = Header {
        kind: shape.kind,
        docs,
        columns: shape.columns as u32,
        key_bytes: shape.key_bytes as u32,
        sections: (S_COLUMNS + 2 * shape.columns) as u32,
        entries: sources.iter().map(|s| s.entries()).sum(),
        values: sources.iter().map(|s| s.values()).sum(),
        index: Some(index),
    };
    let mut w = FileWriter::create(path, &header)?;
    let bases: Vec<u32> = sources
        .iter()
        .scan(0u32, |acc, s| {
            let b = *acc;
            *acc += s.docs() as u32;
            Some(b)
        })
        .collect();
    // Ids: offsets, then the bytes.
    w.begin()?;
    let mut end = 0u64;
    w.write(&end.to_le_bytes())?;
    for s in sources {
        for d in 0..s.docs() {
            end += s.id(d)?.len() as u64;
            w.write(&end.to_le_bytes())?;
        }
    }
    w.end();
    w.begin()?;
    for s in sources {
        for d in 0..s.docs() {
            w.write(s.id(d)?)?;
        }
    }
    w.end();
    let id_tables = sources.iter().map(|s| s.id_table()).collect();
    write_entries(&mut w, merge(id_tables, &bases), ID_KEY)?;
    write_payloads(&mut w, sources)?;
    let mut fences = Vec::with_capacity(shape.columns);
    for c in 0..shape.columns {
        let columns = sources.iter().map(|s| s.column(c)).collect();
        fences.push(write_entries(&mut w, merge(columns, &bases), shape.key_bytes)?);
    }
    for column in fences {
        w.begin()?;
        for key in column {
            w.write(&key.to_le_bytes())?;
        }
        w.end();
    }
    w.finish()
}

/// Writes the payload offsets and values sections.
fn write_payloads(w: &mut FileWriter, sources: &[&dyn Source]) -> Result<(), DiskError> {
    // Payloads: offsets, then the values.
    let mut payload = Vec::new();
    w.begin()?;
    let mut end = 0u64;
    w.write(&end.to_le_bytes())?;
    for s in sources {
        for d in 0..s.docs() {
            s.payload(d, &mut payload)?;
            end += payload.len() as u64;
            w.write(&end.to_le_bytes())?;
        }
    }
    w.end();
    w.begin()?;
    for s in sources {
        for d in 0..s.docs() {
            s.payload(d, &mut payload)?;
            for v in &payload {
                w.write(&v.to_le_bytes())?;
            }
        }
    }
    w.end();
    Ok(())
}

/// Writes sorted entries as one section of records: `key_bytes` of key, a `u32` doc.
/// Returns the fences: the key of every [`FENCE`]th record.
fn write_entries(
    w: &mut FileWriter,
    entries: impl Iterator<Item = Result<(u64, u32), DiskError>>,
    key_bytes: usize,
) -> Result<Vec<u64>, DiskError> {
    w.begin()?;
    let mut fences = Vec::new();
    for (i, e) in entries.enumerate() {
        let (key, doc) = e?;
        if i % FENCE == 0 {
            fences.push(key);
        }
        if key_bytes == 4 {
            w.write(&(key as u32).to_le_bytes())?;
        } else {
            w.write(&key.to_le_bytes())?;
        }
        w.write(&doc.to_le_bytes())?;
    }
    w.end();
    Ok(fences)
}

/// The k-way merge of sorted entries, each source's documents shifted by its base.
fn merge<'a>(
    mut iters: Vec<Entries<'a>>,
    bases: &[u32],
) -> impl Iterator<Item = Result<(u64, u32), DiskError>> + 'a {
    let bases = bases.to_vec();
    let mut heap = BinaryHeap::new();
    let mut pending_error = None;
    for (i, it) in iters.iter_mut().enumerate() {
        match it.next() {
            Some(Ok((k, d))) => heap.push(Reverse((k, d + bases[i], i))),
            Some(Err(e)) => pending_error = Some(e),
            None => {}
        }
    }
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        if let Some(e) = pending_error.take() {
            failed = true;
            return Some(Err(e));
        }
        let Reverse((k, d, i)) = heap.pop()?;
        match iters[i].next() {
            Some(Ok((k2, d2))) => heap.push(Reverse((k2, d2 + bases[i], i))),
            Some(Err(e)) => pending_error = Some(e),
            None => {}
        }
        Some(Ok((k, d)))
    })
}

/// The documents added since the last flush, in memory.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    columns: usize,
    ids: Vec<u8>,
    id_ends: Vec<usize>,
    /// The position of each document among the writer's adds.
    pub(crate) positions: Vec<u64>,
    payload: Vec<u64>,
    payload_ends: Vec<usize>,
    /// `columns` keys per document with a payload, row after row.
    keys: Vec<u64>,
    /// The document of each row of `keys`.
    key_docs: Vec<u32>,
}

impl Batch {
    pub(crate) fn new(columns: usize) -> Batch {
        Batch { columns, ..Batch::default() }
    }

    pub(crate) fn len(&self) -> usize {
        self.id_ends.len()
    }

    /// Memory held, about.
    pub(crate) fn bytes(&self) -> usize {
        self.ids.len() + 8 * (self.payload.len() + self.keys.len()) + 36 * self.len()
    }

    /// Adds a document; `keys` (one per column) exactly when `payload` is not empty.
    pub(crate) fn push(&mut self, id: &str, position: u64, payload: &[u64], keys: &[u64]) {
        debug_assert_eq!(payload.is_empty(), keys.is_empty());
        if !keys.is_empty() {
            debug_assert_eq!(keys.len(), self.columns);
            self.keys.extend_from_slice(keys);
            self.key_docs.push(self.len() as u32);
        }
        self.ids.extend_from_slice(id.as_bytes());
        self.id_ends.push(self.ids.len());
        self.positions.push(position);
        self.payload.extend_from_slice(payload);
        self.payload_ends.push(self.payload.len());
    }

    pub(crate) fn id_str(&self, doc: usize) -> &str {
        std::str::from_utf8(self.id_bytes(doc)).expect("ids are pushed as strings")
    }

    fn id_bytes(&self, doc: usize) -> &[u8] {
        let start = if doc == 0 { 0 } else { self.id_ends[doc - 1] };
        &self.ids[start..self.id_ends[doc]]
    }

    fn payload_of(&self, doc: usize) -> &[u64] {
        let start = if doc == 0 { 0 } else { self.payload_ends[doc - 1] };
        &self.payload[start..self.payload_ends[doc]]
    }

    /// The batch without the documents whose `keep` is false.
    pub(crate) fn retain(&self, keep: &[bool]) -> Batch {
        let mut out = Batch::new(self.columns);
        let mut row = 0;
        for (d, &kept) in keep.iter().enumerate() {
            let payload = self.payload_of(d);
            let keys = if payload.is_empty() {
                &[][..]
            } else {
                row += 1;
                &self.keys[(row - 1) * self.columns..row * self.columns]
            };
            if kept {
                out.push(self.id_str(d), self.positions[d], payload, keys);
            }
        }
        out
    }

    /// `(xxh3 of the id, doc)` for every document, sorted.
    pub(crate) fn sorted_id_hashes(&self) -> Vec<(u64, u32)> {
        let mut t: Vec<(u64, u32)> =
            (0..self.len()).map(|d| (xxh3_64(self.id_bytes(d)), d as u32)).collect();
        t.sort_unstable();
        t
    }
}

impl Source for Batch {
    fn docs(&self) -> usize {
        self.len()
    }

    fn entries(&self) -> u64 {
        self.key_docs.len() as u64
    }

    fn values(&self) -> u64 {
        self.payload.len() as u64
    }

    fn id(&self, doc: usize) -> Result<&[u8], DiskError> {
        Ok(self.id_bytes(doc))
    }

    fn payload(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), DiskError> {
        out.clear();
        out.extend_from_slice(self.payload_of(doc));
        Ok(())
    }

    fn id_table(&self) -> Entries<'_> {
        Box::new(self.sorted_id_hashes().into_iter().map(Ok))
    }

    fn column(&self, c: usize) -> Entries<'_> {
        let mut col: Vec<(u64, u32)> = self
            .key_docs
            .iter()
            .enumerate()
            .map(|(r, &d)| (self.keys[r * self.columns + c], d))
            .collect();
        col.sort_unstable();
        Box::new(col.into_iter().map(Ok))
    }
}

/// An open segment file.
#[derive(Debug)]
pub(crate) struct Segment {
    file: FileReader,
    docs: usize,
    entries: usize,
    shape: Shape,
    /// Each column's fences, read on its first lookup.
    fences: Box<[OnceLock<Box<[u64]>>]>,
}

impl Segment {
    /// Opens a segment the manifest lists as `bytes` long with `docs` documents, and checks
    /// that its header and section lengths fit `shape`, and that it is of the index `index`
    /// (a version 2 segment holding that id), or for `None` a version 1 segment (no id).
    pub(crate) fn open(
        path: &Path,
        bytes: u64,
        docs: u64,
        shape: Shape,
        index: Option<u128>,
    ) -> Result<Segment, DiskError> {
        let file = FileReader::open(path, bytes)?;
        let h = file.header;
        let bad = |what: String| Err(DiskError::corrupt(path, what));
        match (index, h.index) {
            (Some(want), Some(id)) if want != id => {
                return bad(format!(
                    "the segment belongs to another index (index id {id:032x}; this index's is {want:032x})"
                ));
            }
            (Some(_), None) => {
                return bad("the manifest lists a segment of this index, and this one has no index id (segment format 1)".into());
            }
            (None, Some(id)) => {
                return bad(format!(
                    "the manifest lists a segment of format 1 (no index id), and this one is of index {id:032x}"
                ));
            }
            _ => {}
        }
        if h.kind != shape.kind
            || h.columns as usize != shape.columns
            || h.key_bytes as usize != shape.key_bytes
        {
            return bad(format!(
                "the segment is of kind {} with {} columns of {}-byte keys; the index's are of kind {} with {} of {}",
                h.kind, h.columns, h.key_bytes, shape.kind, shape.columns, shape.key_bytes
            ));
        }
        if h.docs != docs {
            return bad(format!(
                "the segment holds {} documents, the manifest says {docs}",
                h.docs
            ));
        }
        if h.sections as usize != S_COLUMNS + 2 * shape.columns || h.entries > h.docs {
            return bad("the segment's section count does not fit its kind".into());
        }
        let n = h.docs as usize;
        let record = shape.key_bytes + 4;
        let mut want = vec![
            (S_ID_OFFSETS, 8 * (n + 1)),
            (S_ID_TABLE, 12 * n),
            (S_PAYLOAD_OFFSETS, 8 * (n + 1)),
        ];
        want.push((S_PAYLOAD, 8 * h.values as usize));
        for c in 0..shape.columns {
            want.push((S_COLUMNS + c, record * h.entries as usize));
            want.push((S_COLUMNS + shape.columns + c, 8 * (h.entries as usize).div_ceil(FENCE)));
        }
        for (s, len) in want {
            if file.section(s).len() != len {
                return bad(format!(
                    "section {s} is {} bytes long, not {len}",
                    file.section(s).len()
                ));
            }
        }
        let fences = (0..shape.columns).map(|_| OnceLock::new()).collect();
        Ok(Segment { file, docs: n, entries: h.entries as usize, shape, fences })
    }

    pub(crate) fn path(&self) -> &Path {
        self.file.path()
    }

    pub(crate) fn file(&self) -> &FileReader {
        &self.file
    }

    /// The offsets `doc` and `doc + 1` of an offsets section, checked against `len`.
    fn span(&self, section: usize, doc: usize, len: usize) -> Result<Range<usize>, DiskError> {
        let start = self.file.u64_at(section, doc)? as usize;
        let end = self.file.u64_at(section, doc + 1)? as usize;
        if start > end || end > len {
            return Err(DiskError::corrupt(self.path(), format!("bad offsets for document {doc}")));
        }
        Ok(start..end)
    }

    pub(crate) fn id_bytes(&self, doc: usize) -> Result<&[u8], DiskError> {
        let ids = self.file.section(S_IDS);
        let span = self.span(S_ID_OFFSETS, doc, ids.len())?;
        self.file.bytes(ids.start + span.start..ids.start + span.end)
    }

    pub(crate) fn id_str(&self, doc: usize) -> Result<&str, DiskError> {
        std::str::from_utf8(self.id_bytes(doc)?).map_err(|_| {
            DiskError::corrupt(self.path(), format!("the id of document {doc} is not UTF-8"))
        })
    }

    /// Reads `doc`'s payload into `out` (cleared first).
    pub(crate) fn read_payload(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), DiskError> {
        let values = self.file.section(S_PAYLOAD);
        let span = self.span(S_PAYLOAD_OFFSETS, doc, values.len() / 8)?;
        let bytes = self.file.bytes(values.start + 8 * span.start..values.start + 8 * span.end)?;
        out.clear();
        out.extend(
            bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
        Ok(())
    }

    /// The first record of `section` (of `len` records with `kb`-byte keys) at or after
    /// `from` whose key is at least `key`, searched by galloping from `from`.
    fn lower_bound(
        &self,
        section: usize,
        kb: usize,
        len: usize,
        from: usize,
        key: u64,
    ) -> Result<usize, DiskError> {
        let (mut lo, mut step) = (from, 1);
        let mut hi = loop {
            let probe = from + step;
            if probe >= len {
                break len;
            }
            if self.file.key(section, probe, kb)? >= key {
                break probe + 1;
            }
            lo = probe;
            step *= 2;
        };
        hi = hi.min(len);
        // The answer is in lo..=hi (records before lo are below key).
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.file.key(section, mid, kb)? < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// The records of column `c` whose keys lie in `lo..=hi`.
    pub(crate) fn column_range(
        &self,
        c: usize,
        lo: u64,
        hi: u64,
    ) -> Result<Range<usize>, DiskError> {
        let fences = self.fences(c)?;
        let start = self.column_bound(c, fences, lo)?;
        let end = match hi.checked_add(1) {
            Some(h) => self.column_bound(c, fences, h)?,
            None => self.entries,
        };
        Ok(start..end)
    }

    /// The first record of column `c` whose key is at least `key`: the fences bound it to
    /// the records after the last fence below `key`, up to the next fence, and a binary
    /// search of those finds it. (Equal keys may run across fences: the bound stays right
    /// because a fence equal to `key` is not below it.)
    fn column_bound(&self, c: usize, fences: &[u64], key: u64) -> Result<usize, DiskError> {
        let j = fences.partition_point(|&f| f < key);
        if j == 0 {
            return Ok(0); // record 0's key is at least `key` (or there is no record)
        }
        // Record (j - 1) × FENCE is below `key`; record j × FENCE (if any) is not.
        let (mut lo, mut hi) = ((j - 1) * FENCE + 1, (j * FENCE).min(self.entries));
        let (s, kb) = (S_COLUMNS + c, self.shape.key_bytes);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.file.key(s, mid, kb)? < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Column `c`'s fences, read (and checked: ascending) on the first call.
    fn fences(&self, c: usize) -> Result<&[u64], DiskError> {
        if let Some(f) = self.fences[c].get() {
            return Ok(f);
        }
        let bytes = self.file.bytes(self.file.section(S_COLUMNS + self.shape.columns + c))?;
        let fences: Box<[u64]> = bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        if fences.windows(2).any(|w| w[0] > w[1]) {
            return Err(DiskError::corrupt(
                self.path(),
                format!("the fences of column {c} are not in ascending order"),
            ));
        }
        Ok(self.fences[c].get_or_init(|| fences))
    }

    /// The document of record `i` of column `c`.
    pub(crate) fn column_doc(&self, c: usize, i: usize) -> Result<u32, DiskError> {
        let (_, d) = self.file.entry(S_COLUMNS + c, i, self.shape.key_bytes)?;
        self.check_doc(d)
    }

    fn check_doc(&self, d: u32) -> Result<u32, DiskError> {
        if d as usize >= self.docs {
            return Err(DiskError::corrupt(
                self.path(),
                format!("a table names document {d} of {}", self.docs),
            ));
        }
        Ok(d)
    }

    /// Looks up ids by hash: for each `(hash, _)` of `sorted` (ascending hashes), the
    /// documents of this segment whose id has that hash, through `found(index in sorted,
    /// doc)`. Gallops through the id table, so a batch costs about `batch × log(docs /
    /// batch)` reads.
    pub(crate) fn ids_with_hashes(
        &self,
        sorted: &[(u64, u32)],
        mut found: impl FnMut(usize, u32) -> Result<(), DiskError>,
    ) -> Result<(), DiskError> {
        let mut at = 0;
        for (i, &(h, _)) in sorted.iter().enumerate() {
            at = self.lower_bound(S_ID_TABLE, ID_KEY, self.docs, at, h)?;
            let mut j = at;
            while j < self.docs {
                let (k, d) = self.file.entry(S_ID_TABLE, j, ID_KEY)?;
                if k != h {
                    break;
                }
                found(i, self.check_doc(d)?)?;
                j += 1;
            }
        }
        Ok(())
    }

    /// The document whose id is `id`, if any.
    pub(crate) fn find_id(&self, id: &str) -> Result<Option<u32>, DiskError> {
        let mut hit = None;
        self.ids_with_hashes(&[(xxh3_64(id.as_bytes()), 0)], |_, d| {
            if hit.is_none() && self.id_bytes(d as usize)? == id.as_bytes() {
                hit = Some(d);
            }
            Ok(())
        })?;
        Ok(hit)
    }

    fn records(&self, section: usize, kb: usize, len: usize) -> Entries<'_> {
        Box::new((0..len).map(move |i| self.file.entry(section, i, kb)))
    }
}

impl Source for Segment {
    fn docs(&self) -> usize {
        self.docs
    }

    fn entries(&self) -> u64 {
        self.entries as u64
    }

    fn values(&self) -> u64 {
        self.file.header.values
    }

    fn id(&self, doc: usize) -> Result<&[u8], DiskError> {
        self.id_bytes(doc)
    }

    fn payload(&self, doc: usize, out: &mut Vec<u64>) -> Result<(), DiskError> {
        self.read_payload(doc, out)
    }

    fn id_table(&self) -> Entries<'_> {
        self.records(S_ID_TABLE, ID_KEY, self.docs)
    }

    fn column(&self, c: usize) -> Entries<'_> {
        self.records(S_COLUMNS + c, self.shape.key_bytes, self.entries)
    }
}
