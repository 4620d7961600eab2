//! Round `kept` (`dedup`): the lines `simhash dedup` writes, from the workers that read
//! them.
//!
//! Each worker reads its pieces of the input again and keeps, byte for byte, the lines of
//! its records that the walk kept ([`crate::rounds::dedup`]), and any hash TSV header
//! (the output has one, the first file's). With `--removed`, each removed record's reader
//! asks the kept record's reader for its id, and writes the record's line.
//!
//! Crosses the network: the ids of kept records that removed ones duplicate (`--removed`:
//! requests, then answers); then each worker's lines to worker 0, which writes them in
//! input order; then each worker's error, if any, to every worker.

use anyhow::Context;
use simhash_io::{IdValue, LineReader, LineStatus, Parser};
use timely::worker::Worker;

use super::dedup::Decision;
use super::{all_gather, exchange};
use crate::share::{InputPlan, Share, position};

/// A line to write: its position, whether it is a header, and its bytes (with `\n`).
pub(crate) type Line = (u64, bool, Vec<u8>);

/// The kept lines of this worker's pieces, in input order, or why they cannot be read.
pub(crate) fn kept_lines(
    plan: &InputPlan,
    me: usize,
    share: &Share,
    decisions: &[Decision],
    parser: &Parser,
    max: u64,
) -> anyhow::Result<Vec<Line>> {
    let docs = &share.docs;
    let kept = |pos: u64| {
        docs.find(pos).is_some_and(|d| !docs.removed[d])
            && decisions.binary_search_by_key(&pos, |d| d.0).is_err()
    };
    let expected = (0..docs.len()).filter(|&d| !docs.removed[d]).count() - decisions.len();
    let mut out = Vec::new();
    let mut found = 0usize;
    for (file, lo, hi) in plan.pieces(me) {
        let name = &plan.files[file].name;
        let (reader, first) = share.reopen(plan, file, lo, max)?;
        let mut lines = LineReader::new(reader, max);
        let (mut buf, mut raw) = (Vec::new(), Vec::new());
        let mut local = 0u64;
        loop {
            let start = first + lines.bytes;
            if start >= hi {
                break;
            }
            buf.clear();
            raw.clear();
            let Some(status) = lines
                .next_line(&mut buf, Some(&mut raw))
                .with_context(|| format!("{name}: read error at byte {start}"))?
            else {
                break;
            };
            local += 1;
            let pos = position(file, start);
            let header = lo == 0 && parser.skips_header(local, &buf);
            let wanted = header || (status == LineStatus::Ok && kept(pos));
            if !wanted {
                continue;
            }
            found += usize::from(!header);
            if raw.last() != Some(&b'\n') {
                raw.push(b'\n');
            }
            out.push((pos, header, std::mem::take(&mut raw)));
        }
    }
    anyhow::ensure!(
        found == expected,
        "worker {me}: the input changed while it was read ({found} of the {expected} kept \
         records found again); nothing was written"
    );
    Ok(out)
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
        let _ = simhash_io::write_removed(&mut line, &doc, &kept, removal.score());
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

/// Writes the lines (sorted by position: one header, the first) to `out`; returns how
/// many records it wrote.
pub(crate) fn write_lines(out: &mut impl std::io::Write, lines: &[Line]) -> std::io::Result<u64> {
    let mut header_written = false;
    let mut written = 0;
    for (_, header, bytes) in lines {
        if *header {
            if header_written {
                continue;
            }
            header_written = true;
        } else {
            written += 1;
        }
        out.write_all(bytes)?;
    }
    Ok(written)
}
