//! Heartbeats between the processes of a job, so that a stopped process (SIGSTOP, a paused
//! VM, a frozen host, a cut network) ends the job instead of leaving the others waiting for
//! ever: timely's own connections tell a process that another one *died* (they break) but
//! not that it stopped (they stay open, and silent).
//!
//! Each pair of processes has a connection of its own for this ([`crate::net`]). On it each
//! process asks the other for a heartbeat at the interval it wants ([`every`]: a fifth of
//! its `--peer-timeout`, at most a second), and one thread per process sends each other
//! process its beats, a byte each, whatever the workers are doing: a long round never misses
//! one. One thread per other process reads them, with the timeout as its read timeout: no
//! byte for `--peer-timeout` seconds means the process is stopped or unreachable, and this
//! process exits 2 naming it ([`crate::failure::fail`], which removes unfinished outputs);
//! the others notice this one's exit and follow. The first beat may take the other process's
//! connecting too (`--connect-timeout` more), as it starts beating once connected to all.
//!
//! A process that ends normally says so ([`Heartbeat::finish`]: a `done` byte to every
//! other), so that its exit is not taken for a failure; a connection that closes without
//! it, while the job runs, is one (a process killed, or failed).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// `--peer-timeout`'s default, in seconds: 30 missed heartbeats. Long against anything a
/// live process does to its heartbeat thread (a scheduler delay, swapping, a VM's
/// migration pause are milliseconds to seconds), short against a job that runs minutes,
/// and half of `--connect-timeout`'s 60.
pub(crate) const DEFAULT_PEER_TIMEOUT: u64 = 30;

/// A heartbeat's byte.
const BEAT: u8 = b'.';
/// The byte a process sends when it ends normally: its connection's close is no failure.
const DONE: u8 = b'!';

/// The longest interval between heartbeats.
const MOST_EVERY: Duration = Duration::from_secs(1);
/// The shortest interval between heartbeats (for tiny timeouts).
const LEAST_EVERY: Duration = Duration::from_millis(10);
/// How long a heartbeat's write may block (the other process's buffers full: it has read
/// nothing for hours) before this process stops sending it any.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);

/// The interval between the heartbeats a process watching with `timeout` asks for: a
/// fifth of it, at most [`MOST_EVERY`]; `None` (no heartbeats) when it does not watch.
pub(crate) fn every(timeout: Option<Duration>) -> Option<Duration> {
    timeout.map(|t| (t / 5).clamp(LEAST_EVERY, MOST_EVERY))
}

/// Another process, as seen on its heartbeat connection.
#[derive(Debug)]
pub(crate) struct Peer {
    /// Its index (`-p`).
    pub(crate) index: usize,
    /// Its address, from the hostfile (for messages).
    pub(crate) address: String,
    /// The heartbeat connection.
    pub(crate) stream: TcpStream,
    /// The interval between the heartbeats it asked for; `None` for none.
    pub(crate) wants: Option<Duration>,
}

impl Peer {
    /// Process `index` at `address` on `stream`, asking for a heartbeat every `every_ms`
    /// milliseconds (0: none).
    pub(crate) fn new(index: usize, address: &str, stream: TcpStream, every_ms: u64) -> Peer {
        let wants = Some(Duration::from_millis(every_ms)).filter(|d| !d.is_zero());
        Peer { index, address: address.to_string(), stream, wants }
    }
}

/// Why another process is taken for stopped or gone.
#[derive(Debug)]
pub(crate) enum Lost {
    /// Nothing came for this long.
    Silent(Duration),
    /// Its connection closed without its `done`.
    Closed,
    /// Its connection failed.
    Broken(std::io::Error),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::Silent(waited) => {
                write!(f, "sent nothing for {} s: stopped or unreachable", waited.as_secs())
            }
            Lost::Closed => {
                write!(f, "closed its connection before its end: it failed or was killed")
            }
            Lost::Broken(e) => write!(f, "cannot be heard from: {e}"),
        }
    }
}

/// Reads another process's heartbeats on `stream` until its `done` (`Ok`), or until it is
/// lost: no byte within `first` at the start, then within `timeout` of the last one.
pub(crate) fn watch(
    stream: &mut TcpStream,
    first: Duration,
    timeout: Duration,
) -> Result<(), Lost> {
    let mut last = Instant::now();
    let mut wait = first.max(Duration::from_millis(1));
    stream.set_read_timeout(Some(wait)).map_err(Lost::Broken)?;
    let mut buf = [0u8; 64];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Err(Lost::Closed),
            Ok(n) if buf[..n].contains(&DONE) => return Ok(()),
            Ok(_) => {
                last = Instant::now();
                let then = timeout.max(Duration::from_millis(1));
                if then != wait {
                    wait = then;
                    stream.set_read_timeout(Some(wait)).map_err(Lost::Broken)?;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Lost::Silent(last.elapsed()));
            }
            Err(e) => return Err(Lost::Broken(e)),
        }
    }
}

/// One other process's side of the sending: its stream and its next beat.
#[derive(Debug)]
struct Sending {
    stream: TcpStream,
    every: Option<Duration>,
    next: Instant,
}

/// This process's heartbeats, sent and watched until [`Heartbeat::finish`].
#[derive(Debug)]
pub(crate) struct Heartbeat {
    /// The streams beats are sent on; `None` once finished.
    sending: Arc<Mutex<Option<Vec<Sending>>>>,
    /// Set when this process's job has ended: a peer lost from then on is no failure.
    finished: Arc<AtomicBool>,
}

/// Starts this process's heartbeats to `peers` and, with a `timeout`, watches theirs:
/// a lost one ends this process ([`crate::failure::fail`]). `connecting`: how long the
/// other processes may take to connect (`--connect-timeout`), allowed for the first beat.
pub(crate) fn start(
    peers: Vec<Peer>,
    timeout: Option<Duration>,
    connecting: Duration,
) -> std::io::Result<Heartbeat> {
    let finished = Arc::new(AtomicBool::new(false));
    let now = Instant::now();
    let mut sending = Vec::with_capacity(peers.len());
    for peer in peers {
        peer.stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        if let Some(timeout) = timeout {
            let mut stream = peer.stream.try_clone()?;
            let finished = Arc::clone(&finished);
            let (index, address) = (peer.index, peer.address.clone());
            std::thread::Builder::new().name(format!("heartbeat:{index}")).spawn(move || {
                if let Err(lost) = watch(&mut stream, connecting.saturating_add(timeout), timeout)
                    && !finished.load(Ordering::SeqCst)
                {
                    crate::failure::fail(&format!(
                        "process {index} ({address}) {lost}; the job failed, rerun it"
                    ));
                }
            })?;
        }
        sending.push(Sending { stream: peer.stream, every: peer.wants, next: now });
    }
    let sending = Arc::new(Mutex::new(Some(sending)));
    let beats = Arc::clone(&sending);
    std::thread::Builder::new().name("heartbeat".into()).spawn(move || send(&beats))?;
    Ok(Heartbeat { sending, finished })
}

/// The sending thread: each other process's beats when due, until finished or none is
/// wanted.
fn send(sending: &Mutex<Option<Vec<Sending>>>) {
    loop {
        let next = {
            let mut guard = sending.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(all) = guard.as_mut() else { return };
            let now = Instant::now();
            for s in all.iter_mut() {
                let Some(every) = s.every else { continue };
                if now >= s.next {
                    if s.stream.write_all(&[BEAT]).is_err() {
                        // Gone, or reading nothing for hours: its watcher here says which.
                        s.every = None;
                    }
                    s.next = now + every;
                }
            }
            all.iter().filter(|s| s.every.is_some()).map(|s| s.next).min()
        };
        let Some(next) = next else { return };
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}

impl Heartbeat {
    /// This process's job has ended (done or failed alike on every process): stops
    /// watching, and tells every other process, so that this one's exit is no failure.
    pub(crate) fn finish(self) {
        self.finished.store(true, Ordering::SeqCst);
        let sending = self.sending.lock().unwrap_or_else(PoisonError::into_inner).take();
        for mut s in sending.into_iter().flatten() {
            let _ = s.stream.write_all(&[DONE]);
            let _ = s.stream.shutdown(std::net::Shutdown::Write);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connected pair on loopback.
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
        let a = TcpStream::connect(listener.local_addr().expect("address")).expect("connect");
        let (b, _) = listener.accept().expect("accept");
        (a, b)
    }

    #[test]
    fn intervals_are_a_fifth_of_the_timeout_at_most_a_second() {
        assert_eq!(every(None), None);
        assert_eq!(every(Some(Duration::from_secs(30))), Some(Duration::from_secs(1)));
        assert_eq!(every(Some(Duration::from_secs(2))), Some(Duration::from_millis(400)));
        assert_eq!(every(Some(Duration::from_millis(1))), Some(LEAST_EVERY));
    }

    #[test]
    fn beats_then_done_end_the_watch() {
        let (mut a, mut b) = pair();
        let beating = std::thread::spawn(move || {
            for _ in 0..5 {
                a.write_all(&[BEAT]).expect("beat");
                std::thread::sleep(Duration::from_millis(50));
            }
            a.write_all(&[DONE]).expect("done");
        });
        // Five beats 50 ms apart, each well within the timeout; then done, then closed.
        let watched = watch(&mut b, Duration::from_secs(5), Duration::from_millis(500));
        assert!(watched.is_ok(), "{watched:?}");
        beating.join().expect("no panic");
    }

    #[test]
    fn silence_is_a_lost_process() {
        let (mut a, mut b) = pair();
        a.write_all(&[BEAT]).expect("beat");
        let started = Instant::now();
        let watched = watch(&mut b, Duration::from_secs(5), Duration::from_millis(300));
        let waited = started.elapsed();
        assert!(matches!(watched, Err(Lost::Silent(_))), "{watched:?}");
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_secs(3),
            "{waited:?}"
        );
        let message = watched.expect_err("lost").to_string();
        assert!(message.ends_with("s: stopped or unreachable"), "{message}");
        drop(a);
    }

    #[test]
    fn a_close_without_done_is_a_lost_process() {
        let (mut a, mut b) = pair();
        a.write_all(&[BEAT, BEAT]).expect("beats");
        drop(a);
        let watched = watch(&mut b, Duration::from_secs(5), Duration::from_secs(5));
        assert!(matches!(watched, Err(Lost::Closed)), "{watched:?}");
    }

    /// Before the first beat the watch allows for the other process's connecting.
    #[test]
    fn the_first_beat_may_take_longer() {
        let (mut a, mut b) = pair();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            a.write_all(&[DONE]).expect("done");
        });
        let watched = watch(&mut b, Duration::from_secs(5), Duration::from_millis(100));
        assert!(watched.is_ok(), "{watched:?}");
        late.join().expect("no panic");
    }

    /// The sending side: beats at the interval asked for, then `done` on finish.
    #[test]
    fn started_heartbeats_beat_and_finish_with_done() {
        let (a, mut b) = pair();
        let peer = Peer::new(1, "127.0.0.1:1", a, 20);
        // Not watching (no timeout): only sending.
        let heartbeat = start(vec![peer], None, Duration::from_secs(1)).expect("start");
        let mut got = [0u8; 4];
        b.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        b.read_exact(&mut got).expect("four beats");
        assert_eq!(got, [BEAT; 4]);
        heartbeat.finish();
        let mut rest = Vec::new();
        b.read_to_end(&mut rest).expect("to the close");
        assert_eq!(rest.last(), Some(&DONE), "{rest:?}");
    }
}
