//! Connecting the processes of a job: one TCP connection between each pair, made here rather
//! than by timely's `create_sockets`, which prints progress to standard output (where the
//! output may go), retries once a second, and waits forever for a process that never comes.
//! Process `i` connects to every process before it and accepts every process after it, as
//! timely does; each side checks that the other runs the same job shape.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::Context;

const MAGIC: u64 = 0x7369_6d68_6173_6864; // "simhashd"

/// What a connecting process says about itself: magic, index, processes, threads.
fn hello(me: usize, processes: usize, threads: usize) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, v) in [MAGIC, me as u64, processes as u64, threads as u64].into_iter().enumerate() {
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

/// Connects process `me` with every other process of `addresses` within `timeout`: the
/// result has a stream for each other process, in process order, and `None` for `me`.
pub(crate) fn connect(
    addresses: &[String],
    me: usize,
    threads: usize,
    timeout: Duration,
) -> anyhow::Result<Vec<Option<TcpStream>>> {
    let deadline = Instant::now() + timeout;
    let listener = TcpListener::bind(addresses[me].as_str())
        .with_context(|| format!("process {me}: cannot listen on {}", addresses[me]))?;
    listener.set_nonblocking(true).context("cannot poll the listening socket")?;
    let mut streams: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    connect_earlier(addresses, me, threads, deadline, timeout, &mut streams)?;
    accept_later(&listener, me, threads, deadline, timeout, &mut streams)?;
    Ok(streams)
}

/// Connects to the processes before `me` and greets each.
fn connect_earlier(
    addresses: &[String],
    me: usize,
    threads: usize,
    deadline: Instant,
    timeout: Duration,
    streams: &mut [Option<TcpStream>],
) -> anyhow::Result<()> {
    let processes = addresses.len();
    for (i, address) in addresses.iter().enumerate().take(me) {
        let mut stream = loop {
            match TcpStream::connect(address.as_str()) {
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
        stream
            .write_all(&hello(me, processes, threads))
            .with_context(|| format!("process {me}: cannot greet process {i} at {address}"))?;
        // Its answer: both ends check -n and -w, so that every process names a mismatch
        // (not only the one that accepted, the other seeing its connection reset).
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let answer = read_hello(&mut stream)
            .with_context(|| format!("process {me}: no answer from process {i} at {address}"))?;
        stream.set_read_timeout(None)?;
        check_hello(me, &format!("{address} (process {i})"), answer, processes, threads)?;
        streams[i] = Some(stream);
    }
    Ok(())
}

/// Checks another process's greeting `[magic, its index, its -n, its -w]`, from `peer` (for
/// the message), against this one's shape.
fn check_hello(
    me: usize,
    peer: &str,
    [magic, index, n, t]: [u64; 4],
    processes: usize,
    threads: usize,
) -> anyhow::Result<()> {
    anyhow::ensure!(magic == MAGIC, "process {me}: {peer} is not a simhash-dist process");
    anyhow::ensure!(
        n as usize == processes && t as usize == threads,
        "process {me}: process {index} runs -n {n} -w {t}, this one -n {processes} -w \
         {threads}: every process must have the same -n and -w"
    );
    Ok(())
}

/// Accepts the processes after `me`, checking each one's greeting.
fn accept_later(
    listener: &TcpListener,
    me: usize,
    threads: usize,
    deadline: Instant,
    timeout: Duration,
    streams: &mut [Option<TcpStream>],
) -> anyhow::Result<()> {
    let processes = streams.len();
    let mut missing = processes - me - 1;
    while missing > 0 {
        match listener.accept() {
            Ok((mut stream, from)) => {
                stream.set_nonblocking(false).context("cannot make a socket blocking")?;
                stream.set_read_timeout(Some(Duration::from_secs(10)))?;
                let greeting = read_hello(&mut stream)
                    .with_context(|| format!("process {me}: no greeting from {from}"))?;
                stream.set_read_timeout(None)?;
                // The answer, before any check, so that the other end can name a mismatch.
                if greeting[0] == MAGIC {
                    let _ = stream.write_all(&hello(me, processes, threads));
                }
                check_hello(me, &from.to_string(), greeting, processes, threads)?;
                let index = greeting[1] as usize;
                anyhow::ensure!(
                    index > me && index < processes && streams[index].is_none(),
                    "process {me}: unexpected process index {index} from {from}"
                );
                stream.set_nodelay(true).context("cannot set TCP_NODELAY")?;
                streams[index] = Some(stream);
                missing -= 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    let absent: Vec<String> = (me + 1..processes)
                        .filter(|&i| streams[i].is_none())
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
