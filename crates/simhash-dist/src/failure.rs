//! How a process ends when its job cannot finish, every way alike: a panic (a worker, or
//! timely's network threads when another process is gone), a signal, another process lost
//! ([`crate::heartbeat`]). Each removes the temporary files of unfinished outputs, says what
//! this process had committed already, if anything, and exits at once: 2, or 128 + the
//! signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
//!
//! `simhash`'s signal handler ([`simhash_io::run::install_signal_handler`]) lets a run that has
//! committed its outputs finish on a signal; here "finishing" can mean waiting for a
//! stopped process, so a signal always ends the process, after the commit too. Commits are
//! made under [`simhash_io::run::hold_signals`] ([`commit`]), so that an ending never cuts one
//! in half.

use std::io::Write;
use std::sync::{Mutex, PoisonError};

use simhash_io::run::{hold_signals, remove_pending};

/// What this process has committed, in order ("the output out.tsv", ...).
static COMMITTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Runs `commit` (a [`simhash_io::commit_all`]) with signals and failures held off, and
/// notes `what` it committed (e.g. "the output out.tsv") when it succeeds.
pub(crate) fn commit<T, E>(
    what: impl FnOnce() -> String,
    commit: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    let _hold = hold_signals();
    let done = commit();
    if done.is_ok() {
        COMMITTED.lock().unwrap_or_else(PoisonError::into_inner).push(what());
    }
    done
}

/// What this process has committed, for a message: empty when nothing.
fn committed() -> String {
    let all = COMMITTED.lock().unwrap_or_else(PoisonError::into_inner);
    all.join(" and ")
}

/// Ends this process with exit code 2 because the job cannot finish (`why`), after removing
/// its unfinished outputs; a commit under way finishes first.
pub(crate) fn fail(why: &str) -> ! {
    let _hold = hold_signals();
    remove_pending();
    let committed = committed();
    let message = if committed.is_empty() {
        why.to_string()
    } else {
        format!("{why} (this process had committed {committed})")
    };
    let _ = writeln!(std::io::stderr().lock(), "simhash-dist: {}", simhash_io::printable(&message));
    #[allow(clippy::exit)]
    std::process::exit(2);
}

/// Fail-stop: a panic anywhere (a worker, or timely's network threads when a peer process
/// is gone) ends this process with exit code 2, after removing unfinished output files.
/// Without this, the other workers of the process would wait for the failed one forever.
/// SIGINT, SIGTERM and SIGHUP remove them too, and exit with 128 + the signal, before the
/// commit as after it.
pub(crate) fn install() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let why = if what.contains("timely communication error") || what.contains("poisoned") {
            format!("lost the connection to another process ({what}): the job failed, rerun it")
        } else {
            let at = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
            format!("a worker failed ({what}{at}): the job failed, rerun it")
        };
        // Not `fail`: the panicking thread may hold the commit's hold.
        remove_pending();
        let _ = writeln!(std::io::stderr().lock(), "simhash-dist: {}", simhash_io::printable(&why));
        #[allow(clippy::exit)]
        std::process::exit(2);
    }));
    #[cfg(unix)]
    install_signals();
}

/// The signals' thread: on SIGINT, SIGTERM or SIGHUP, once a commit under way is done,
/// removes unfinished outputs and exits with 128 + the signal, saying what was committed
/// if anything was (then without waiting for the other processes). A signal that was
/// ignored when the process started (`nohup`, a background job of a script) stays ignored.
#[cfg(unix)]
fn install_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&s| !simhash_io::run::signal_ignored(s))
        .collect();
    let Ok(mut signals) = signal_hook::iterator::Signals::new(wanted) else {
        return;
    };
    let _ = std::thread::Builder::new().name("signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let _hold = hold_signals();
            remove_pending();
            let committed = committed();
            if !committed.is_empty() {
                let name = match signal {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "simhash-dist: {name} after this process committed {}: ending without \
                     waiting for the other processes",
                    simhash_io::printable(&committed)
                );
            }
            #[allow(clippy::exit)]
            std::process::exit(128 + signal);
        }
    });
}
