//! Connecting the processes of a job: two TCP connections between each pair, made here
//! rather than by timely's `create_sockets`, which prints progress to standard output (where
//! the output may go), retries once a second, and waits forever for a process that never
//! comes. The first carries timely's traffic; the second the heartbeats
//! ([`crate::heartbeat`]), so that a stopped process is noticed even while timely's
//! connections are busy or idle. Process `i` connects to every process before it and accepts
//! every process after it, as timely does; each side checks that the other runs the same job
//! shape.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::heartbeat::Peer;

/// The greeting of timely's connection.
const MAGIC: u64 = 0x7369_6d68_6173_6864; // "simhashd"
/// The greeting of the heartbeat connection.
const BEAT_MAGIC: u64 = 0x7369_6d68_6173_6862; // "simhashb"

/// How long a greeting may take once connected.
const GREETING: Duration = Duration::from_secs(10);

/// The connections of process `me` to every other process.
#[derive(Debug)]
pub(crate) struct Connected {
    /// timely's: one per other process, in process order, `None` for `me`.
    pub(crate) data: Vec<Option<TcpStream>>,
    /// The heartbeat connections, one per other process, in process order.
    pub(crate) beats: Vec<Peer>,
}

/// A greeting: magic, index, processes, and threads (timely's connection) or the
/// milliseconds between the heartbeats this process asks for, 0 for none (the heartbeat
/// connection).
fn hello(magic: u64, me: usize, processes: usize, last: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, v) in [magic, me as u64, processes as u64, last].into_iter().enumerate() {
        out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    out
}

fn read_hello(stream: &mut TcpStream) -> std::io::Result<[u64; 4]> {
    let mut buf = [0u8; 32];
    stream.read_exact(&mut buf)?;
    let mut out = [0u64; 4];
    for (i, v) in out.iter_mut().enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(&buf[i * 8..i * 8 + 8]);
        *v = u64::from_le_bytes(b);
    }
    Ok(out)
}

/// What this process says of itself: its index, the processes, its threads, and the
/// heartbeats it asks for.
#[derive(Clone, Copy, Debug)]
struct Shape {
    me: usize,
    processes: usize,
    threads: usize,
    /// Milliseconds between the heartbeats asked for; 0 for none.
    beat_ms: u64,
}

impl Shape {
    fn data(&self) -> [u8; 32] {
        hello(MAGIC, self.me, self.processes, self.threads as u64)
    }
    fn beats(&self) -> [u8; 32] {
        hello(BEAT_MAGIC, self.me, self.processes, self.beat_ms)
    }
}

/// Connects process `me` with every other process of `addresses` within `timeout`, asking
/// each for a heartbeat every `beat_every` (`None`: none).
pub(crate) fn connect(
    addresses: &[String],
    me: usize,
    threads: usize,
    timeout: Duration,
    beat_every: Option<Duration>,
) -> anyhow::Result<Connected> {
    // A timeout past what an `Instant` holds waits (about) for ever.
    let now = Instant::now();
    let deadline =
        now.checked_add(timeout).unwrap_or(now + Duration::from_secs(u64::from(u32::MAX)));
    let listener = TcpListener::bind(addresses[me].as_str())
        .with_context(|| format!("process {me}: cannot listen on {}", addresses[me]))?;
    listener.set_nonblocking(true).context("cannot poll the listening socket")?;
    let beat_ms = beat_every.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1));
    let shape = Shape { me, processes: addresses.len(), threads, beat_ms };
    let mut data: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    let mut beats: Vec<Option<Peer>> = (0..addresses.len()).map(|_| None).collect();
    connect_earlier(addresses, shape, (deadline, timeout), &mut data, &mut beats)?;
    accept_later(&listener, addresses, shape, (deadline, timeout), &mut data, &mut beats)?;
    Ok(Connected { data, beats: beats.into_iter().flatten().collect() })
}

/// A connection to `address` (process `i`), retried until `deadline`.
fn dial(
    address: &str,
    me: usize,
    i: usize,
    (deadline, timeout): (Instant, Duration),
) -> anyhow::Result<TcpStream> {
    let stream = loop {
        match TcpStream::connect(address) {
            Ok(s) => break s,
            Err(e) if Instant::now() >= deadline => {
                anyhow::bail!(
                    "process {me}: cannot connect to process {i} at {address} within {}s: {e}",
                    timeout.as_secs()
                );
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    stream.set_nodelay(true).context("cannot set TCP_NODELAY")?;
    Ok(stream)
}

/// Sends `greeting` on `stream` (to process `i` at `address`) and reads the answer.
fn greet(
    stream: &mut TcpStream,
    greeting: &[u8; 32],
    me: usize,
    i: usize,
    address: &str,
) -> anyhow::Result<[u64; 4]> {
    stream
        .write_all(greeting)
        .with_context(|| format!("process {me}: cannot greet process {i} at {address}"))?;
    stream.set_read_timeout(Some(GREETING))?;
    let answer = read_hello(stream)
        .with_context(|| format!("process {me}: no answer from process {i} at {address}"))?;
    stream.set_read_timeout(None)?;
    Ok(answer)
}

/// Connects to the processes before `me` and greets each, on both connections.
fn connect_earlier(
    addresses: &[String],
    shape: Shape,
    within: (Instant, Duration),
    data: &mut [Option<TcpStream>],
    beats: &mut [Option<Peer>],
) -> anyhow::Result<()> {
    let me = shape.me;
    for (i, address) in addresses.iter().enumerate().take(me) {
        let mut stream = dial(address, me, i, within)?;
        // Its answer: both ends check -n and -w, so that every process names a mismatch
        // (not only the one that accepted, the other seeing its connection reset).
        let answer = greet(&mut stream, &shape.data(), me, i, address)?;
        check_hello(me, &format!("{address} (process {i})"), answer, shape)?;
        data[i] = Some(stream);
        let mut beat = dial(address, me, i, within)?;
        let [magic, index, n, every] = greet(&mut beat, &shape.beats(), me, i, address)?;
        anyhow::ensure!(
            magic == BEAT_MAGIC && index as usize == i && n as usize == shape.processes,
            "process {me}: {address} (process {i}) answered the heartbeat connection wrongly"
        );
        beats[i] = Some(Peer::new(i, address, beat, every));
    }
    Ok(())
}

/// Checks another process's greeting on timely's connection, `[magic, its index, its -n,
/// its -w]`, from `peer` (for the message), against this one's shape.
fn check_hello(
    me: usize,
    peer: &str,
    [magic, index, n, t]: [u64; 4],
    shape: Shape,
) -> anyhow::Result<()> {
    let Shape { processes, threads, .. } = shape;
    anyhow::ensure!(magic == MAGIC, "process {me}: {peer} is not a simhash-dist process");
    anyhow::ensure!(
        n as usize == processes && t as usize == threads,
        "process {me}: process {index} runs -n {n} -w {t}, this one -n {processes} -w \
         {threads}: every process must have the same -n and -w"
    );
    Ok(())
}

/// Accepts the processes after `me`, both connections of each, checking each greeting.
fn accept_later(
    listener: &TcpListener,
    addresses: &[String],
    shape: Shape,
    (deadline, timeout): (Instant, Duration),
    data: &mut [Option<TcpStream>],
    beats: &mut [Option<Peer>],
) -> anyhow::Result<()> {
    let Shape { me, processes, .. } = shape;
    let mut missing = 2 * (processes - me - 1);
    while missing > 0 {
        match listener.accept() {
            Ok((mut stream, from)) => {
                stream.set_nonblocking(false).context("cannot make a socket blocking")?;
                stream.set_read_timeout(Some(GREETING))?;
                let greeting = read_hello(&mut stream)
                    .with_context(|| format!("process {me}: no greeting from {from}"))?;
                stream.set_read_timeout(None)?;
                stream.set_nodelay(true).context("cannot set TCP_NODELAY")?;
                let index = greeting[1] as usize;
                if greeting[0] == BEAT_MAGIC {
                    let _ = stream.write_all(&shape.beats());
                    anyhow::ensure!(
                        greeting[2] as usize == processes
                            && index > me
                            && index < processes
                            && beats[index].is_none(),
                        "process {me}: unexpected heartbeat connection from {from}"
                    );
                    beats[index] = Some(Peer::new(index, &addresses[index], stream, greeting[3]));
                } else {
                    // The answer, before any check, so that the other end can name a mismatch.
                    if greeting[0] == MAGIC {
                        let _ = stream.write_all(&shape.data());
                    }
                    check_hello(me, &from.to_string(), greeting, shape)?;
                    anyhow::ensure!(
                        index > me && index < processes && data[index].is_none(),
                        "process {me}: unexpected process index {index} from {from}"
                    );
                    data[index] = Some(stream);
                }
                missing -= 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    let absent: Vec<String> = (me + 1..processes)
                        .filter(|&i| data[i].is_none() || beats[i].is_none())
                        .map(|i| i.to_string())
                        .collect();
                    anyhow::bail!(
                        "process {me}: processes {} did not connect within {}s",
                        absent.join(", "),
                        timeout.as_secs()
                    );
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e).context("cannot accept connections"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three processes in threads on loopback: each has timely's connection and a heartbeat
    /// connection to each other one, and knows the heartbeats each other one asked for.
    #[test]
    fn every_pair_has_two_connections() {
        let ports: Vec<String> = (0..3)
            .map(|_| {
                let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
                format!("127.0.0.1:{}", l.local_addr().expect("its address").port())
            })
            .collect();
        let handles: Vec<_> = (0..3)
            .map(|me| {
                let addresses = ports.clone();
                std::thread::spawn(move || {
                    let every = Duration::from_millis(100 * (me as u64 + 1));
                    connect(&addresses, me, 2, Duration::from_secs(20), Some(every))
                })
            })
            .collect();
        for (me, handle) in handles.into_iter().enumerate() {
            let connected = handle.join().expect("no panic").expect("connected");
            let others: Vec<usize> = (0..3).filter(|&i| i != me).collect();
            let with: Vec<usize> = (0..3).filter(|&i| connected.data[i].is_some()).collect();
            assert_eq!(with, others, "process {me}");
            let beats: Vec<(usize, Option<Duration>)> =
                connected.beats.iter().map(|p| (p.index, p.wants)).collect();
            let want: Vec<(usize, Option<Duration>)> = others
                .iter()
                .map(|&i| (i, Some(Duration::from_millis(100 * (i as u64 + 1)))))
                .collect();
            assert_eq!(beats, want, "process {me}");
            assert!(connected.beats.iter().all(|p| p.address == ports[p.index]));
        }
    }
}
