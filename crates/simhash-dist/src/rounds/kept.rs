//! Round `kept` (`dedup`, and `decontaminate -o`): the lines `simhash dedup` writes, from
//! the workers that read them.
//!
//! Each worker reads its pieces of the input again and keeps, byte for byte, the lines of
//! its records that the walk kept ([`crate::rounds::dedup`]), and any hash TSV header
//! (the output has one, the first file's). With `--removed`, each removed record's reader
//! asks the kept record's reader for its id, and writes the record's line.
//!
//! Crosses the network: the ids of kept records that removed ones duplicate (`--removed`:
//! requests, then answers); the position of the output's hash TSV header, if any; then,
//! with `-o`, each worker's lines to worker 0, which writes them in input order a window at
//! a time ([`crate::rounds::stream`]); then each worker's error, if any, to every worker.
//! No worker holds its kept lines in memory: they go to its parts (`--output-dir`) or to a
//! temporary file as they are read again.

use simhash_io::{IdValue, LineReader, LineStatus, Parser};
use timely::worker::Worker;

use super::dedup::Decision;
use super::{all_gather, exchange};
use crate::share::{InputPlan, Share, piece_lines, position};

/// What the kept lines of one worker's pieces are read from: the walk's decisions, the
/// input again, and the position of the one hash TSV header the output has ([`header`]).
pub(crate) struct KeptLines<'a> {
    /// The input's files and pieces.
    pub(crate) plan: &'a InputPlan,
    /// This worker's index.
    pub(crate) me: usize,
    /// What this worker read.
    pub(crate) share: &'a Share,
    /// The positions of the records left out (the walk's removals, or the documents with
    /// eval text), ascending.
    pub(crate) removed: &'a [u64],
    /// Reads the lines again (JSON or hash TSV).
    pub(crate) parser: &'a Parser,
    /// `--max-record-bytes`: longer lines were bad records.
    pub(crate) max: u64,
    /// The position of the hash TSV header the output has, if any.
    pub(crate) header: Option<u64>,
}

impl KeptLines<'_> {
    /// Reads this worker's pieces again and calls `emit(position, line)` for each kept
    /// line (with its `\n`) and the output's header, in input order, one line in memory at
    /// a time. Returns how many records it gave (the header is not one), or why the input
    /// cannot be read, or `emit`'s error.
    pub(crate) fn for_each(
        &self,
        mut emit: impl FnMut(u64, &[u8]) -> anyhow::Result<()>,
    ) -> anyhow::Result<u64> {
        let (docs, removed, me) = (&self.share.docs, self.removed, self.me);
        let kept = |pos: u64| {
            docs.find(pos).is_some_and(|d| !docs.removed[d]) && removed.binary_search(&pos).is_err()
        };
        let expected = (0..docs.len()).filter(|&d| !docs.removed[d]).count() - removed.len();
        let mut found = 0usize;
        for (file, lo, hi) in self.plan.pieces(me) {
            let name = &self.plan.files[file].name;
            let (reader, first) = self.share.reopen(self.plan, file, lo, self.max)?;
            let each =
                |start: u64, local: u64, status: LineStatus, buf: &[u8], raw: &mut Vec<u8>| {
                    let pos = position(file, start);
                    let header = lo == 0 && self.parser.skips_header(local, buf);
                    let wanted = if header {
                        self.header == Some(pos)
                    } else {
                        status == LineStatus::Ok && kept(pos)
                    };
                    if !wanted {
                        return Ok(());
                    }
                    found += usize::from(!header);
                    if raw.last() != Some(&b'\n') {
                        raw.push(b'\n');
                    }
                    emit(pos, raw)
                };
            piece_lines(reader, first, hi, self.max, name, true, each)?;
        }
        anyhow::ensure!(
            found == expected,
            "worker {me}: the input changed while it was read ({found} of the {expected} kept \
             records found again); nothing was written"
        );
        Ok(found as u64)
    }
}

/// The position of the output's hash TSV header, told to every worker: the first line of
/// the first file that starts with one (`simhash` writes that one only). A worker that
/// cannot read a file's first line says nothing here: its read fails again when it writes.
pub(crate) fn header(
    worker: &mut Worker,
    plan: &InputPlan,
    share: &Share,
    parser: &Parser,
    max: u64,
) -> Option<u64> {
    let mut mine = None;
    if matches!(parser, Parser::Hash) {
        for (file, lo, _) in plan.pieces(worker.index()) {
            if lo != 0 {
                continue;
            }
            let Ok((reader, _)) = share.reopen(plan, file, lo, max) else { continue };
            let mut lines = LineReader::new(reader, max);
            let mut buf = Vec::new();
            if let Ok(Some(_)) = lines.next_line(&mut buf, None)
                && parser.skips_header(1, &buf)
            {
                mine = Some(position(file, 0));
                break;
            }
        }
    }
    all_gather(worker, &mine).into_iter().flatten().min()
}

/// `--removed`: each removed record's line (as `simhash dedup --removed` writes it), with
/// its position, for the removed records this worker read.
pub(crate) fn removed_lines(
    worker: &mut Worker,
    plan: &InputPlan,
    share: &Share,
    decisions: &[Decision],
) -> Vec<(u64, Vec<u8>)> {
    let (me, docs) = (worker.index(), &share.docs);
    let mut asked: Vec<u64> = decisions.iter().map(|d| d.1).collect();
    asked.sort_unstable();
    asked.dedup();
    let requests = exchange(worker, asked.iter().map(|&pos| (plan.owner(pos), (pos, me))));
    let answers = requests.into_iter().filter_map(|(pos, from)| {
        let d = docs.find(pos)?;
        Some((from, (pos, docs.id_value(d))))
    });
    let mut ids: Vec<(u64, (String, bool))> = exchange(worker, answers);
    ids.sort_unstable_by_key(|a| a.0);
    let mut out = Vec::new();
    for &(pos, kept, removal) in decisions {
        let (Some(d), Ok(k)) = (docs.find(pos), ids.binary_search_by_key(&kept, |a| a.0)) else {
            continue;
        };
        let (id, number) = docs.id_value(d);
        let (kept_id, kept_number) = &ids[k].1;
        let mut line = Vec::new();
        let doc = IdValue { text: id.into(), number };
        let kept = IdValue { text: kept_id.as_str().into(), number: *kept_number };
        // Writing to a Vec cannot fail.
        let relation = removal.relation().map(simhash_index::lsh::Relation::name);
        let _ = simhash_io::write_removed(&mut line, &doc, &kept, removal.score(), relation);
        out.push((pos, line));
    }
    out
}

/// Every worker's error, told to all: the messages the job fails with, if any.
pub(crate) fn agree(worker: &mut Worker, error: Option<&str>) -> Result<(), Vec<String>> {
    let errors: Vec<String> =
        all_gather(worker, &error.map(str::to_string)).into_iter().flatten().collect();
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}
