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
//! * `cluster`: the spanning-forest edges to worker 0, which names each component by its
//!   smallest position and tells each member's reader ([`dedup::components`]); each
//!   member's position, id and fingerprint to the reader of its component's first member;
//!   and each worker's count of clusters per part to every worker, which numbers them;
//! * `dedup`: nothing (each worker writes the kept lines it read again), but for the
//!   position of the first hash TSV header, to every worker;
//! * last ([`commit`]): each worker's write error, if any, to every worker: the parts are
//!   renamed into place only when every worker wrote all of its own; then each worker's
//!   rename error, if any, to every worker: on one, every worker removes the parts it put
//!   in place, so that a failed job leaves no part of its output.

use std::path::{Path, PathBuf};

use anyhow::Context;
use simhash_io::{ClustersTsv, Measure, Output, PairsTsv, ParquetCopy, Parser};
use timely::worker::Worker;

use super::dedup::Decision;
use super::gather::{Matched, Record};
use super::kept::{self, Line};
use super::tables::Links;
use super::{all_gather, dedup, exchange};
use crate::share::{Docs, InputPlan, PieceOrder, Share, position};

/// The parts of one job's output.
#[derive(Debug)]
pub(crate) struct Parts<'a> {
    dir: &'a Path,
    pub(crate) order: PieceOrder,
    extension: &'static str,
}

impl<'a> Parts<'a> {
    /// The parts of `plan`'s pieces in `dir`, named `part-NNNNN.{extension}`.
    pub(crate) fn new(dir: &'a Path, plan: &InputPlan, extension: &'static str) -> Parts<'a> {
        Parts { dir, order: plan.pieces_in_order(), extension }
    }

    /// The path of part `piece`: its number has at least five digits, and as many as the
    /// last part's, so that the names sort in input order.
    pub(crate) fn path(&self, piece: usize) -> PathBuf {
        let width = self.order.len().saturating_sub(1).to_string().len().max(5);
        self.dir.join(format!("part-{piece:0width$}.{}", self.extension))
    }

    /// Creates part `piece` (a temporary file until [`commit`]).
    fn create(&self, piece: usize) -> anyhow::Result<Output> {
        Ok(Output::create_for("--output-dir", &self.path(piece))?)
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
    pub(crate) outputs: Vec<Output>,
    pub(crate) paths: Vec<PathBuf>,
    pub(crate) lines: u64,
    pub(crate) clusters: u64,
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
        written.paths.push(parts.path(piece));
        let mut tsv = if piece == 0 {
            PairsTsv::new(out, measure)?
        } else {
            PairsTsv::continued(out, measure)
        };
        while let Some(&(a, b, code)) = links.next_if(|l| parts.order.of(l.0) == piece) {
            tsv.pair(id(a)?, id(b)?, code)?;
            written.lines += 1;
        }
        written.outputs.push(tsv.into_inner().close()?);
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
    let roots = dedup::components(worker, plan, edges);
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
        written.paths.push(parts.path(piece));
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
        written.outputs.push(tsv.into_inner().close()?);
    }
    anyhow::ensure!(
        clusters.next().is_none(),
        "internal error: a cluster is in no piece of its reader"
    );
    Ok(written)
}

/// `dedup`: writes the parts of this worker's pieces with its kept `lines` (sorted by
/// position; the first hash TSV header of the input only, told in a round).
pub(crate) fn write_kept(
    worker: &mut Worker,
    parts: &Parts<'_>,
    lines: &[Line],
) -> anyhow::Result<Written> {
    let mine = lines.iter().find(|l| l.1).map(|l| l.0);
    let header = all_gather(worker, &mine).into_iter().flatten().min();
    let mut written = Written::default();
    let mut lines = lines.iter().peekable();
    for piece in parts.order.of_worker(worker.index()) {
        let mut out = parts.create(piece)?;
        written.paths.push(parts.path(piece));
        while let Some((pos, is_header, bytes)) = lines.next_if(|l| parts.order.of(l.0) == piece) {
            if *is_header && Some(*pos) != header {
                continue;
            }
            written.lines += u64::from(!*is_header);
            std::io::Write::write_all(&mut out, bytes)?;
        }
        written.outputs.push(out.close()?);
    }
    anyhow::ensure!(lines.next().is_none(), "internal error: a kept line is in no piece");
    Ok(written)
}

/// `dedup` of Parquet input: writes the part of each Parquet file this worker read (a
/// piece is a whole file), its kept rows copied with the file's schema and compression
/// ([`ParquetCopy`], as `simhash dedup --output-dir` writes them). A file that could not
/// be read as Parquet (reported in the first pass) gets no part, as in `simhash`.
pub(crate) fn write_kept_rows(
    me: usize,
    parts: &Parts<'_>,
    (plan, share): (&InputPlan, &Share),
    decisions: &[Decision],
    parser: &Parser,
) -> anyhow::Result<Written> {
    let Parser::Json(columns) = parser else {
        anyhow::bail!("Parquet input holds text columns: --format hash does not apply");
    };
    let docs = &share.docs;
    let kept = |pos: u64| {
        docs.find(pos).is_some_and(|d| !docs.removed[d])
            && decisions.binary_search_by_key(&pos, |d| d.0).is_err()
    };
    let expected = (0..docs.len()).filter(|&d| !docs.removed[d]).count() - decisions.len();
    let mut written = Written::default();
    for piece in parts.order.of_worker(me) {
        let file = parts.order.file(piece);
        let path = plan.files[file].path().context("internal error: a Parquet file has no path")?;
        let read = share.chunks.iter().any(|c| c.file == file && c.lines > 0);
        if !read && ParquetCopy::new(std::io::sink(), path).is_err() {
            continue;
        }
        let mut copy = ParquetCopy::new(parts.create(piece)?, path)?;
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
    let renamed =
        simhash_io::commit_all(outputs).err().map(|e| format!("{:#}", anyhow::Error::from(e)));
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
