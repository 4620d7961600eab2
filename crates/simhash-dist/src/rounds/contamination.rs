//! Round `contamination` (`decontaminate`): the hits of the whole corpus, from the scans
//! each worker made of its share as it read it ([`crate::share`]).
//!
//! Each worker tallies its documents' scans ([`Tally`]), each document numbered by its
//! position (positions sort in input order, as `simhash` numbers documents), the records
//! skipped for a duplicate id left out as `simhash` leaves them out. An n-gram's document
//! frequency (`--max-df`) needs every document, so the hits are decided only from all the
//! tallies: every worker receives every worker's, merges them in worker order and finishes
//! them ([`EvalSets::finish`], which sorts by document), so every worker has the same
//! hits, the ones `simhash decontaminate` finds. Then worker 0, which writes `--hits`,
//! receives the ids of the documents hit from the workers that read them.
//!
//! Crosses the network: each worker's tally to every worker (20 to 40 bytes per distinct
//! eval n-gram its documents contain, and the places of the n-grams in each document with
//! any; with a `--max-df` count, at most that many documents' per n-gram: bounded by the
//! eval sets, not the corpus), then the id of each document hit to worker 0.

use simhash_index::contamination::{DocHits, EvalSets, Report, Tally};
use timely::worker::Worker;

use super::{all_gather, exchange};
use crate::share::Share;

/// What the round found: the hits, the same on every worker, and on worker 0 the id of
/// each document hit (its position, its id and whether the id is a JSON number), by
/// position.
pub(crate) struct Found<'e> {
    /// Every (document, item) hit, documents numbered by position.
    pub(crate) report: Report<'e>,
    /// Worker 0: the ids of the documents hit, ascending by position (empty elsewhere).
    pub(crate) ids: Vec<(u64, (String, bool))>,
    /// The positions of the documents hit, ascending (on every worker).
    pub(crate) hit: Vec<u64>,
}

/// Tallies this worker's scans, gathers every worker's tally, and returns the hits (and,
/// on worker 0, the ids it writes them with). Fails alike on every worker when the eval
/// sets do not take the tallies (processes that loaded different eval sets).
pub(crate) fn run<'e>(
    worker: &mut Worker,
    eval: &'e EvalSets,
    share: &mut Share,
) -> Result<Found<'e>, Vec<String>> {
    let docs = &mut share.docs;
    let mut tally = Tally::new(eval);
    let mut scans = std::mem::take(&mut docs.scans).into_iter().peekable();
    for d in 0..docs.len() {
        let hits = match scans.peek() {
            Some((at, _)) if *at == d => scans.next().map(|(_, h)| h).unwrap_or_default(),
            _ => DocHits::default(),
        };
        // A record skipped for its id is no document: `simhash` neither counts nor scans it.
        if !docs.removed[d] {
            tally.add(docs.pos[d], hits);
        }
    }
    let mut tallies = all_gather(worker, &tally).into_iter();
    drop(tally);
    let mut all = tallies.next().unwrap_or_else(|| Tally::new(eval));
    let mut failed = None;
    for other in tallies {
        if let Err(e) = all.merge(other) {
            failed.get_or_insert_with(|| format!("the workers' eval sets differ: {e}"));
        }
    }
    let report = match failed {
        Some(message) => return Err(vec![message]),
        None => eval.finish(all).map_err(|e| vec![format!("{e}")])?,
    };
    let mut hit: Vec<u64> = report.hits.iter().map(|h| h.doc).collect();
    hit.dedup();
    let docs = &share.docs;
    let mine = hit.iter().filter_map(|&pos| docs.find(pos).map(|d| (0, (pos, docs.id_value(d)))));
    let mut ids = exchange(worker, mine);
    ids.sort_unstable_by_key(|(pos, _)| *pos);
    Ok(Found { report, ids, hit })
}
