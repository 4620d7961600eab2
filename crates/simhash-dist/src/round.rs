//! The two dataflow shapes the job is made of, on timely-dataflow.
//!
//! * [`exchange`]: one all-to-all round. Every worker sends items addressed to workers and
//!   gets back what was addressed to it, once every worker has sent everything.
//! * [`table_phase`]: the matching. One epoch per permutation table: each worker feeds its
//!   `(table, id, fingerprint)` records, exchanged by a well-mixed hash of (table, prefix);
//!   the receiving worker groups them by prefix when the epoch is complete and runs the
//!   index's pairing kernel on each group. The driver waits on a probe for each epoch before
//!   feeding the next, so at most one table is in memory.
//!
//! Workers wait with `step_or_park`, which parks an idle worker's thread.

use std::cell::RefCell;
use std::rc::Rc;

use simhash_core::Fingerprint;
use simhash_index::{Tables, pair_group};
use timely::ExchangeData;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

/// Sends each `(target worker, item)` and returns the items addressed to this worker, in
/// no particular order. Every worker must call it, in the same sequence of rounds.
pub(crate) fn exchange<D: ExchangeData + Clone>(
    worker: &mut Worker,
    items: impl IntoIterator<Item = (usize, D)>,
) -> Vec<D> {
    let received = Rc::new(RefCell::new(Vec::new()));
    let mut input = InputHandle::<u64, CapacityContainerBuilder<Vec<(u64, D)>>>::new();
    let probe = ProbeHandle::new();
    let sink = Rc::clone(&received);
    worker.dataflow::<u64, _, _>(|scope| {
        input
            .to_stream(scope)
            .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|x: &(u64, D)| x.0),
                "Receive",
                move |_cap, _info| {
                    move |input, _output| {
                        input.for_each(|_cap, data| {
                            sink.borrow_mut().extend(data.drain(..).map(|(_, d)| d));
                        });
                    }
                },
            )
            .probe_with(&probe);
    });
    for (target, item) in items {
        input.send((target as u64, item));
    }
    drop(input);
    while !probe.done() {
        worker.step_or_park(None);
    }
    received.take()
}

/// Sends `item` to every worker and returns every worker's item, in worker order.
pub(crate) fn all_gather<D: ExchangeData + Clone>(worker: &mut Worker, item: &D) -> Vec<D> {
    let (me, peers) = (worker.index(), worker.peers());
    let mut got = exchange(worker, (0..peers).map(|w| (w, (me, item.clone()))));
    got.sort_by_key(|(from, _)| *from);
    got.into_iter().map(|(_, d)| d).collect()
}

/// A representative fingerprint in the table phase: its position, fingerprint, and how
/// many records share the fingerprint.
pub(crate) type Rep = (u64, u64, u32);

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

/// Runs every table over the representatives, one epoch per table, and calls `sink` with
/// each pair found on this worker; returns the counts.
pub(crate) fn table_phase(
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
    for t in 0..tables.len() {
        batch.clear();
        batch.extend(reps.iter().map(|&(pos, fp, m)| (t as u32, pos, fp, m)));
        for &record in &batch {
            input.send(record);
        }
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

/// A well-mixed 64-bit hash of (table, prefix): splitmix64's finaliser.
pub(crate) fn mix(table: u64, prefix: u64) -> u64 {
    let mut x = prefix ^ table.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
