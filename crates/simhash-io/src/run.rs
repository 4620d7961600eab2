//! The run a process is doing, for the front ends that write outputs (the `run` feature,
//! which the `simhash` binary, `simhash-dist`, the Python module and `simhash-jobs` turn
//! on): the inputs no output of the run may replace, what the run has committed, and what a
//! signal does meanwhile.
//!
//! This is state of the process (what was committed, the temporary files of unfinished
//! outputs, the signal handler) and of the thread (the inputs and outputs named so far),
//! so it is not part of the library's default surface. Without it, an
//! [`Output`](crate::Output) is still written whole or not at all, never over an input a
//! [`Source`](crate::Source) of the same thread opened, and a
//! [`WritePlan`](crate::WritePlan) still checks a run's paths before anything is read.
//!
//! A command line calls [`install_signal_handler`] and [`begin`] once at its start,
//! [`register_inputs`] before it creates outputs, and [`note_committed`] (or holds signals
//! with [`hold_signals`]) around a commit of more than one step.

#[cfg(unix)]
pub use crate::output::signal_ignored;
pub use crate::output::{
    SignalHold, begin_run as begin, hold_signals, install_signal_handler, note_committed,
    remove_pending,
};
pub use crate::paths::register_inputs;
