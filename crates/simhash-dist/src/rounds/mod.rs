//! The rounds of the job, one module each, and the one primitive they are all made of.
//!
//! A round is a function every worker calls at the same point of [`crate::job::run`]: it
//! sends what the other workers need, waits until every worker has sent everything, and
//! returns typed results. Each module's doc says what crosses the network in its round and
//! why. Every decision a worker takes after a round depends only on what all workers were
//! told, so all workers run the same sequence of rounds.
//!
//! * [`exchange`]: one all-to-all round. Every worker sends items addressed to workers and
//!   gets back what was addressed to it, once every worker has sent everything.
//! * [`all_gather`]: every worker's item to every worker, in worker order.
//!
//! The table phase ([`tables`]) is the one round with a dataflow of its own: one epoch per
//! permutation table. Workers wait with `step_or_park`, which parks an idle worker's thread.

pub(crate) mod bands;
pub(crate) mod census;
pub(crate) mod chunks;
pub(crate) mod collapse;
pub(crate) mod components;
pub(crate) mod contamination;
pub(crate) mod dedup;
pub(crate) mod floods;
pub(crate) mod gather;
pub(crate) mod ids;
pub(crate) mod kept;
pub(crate) mod outcome;
pub(crate) mod parts;
pub(crate) mod sets;
pub(crate) mod stream;
pub(crate) mod tables;
pub(crate) mod write;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use timely::ExchangeData;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Probe;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

thread_local! {
    /// Bytes this worker's thread sent to other workers, as timely encodes them.
    static SENT: Cell<u64> = const { Cell::new(0) };
    /// What the exchanges are counted as from now on ([`label`]).
    static LABEL: Cell<&'static str> = const { Cell::new("other") };
    /// Bytes sent to and received from other workers, per label, in first-use order.
    static VOLUME: RefCell<Vec<(&'static str, u64, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Counts this worker's [`exchange`]s as `name` from now on (`band_keys`, `records`, ...).
pub(crate) fn label(name: &'static str) {
    LABEL.with(|l| l.set(name));
}

/// This worker's exchanges so far: per label, bytes sent to other workers and received
/// from them (each item in timely's encoding plus its 8-byte target). Over all workers,
/// the bytes sent equal the bytes received.
pub(crate) fn volumes() -> Vec<(&'static str, u64, u64)> {
    VOLUME.with(|v| v.borrow().clone())
}

fn count_volume(sent: u64, received: u64) {
    let name = LABEL.with(Cell::get);
    VOLUME.with(|v| {
        let mut v = v.borrow_mut();
        match v.iter_mut().find(|e| e.0 == name) {
            Some(e) => {
                e.1 += sent;
                e.2 += received;
            }
            None => v.push((name, sent, received)),
        }
    });
}

/// Bytes this worker sent to other workers so far (the items of every round, in timely's
/// bincode encoding, without timely's per-message headers): what crosses the network when
/// every worker is its own process.
pub(crate) fn sent_bytes() -> u64 {
    SENT.with(Cell::get)
}

/// Counts `bytes` as sent to another worker.
pub(crate) fn count_sent(bytes: u64) {
    SENT.with(|s| s.set(s.get() + bytes));
}

/// The bytes of `item` in timely's encoding.
fn wire_size<D: serde::Serialize>(item: &D) -> u64 {
    bincode::serialized_size(item).unwrap_or(0)
}

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
    let me = worker.index();
    let (mut sent, mut to_me) = (0, 0);
    for (target, item) in items {
        let size = 8 + wire_size(&item);
        if target == me {
            to_me += size;
        } else {
            sent += size;
        }
        input.send((target as u64, item));
    }
    count_sent(sent);
    drop(input);
    while !probe.done() {
        worker.step_or_park(None);
    }
    let received = received.take();
    let got: u64 = received.iter().map(|d| 8 + wire_size(d)).sum();
    count_volume(sent, got.saturating_sub(to_me));
    received
}

/// Sends `item` to every worker and returns every worker's item, in worker order.
pub(crate) fn all_gather<D: ExchangeData + Clone>(worker: &mut Worker, item: &D) -> Vec<D> {
    let (me, peers) = (worker.index(), worker.peers());
    let mut got = exchange(worker, (0..peers).map(|w| (w, (me, item.clone()))));
    got.sort_by_key(|(from, _)| *from);
    got.into_iter().map(|(_, d)| d).collect()
}

/// A well-mixed 64-bit hash of (table, prefix): splitmix64's finaliser. It routes table
/// records ([`tables`]) and, with table `u64::MAX`, fingerprints ([`collapse`]) to workers.
pub(crate) fn mix(table: u64, prefix: u64) -> u64 {
    let mut x = prefix ^ table.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
