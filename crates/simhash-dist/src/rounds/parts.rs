//! Round `parts` (`--output-dir DIR`): the output cut into one file per piece of the input
//! ([`PieceOrder`]), each written by the worker that read the piece, so that no worker
//! holds more of the output than the lines of the records it read.
//!
//! The parts are `DIR/part-00000.tsv`, `part-00001.tsv`, ... (`.jsonl` for `dedup` of
//! JSONL), numbered in input order: concatenated in the order of their names, they are
//! byte for byte the output `-o` writes (the header is in the first part only). Every
//! piece gets a part, empty when nothing in it is written. A pair is in the part of its
//! first record, a cluster in the part of its first member, a kept record in its own.
//!
//! Crosses the network:
//! * `pairs`: each pair to the reader of its first record ([`InputPlan::owner`]); then the
//!   position of each record a worker's pairs name, to its reader, and back its id and
//!   fingerprint;
//! * `cluster`: the spanning-forest edges joined into components by all workers together,
//!   each named by its smallest position, told to each member's reader ([`components`]); each
//!   member's position, id and fingerprint to the reader of its component's first member;
//!   and each worker's count of clusters per part to every worker, which numbers them;
//! * `dedup`: nothing (each worker writes the kept lines it read again), but for the
//!   position of the first hash TSV header, to every worker;
//! * last ([`commit`]): each worker's write error, if any, to every worker: the parts are
//!   renamed into place only when every worker wrote all of its own; then each worker's
//!   rename error, if any, to every worker: on one, every worker removes the parts it put
//!   in place, so that a failed job leaves no part of its output.

use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::Context;
use simhash_io::{ClustersTsv, Measure, Output, PairsTsv, ParquetCompression, ParquetCopy, Parser};
use timely::worker::Worker;

use super::gather::{Matched, Record};
use super::kept::{self, KeptLines};
use super::stream::Spool;
use super::tables::Links;
use super::{all_gather, components, exchange};
use crate::share::{Docs, InputPlan, PieceOrder, Share, position};

/// The parts of one job's output.
#[derive(Debug)]
pub(crate) struct Parts<'a> {
    sink: Sink<'a>,
    /// The pieces in input order: a piece's number in the output.
    pub(crate) order: PieceOrder,
    extension: &'static str,
}

/// Where a worker's parts go.
#[derive(Debug)]
enum Sink<'a> {
    /// `--output-dir DIR`: a file each.
    Dir(&'a Path),
    /// `-o`: one after the other in a temporary file, which worker 0 then receives a
    /// window at a time ([`super::stream`]) and writes as the output.
    Spool(Rc<RefCell<Spool<BufWriter<File>>>>),
}

impl<'a> Parts<'a> {
    /// The parts of `plan`'s pieces in `dir`, named `part-NNNNN.{extension}`.
    pub(crate) fn new(dir: &'a Path, plan: &InputPlan, extension: &'static str) -> Parts<'a> {
        Parts { sink: Sink::Dir(dir), order: plan.pieces_in_order(), extension }
    }

    /// The parts of `plan`'s pieces, in a temporary file ([`Parts::into_spool`]).
    pub(crate) fn spooled(plan: &InputPlan) -> anyhow::Result<Parts<'a>> {
        let file = simhash_io::temp_file("the output's lines")?;
        let spool = Spool::new(BufWriter::with_capacity(1 << 20, file));
        let sink = Sink::Spool(Rc::new(RefCell::new(spool)));
        Ok(Parts { sink, order: plan.pieces_in_order(), extension: "" })
    }

    /// The temporary file of [`Parts::spooled`] parts, written and ready to be read.
    pub(crate) fn into_spool(self) -> anyhow::Result<Spool<File>> {
        let Sink::Spool(spool) = self.sink else {
            anyhow::bail!("internal error: the parts are files");
        };
        let spool = Rc::try_unwrap(spool)
            .map_err(|_| anyhow::anyhow!("internal error: a part is still open"))?
            .into_inner();
        spool
            .map_source(|w| w.into_inner().map_err(std::io::IntoInnerError::into_error))
            .context("writing the output's temporary file")
    }

    /// The path of part `piece`: its number has at least five digits, and as many as the
    /// last part's, so that the names sort in input order.
    pub(crate) fn path(&self, piece: usize) -> PathBuf {
        let dir = match &self.sink {
            Sink::Dir(dir) => dir,
            Sink::Spool(_) => Path::new(""),
        };
        let width = self.order.len().saturating_sub(1).to_string().len().max(5);
        dir.join(format!("part-{piece:0width$}.{}", self.extension))
    }

    /// Creates part `piece` (a temporary file until [`commit`], or the spool's next part).
    fn create(&self, piece: usize) -> anyhow::Result<PartWriter> {
        Ok(match &self.sink {
            Sink::Dir(_) => PartWriter::File(self.create_file(piece)?, self.path(piece)),
            Sink::Spool(spool) => PartWriter::Spool(Rc::clone(spool), piece),
        })
    }

    /// Creates part `piece` as a file of `--output-dir` (Parquet parts are files).
    fn create_file(&self, piece: usize) -> anyhow::Result<Output> {
        anyhow::ensure!(
            matches!(self.sink, Sink::Dir(_)),
            "internal error: Parquet parts need --output-dir"
        );
        Ok(Output::create_for("--output-dir", &self.path(piece))?)
    }
}

/// A part being written.
enum PartWriter {
    /// A file of `--output-dir`, and its path.
    File(Output, PathBuf),
    /// Part `piece` of the spool.
    Spool(Rc<RefCell<Spool<BufWriter<File>>>>, usize),
}

impl PartWriter {
    /// Closes the part: a file goes to `written` to be committed.
    fn finish(self, written: &mut Written) -> anyhow::Result<()> {
        if let PartWriter::File(out, path) = self {
            written.outputs.push(out.close()?);
            written.paths.push(path);
        }
        Ok(())
    }
}

impl Write for PartWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            PartWriter::File(out, _) => out.write(buf),
            PartWriter::Spool(spool, piece) => {
                spool.borrow_mut().push(*piece, buf)?;
                Ok(buf.len())
            }
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            PartWriter::File(out, _) => out.write_all(buf),
            PartWriter::Spool(spool, piece) => spool.borrow_mut().push(*piece, buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            PartWriter::File(out, _) => out.flush(),
            PartWriter::Spool(..) => Ok(()),
        }
    }
}

/// The name of a file a part of an earlier job's output may have: `part-` and a number.
pub(crate) fn is_part_name(name: &str) -> bool {
    name.strip_prefix("part-").is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// Prepares `--output-dir DIR` before anything is read (every process does): creates it,
/// and refuses a directory that holds parts already, which the new parts might not all
/// replace (concatenated, the two outputs would mix).
pub(crate) fn prepare(dir: &Path) -> anyhow::Result<()> {
    let shown = dir.display();
    std::fs::create_dir_all(dir).with_context(|| format!("--output-dir {shown}: cannot create"))?;
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("--output-dir {shown}: cannot read"))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("--output-dir {shown}: cannot read"))?;
        let name = entry.file_name();
        if is_part_name(&name.to_string_lossy()) {
            anyhow::bail!(
                "--output-dir {shown}: already holds {} (an earlier output?): remove the \
                 part-* files or give another directory",
                name.to_string_lossy()
            );
        }
    }
    Ok(())
}

/// `pairs`: the pairs whose first record this worker read (as `(a, b, score code)`, sorted
/// as `simhash pairs` writes them), and the records they name, sorted by position.
pub(crate) fn pairs(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    matched: Matched,
) -> (Vec<(u64, u64, u32)>, Vec<Record>) {
    let Matched { links, copies, copy_code, .. } = matched;
    let rep_pairs = match links {
        Links::Pairs(pairs) => pairs,
        Links::Forest(_) => Vec::new(),
    };
    let copies =
        copies.into_iter().map(|(rep, member)| (rep.min(member), rep.max(member), copy_code));
    let all = rep_pairs.into_iter().chain(copies);
    let mut links = exchange(worker, all.map(|link| (plan.owner(link.0), link)));
    links.sort_unstable();
    let mut needed: Vec<u64> = links.iter().flat_map(|&(a, b, _)| [a, b]).collect();
    needed.sort_unstable();
    needed.dedup();
    let records = ask(worker, plan, docs, &needed);
    (links, records)
}

/// The position, id and fingerprint of each record at `needed`, from their readers,
/// sorted by position.
fn ask(worker: &mut Worker, plan: &InputPlan, docs: &Docs, needed: &[u64]) -> Vec<Record> {
    let me = worker.index();
    let requests = exchange(worker, needed.iter().map(|&pos| (plan.owner(pos), (pos, me))));
    let answers = requests.into_iter().filter_map(|(pos, from)| {
        let d = docs.find(pos)?;
        Some((from, (pos, docs.id(d), docs.fp[d])))
    });
    let mut records: Vec<Record> = exchange(worker, answers);
    records.sort_unstable_by_key(|r| r.0);
    records
}

/// What this worker wrote: its parts (closed, uncommitted), its lines, and for `cluster`
/// its clusters and the largest one's size.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The parts written, closed and not yet committed.
    pub(crate) outputs: Vec<Output>,
    /// Their final paths (`--output-dir`).
    pub(crate) paths: Vec<PathBuf>,
    /// Lines written.
    pub(crate) lines: u64,
    /// `cluster`: the clusters written.
    pub(crate) clusters: u64,
    /// `cluster`: the size of the largest.
    pub(crate) largest: u64,
}

/// Writes the parts of this worker's pieces with its `pairs` (sorted, each in the piece of
/// its first record) and the `records` they name.
pub(crate) fn write_pairs(
    parts: &Parts<'_>,
    me: usize,
    links: &[(u64, u64, u32)],
    records: &[Record],
    measure: Measure,
) -> anyhow::Result<Written> {
    let id = |pos: u64| match records.binary_search_by_key(&pos, |r| r.0) {
        Ok(i) => Ok(records[i].1.as_str()),
        Err(_) => Err(anyhow::anyhow!("internal error: a paired record's id is missing")),
    };
    let mut written = Written::default();
    let mut links = links.iter().peekable();
    for piece in parts.order.of_worker(me) {
        let out = parts.create(piece)?;
        // With minhash, a fourth column: each pair's relation (carried in its code).
        let related = measure == Measure::Jaccard;
        let mut tsv = match (piece == 0, related) {
            (true, true) => PairsTsv::with_relations(out, measure)?,
            (true, false) => PairsTsv::new(out, measure)?,
            (false, true) => PairsTsv::continued_with_relations(out, measure),
            (false, false) => PairsTsv::continued(out, measure),
        };
        while let Some(&(a, b, code)) = links.next_if(|l| parts.order.of(l.0) == piece) {
            if related {
                let (code, relation) = super::dedup::split_code(code);
                tsv.pair_related(id(a)?, id(b)?, code, relation.name())?;
            } else {
                tsv.pair(id(a)?, id(b)?, code)?;
            }
            written.lines += 1;
        }
        tsv.into_inner().finish(&mut written)?;
    }
    anyhow::ensure!(links.next().is_none(), "internal error: a pair is in no piece of its reader");
    Ok(written)
}

/// A cluster member on its way to the writer of its cluster: the cluster's first member's
/// position, its own position, id and fingerprint.
type Member = (u64, u64, String, Option<u64>);

/// `cluster`: the members of the clusters whose first member this worker read, sorted by
/// cluster and position. With `singletons`, every record is in one.
pub(crate) fn clusters(
    worker: &mut Worker,
    plan: &InputPlan,
    docs: &Docs,
    matched: Matched,
    singletons: bool,
) -> Vec<Member> {
    let edges = match matched.links {
        Links::Forest(forest) => forest.edges,
        Links::Pairs(_) => Vec::new(),
    };
    let roots = components::run(worker, plan, edges);
    let members = (0..docs.len()).filter(|&d| !docs.removed[d]).filter_map(|d| {
        let pos = docs.pos[d];
        let root = match roots.binary_search_by_key(&pos, |r| r.0) {
            Ok(i) => roots[i].1,
            Err(_) if singletons => pos,
            Err(_) => return None,
        };
        Some((plan.owner(root), (root, pos, docs.id(d), docs.fp[d])))
    });
    let mut members: Vec<Member> = exchange(worker, members);
    members.sort_unstable_by_key(|m| (m.0, m.1));
    members
}

/// Writes the parts of this worker's pieces with the clusters of `members` (from
/// [`clusters`]), numbered as `simhash cluster` numbers them: in the order of their first
/// members, over every worker's clusters (a round: each worker's count per part).
pub(crate) fn write_clusters(
    worker: &mut Worker,
    parts: &Parts<'_>,
    members: &[Member],
) -> anyhow::Result<Written> {
    let me = worker.index();
    let clusters: Vec<&[Member]> = members.chunk_by(|a, b| a.0 == b.0).collect();
    let mine = parts.order.of_worker(me);
    let counts: Vec<(usize, u64)> = mine
        .iter()
        .map(|&piece| {
            (piece, clusters.iter().filter(|c| parts.order.of(c[0].0) == piece).count() as u64)
        })
        .collect();
    let mut all: Vec<(usize, u64)> = all_gather(worker, &counts).concat();
    all.sort_unstable();
    // The number of each part's first cluster: the clusters of the parts before it.
    let mut first = vec![0u64; parts.order.len()];
    let mut total = 0;
    for (piece, count) in all {
        first[piece] = total;
        total += count;
    }
    let mut written = Written::default();
    let mut clusters = clusters.into_iter().peekable();
    for piece in mine {
        let out = parts.create(piece)?;
        let mut tsv = if piece == 0 { ClustersTsv::new(out)? } else { ClustersTsv::continued(out) };
        let mut number = first[piece];
        while let Some(cluster) = clusters.next_if(|c| parts.order.of(c[0].0) == piece) {
            for (_, _, id, fp) in cluster {
                tsv.member(id, *fp, number)?;
            }
            number += 1;
            written.lines += cluster.len() as u64;
            written.clusters += 1;
            written.largest = written.largest.max(cluster.len() as u64);
        }
        tsv.into_inner().finish(&mut written)?;
    }
    anyhow::ensure!(
        clusters.next().is_none(),
        "internal error: a cluster is in no piece of its reader"
    );
    Ok(written)
}

/// `dedup`: writes the parts of this worker's pieces with its kept lines, read again as
/// they are written ([`KeptLines::for_each`]).
pub(crate) fn write_kept(parts: &Parts<'_>, kept: &KeptLines<'_>) -> anyhow::Result<Written> {
    let pieces = parts.order.of_worker(kept.me);
    let mut cursor =
        PartCursor { parts, pieces, created: 0, current: None, written: Written::default() };
    let lines = kept.for_each(|pos, line| {
        cursor.at(parts.order.of(pos))?.write_all(line)?;
        Ok(())
    })?;
    let mut written = cursor.finish()?;
    written.lines = lines;
    Ok(written)
}

/// A worker's parts written one after the other, in input order, each closed before the
/// next is created, each created even when nothing goes in it.
struct PartCursor<'p, 'a> {
    parts: &'p Parts<'a>,
    /// This worker's pieces, in order, and how many of them have their part created.
    pieces: Vec<usize>,
    created: usize,
    /// The part being written (that of `pieces[created - 1]`).
    current: Option<PartWriter>,
    written: Written,
}

impl PartCursor<'_, '_> {
    /// The part of `piece`, which this worker read: the parts before it are closed (and
    /// created first, empty, if they were not).
    fn at(&mut self, piece: usize) -> anyhow::Result<&mut PartWriter> {
        while self.current.is_none() || self.pieces[self.created - 1] != piece {
            anyhow::ensure!(
                self.pieces.get(self.created).is_some_and(|&p| p <= piece),
                "internal error: a kept line is in no piece of this worker's"
            );
            self.close()?;
            let next = self.pieces[self.created];
            self.current = Some(self.parts.create(next)?);
            self.created += 1;
        }
        self.current.as_mut().context("internal error: no part open")
    }

    fn close(&mut self) -> anyhow::Result<()> {
        match self.current.take() {
            Some(out) => out.finish(&mut self.written),
            None => Ok(()),
        }
    }

    /// Closes the last part and creates the ones left, empty.
    fn finish(mut self) -> anyhow::Result<Written> {
        if let Some(&last) = self.pieces.last() {
            self.at(last)?;
        }
        self.close()?;
        Ok(self.written)
    }
}

/// `dedup` of Parquet input: writes the part of each Parquet file this worker read (a
/// piece is a whole file), its rows but the `removed` ones (positions, ascending) copied with the file's schema, in the file's
/// codec or `compression` ([`ParquetCopy`], as `simhash dedup --output-dir` writes them).
/// A file that could not be read as Parquet (reported in the first pass) gets no part, as
/// in `simhash`.
pub(crate) fn write_kept_rows(
    me: usize,
    parts: &Parts<'_>,
    (plan, share): (&InputPlan, &Share),
    removed: &[u64],
    (parser, compression): (&Parser, ParquetCompression),
) -> anyhow::Result<Written> {
    let Parser::Json(columns) = parser else {
        anyhow::bail!("Parquet input holds text columns: --format hash does not apply");
    };
    let docs = &share.docs;
    let kept = |pos: u64| {
        docs.find(pos).is_some_and(|d| !docs.removed[d]) && removed.binary_search(&pos).is_err()
    };
    let expected = (0..docs.len()).filter(|&d| !docs.removed[d]).count() - removed.len();
    let mut written = Written::default();
    for piece in parts.order.of_worker(me) {
        let file = parts.order.file(piece);
        let path = plan.files[file].path().context("internal error: a Parquet file has no path")?;
        let read = share.chunks.iter().any(|c| c.file == file && c.lines > 0);
        if !read && ParquetCopy::new(std::io::sink(), path, ParquetCompression::Mirror).is_err() {
            continue;
        }
        let mut copy = ParquetCopy::new(parts.create_file(piece)?, path, compression)?;
        copy.copy(path, columns, |row, _, _| {
            let keep = kept(position(file, row));
            written.lines += u64::from(keep);
            Ok(keep)
        })?;
        written.paths.push(parts.path(piece));
        written.outputs.push(copy.finish()?.close()?);
    }
    anyhow::ensure!(
        written.lines == expected as u64,
        "worker {me}: the input changed while it was read ({} of the {expected} kept records \
         found again); nothing was written",
        written.lines
    );
    Ok(written)
}

/// Puts every worker's outputs in place, or none: first every worker's write error is
/// told to all (on one, every worker drops its outputs, whose temporary files go); then
/// each worker renames its own ([`simhash_io::commit_all`]), and the rename errors are
/// told to all: on one, every worker removes the `paths` it put in place.
pub(crate) fn commit(
    worker: &mut Worker,
    outputs: Result<Vec<Output>, String>,
    paths: &[PathBuf],
) -> Result<(), Vec<String>> {
    let (outputs, error) = match outputs {
        Ok(outputs) => (outputs, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    if let Err(errors) = kept::agree(worker, error.as_deref()) {
        drop(outputs);
        return Err(errors);
    }
    let (count, me) = (outputs.len(), worker.index());
    let renamed = crate::failure::commit(
        || format!("worker {me}'s {count} output files"),
        || simhash_io::commit_all(outputs),
    )
    .err()
    .map(|e| format!("{:#}", anyhow::Error::from(e)));
    let agreed = kept::agree(worker, renamed.as_deref());
    if agreed.is_err() && renamed.is_none() {
        for path in paths {
            let _ = std::fs::remove_file(path);
        }
    }
    agreed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_parts_are_recognised_by_name() {
        assert!(is_part_name("part-00012.tsv"));
        assert!(!is_part_name("part-x.tsv"));
        assert!(!is_part_name("parts.tsv"));
        assert!(!is_part_name("a-part-00001.tsv"));
    }
}
