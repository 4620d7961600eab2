//! Round `tables`: the matching, one epoch per permutation table.
//!
//! Crosses the network: every representative ([`crate::rounds::collapse`]) once per table,
//! as a `(table, position, fingerprint, multiplicity)` record, to the worker a well-mixed
//! hash of (table, prefix) picks ([`mix`]): all records that share a prefix in a table meet
//! on one worker. That worker groups them by prefix when the epoch is complete and runs the
//! index's pairing kernel ([`pair_group`]) on each group, with the single-machine index's
//! "first table owns the pair" rule, so each pair is found once. The driver waits on a probe
//! for each epoch before feeding the next, so at most one table is in memory. Records never
//! travel, only fingerprints; the pairs found stay on the worker that found them until
//! [`crate::rounds::parts`].

use std::cell::RefCell;
use std::rc::Rc;

use simhash_core::Fingerprint;
use simhash_index::{Blocks, Tables, pair_group};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use super::collapse::{Collapsed, Rep};
use super::mix;
use crate::forest::Forest;
use crate::plan::Mode;

/// What the matching found on one worker.
#[derive(Debug, Default)]
pub(crate) struct Matches {
    /// Record pairs they stand for (the product of the two multiplicities).
    pub(crate) record_pairs: u64,
    /// The largest prefix group this worker reduced, in representatives.
    pub(crate) largest_group: u64,
    /// Representatives this worker received over all tables (its shuffle share).
    pub(crate) received: u64,
}

/// What this worker's part of the matching links, by mode.
#[derive(Debug)]
pub(crate) enum Links {
    /// `pairs`: the representative pairs found here, with their score's code (the
    /// distance, or the Jaccard similarity as [`simhash_io::Score::code`] writes it).
    Pairs(Vec<(u64, u64, u32)>),
    /// `cluster`: a spanning forest of the pairs found here and of the copies collapsed
    /// here, so that only edges that join two components travel.
    Forest(Forest),
}

impl Links {
    /// Empty links for `mode`: pairs, or a forest of at most `capacity` positions
    /// ([`crate::forest::CAPACITY`] but in tests).
    pub(crate) fn new(mode: Mode, capacity: usize) -> Links {
        match mode {
            // `decontaminate` links nothing.
            Mode::Pairs | Mode::Decontaminate => Links::Pairs(Vec::new()),
            Mode::Cluster { .. } | Mode::Dedup { .. } => {
                Links::Forest(Forest::with_capacity(capacity))
            }
        }
    }

    /// Worker `me`'s message if its forest filled up ([`Forest::check`]): the job fails
    /// with it on every worker, at the next agreement.
    pub(crate) fn full(&self, me: usize) -> Option<String> {
        match self {
            Links::Forest(forest) => forest.check().err().map(|e| format!("worker {me}: {e}")),
            Links::Pairs(_) => None,
        }
    }

    /// Adds the pair `a < b` with its score's code.
    pub(crate) fn add(&mut self, a: u64, b: u64, code: u32) {
        match self {
            Links::Pairs(pairs) => pairs.push((a, b, code)),
            Links::Forest(forest) => forest.union(a, b),
        }
    }
}

/// What the round found on this worker.
#[derive(Debug)]
pub(crate) struct Found {
    /// The permutation tables the planner chose.
    pub(crate) tables: Tables,
    /// The counts of the table round on this worker.
    pub(crate) matches: Matches,
    /// The pairs or the forest this worker found.
    pub(crate) links: Links,
}

/// Plans the tables for the job's fingerprinted documents (every worker alike, from the
/// census) and matches the representatives `collapsed` holds into `links` (empty: pairs or
/// a forest, as the mode needs). Fails, on every worker alike, when the planner refuses the
/// settings. `inject_panic`: the worker that panics here (`--inject-panic`, for tests).
pub(crate) fn run(
    worker: &mut Worker,
    (mut links, inject_panic): (Links, Option<usize>),
    (distance, blocks): (u32, Blocks),
    fingerprinted: u64,
    collapsed: &Collapsed,
) -> Result<Found, Vec<String>> {
    let tables = blocks
        .tables(fingerprinted, distance)
        .map_err(|e| vec![format!("invalid --blocks and -k/--distance: {e}")])?;
    let me = worker.index();
    assert!(inject_panic != Some(me), "worker {me}: injected panic (--inject-panic)");
    if let Links::Forest(forest) = &mut links {
        for &(rep, member) in &collapsed.copies {
            forest.union(rep, member);
        }
    }
    let links = Rc::new(RefCell::new(links));
    let sink = Rc::clone(&links);
    let matches = table_phase(worker, &tables, distance, &collapsed.reps, move |a, b, d, _| {
        sink.borrow_mut().add(a, b, d);
    });
    let links = links.replace(Links::Pairs(Vec::new()));
    Ok(Found { tables, matches, links })
}

/// Runs every table over the representatives, one epoch per table, and calls `sink` with
/// each pair found on this worker; returns the counts.
fn table_phase(
    worker: &mut Worker,
    tables: &Tables,
    max_distance: u32,
    reps: &[Rep],
    sink: impl FnMut(u64, u64, u32, u64) + 'static,
) -> Matches {
    let found = Rc::new(RefCell::new(Matches::default()));
    let mut input = InputHandle::<u64, CapacityContainerBuilder<Vec<(u32, u64, u64, u32)>>>::new();
    let probe = ProbeHandle::new();
    let key_tables = tables.clone();
    let reduce_tables = tables.clone();
    let state = Rc::clone(&found);
    let sink = Rc::new(RefCell::new(sink));
    worker.dataflow::<u64, _, _>(|scope| {
        input
            .to_stream(scope)
            .unary_frontier::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(move |&(t, _, fp, _): &(u32, u64, u64, u32)| {
                    let prefix =
                        key_tables.get(t as usize).map_or(0, |tb| tb.prefix(Fingerprint(fp)));
                    mix(u64::from(t), prefix)
                }),
                "PairGroups",
                move |_cap, _info| {
                    // Per epoch: the capability that holds it open, and its records.
                    let mut stash: Vec<(timely::dataflow::operators::Capability<u64>, Vec<_>)> =
                        Vec::new();
                    move |(input, frontier), _output| {
                        input.for_each(|cap, data| {
                            // Every record is sent at its table's epoch; a message with no
                            // time carries no records.
                            let Some(&time) = cap.least() else { return };
                            match stash.iter_mut().find(|(c, _)| *c.time() == time) {
                                Some((_, v)) => v.append(data),
                                None => {
                                    if let Some(c) = cap.retain_least(0) {
                                        stash.push((c, std::mem::take(data)));
                                    }
                                }
                            }
                        });
                        stash.retain_mut(|(cap, records)| {
                            if frontier.less_equal(cap.time()) {
                                return true;
                            }
                            reduce(&reduce_tables, max_distance, records, &state, &sink);
                            false
                        });
                    }
                },
            )
            .probe_with(&probe);
    });
    let mut batch = Vec::new();
    let (me, peers) = (worker.index() as u64, worker.peers() as u64);
    for (t, table) in tables.iter().enumerate() {
        batch.clear();
        batch.extend(reps.iter().map(|&(pos, fp, m)| (t as u32, pos, fp, m)));
        let mut sent = 0;
        for &record in &batch {
            if mix(t as u64, table.prefix(Fingerprint(record.2))) % peers != me {
                sent += 24; // timely's encoding of (u32, u64, u64, u32)
            }
            input.send(record);
        }
        super::count_sent(sent);
        input.advance_to(t as u64 + 1);
        while probe.less_than(&(t as u64 + 1)) {
            worker.step_or_park(None);
        }
    }
    drop(input);
    while !probe.done() {
        worker.step_or_park(None);
    }
    found.take()
}

/// One epoch's records on this worker: group by prefix, pair each group with the kernel.
fn reduce<F: FnMut(u64, u64, u32, u64)>(
    tables: &Tables,
    max_distance: u32,
    records: &mut [(u32, u64, u64, u32)],
    state: &RefCell<Matches>,
    sink: &RefCell<F>,
) {
    let Some(&(t, ..)) = records.first() else { return };
    let Some(table) = tables.get(t as usize) else { return };
    records.sort_unstable_by_key(|&(_, pos, fp, _)| (table.permute(Fingerprint(fp)), pos));
    let mut state = state.borrow_mut();
    let mut sink = sink.borrow_mut();
    state.received += records.len() as u64;
    let mut group: Vec<((u64, u32), Fingerprint)> = Vec::new();
    let mut start = 0;
    while start < records.len() {
        let prefix = table.prefix(Fingerprint(records[start].2));
        let mut end = start + 1;
        while end < records.len() && table.prefix(Fingerprint(records[end].2)) == prefix {
            end += 1;
        }
        state.largest_group = state.largest_group.max((end - start) as u64);
        if end - start > 1 {
            group.clear();
            group.extend(
                records[start..end].iter().map(|&(_, pos, fp, m)| ((pos, m), Fingerprint(fp))),
            );
            pair_group(table, max_distance, &group, |(a, ma), (b, mb), d| {
                let n = u64::from(ma) * u64::from(mb);
                state.record_pairs += n;
                sink(a, b, d, n);
            });
        }
        start = end;
    }
}
