//! Round `outcome`: every worker ends as worker 0's write did.
//!
//! Crosses the network: worker 0's outcome (the exit code, or the messages of a failed
//! write) to every worker, so that every process exits with the same code (0, 1 when
//! records were skipped, or 2) and no process reports success for a job that failed.

use timely::worker::Worker;

use super::exchange;
use crate::plan::End;

/// Worker 0's outcome: the job's exit code, or the messages it failed with.
pub(crate) type Outcome = Result<u8, Vec<String>>;

/// Sends worker 0's `outcome` to every worker (the others' is ignored) and ends as it says.
pub(crate) fn run(worker: &mut Worker, outcome: &Outcome) -> End {
    let (me, peers) = (worker.index(), worker.peers());
    let told = exchange(worker, (0..peers).filter(|_| me == 0).map(|w| (w, outcome.clone())));
    match told.into_iter().next() {
        Some(Ok(code)) => End::Done(code),
        Some(Err(messages)) => End::Failed(messages),
        None => End::Failed(vec!["worker 0 sent no outcome".to_string()]),
    }
}
