//! simhash-dist against the single-machine `simhash` binary and against brute force: one
//! process with two workers, two OS processes on loopback, failures.
//!
//! simhash-dist does not depend on the `simhash` binary's crate, so cargo does not build
//! that binary for these tests: [`simhash_exe`] builds it (once per test run, with the
//! same cargo and profile) before the first comparison.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use simhash_core::{Fingerprint, Fingerprinter};

const BIN: &str = env!("CARGO_BIN_EXE_simhash-dist");

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut x = *state;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

const WORDS: [&str; 24] = [
    "river", "stone", "market", "signal", "harbour", "winter", "copper", "garden", "engine",
    "lantern", "meadow", "orbit", "pepper", "quartz", "rocket", "saddle", "timber", "velvet",
    "walnut", "yonder", "zephyr", "anchor", "beacon", "canyon",
];

/// A JSONL corpus with near-duplicates, a flood of exact copies, featureless records,
/// string and number ids, CRLF endings, blank lines and no final newline. All records valid
/// (every record has an id: a corpus may not mix records with and without).
fn jsonl_corpus(docs: usize, seed: u64) -> String {
    let mut rng = seed;
    let mut out = String::new();
    let mut bases: Vec<Vec<&str>> = Vec::new();
    for i in 0..docs {
        let r = splitmix(&mut rng) % 100;
        let text = if r < 45 || bases.is_empty() {
            let words: Vec<&str> = (0..40)
                .map(|_| WORDS[(splitmix(&mut rng) % WORDS.len() as u64) as usize])
                .collect();
            let text = words.join(" ");
            bases.push(words);
            text
        } else if r < 80 {
            // A near-duplicate: one or two words changed.
            let base = &bases[(splitmix(&mut rng) % bases.len() as u64) as usize];
            let mut words = base.clone();
            for _ in 0..=splitmix(&mut rng) % 2 {
                let at = (splitmix(&mut rng) % words.len() as u64) as usize;
                words[at] = WORDS[(splitmix(&mut rng) % WORDS.len() as u64) as usize];
            }
            words.join(" ")
        } else if r < 95 {
            // The flood: one text many times.
            "the same boilerplate page again and again and again".to_string()
        } else {
            "...".to_string()
        };
        match i % 97 {
            29 => {
                let _ = write!(out, "{{\"id\":{i},\"text\":\"{text}\"}}");
            }
            _ => {
                let _ = write!(out, "{{\"id\":\"doc-{i}\",\"text\":\"{text}\"}}");
            }
        }
        out.push_str(if i % 11 == 0 { "\r\n" } else { "\n" });
        if i % 500 == 7 {
            out.push('\n');
        }
    }
    out.pop();
    out
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().expect("temp dir"))
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
    fn write(&self, name: &str, data: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, data).expect("write input");
        p
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The `simhash` binary of this build: `cargo build --bin simhash` with the
/// cargo and profile that built this test, run once, so the comparison is never against a
/// stale binary.
fn simhash_exe() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        let dir = Path::new(BIN).parent().expect("the binary's directory");
        // As the README's main job builds it (from the workspace's root, `--bin simhash`,
        // not `-p simhash-cli`, whose features resolve differently): in CI that build is
        // done already, where `-p` compiled most dependencies again (66 s cold on 2 cores).
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "--bin", "simhash"]);
        cargo.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
        if dir.file_name().is_some_and(|name| name == "release") {
            cargo.arg("--release");
        }
        let status = cargo.status().expect("run cargo build for the simhash binary");
        assert!(status.success(), "cargo build --bin simhash failed");
        let exe = dir.join(format!("simhash{}", std::env::consts::EXE_SUFFIX));
        assert!(exe.is_file(), "no simhash binary at {}", exe.display());
        exe
    })
}

/// The single-machine binary with `args` (both binaries resolve `--method auto` alike).
fn simhash(args: &[&str]) -> ExitCode {
    let status = Command::new(simhash_exe()).args(args).status().expect("run simhash");
    match status.code() {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(255)),
        None => ExitCode::from(255),
    }
}

/// Runs the single-machine `simhash COMMAND INPUT -q -o OUT [EXTRA...]`.
fn simhash_into(command: &str, input: &Path, extra: &[&str], out: &Path) -> ExitCode {
    let (input, out) = (s(input), s(out));
    let mut a = vec![command, &input, "-q", "-o", &out];
    a.extend(extra);
    simhash(&a)
}

/// Both methods, as `--method` values.
const METHODS: [&str; 2] = ["simhash", "minhash"];

/// A started process; its standard output goes to an unnamed file (a pipe would fill up
/// and block it), read back when it ends.
struct Running {
    child: Child,
    stdout: File,
}

fn wait(running: Running, limit: Duration) -> Output {
    let Running { mut child, mut stdout } = running;
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "simhash-dist did not finish in {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut out = child.wait_with_output().expect("output");
    stdout.seek(SeekFrom::Start(0)).expect("rewind");
    stdout.read_to_end(&mut out.stdout).expect("read stdout");
    out
}

fn spawn(args: &[String]) -> Running {
    let stdout = tempfile::tempfile().expect("temp file");
    let child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().expect("clone"))
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn simhash-dist");
    Running { child, stdout }
}

fn dist(args: &[String]) -> Output {
    wait(spawn(args), Duration::from_secs(60))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(ToString::to_string).collect()
}

/// Ports the tests' processes listen on: below Linux's ephemeral range (32768 on), so that
/// no connection's own port takes one, and handed out once each in this test binary, so
/// that two tests running at once never share one (a port the system picked, `:0`, then
/// released, could be picked again for the next test while the first still needed it: two
/// tests' processes once met that way). Each test binary starts at its own place.
const PORTS: std::ops::Range<u32> = 20_000..32_000;

/// The next `n` ports of [`PORTS`] free now.
fn free_ports(n: usize) -> Vec<u16> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let span = PORTS.end - PORTS.start;
    // The first call picks this binary's start from its process id.
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(2_654_435_761) % span,
        Ordering::SeqCst,
        Ordering::SeqCst,
    );
    let mut ports = Vec::with_capacity(n);
    for _ in 0..span {
        if ports.len() == n {
            break;
        }
        let port = PORTS.start + NEXT.fetch_add(1, Ordering::SeqCst) % span;
        let port = u16::try_from(port).expect("ports below 32000");
        // In use by another program: the next one.
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
        }
    }
    assert_eq!(ports.len(), n, "no {n} free ports in {PORTS:?}");
    ports
}

/// A hostfile of `n` loopback addresses on ports free now, none another test uses.
fn hostfile(dir: &Dir, n: usize) -> PathBuf {
    let hosts: Vec<String> =
        free_ports(n).into_iter().map(|port| format!("127.0.0.1:{port}")).collect();
    dir.write("hosts.txt", &(hosts.join("\n") + "\n"))
}

/// Runs `args` as `n` processes of `w` workers on loopback ports chosen now.
fn dist_processes(dir: &Dir, n: usize, w: usize, args: &[&str]) -> Vec<Output> {
    dist_each(dir, w, &vec![args.to_vec(); n])
}

/// Runs one process of `w` workers per entry of `args` (process `p` with `args[p]`), on
/// loopback ports chosen now.
fn dist_each(dir: &Dir, w: usize, args: &[Vec<&str>]) -> Vec<Output> {
    let n = args.len();
    let hostfile = hostfile(dir, n);
    let children: Vec<Running> = args
        .iter()
        .enumerate()
        .map(|(p, args)| {
            let mut a = strings(args);
            a.extend(strings(&["-n", &n.to_string(), "-p", &p.to_string(), "-w", &w.to_string()]));
            a.extend(["--hostfile".to_string(), s(&hostfile)]);
            spawn(&a)
        })
        .collect();
    children.into_iter().map(|c| wait(c, Duration::from_secs(60))).collect()
}

/// Processes started with different settings: every process exits 2 before reading
/// anything, naming the setting and both values; none runs to an output with mixed
/// settings, panics, or waits for a round another does not run (each once did).
#[test]
fn processes_started_with_different_settings_are_refused_alike() {
    let dir = Dir::new();
    let input = dir.write("in.jsonl", &jsonl_corpus(300, 10));
    let (input, got, stats) = (s(&input), dir.path("got.tsv"), s(&dir.path("stats.json")));
    let got = s(&got);
    let pairs = ["pairs", &input, "-q", "-o", &got];
    let with = |extra: &[&'static str]| -> Vec<&str> { [&pairs[..], extra].concat() };
    let cases: Vec<(Vec<&str>, Vec<&str>, &str)> = vec![
        (pairs.to_vec(), with(&["--jaccard", "0.5"]), "the matching"),
        (pairs.to_vec(), with(&["--method", "simhash"]), "the matching"),
        ([&pairs[..], &["--stats", &stats]].concat(), pairs.to_vec(), "--stats"),
        (pairs.to_vec(), vec!["dedup", &input, "-q", "-o", &got], "the command"),
        (pairs.to_vec(), with(&["--preset", "moz", "--method", "minhash"]), "the fingerprinter"),
        (pairs.to_vec(), with(&["--strict"]), "--strict"),
        (
            vec!["dedup", &input, "-q", "-o", &got],
            vec!["dedup", &input, "-q", "-o", &got, "--removed", "rm.jsonl"],
            "--removed is not given on process 0 and rm.jsonl on process 1",
        ),
        (
            pairs.to_vec(),
            with(&["--text-column", "body"]),
            "--format json --text-column body --id-column id on process 1",
        ),
        (
            pairs.to_vec(),
            vec!["dedup", &input, "-q", "-o", &got, "--keep", "longest"],
            "dedup --keep longest on process 1",
        ),
    ];
    for (zero, one, name) in &cases {
        let outs = dist_each(&dir, 1, &[zero.clone(), one.clone()]);
        for (p, out) in outs.iter().enumerate() {
            let err = stderr(out);
            assert_eq!(out.status.code(), Some(2), "{one:?}, process {p}: {err}");
            assert!(err.contains("started with different settings"), "{one:?}: {err}");
            assert!(err.contains(name), "{one:?}: {name:?} not named in {err}");
            assert!(!err.contains("panicked"), "{one:?}: {err}");
            // The flags as a user typed them, never Rust's Debug.
            for debug in ["Some(", "None", "Json(", "Columns {", "Dedup {", "\"]"] {
                assert!(!err.contains(debug), "{one:?}: {debug} in {err}");
            }
        }
        assert!(!dir.path("got.tsv").exists() && !dir.path("stats.json").exists(), "{one:?}");
    }
    // The same flags in another order agree.
    let a = with(&["--jaccard", "0.5", "--num-perm", "64"]);
    let b = with(&["--num-perm", "64", "--jaccard", "0.5"]);
    for out in dist_each(&dir, 1, &[a, b]) {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn one_process_two_workers_matches_simhash() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(3000, 1));
    for method in METHODS {
        for (command, extra) in
            [("pairs", None), ("cluster", None), ("cluster", Some("--singletons"))]
        {
            let want = dir.path("want.tsv");
            let got = dir.path("got.tsv");
            let mut extras = vec!["--method", method];
            extras.extend(extra);
            assert_eq!(simhash_into(command, &input, &extras, &want), ExitCode::SUCCESS);
            // The output reaches worker 0 in rounds: one, or many of 100 bytes.
            for (w, window) in [("1", None), ("2", None), ("3", Some("100"))] {
                let mut a = strings(&[command, &s(&input), "-q", "-w", w, "-o", &s(&got)]);
                a.extend(strings(&extras));
                if let Some(window) = window {
                    a.extend(strings(&["--output-window", window]));
                }
                let out = dist(&a);
                assert!(out.status.success(), "{command} -w {w}: {}", stderr(&out));
                assert!(
                    read(&got) == read(&want),
                    "{command} {extras:?} -w {w} differs from simhash"
                );
            }
        }
        // The flood is there and was collapsed: many pairs, few distinct fingerprints.
        assert!(read(&dir.path("want.tsv")).lines().count() > 3000);
    }
}

#[test]
fn two_processes_on_loopback_match_simhash() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(2000, 2));
    for method in METHODS {
        for (command, extra) in [("pairs", None), ("cluster", Some("--singletons"))] {
            let want = dir.path("want.tsv");
            let got = dir.path("got.tsv");
            let mut extras = vec!["--method", method];
            extras.extend(extra);
            assert_eq!(simhash_into(command, &input, &extras, &want), ExitCode::SUCCESS);
            let mut a = vec![command, input.to_str().unwrap_or_default(), "-q", "-o"];
            a.push(got.to_str().unwrap_or_default());
            a.extend(&extras);
            a.extend(["--output-window", "1000"]);
            let outs = dist_processes(&dir, 2, 1, &a);
            for (p, out) in outs.iter().enumerate() {
                assert!(out.status.success(), "{command}, process {p}: {}", stderr(out));
            }
            assert!(
                read(&got) == read(&want),
                "{command} {extras:?}: 2 processes differ from simhash"
            );
        }
    }
    // Standard output: process 0 writes it all, and nothing else goes there.
    let outs = dist_processes(&dir, 2, 1, &["pairs", input.to_str().unwrap_or_default(), "-q"]);
    let want = dir.path("want.tsv");
    assert_eq!(simhash(&["pairs", &s(&input), "-q", "-o", &s(&want)]), ExitCode::SUCCESS);
    assert!(outs[0].stdout == std::fs::read(&want).unwrap_or_default());
    assert!(outs[1].stdout.is_empty());
}

#[test]
fn processes_with_different_shapes_refuse_to_run() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(100, 6));
    let hostfile = hostfile(&dir, 2);
    let children: Vec<Running> = [("0", "1"), ("1", "2")]
        .iter()
        .map(|(p, w)| {
            spawn(&strings(&[
                "pairs",
                &s(&input),
                "-n",
                "2",
                "-p",
                p,
                "-w",
                w,
                "--hostfile",
                &s(&hostfile),
                "--connect-timeout",
                "20",
                "-o",
                &s(&dir.path("out.tsv")),
            ]))
        })
        .collect();
    let outs: Vec<Output> =
        children.into_iter().map(|c| wait(c, Duration::from_secs(60))).collect();
    // Every process names the mismatch (the one that connected once saw only its
    // connection reset).
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(2), "process {p}: {}", stderr(out));
        assert!(stderr(out).contains("must have the same -n and -w"), "{p}: {}", stderr(out));
    }
    assert!(!dir.path("out.tsv").exists());
}

/// Planted fingerprints: random ones, neighbours at exactly k and k + 1 bits, and copies.
fn planted(n: usize, k: u32, seed: u64) -> Vec<u64> {
    let mut rng = seed;
    let mut fps: Vec<u64> = Vec::with_capacity(n);
    while fps.len() < n {
        let r = splitmix(&mut rng) % 10;
        if fps.is_empty() || r < 5 {
            fps.push(splitmix(&mut rng));
            continue;
        }
        let base = fps[(splitmix(&mut rng) % fps.len() as u64) as usize];
        let flips = match r {
            5 | 6 => k,
            7 => k + 1,
            8 => 0,
            _ => (splitmix(&mut rng) % u64::from(k)) as u32,
        };
        let mut fp = base;
        let mut flipped = 0;
        while flipped < flips {
            let bit = 1u64 << (splitmix(&mut rng) % 64);
            if (fp ^ base) & bit == 0 {
                fp ^= bit;
                flipped += 1;
            }
        }
        fps.push(fp);
    }
    fps
}

#[test]
fn hash_input_matches_brute_force_and_simhash() {
    let dir = Dir::new();
    let k = 3;
    let fps = planted(3000, k, 7);
    let mut tsv = String::from("id\thash\n");
    for (i, fp) in fps.iter().enumerate() {
        {
            let _ = writeln!(tsv, "h{i}\t{fp}");
        };
    }
    let input = dir.write("fps.tsv", &tsv);
    // As `simhash pairs` lists them: a copy of a fingerprint once, with its first record;
    // other pairs between first records only.
    let mut firsts = std::collections::HashMap::new();
    let first: Vec<usize> = (0..fps.len()).map(|i| *firsts.entry(fps[i]).or_insert(i)).collect();
    let first = |i: usize| first[i];
    let mut brute = String::from("id_a\tid_b\tdistance\n");
    for (i, a) in fps.iter().enumerate() {
        for (j, b) in fps.iter().enumerate().skip(i + 1) {
            let d = (a ^ b).count_ones();
            let listed = if d == 0 { first(i) == i } else { first(i) == i && first(j) == j };
            if d <= k && listed {
                {
                    let _ = writeln!(brute, "h{i}\th{j}\t{d}");
                };
            }
        }
    }
    let want = dir.path("want.tsv");
    assert_eq!(simhash(&["pairs", &s(&input), "-q", "-o", &s(&want)]), ExitCode::SUCCESS);
    assert!(read(&want) == brute, "simhash differs from brute force");
    for (w, blocks) in [("2", "auto"), ("3", "5"), ("2", "8")] {
        let got = dir.path("got.tsv");
        let out = dist(&strings(&[
            "pairs",
            &s(&input),
            "-q",
            "-w",
            w,
            "--blocks",
            blocks,
            "-o",
            &s(&got),
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(read(&got) == brute, "-w {w} --blocks {blocks} differs from brute force");
    }
}

#[test]
fn shards_read_as_their_concatenation() {
    let dir = Dir::new();
    let corpus = jsonl_corpus(1500, 3);
    let lines: Vec<&str> = corpus.lines().collect();
    // Records without ids: their ids are line numbers in the concatenation, as `simhash`
    // numbers the lines of the concatenated input. (`with_ids`: the same records with ids.)
    let records = |from: usize, with_ids: bool| -> Vec<String> {
        (from..from + 60)
            .map(|i| {
                let mut words: Vec<&str> = (0..16).map(|j| WORDS[(j + i % 4) % 24]).collect();
                words[i % 16] = WORDS[i % 24];
                if i % 3 == 0 {
                    words = vec!["the same boilerplate page again and again"];
                }
                let id = if with_ids { format!("\"id\":\"p{i}\",") } else { String::new() };
                format!("{{{id}\"text\":\"{}\"}}", words.join(" "))
            })
            .collect()
    };
    let plain = |from: usize| records(from, false);
    let (a, b) = lines.split_at(lines.len() / 3);
    let mut one: Vec<String> = a.iter().map(ToString::to_string).collect();
    one.extend(records(0, true));
    let mut two: Vec<String> = records(60, true);
    two.extend(b.iter().map(ToString::to_string));
    let all = dir.write("all.jsonl", &(one.join("\n") + "\n" + &two.join("\n") + "\n"));
    let one = dir.write("one.jsonl", &(one.join("\n") + "\n"));
    let two = dir.write("two.jsonl", &(two.join("\n") + "\n"));
    let want = dir.path("want.tsv");
    let got = dir.path("got.tsv");
    for (command, extra) in [("cluster", "--singletons"), ("pairs", "-k6")] {
        let code = simhash(&[command, &s(&all), extra, "-q", "-o", &s(&want)]);
        assert_eq!(code, ExitCode::SUCCESS);
        let out =
            dist(&strings(&[command, &s(&one), &s(&two), extra, "-q", "-w", "2", "-o", &s(&got)]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            read(&got) == read(&want),
            "{command} {extra}: shards differ from their concatenation"
        );
    }
    // Records without ids only, split in two (the reviewer's repro).
    let plain: Vec<String> = plain(0).into_iter().chain(plain(60)).collect();
    let s1 = dir.write("s1.jsonl", &(plain[..60].join("\n") + "\n"));
    let s2 = dir.write("s2.jsonl", &(plain[60..].join("\n") + "\n"));
    let all = dir.write("s12.jsonl", &(plain.join("\n") + "\n"));
    assert_eq!(simhash(&["pairs", &s(&all), "-k", "6", "-q", "-o", &s(&want)]), ExitCode::SUCCESS);
    let out =
        dist(&strings(&["pairs", &s(&s1), &s(&s2), "-k", "6", "-w", "2", "-q", "-o", &s(&got)]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read(&want).lines().count() > 80);
    assert!(read(&got) == read(&want), "id-less shards differ from their concatenation");

    // Messages name the shard and the line in it (`simhash` on the concatenation names the
    // concatenated file and the line in it).
    let bad = dir.write("bad.jsonl", "{\"text\":\"a b c\"}\nnot json\n");
    let out = dist(&strings(&["pairs", &s(&s1), &s(&bad), "-w", "2", "-o", &s(&got)]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("simhash-dist: {}:2: invalid JSON", s(&bad))),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_records_are_reported_by_file_and_line() {
    let dir = Dir::new();
    let fp = Fingerprinter::new();
    let text = "a b c d e f g h i j k l m n o p";
    assert!(fp.fingerprint(text).is_some_and(|f: Fingerprint| f.0 != 0));
    let mut data = String::new();
    for i in 0..400 {
        match i {
            57 => data.push_str("{\"id\":\"x57\"}\n"),
            // A repeated key on the text path: read as by simhash.
            120 => data.push_str("{\"id\":\"doc-120\",\"text\":\"a\",\"text\":\"b\"}\n"),
            250 => data.push_str("{\"id\":\"doc-3\",\"text\":\"dup\"}\n"),
            333 => data.push_str("not json\n"),
            _ => {
                let _ = writeln!(data, "{{\"id\":\"doc-{i}\",\"text\":\"{text} {i}\"}}");
            }
        }
    }
    let input = dir.write("bad.jsonl", &data);
    let got = dir.path("got.tsv");
    let want = dir.path("want.tsv");
    assert_eq!(simhash(&["pairs", &s(&input), "-q", "-o", &s(&want)]), ExitCode::from(1));
    let out = dist(&strings(&["pairs", &s(&input), "-w", "2", "-o", &s(&got)]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let name = s(&input);
    let err = stderr(&out);
    let reported: Vec<&str> = err.lines().filter(|l| l.contains(&name)).collect();
    assert_eq!(
        reported,
        [
            format!("simhash-dist: {name}:58: missing text field \"text\""),
            format!("simhash-dist: {name}:121: duplicate key \"text\""),
            format!("simhash-dist: {name}:251: duplicate id \"doc-3\" (an earlier record has it)"),
            format!("simhash-dist: {name}:334: invalid JSON at column 2: expected ident"),
        ]
    );
    assert!(read(&got) == read(&want));

    // --strict: the first bad record stops the job, and nothing is written.
    let strict = dir.path("strict.tsv");
    let out = dist(&strings(&["pairs", &s(&input), "-w", "2", "--strict", "-o", &s(&strict)]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains(&format!("{name}:58: missing text field \"text\" (stopped by --strict)")),
        "{}",
        stderr(&out)
    );
    assert!(!strict.exists());
}

#[test]
fn a_failing_worker_fails_the_job_without_output() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(500, 4));
    let got = dir.write("got.tsv", "previous\n");
    for hook in ["--inject-error", "--inject-panic", "--inject-write-error"] {
        let out = dist(&strings(&["pairs", &s(&input), "-w", "2", hook, "1", "-o", &s(&got)]));
        assert_eq!(out.status.code(), Some(2), "{hook}: {}", stderr(&out));
        assert!(stderr(&out).contains("worker 1: injected"), "{hook}: {}", stderr(&out));
        assert_eq!(read(&got), "previous\n", "{hook}: the output was touched");
    }
    // No temporary file is left beside the output.
    let left: Vec<_> = std::fs::read_dir(dir.0.path())
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_dying_process_fails_every_process() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(500, 5));
    let got = dir.path("got.tsv");
    let outs = dist_processes(
        &dir,
        2,
        1,
        &[
            "pairs",
            input.to_str().unwrap_or_default(),
            "--inject-panic",
            "1",
            "-o",
            got.to_str().unwrap_or_default(),
        ],
    );
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(2), "process {p}: {}", stderr(out));
    }
    assert!(stderr(&outs[1]).contains("injected panic"), "{}", stderr(&outs[1]));
    assert!(stderr(&outs[0]).contains("the job failed"), "{}", stderr(&outs[0]));
    assert!(!got.exists());
}

#[test]
fn standard_input_is_read_by_one_worker() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(800, 8));
    let want = dir.path("want.tsv");
    let got = dir.path("got.tsv");
    assert_eq!(simhash(&["cluster", &s(&input), "-q", "-o", &s(&want)]), ExitCode::SUCCESS);
    let out = Command::new(BIN)
        .args(strings(&["cluster", "-", "-q", "-w", "2", "-o", &s(&got)]))
        .stdin(File::open(&input).expect("open input"))
        .output()
        .expect("run simhash-dist");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read(&got) == read(&want), "standard input differs from simhash on the file");
}

/// Standard output closed when the job starts is refused where it is an output, as
/// `simhash` refuses it: exit 2 naming the flag, not a success with nothing written.
#[test]
fn a_closed_standard_output_is_refused() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(50, 8));
    for (args, flag) in [
        (format!("dedup {} -q", s(&input)), "--output -"),
        (format!("pairs {} -q -o -", s(&input)), "--output -"),
        (format!("dedup {} -q -o k.jsonl --removed -", s(&input)), "--removed -"),
    ] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("exec \"$0\" {args} >&- </dev/null"))
            .arg(BIN)
            .current_dir(dir.path(""))
            .output()
            .expect("run sh");
        assert_eq!(out.status.code(), Some(2), "{args}: {}", stderr(&out));
        assert!(stderr(&out).contains("standard output is closed"), "{args}: {}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{args}: {}", stderr(&out));
    }
    assert!(!dir.path("k.jsonl").exists(), "nothing written");
}

#[test]
fn method_auto_resolves_as_simhash_does() {
    let dir = Dir::new();
    let input = dir.write("corpus.jsonl", &jsonl_corpus(300, 9));
    let (want, got) = (dir.path("want.tsv"), dir.path("got.tsv"));
    // JSON text: minhash (a Jaccard column); a simhash-only setting: simhash.
    for extra in [&[][..], &["--method", "auto"], &["-k", "4"], &["--preset", "moz"]] {
        assert_eq!(simhash_into("pairs", &input, extra, &want), ExitCode::SUCCESS);
        let mut a = strings(&["pairs", &s(&input), "-q", "-o", &s(&got)]);
        a.extend(strings(extra));
        let out = dist(&a);
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
        assert!(read(&got) == read(&want), "{extra:?} differs from simhash");
        let header =
            if extra.len() == 2 && extra[0] != "--method" { "distance" } else { "jaccard" };
        assert!(read(&got).starts_with(&format!("id_a\tid_b\t{header}")), "{extra:?}");
    }
    // The settings `simhash` refuses, refused alike.
    let tsv = dir.write("fps.tsv", "id\thash\na\t0000000000000001\n");
    for (args, message) in [
        (
            vec!["--method", "minhash", "-k", "3"],
            "-k/--distance and --blocks apply to --method simhash",
        ),
        (
            vec!["--method", "simhash", "--jaccard", "0.5"],
            "--jaccard, --lsh-threshold, --num-perm and --templates apply",
        ),
        (vec!["--jaccard", "1.5"], "--jaccard must be more than 0 and at most 1, not 1.5"),
        (vec!["--lsh-threshold", "1"], "--lsh-threshold must be below 1, not 1"),
        (vec!["--num-perm", "0"], "--num-perm must be between 1 and"),
    ] {
        let mut a = strings(&["pairs", &s(&input), "-o", &s(&got)]);
        a.extend(strings(&args));
        let out = dist(&a);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
    let out = dist(&strings(&["pairs", &s(&tsv), "--method", "minhash", "-o", &s(&got)]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--method minhash needs the text"), "{}", stderr(&out));
    // Inputs whose names imply different formats: refused as `simhash` refuses them (the
    // TSV was once read as JSON, its records skipped).
    let want = format!(
        "the inputs mix formats: {} is read as json and {} as hash",
        input.display(),
        tsv.display()
    );
    for (one, two) in [(&input, &tsv), (&tsv, &input)] {
        let out = dist(&strings(&["pairs", &s(one), &s(two), "-o", &s(&got)]));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(&want), "{}", stderr(&out));
        let args = ["pairs", &s(one), &s(two), "--format", "json", "-o", &s(&got), "-q"];
        let out = dist(&strings(&args));
        assert_eq!(out.status.code(), Some(1), "--format json reads both, skipping the TSV's");
    }
}

#[test]
fn every_process_exits_with_the_jobs_code() {
    let dir = Dir::new();
    let mut data = jsonl_corpus(300, 10);
    data.push_str("\nnot json\n");
    let input = dir.write("skipped.jsonl", &data);
    let got = dir.path("got.tsv");
    // A skipped record: every process exits 1, not only process 0.
    let outs = dist_processes(&dir, 2, 1, &["pairs", &s(&input), "-q", "-o", &s(&got)]);
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
    }
    // Process 0 cannot write its output: every process exits 2.
    let outs = dist_processes(&dir, 2, 1, &["pairs", &s(&input), "-q", "-o", "/dev/full"]);
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(2), "process {p}: {}", stderr(out));
        assert!(
            stderr(out).contains("/dev/full: No space left on device"),
            "process {p}: {}",
            stderr(out)
        );
    }
}

#[test]
fn a_corpus_may_not_mix_records_with_and_without_ids() {
    let dir = Dir::new();
    let text = |i: usize| {
        let words: Vec<&str> = (0..12).map(|j| WORDS[(i / 2 + j) % 24]).collect();
        words.join(" ")
    };
    // `ids_first`: the first record has an id, and every 7th record has none; or the
    // reverse. Returns the lines, and the lines with the odd ones blanked (what `simhash`
    // sees without them, numbered the same).
    let corpus = |ids_first: bool| -> (Vec<String>, Vec<String>) {
        let mut lines = Vec::new();
        let mut blanked = Vec::new();
        for i in 0..60 {
            let odd = i % 7 == 3;
            let line = if odd == ids_first {
                format!("{{\"text\":\"{}\"}}", text(i))
            } else {
                format!("{{\"id\":\"r{i}\",\"text\":\"{}\"}}", text(i))
            };
            blanked.push(if odd { String::new() } else { line.clone() });
            lines.push(line);
        }
        (lines, blanked)
    };
    let got = dir.path("got.tsv");
    let want = dir.path("want.tsv");
    for ids_first in [true, false] {
        let (lines, blanked) = corpus(ids_first);
        // The first file holds one record: it decides for the other file too.
        let a = dir.write("a.jsonl", &(lines[..1].join("\n") + "\n"));
        let b = dir.write("b.jsonl", &(lines[1..].join("\n") + "\n"));
        let clean = dir.write("clean.jsonl", &(blanked.join("\n") + "\n"));
        assert_eq!(
            simhash(&["pairs", &s(&clean), "-k", "6", "-q", "-o", &s(&want)]),
            ExitCode::SUCCESS
        );
        for w in ["1", "2", "4"] {
            let out =
                dist(&strings(&["pairs", &s(&a), &s(&b), "-k", "6", "-w", w, "-o", &s(&got)]));
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let message = if ids_first {
                "no id, but earlier records have one (give every record an id, or none)"
            } else {
                "has an id, but earlier records have none (give every record an id, or none)"
            };
            let err = stderr(&out);
            let reported: Vec<&str> = err.lines().filter(|l| l.contains(&s(&b))).collect();
            let want_lines: Vec<String> = (0..60)
                .filter(|i| i % 7 == 3)
                .map(|i| format!("simhash-dist: {}:{i}: {message}", s(&b)))
                .collect();
            assert_eq!(reported, want_lines, "-w {w}");
            assert!(read(&got) == read(&want), "ids first {ids_first}, -w {w}: differs");
        }
        let strict = dir.path("strict.tsv");
        let out = dist(&strings(&["pairs", &s(&a), &s(&b), "--strict", "-o", &s(&strict)]));
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains(&format!("{}:3: ", s(&b))), "{}", stderr(&out));
        assert!(!strict.exists());
    }
}

#[test]
fn the_output_is_never_an_input_and_compressed_data_needs_its_name() {
    let dir = Dir::new();
    let data = jsonl_corpus(100, 11);
    let input = dir.write("c.jsonl", &data);
    let out = dist(&strings(&["pairs", &s(&input), "-o", &s(&input)]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is the input"), "{}", stderr(&out));
    assert!(read(&input) == data);
    let other = dir.write("d.jsonl", &data);
    let out = dist(&strings(&["pairs", &s(&input), &s(&other), "-o", &s(&other)]));
    assert_eq!(out.status.code(), Some(2));
    assert!(read(&other) == data);

    let gz = dir.path("g.jsonl");
    std::fs::write(&gz, b"\x1f\x8b\x08\x00\x00\x00\x00\x00garbage\n").expect("write");
    let out = dist(&strings(&["pairs", &s(&gz), "-w", "2", "-o", &s(&dir.path("o.tsv"))]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("g.jsonl: looks gzip-compressed but is not named .gz"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The shared rule of `simhash_io::WritePlan`: `--stats` may not be an input (through a
/// symlink either), and nothing else may be written into `--output-dir` (its parts are
/// concatenated); each refused before anything is read, naming both paths.
#[test]
fn stats_and_removed_are_never_an_input_nor_in_the_output_dir() {
    let dir = Dir::new();
    let data = jsonl_corpus(100, 12);
    let input = dir.write("c.jsonl", &data);
    let out = dir.path("out.tsv");
    let refuse = |args: &[String], names: &[String]| {
        let run = dist(args);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", stderr(&run));
        for name in names {
            assert!(stderr(&run).contains(name.as_str()), "{args:?}: {name}: {}", stderr(&run));
        }
        assert!(read(&input) == data, "{args:?}: the input changed");
        assert!(!out.exists(), "{args:?}: an output was written");
    };
    let stats = format!("--stats {}", s(&input));
    refuse(
        &strings(&["dedup", &s(&input), "-q", "-w", "2", "-o", &s(&out), "--stats", &s(&input)]),
        &[stats, format!("the input {}", s(&input))],
    );
    #[cfg(unix)]
    {
        let link = dir.path("link.json");
        std::os::unix::fs::symlink(&input, &link).expect("symlink");
        refuse(
            &strings(&["pairs", &s(&input), "-q", "-o", &s(&out), "--stats", &s(&link)]),
            &[format!("--stats {}", s(&link)), s(&input)],
        );
    }
    let od = dir.path("od");
    let part = od.join("part-00000.jsonl");
    for flag in ["--removed", "--stats"] {
        refuse(
            &strings(&[
                "dedup",
                &s(&input),
                "-q",
                "-w",
                "2",
                "--output-dir",
                &s(&od),
                flag,
                &s(&part),
            ]),
            &[format!("{flag} {}", s(&part)), format!("the --output-dir {}", s(&od))],
        );
        assert!(!od.exists() || std::fs::read_dir(&od).expect("od").next().is_none());
    }
}

#[cfg(unix)]
#[test]
fn signals_remove_the_temporary_output_and_exit_128_plus_the_signal() {
    use std::io::Write as _;
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("INT", 130)] {
        let dir = Dir::new();
        let mut cmd = Command::new(BIN);
        // A signal ignored by whoever started the tests (a background job of a script
        // ignores SIGINT) is inherited, and simhash-dist rightly leaves it ignored: the child
        // starts with the default dispositions, as from a terminal, so that the test reaches
        // the handler.
        default_signals(&mut cmd);
        let mut child = cmd
            .args(strings(&["pairs", "-", "-q", "-o", &s(&dir.path("out.tsv"))]))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        // Standard input stays open: the job waits in the middle of reading.
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(jsonl_corpus(200, 12).as_bytes()).expect("feed");
        let temps = || {
            std::fs::read_dir(dir.path("."))
                .expect("read dir")
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while temps().is_empty() {
            assert!(Instant::now() < deadline, "no temporary output file");
            std::thread::sleep(Duration::from_millis(10));
        }
        let killed = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "still running after SIG{signal}");
            std::thread::sleep(Duration::from_millis(10));
        };
        drop(stdin);
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert!(temps().is_empty(), "SIG{signal} left {:?}", temps());
    }
}

/// An adversarial corpus for MinHash: a flood of identical records, a family of
/// near-identical ones (every pair a candidate), pairs edited by 0 to 12 words of 24
/// (Jaccard from 1 down past every threshold), tiny and empty texts, duplicate ids.
fn minhash_corpus(seed: u64) -> String {
    let mut rng = seed;
    let mut out = String::new();
    let word = |rng: &mut u64| WORDS[(splitmix(rng) % WORDS.len() as u64) as usize];
    let base: Vec<String> = (0..24).map(|i| format!("{}{i}", WORDS[i % WORDS.len()])).collect();
    for i in 0..1300 {
        let text = match i % 13 {
            0..=4 => "one page copied thousands of times over".to_string(),
            5 | 6 => {
                let mut words = base.clone();
                let at = (splitmix(&mut rng) % 24) as usize;
                words[at] = format!("x{i}");
                words.join(" ")
            }
            7..=9 => {
                let mut words = base.clone();
                for _ in 0..splitmix(&mut rng) % 13 {
                    let at = (splitmix(&mut rng) % 24) as usize;
                    words[at] = format!("{}{}", word(&mut rng), splitmix(&mut rng) % 1000);
                }
                words.join(" ")
            }
            10 => ["", "a", "a b", "a b c", "...", "a b c d"][i % 6].to_string(),
            _ => (0..12).map(|_| word(&mut rng)).collect::<Vec<_>>().join(" "),
        };
        // Every 101st record repeats an earlier id: skipped and reported, by both.
        let id = if i % 101 == 100 { i - 50 } else { i };
        let _ = writeln!(out, "{{\"id\":\"m{id}\",\"text\":\"{text}\"}}");
    }
    out
}

#[test]
fn minhash_matches_simhash_on_floods_tiny_texts_and_every_setting() {
    let dir = Dir::new();
    let input = dir.write("adversarial.jsonl", &minhash_corpus(11));
    let (want, got) = (dir.path("want.tsv"), dir.path("got.tsv"));
    let settings: [&[&str]; 6] = [
        &[],
        &["--jaccard", "0.8"],
        &["--jaccard", "1"],
        &["--lsh-threshold", "0.5", "--num-perm", "64"],
        &["--window", "2", "--jaccard", "0.3"],
        &["--preset", "default-v1"],
    ];
    for (n, extra) in settings.into_iter().enumerate() {
        for command in ["pairs", "cluster"].into_iter().take(if n < 2 { 2 } else { 1 }) {
            let mut extras = vec!["--method", "minhash"];
            extras.extend(extra);
            if command == "cluster" {
                extras.push("--singletons");
            }
            // Duplicate ids are skipped: exit 1 on both.
            assert_eq!(simhash_into(command, &input, &extras, &want), ExitCode::from(1));
            for w in ["1", "2", "4"] {
                let mut a = strings(&[command, &s(&input), "-q", "-w", w, "-o", &s(&got)]);
                a.extend(strings(&extras));
                let out = dist(&a);
                assert_eq!(out.status.code(), Some(1), "{extras:?} -w {w}: {}", stderr(&out));
                assert!(read(&got) == read(&want), "{command} {extras:?} -w {w} differs");
            }
        }
    }
    // The flood is collapsed before banding: 500 copies are one band record a band.
    let out = dist(&strings(&["pairs", &s(&input), "-w", "2", "-o", &s(&got)]));
    let err = stderr(&out);
    let distinct: u64 = err
        .split(" distinct shingle sets")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no distinct sets in {err}"));
    assert!(distinct < 850, "{err}");
    assert!(read(&got).lines().count() > 500, "the flood's copies are listed");
    // Two processes on loopback.
    let a = [command_line("pairs", &input, &got), vec!["--jaccard", "0.5"]].concat();
    let outs = dist_processes(&dir, 2, 1, &a);
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
    }
    let mut extras = vec!["--jaccard", "0.5"];
    assert_eq!(simhash_into("pairs", &input, &extras, &want), ExitCode::from(1));
    assert!(read(&got) == read(&want), "2 processes differ");
    // A worker that fails in the band rounds fails the job, and leaves no output.
    extras.extend(["--inject-panic", "1", "-w", "2"]);
    let out = dist(&[strings(&command_line("pairs", &input, &got)), strings(&extras)].concat());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(read(&got) == read(&want), "the output was touched");
}

/// The MinHash verification ships each candidate's smaller set once per worker, in as many
/// rounds as the sets' bytes need: cut into rounds of a few sets each, at several shapes,
/// `pairs`, `cluster` and `dedup` still write what `simhash` writes, and the bigger the
/// rounds, the fewer bytes of sets cross (never more than with one round a set).
#[test]
fn minhash_verification_in_many_rounds_matches_simhash() {
    let dir = Dir::new();
    let input = dir.write("rounds.jsonl", &dedup_corpus(33));
    let (want, got) = (dir.path("want.tsv"), dir.path("got.tsv"));
    for command in ["pairs", "cluster"] {
        let extras = ["--method", "minhash", "--jaccard", "0.5"];
        assert_eq!(simhash_into(command, &input, &extras, &want), ExitCode::from(1));
        for (w, round) in [("2", "64"), ("3", "2000"), ("3", "1")] {
            let mut a = strings(&command_line(command, &input, &got));
            a.extend(strings(&extras));
            a.extend(strings(&["-w", w, "--verify-round-bytes", round]));
            let out = dist(&a);
            assert_eq!(out.status.code(), Some(1), "{command} -w {w}: {}", stderr(&out));
            assert!(read(&got) == read(&want), "{command} -w {w} rounds of {round} differ");
        }
        // Two processes, rounds of 500 bytes.
        let a = [command_line(command, &input, &got), extras.to_vec()].concat();
        let a = [a, vec!["--verify-round-bytes", "500"]].concat();
        for (p, out) in dist_processes(&dir, 2, 1, &a).iter().enumerate() {
            assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
        }
        assert!(read(&got) == read(&want), "{command}: 2 processes in rounds differ");
    }
    for keep in ["first", "longest"] {
        let extra = ["--method", "minhash", "--keep", keep];
        assert_dedup_agrees(&dir, &input, &extra, &["-w", "3", "--verify-round-bytes", "300"]);
    }
    // The rounds only group the shipments: the same sets cross, whatever their size.
    let set_bytes = |round: &str| {
        let stats = dir.path("rounds.stats.json");
        let mut a = strings(&command_line("pairs", &input, &got));
        a.extend(strings(&["-w", "3", "--stats", &s(&stats), "--verify-round-bytes", round]));
        assert_eq!(dist(&a).status.code(), Some(1));
        let json = read(&stats);
        let sent: u64 = json
            .split("\"shingle_sets\": {\"sent\": ")
            .skip(1)
            .filter_map(|rest| {
                rest.split(|c: char| !c.is_ascii_digit()).next()?.parse::<u64>().ok()
            })
            .sum();
        assert!(json.matches("\"shingle_sets\"").count() == 3, "{json}");
        sent
    };
    let whole = set_bytes("1000000000");
    assert!(whole > 0);
    assert_eq!(set_bytes("1"), whole);
    assert_eq!(set_bytes("700"), whole);
}

fn command_line<'a>(command: &'a str, input: &'a Path, out: &'a Path) -> Vec<&'a str> {
    vec![command, input.to_str().unwrap_or_default(), "-q", "-o", out.to_str().unwrap_or_default()]
}

/// A corpus for `dedup --keep`: [`minhash_corpus`]'s floods, families, tiny texts and
/// duplicate ids, with numeric ids (JSON numbers, unordered, one repeated) on every third
/// record and lengths that vary within families (a word appended 0 to 3 times).
fn dedup_corpus(seed: u64) -> String {
    let mut rng = seed ^ 0x5eed;
    let mut out = String::new();
    for (i, line) in minhash_corpus(seed).lines().enumerate() {
        let (id, rest) = line.split_once(",\"text\":\"").expect("a record");
        let text = rest.trim_end_matches("\"}");
        let tail = " more".repeat((splitmix(&mut rng) % 4) as usize);
        let tail = if i % 13 < 5 { "" } else { tail.as_str() };
        let id =
            if i % 3 == 0 { format!("{{\"id\":{}", (i * 7919) % 2000) } else { id.to_string() };
        let _ = writeln!(out, "{id},\"text\":\"{text}{tail}\"}}");
    }
    out
}

/// `simhash dedup` and `simhash-dist dedup` (with `dist_extra`) on `input`: the same exit
/// code, output and `--removed` lines.
fn assert_dedup_agrees(dir: &Dir, input: &Path, extra: &[&str], dist_extra: &[&str]) {
    let code = simhash_dedup(dir, input, extra);
    assert_dist_dedup(dir, input, (extra, code), dist_extra);
}

/// `simhash dedup` on `input` into `want.jsonl` and `want.removed`: its exit code.
fn simhash_dedup(dir: &Dir, input: &Path, extra: &[&str]) -> ExitCode {
    let want_removed = dir.path("want.removed");
    let mut a = vec!["--removed", want_removed.to_str().unwrap_or_default()];
    a.extend(extra);
    simhash_into("dedup", input, &a, &dir.path("want.jsonl"))
}

/// `simhash-dist dedup` (with `dist_extra`) on `input`: the exit code `code` and the output
/// and `--removed` lines of the last [`simhash_dedup`] with `extra`.
fn assert_dist_dedup(
    dir: &Dir,
    input: &Path,
    (extra, code): (&[&str], ExitCode),
    dist_extra: &[&str],
) {
    let (want, got) = (dir.path("want.jsonl"), dir.path("got.jsonl"));
    let (want_removed, got_removed) = (dir.path("want.removed"), dir.path("got.removed"));
    let mut a = strings(&command_line("dedup", input, &got));
    a.extend(strings(&["--removed", &s(&got_removed)]));
    a.extend(strings(extra));
    a.extend(strings(dist_extra));
    let out = dist(&a);
    assert_eq!(ExitCode::from(out.status.code().unwrap_or(255) as u8), code, "{}", stderr(&out));
    assert!(read(&got) == read(&want), "{extra:?} {dist_extra:?}: kept records differ");
    assert!(
        read(&got_removed) == read(&want_removed),
        "{extra:?} {dist_extra:?}: removed records differ"
    );
}

#[test]
fn dedup_matches_simhash_for_every_method_and_keep_policy() {
    let dir = Dir::new();
    let input = dir.write("dedup.jsonl", &dedup_corpus(21));
    for method in METHODS {
        for keep in ["first", "longest", "lowest-id"] {
            let extra = ["--method", method, "--keep", keep];
            let code = simhash_dedup(&dir, &input, &extra);
            // The output reaches worker 0 in rounds: one, or many of 13 bytes.
            for dist_extra in
                [&["-w", "1"][..], &["-w", "2"], &["-w", "3", "--output-window", "13"]]
            {
                assert_dist_dedup(&dir, &input, (&extra, code), dist_extra);
            }
        }
    }
    // Settings that change which pairs match.
    for extra in [&["--method", "minhash", "--jaccard", "1"][..], &["-k", "8", "--blocks", "9"]] {
        assert_dedup_agrees(&dir, &input, extra, &["-w", "3"]);
    }
    // Most of the flood is removed, against its first copy.
    let removed = read(&dir.path("got.removed"));
    assert!(removed.lines().count() > 500, "{removed}");
}

#[test]
fn dedup_reads_shards_standard_input_and_fingerprints_as_simhash() {
    let dir = Dir::new();
    let corpus = dedup_corpus(5);
    let lines: Vec<&str> = corpus.lines().collect();
    let half = lines.len() / 2;
    let a = dir.write("a.jsonl", &(lines[..half].join("\n") + "\n"));
    let b = dir.write("b.jsonl", &lines[half..].join("\n"));
    for method in METHODS {
        let (want, got) = (dir.path("want.jsonl"), dir.path("got.jsonl"));
        let code = simhash(&["dedup", &s(&a), &s(&b), "-q", "--method", method, "-o", &s(&want)]);
        let args = ["dedup", &s(&a), &s(&b), "-q", "--method", method, "-w", "3", "-o", &s(&got)];
        let out = dist(&strings(&args));
        assert_eq!(
            out.status.code(),
            Some(i32::from(code == ExitCode::from(1))),
            "{}",
            stderr(&out)
        );
        assert!(read(&got) == read(&want), "{method}: shards differ");
        // Standard input is read twice: spooled by the worker that reads it.
        let all = dir.write("all.jsonl", &corpus);
        let run = |exe: &Path, extra: &[&str]| {
            let mut c = Command::new(exe);
            c.args(["dedup", "-q", "--method", method, "-o", &s(&got)]).args(extra);
            let status = c.stdin(File::open(&all).expect("input")).status().expect("run");
            assert!(status.code().is_some_and(|c| c < 2), "{exe:?}");
            read(&got)
        };
        assert!(run(simhash_exe(), &[]) == run(Path::new(BIN), &["-w", "2"]), "{method}: stdin");
    }
    // Fingerprints: one header, the first file's.
    let tsv = dir.path("fps.tsv");
    // Exit 1: the duplicate ids are reported.
    assert_eq!(simhash(&["fingerprint", "-q", &s(&a), "-o", &s(&tsv)]), ExitCode::from(1));
    assert_dedup_agrees(&dir, &tsv, &["-k", "6"], &["-w", "2"]);
    assert_dedup_agrees(&dir, &tsv, &["-k", "6"], &["-w", "3", "--output-window", "5"]);
}

#[test]
fn dedup_on_two_processes_matches_simhash_and_a_failure_leaves_nothing() {
    let dir = Dir::new();
    let input = dir.write("dedup.jsonl", &dedup_corpus(8));
    let (want, got) = (dir.path("want.jsonl"), dir.path("got.jsonl"));
    for method in METHODS {
        let extra = ["--method", method, "--keep", "lowest-id"];
        assert_eq!(simhash_into("dedup", &input, &extra, &want), ExitCode::from(1));
        let a = [command_line("dedup", &input, &got), extra.to_vec()].concat();
        for (p, out) in dist_processes(&dir, 2, 2, &a).iter().enumerate() {
            assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
        }
        assert!(read(&got) == read(&want), "{method}: 2 processes differ");
    }
    let removed = dir.write("removed.jsonl", "previous removed\n");
    let got = dir.write("got.jsonl", "previous\n");
    for method in METHODS {
        for hook in ["--inject-error", "--inject-panic"] {
            let mut a = strings(&command_line("dedup", &input, &got));
            a.extend(strings(&["--method", method, "--removed", &s(&removed)]));
            a.extend(strings(&["-w", "2", hook, "1"]));
            let out = dist(&a);
            assert_eq!(out.status.code(), Some(2), "{method} {hook}: {}", stderr(&out));
            assert_eq!(read(&got), "previous\n", "{method} {hook}: the output was touched");
            assert_eq!(read(&removed), "previous removed\n", "{method} {hook}: --removed");
        }
    }
}

/// The files of `--output-dir` `dir`, by name: every one a part, none a temporary file.
fn parts(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into()).collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The parts of `dir` concatenated in the order of their names.
fn concatenated(dir: &Path) -> String {
    parts(dir).iter().map(|name| read(&dir.join(name))).collect()
}

#[test]
fn output_dir_parts_concatenated_are_the_output() {
    let dir = Dir::new();
    let corpus = dedup_corpus(31);
    let lines: Vec<&str> = corpus.lines().collect();
    let third = lines.len() / 3;
    // Three shards: one cut between workers, one read whole (compressed), one empty.
    let a = dir.write("a.jsonl", &(lines[..third].join("\n") + "\n"));
    let b = dir.path("b.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(
        File::create(&b).expect("create"),
        flate2::Compression::default(),
    );
    std::io::Write::write_all(&mut gz, (lines[third..].join("\n") + "\n").as_bytes())
        .expect("compress");
    gz.finish().expect("compress");
    let c = dir.write("c.jsonl", "");
    let inputs = [s(&a), s(&b), s(&c)];
    let want = dir.path("want");
    for method in METHODS {
        for (command, extra) in [
            ("pairs", None),
            ("cluster", None),
            ("cluster", Some("--singletons")),
            ("dedup", Some("--keep=longest")),
        ] {
            let mut a: Vec<String> = [command, "-q", "--method", method]
                .iter()
                .map(ToString::to_string)
                .chain(inputs.iter().cloned())
                .chain(extra.map(ToString::to_string))
                .collect();
            let mut single = a.clone();
            single.extend(strings(&["-o", &s(&want)]));
            let single: Vec<&str> = single.iter().map(String::as_str).collect();
            let code = simhash(&single);
            assert!(code == ExitCode::SUCCESS || code == ExitCode::from(1), "{single:?}");
            let out_dir = dir.path(&format!("{command}-{method}-{}", extra.unwrap_or("")));
            a.extend(strings(&["--output-dir", &s(&out_dir)]));
            for (n, w) in [(1, 2), (2, 2)] {
                let _ = std::fs::remove_dir_all(&out_dir);
                let outs = if n == 1 {
                    vec![dist(&[a.clone(), strings(&["-w", &w.to_string()])].concat())]
                } else {
                    let a: Vec<&str> = a.iter().map(String::as_str).collect();
                    dist_processes(&dir, n, w, &a)
                };
                for (p, out) in outs.iter().enumerate() {
                    assert!(out.status.code().is_some_and(|c| c < 2), "{p}: {}", stderr(out));
                    assert!(out.stdout.is_empty());
                }
                let names = parts(&out_dir);
                // One part per piece: a's pieces (one per worker), b read whole, c none.
                assert_eq!(names.len(), n * w + 1, "{command} {method} {n}x{w}: {names:?}");
                let ext = if command == "dedup" { "jsonl" } else { "tsv" };
                assert_eq!(names[0], format!("part-00000.{ext}"));
                assert!(
                    concatenated(&out_dir) == read(&want),
                    "{command} {extra:?} {method} {n}x{w}: the parts differ from the output"
                );
                // Each part holds something but the empty pieces', so the output is cut.
                if command == "pairs" {
                    let holding = names.iter().filter(|p| !read(&out_dir.join(p)).is_empty());
                    assert!(holding.count() > 1, "{command} {method}: {names:?}");
                }
            }
        }
        // `--removed` with the parts: one file, streamed to process 0 in rounds of 11 bytes.
        let (want_removed, got_removed) = (dir.path("want.removed"), dir.path("got.removed"));
        let mut single: Vec<String> = strings(&["dedup", "-q", "--method", method]);
        single.extend(inputs.iter().cloned());
        let mut a = single.clone();
        single.extend(strings(&["-o", &s(&want), "--removed", &s(&want_removed)]));
        let code = simhash(&single.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(code == ExitCode::SUCCESS || code == ExitCode::from(1), "{single:?}");
        let out_dir = dir.path(&format!("removed-{method}"));
        a.extend(strings(&["--output-dir", &s(&out_dir), "--removed", &s(&got_removed)]));
        a.extend(strings(&["--output-window", "11"]));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        for (p, out) in dist_processes(&dir, 2, 2, &a).iter().enumerate() {
            assert!(out.status.code().is_some_and(|c| c < 2), "{p}: {}", stderr(out));
        }
        assert!(concatenated(&out_dir) == read(&want), "{method}: the parts differ");
        let removed = read(&want_removed);
        assert!(removed.lines().count() > 10, "{method}: {removed}");
        assert!(read(&got_removed) == removed, "{method}: --removed differs");
        std::fs::remove_file(&got_removed).expect("remove");
    }
}

#[test]
fn output_dir_fails_whole_and_never_mixes_two_outputs() {
    let dir = Dir::new();
    let input = dir.write("dedup.jsonl", &dedup_corpus(9));
    let out_dir = dir.path("parts");
    let removed = dir.write("removed.jsonl", "previous removed\n");
    for command in ["pairs", "cluster", "dedup"] {
        for hook in ["--inject-error", "--inject-panic", "--inject-write-error"] {
            let mut a = strings(&[command, &s(&input), "-q", "-w", "2", hook, "1"]);
            a.extend(strings(&["--output-dir", &s(&out_dir)]));
            if command == "dedup" {
                a.extend(strings(&["--removed", &s(&removed)]));
            }
            let out = dist(&a);
            assert_eq!(out.status.code(), Some(2), "{command} {hook}: {}", stderr(&out));
            assert!(stderr(&out).contains("worker 1: injected"), "{hook}: {}", stderr(&out));
            // Worker 0 wrote its parts (with --inject-write-error): none is left, nor any
            // temporary file.
            assert_eq!(parts(&out_dir), Vec::<String>::new(), "{command} {hook}");
            assert_eq!(read(&removed), "previous removed\n", "{command} {hook}: --removed");
        }
        // Two processes: worker 2 is in process 1, and fails both processes.
        let mut a = vec![command, input.to_str().unwrap_or_default(), "-q"];
        a.extend(["--inject-write-error", "2", "--output-dir", out_dir.to_str().unwrap_or("")]);
        for (p, out) in dist_processes(&dir, 2, 2, &a).iter().enumerate() {
            assert_eq!(out.status.code(), Some(2), "{command} process {p}: {}", stderr(out));
        }
        assert_eq!(parts(&out_dir), Vec::<String>::new(), "{command}, 2 processes");
    }
    // A directory that holds parts already is refused before anything is read: the new
    // parts might not replace all the old ones (an input there is never overwritten).
    let old = dir.write("parts/part-00000.jsonl", &dedup_corpus(9));
    let out = dist(&strings(&["dedup", &s(&old), "-q", "--output-dir", &s(&out_dir)]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("already holds part-00000.jsonl"), "{}", stderr(&out));
    assert!(read(&old) == dedup_corpus(9), "an input was overwritten");
    let out = dist(&strings(&["pairs", &s(&input), "-o", "x", "--output-dir", &s(&out_dir)]));
    assert_eq!(out.status.code(), Some(2), "-o and --output-dir: {}", stderr(&out));
    // Only empty inputs: no piece to read, and still one part, the header, as simhash writes.
    let empty = dir.write("empty.jsonl", "");
    let want = dir.path("want.tsv");
    let code = simhash(&["pairs", &s(&empty), "-q", "-o", &s(&want)]);
    let empty_dir = dir.path("empty-parts");
    let out =
        dist(&strings(&["pairs", &s(&empty), "-q", "-w", "2", "--output-dir", &s(&empty_dir)]));
    assert_eq!(ExitCode::from(out.status.code().unwrap_or(255) as u8), code, "{}", stderr(&out));
    assert_eq!(parts(&empty_dir), ["part-00000.tsv"]);
    assert_eq!(concatenated(&empty_dir), read(&want));
}

/// One empty shard among others is no problem, as in `simhash` (exit 0, nothing skipped,
/// not stopped by `--strict`); only an input whose every file is empty is reported, once,
/// named as `simhash` names it (exit 1; exit 2 with `--strict`). At -w 1/2 and 2 processes.
#[test]
fn an_empty_shard_is_no_problem_an_empty_input_is() {
    let dir = Dir::new();
    let full = s(&dir.write("full.jsonl", &jsonl_corpus(30, 4)));
    let (empty, blank) = (s(&dir.write("empty.jsonl", "")), s(&dir.write("blank.jsonl", "\n\n")));
    for (inputs, want, strict_want) in
        [(vec![&full, &empty, &blank], 0, 0), (vec![&empty, &blank], 1, 2)]
    {
        for command in ["pairs", "dedup"] {
            for strict in [false, true] {
                let out_path = s(&dir.path(&format!("{command}-{strict}.out")));
                let mut args: Vec<&str> = vec![command];
                args.extend(inputs.iter().map(|i| i.as_str()));
                args.extend(["-q", "-o", &out_path]);
                if strict {
                    args.push("--strict");
                }
                let code = if strict { strict_want } else { want };
                assert_eq!(simhash(&args), ExitCode::from(code), "simhash {args:?}");
                let mut runs = vec![dist(&strings(&[&args[..], &["-w", "2"]].concat()))];
                runs.extend(dist_processes(&dir, 2, 1, &args));
                for (n, out) in runs.iter().enumerate() {
                    let said = stderr(out);
                    assert_eq!(out.status.code(), Some(i32::from(code)), "{args:?}: {said}");
                    // Process 0 of the 2 reports, as does the one process of -w 2.
                    if n > 1 {
                        continue;
                    }
                    let empties = said.matches("empty input, no records").count();
                    assert_eq!(empties, usize::from(want == 1), "{args:?}: {said}");
                    if want == 1 {
                        assert!(said.contains("2 files, "), "{said}");
                    }
                }
            }
        }
    }
}

/// Writes `(id, text)` rows to a Parquet file with an extra column (which dedup keeps), in
/// row groups of 50 rows, zstd-compressed or not.
fn write_parquet(path: &Path, rows: &[(String, String)], zstd: bool) {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use parquet::basic::{Compression, ZstdLevel};

    let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    let texts: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let lens: Vec<i64> = rows.iter().map(|r| r.1.len() as i64).collect();
    let batch = RecordBatch::try_from_iter([
        ("len", Arc::new(Int64Array::from(lens)) as ArrayRef),
        ("id", Arc::new(StringArray::from(ids)) as ArrayRef),
        ("text", Arc::new(StringArray::from(texts)) as ArrayRef),
    ])
    .expect("a batch");
    let compression = if zstd {
        Compression::ZSTD(ZstdLevel::try_new(3).expect("level"))
    } else {
        Compression::UNCOMPRESSED
    };
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(50))
        .build();
    let file = File::create(path).expect("create");
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).expect("writer");
    writer.write(&batch).expect("write");
    writer.close().expect("close");
}

/// The records of `minhash_corpus(seed)` as `(id, text)` rows, for Parquet inputs.
fn minhash_rows(seed: u64) -> Vec<(String, String)> {
    minhash_corpus(seed)
        .lines()
        .map(|l| {
            let (id, text) = l.split_once("\",\"text\":\"").expect("a record");
            (id.trim_start_matches("{\"id\":\"").into(), text.trim_end_matches("\"}").into())
        })
        .collect()
}

#[test]
fn directories_and_parquet_are_read_as_simhash_reads_them() {
    let dir = Dir::new();
    let rows = minhash_rows(12);
    let cut = rows.len() * 2 / 5;
    std::fs::create_dir_all(dir.path("in/b")).expect("mkdir");
    write_parquet(&dir.path("in/a.parquet"), &rows[..cut], false);
    write_parquet(&dir.path("in/b/c.parquet"), &rows[cut..], true);
    dir.write("in/notes.txt", "not read\n");
    let input = s(&dir.path("in"));
    let want = dir.path("want.tsv");
    let parts_dir = dir.path("parts");
    for method in METHODS {
        for (command, extra) in [("pairs", "--window=3"), ("cluster", "--singletons")] {
            let code =
                simhash(&[command, &input, "-q", extra, "--method", method, "-o", &s(&want)]);
            assert_eq!(code, ExitCode::from(1), "duplicate ids are reported");
            let a = [command, &input, "-q", extra, "--method", method];
            let out =
                dist(&strings(&[&a[..], &["-w", "2", "-o", &s(&dir.path("got.tsv"))]].concat()));
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            assert!(read(&dir.path("got.tsv")) == read(&want), "{command} {method}: -o differs");
            let _ = std::fs::remove_dir_all(&parts_dir);
            let parts_arg = s(&parts_dir);
            let a: Vec<&str> = [&a[..], &["--output-dir", &parts_arg]].concat();
            for (p, out) in dist_processes(&dir, 2, 1, &a).iter().enumerate() {
                assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
            }
            assert!(concatenated(&parts_dir) == read(&want), "{command} {method}: parts differ");
        }
        // dedup: one Parquet part per input file, byte for byte simhash's --output-dir file
        // (the rows kept, with the file's schema and compression).
        let kept = dir.path("kept");
        let _ = std::fs::remove_dir_all(&kept);
        let _ = std::fs::remove_dir_all(&parts_dir);
        let code = simhash(&["dedup", &input, "-q", "--method", method, "--output-dir", &s(&kept)]);
        assert_eq!(code, ExitCode::from(1));
        let a =
            ["dedup", &input, "-q", "--method", method, "-w", "2", "--output-dir", &s(&parts_dir)];
        let out = dist(&strings(&a));
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(parts(&parts_dir), ["part-00000.parquet", "part-00001.parquet"]);
        for (part, file) in
            [("part-00000.parquet", "a.parquet"), ("part-00001.parquet", "b/c.parquet")]
        {
            let (got, want) = (std::fs::read(parts_dir.join(part)), std::fs::read(kept.join(file)));
            assert!(got.is_ok() && got.ok() == want.ok(), "{method}: {part} differs from {file}");
        }
        assert!(
            std::fs::metadata(parts_dir.join("part-00001.parquet")).map_or(0, |m| m.len())
                < std::fs::metadata(dir.path("in/b/c.parquet")).map_or(0, |m| m.len()),
            "{method}: nothing was removed"
        );
    }
    // Warnings name the files a directory holds that are not read.
    let out = dist(&strings(&["pairs", &input, "-o", &s(&dir.path("got.tsv"))]));
    assert!(stderr(&out).contains("notes.txt: not read: not a record file by its name"));
    // A file that is not Parquet is one bad record, reported without a line, as simhash does.
    dir.write("in/bad.parquet", "not parquet\n");
    let code = simhash(&["pairs", &input, "-q", "-o", &s(&want)]);
    let out = dist(&strings(&["pairs", &input, "-q", "-w", "2", "-o", &s(&dir.path("got.tsv"))]));
    assert_eq!(out.status.code(), Some(i32::from(code == ExitCode::from(1))), "{}", stderr(&out));
    assert!(read(&dir.path("got.tsv")) == read(&want), "a bad Parquet file changed the pairs");
    assert!(stderr(&out).contains("bad.parquet: not a readable Parquet file"), "{}", stderr(&out));
    // dedup of Parquet writes Parquet parts only: -o is refused, and so is a mix of formats.
    let out = dist(&strings(&["dedup", &s(&dir.path("in/a.parquet")), "-o", &s(&want)]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("needs --output-dir"), "{}", stderr(&out));
    let jsonl = dir.write("x.jsonl", "{\"id\":\"x\",\"text\":\"a b c\"}\n");
    let a = ["dedup", &s(&jsonl), &s(&dir.path("in/a.parquet")), "--output-dir", &s(&parts_dir)];
    let out = dist(&strings(&a));
    assert!(stderr(&out).contains("are not both Parquet"), "{}", stderr(&out));
}

/// `dedup --parquet-compression`: each Parquet part is byte for byte the file `simhash
/// dedup --output-dir` writes with the same codec; without Parquet input it is refused.
#[test]
fn parquet_compression_parts_are_simhashs_files() {
    let dir = Dir::new();
    let rows = minhash_rows(12);
    let cut = rows.len() / 2;
    std::fs::create_dir_all(dir.path("in")).expect("mkdir");
    write_parquet(&dir.path("in/a.parquet"), &rows[..cut], false);
    write_parquet(&dir.path("in/b.parquet"), &rows[cut..], true);
    let input = s(&dir.path("in"));
    let mut sizes = Vec::new();
    for codec in ["mirror", "zstd", "lz4", "none"] {
        let (kept, parts_dir) =
            (dir.path(&format!("kept-{codec}")), dir.path(&format!("parts-{codec}")));
        let flags = ["-q", "--parquet-compression", codec];
        let code =
            simhash(&[&["dedup", &input][..], &flags, &["--output-dir", &s(&kept)]].concat());
        assert_eq!(code, ExitCode::from(1), "{codec}");
        let a = [&["dedup", &input][..], &flags, &["-w", "2", "--output-dir", &s(&parts_dir)]];
        let out = dist(&strings(&a.concat()));
        assert_eq!(out.status.code(), Some(1), "{codec}: {}", stderr(&out));
        for (part, file) in
            [("part-00000.parquet", "a.parquet"), ("part-00001.parquet", "b.parquet")]
        {
            let (got, want) = (std::fs::read(parts_dir.join(part)), std::fs::read(kept.join(file)));
            assert!(got.is_ok() && got.ok() == want.ok(), "{codec}: {part} differs from {file}");
        }
        sizes.push(std::fs::metadata(parts_dir.join("part-00000.parquet")).map_or(0, |m| m.len()));
    }
    // a.parquet is uncompressed: mirror and none write the same, zstd and lz4 less.
    assert_eq!(sizes[0], sizes[3], "{sizes:?}");
    assert!(sizes[1] < sizes[0] && sizes[2] < sizes[0], "{sizes:?}");
    let jsonl = dir.write("x.jsonl", "{\"id\":\"x\",\"text\":\"a b c\"}\n");
    let a = ["dedup", &s(&jsonl), "--parquet-compression", "zstd", "-o", &s(&dir.path("o.jsonl"))];
    let out = dist(&strings(&a));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--parquet-compression applies to Parquet output only"));
}

/// `--band-key-bits 32` and `64`: `simhash-dist` agrees byte for byte with `simhash` at the
/// same width, at 1 × 2 workers and 2 processes, for pairs, cluster and dedup; both widths
/// give the same output; the summary names the width (auto: 32 at this size).
#[test]
fn band_key_widths_agree_with_simhash() {
    let dir = Dir::new();
    let input = dir.write("adversarial.jsonl", &minhash_corpus(17));
    let (want, got) = (dir.path("want.tsv"), dir.path("got.tsv"));
    let mut by_width = Vec::new();
    for bits in ["32", "64"] {
        for command in ["pairs", "cluster"] {
            let extras = ["--method", "minhash", "--band-key-bits", bits];
            assert_eq!(simhash_into(command, &input, &extras, &want), ExitCode::from(1));
            let a = [command_line(command, &input, &got), extras.to_vec(), vec!["-w", "2"]];
            let out = dist(&strings(&a.concat()));
            assert_eq!(out.status.code(), Some(1), "{command} {bits}: {}", stderr(&out));
            assert!(read(&got) == read(&want), "{command} {bits}: 1 x 2 differs from simhash");
            let a = [command_line(command, &input, &got), extras.to_vec()].concat();
            for (p, out) in dist_processes(&dir, 2, 1, &a).iter().enumerate() {
                assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
            }
            assert!(read(&got) == read(&want), "{command} {bits}: 2 processes differ");
            by_width.push(read(&want));
        }
        assert_dedup_agrees(&dir, &input, &["--band-key-bits", bits], &["-w", "2"]);
        by_width.push(read(&dir.path("want.jsonl")));
    }
    assert!(by_width[..3] == by_width[3..], "the widths' outputs differ");
    let out = dist(&strings(&["pairs", &s(&input), "-w", "2", "-o", &s(&got)]));
    assert!(stderr(&out).contains("32-bit band keys"), "{}", stderr(&out));
    let out = dist(&strings(&["pairs", &s(&input), "--band-key-bits", "64", "-o", &s(&got)]));
    assert!(stderr(&out).contains("64-bit band keys"), "{}", stderr(&out));
}

/// The numbers after `"key": ` in `json`, in order.
fn numbers_after(json: &str, key: &str) -> Vec<u64> {
    json.split(&format!("\"{key}\": "))
        .skip(1)
        .map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("").parse())
        .map(|n| n.unwrap_or_else(|e| panic!("{key} in {json}: {e}")))
        .collect()
}

/// `--stats`: per worker, records read and bytes sent and received per kind of exchange,
/// the same at 1 × 2 workers and 2 processes (the deterministic part), sent = received
/// over the workers, and each process's peak memory.
#[test]
fn stats_list_each_workers_exchanges() {
    let dir = Dir::new();
    let input = dir.write("adversarial.jsonl", &minhash_corpus(5));
    let (got, stats) = (dir.path("got.tsv"), dir.path("stats.json"));
    let a = [command_line("cluster", &input, &got), vec!["--stats", stats.to_str().unwrap_or("")]];
    let out = dist(&strings(&[a.concat(), vec!["-w", "2"]].concat()));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let one = read(&stats);
    for (p, out) in dist_processes(&dir, 2, 1, &a.concat()).iter().enumerate() {
        assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
    }
    let two = read(&stats);
    let workers = |s: &str| s.split("\"measured\"").next().unwrap_or("").to_string();
    assert_eq!(workers(&one), workers(&two), "the deterministic figures differ");
    for json in [&one, &two] {
        let (sent, received) =
            (numbers_after(json, "sent_bytes"), numbers_after(json, "received_bytes"));
        assert_eq!(sent.len(), 2);
        assert_eq!(sent.iter().sum::<u64>(), received.iter().sum::<u64>(), "{json}");
        // Each worker's total is the sum of its exchanges.
        for w in json.split("{\"worker\": ").skip(1).take(2) {
            let parts: u64 = numbers_after(w, "sent").iter().sum();
            assert_eq!(numbers_after(w, "sent_bytes")[0], parts, "{w}");
        }
        assert!(json.contains("\"band_keys\": {\"sent\": "), "{json}");
        assert!(json.contains("\"candidate_components\": "), "{json}");
        assert!(numbers_after(json, "records_read").iter().sum::<u64>() > 1000, "{json}");
        assert!(numbers_after(json, "peak_rss_bytes").iter().all(|&b| b > 0), "{json}");
    }
    assert!(two.contains("\"process\": 1"), "{two}");
}

/// Short documents sharing a phrase (so band groups of hundreds whose pairs mostly do not
/// verify), families of near copies among them, copies of one page, tiny texts and a
/// repeated id.
fn phrase_corpus(docs: usize, seed: u64) -> String {
    let mut rng = seed;
    let mut out = String::new();
    let mut last: Vec<String> = Vec::new();
    for i in 0..docs {
        let mut words: Vec<String> = match i % 10 {
            // A near copy of the last document: one word changed.
            3 | 7 if !last.is_empty() => {
                let mut words = last.clone();
                let at = (splitmix(&mut rng) % 2) as usize;
                words[at] = format!("n{}", splitmix(&mut rng) % 100_000);
                words
            }
            5 => vec!["one page copied again and again".to_string()],
            9 if i % 20 == 9 => vec![["", "a", "a b"][i % 3].to_string()],
            _ => (0..2 + splitmix(&mut rng) % 4)
                .map(|_| format!("w{}", splitmix(&mut rng) % 100_000))
                .collect(),
        };
        if i % 10 != 5 && i % 20 != 9 {
            last.clone_from(&words);
            words.extend(["all", "rights", "reserved"].map(String::from));
        }
        let id = if i % 211 == 210 { i - 100 } else { i };
        let _ = writeln!(out, "{{\"id\":\"p{id}\",\"text\":\"{}\"}}", words.join(" "));
    }
    out
}

/// `pairs --method minhash` searches the band groups too large to list whole with the
/// engine (`--flood-group`), and still writes what `simhash pairs` writes, at every group
/// limit, shape and setting.
#[test]
fn minhash_pairs_search_flooded_band_groups_as_simhash() {
    let dir = Dir::new();
    let input = dir.write("phrase.jsonl", &phrase_corpus(3000, 7));
    let (want, got) = (dir.path("want.tsv"), dir.path("got.tsv"));
    let summary = |out: &Output| -> (u64, u64) {
        let err = stderr(out);
        let number_before = |what: &str| -> u64 {
            err.split(what)
                .next()
                .and_then(|head| head.rsplit([' ', '(']).next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        (number_before(" candidates,"), number_before(" records of larger band groups"))
    };
    for extra in [&[][..], &["--jaccard", "0.3"], &["--band-key-bits", "64", "--num-perm", "64"]] {
        let mut extras = vec!["--method", "minhash"];
        extras.extend(extra);
        // The repeated id is skipped: exit 1 on both.
        assert_eq!(simhash_into("pairs", &input, &extras, &want), ExitCode::from(1));
        assert!(read(&want).lines().count() > 100, "{extras:?}: too few pairs to test");
        let mut candidates = Vec::new();
        for (w, group) in [("1", "1"), ("3", "8"), ("2", "40"), ("2", "1000000")] {
            // Not quiet: the summary has the counts.
            let mut a = strings(&["pairs", &s(&input), "-o", &s(&got)]);
            a.extend(strings(&extras));
            a.extend(strings(&["-w", w, "--flood-group", group]));
            let out = dist(&a);
            assert_eq!(out.status.code(), Some(1), "{extras:?} {group}: {}", stderr(&out));
            assert!(read(&got) == read(&want), "{extras:?} -w {w} --flood-group {group} differs");
            let (listed, flooded) = summary(&out);
            assert_eq!(flooded > 0, group != "1000000", "{}", stderr(&out));
            candidates.push(listed);
        }
        // Every summary was read (the check of `flooded` above reads the same line). How
        // much the search saves shows at sizes `bench_flood` measures, not here, where the
        // engine lists these groups' pairs too.
        assert!(candidates.iter().all(|&c| c > 0), "{extras:?}: {candidates:?}");
        // Two processes.
        let a = [command_line("pairs", &input, &got), extras.clone(), vec!["--flood-group", "8"]];
        for (p, out) in dist_processes(&dir, 2, 1, &a.concat()).iter().enumerate() {
            assert_eq!(out.status.code(), Some(1), "process {p}: {}", stderr(out));
        }
        assert!(read(&got) == read(&want), "{extras:?}: 2 processes differ");
    }
    // The limit is a setting the processes agree on.
    let a = [command_line("pairs", &input, &got), vec!["--method", "minhash"]].concat();
    let outs = dist_each(
        &dir,
        1,
        &[
            [a.clone(), vec!["--flood-group", "8"]].concat(),
            [a, vec!["--flood-group", "9"]].concat(),
        ],
    );
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(2), "process {p}: {}", stderr(out));
        assert!(stderr(out).contains("flooded band groups"), "process {p}: {}", stderr(out));
    }
}

/// Template siblings, documents that share only boilerplate, copies with a passage added
/// and copies with a number spelled out: the relation of every pair decides what `dedup`
/// removes, `pairs` lists and `cluster` joins, and simhash-dist decides it as `simhash`
/// does, with either `--templates`, at any shape.
fn relation_corpus() -> String {
    let boiler = "libosmocore is a library with various utility functions that were originally \
        developed as part of the OpenBSC project but which are of a more generic nature and \
        thus useful to other programs developed in the sphere of free software mobile \
        communications";
    let own = [
        "the GSM library implements ciphers an authentication algorithm the data link layer \
         a parser and routines to encode and decode short messages",
        "this package contains documentation for the codec library including the reference \
         generated from the source files",
        "the control library lets programs set and read variables of a running process over \
         a socket with a textual protocol",
    ];
    let mut out = String::new();
    let mut id = 0;
    let mut push = |text: String, out: &mut String| {
        let _ = writeln!(out, "{{\"id\":\"r{id}\",\"text\":\"{text}\"}}");
        id += 1;
    };
    for round in 0..40 {
        // Siblings of one template: a name and a version filled in.
        let (name, v) = (WORDS[round % WORDS.len()], 10 + round);
        push(
            format!(
                "Rust bindings for the {name} library feature v3_{v} this metapackage enables \
                 feature v3_{v} for the Rust {name} crate by pulling in any additional \
                 dependencies needed by that feature"
            ),
            &mut out,
        );
        // Boilerplate with a paragraph of its own: never removed for another one.
        push(format!("{boiler} {} {round}", own[round % own.len()]), &mut out);
        // A copy with a passage added, and one with a number spelled out.
        push(
            format!("{boiler} {} {round} and it is kept up to date", own[round % own.len()]),
            &mut out,
        );
        push(format!("{boiler} twelve {}", own[(round + 1) % own.len()]), &mut out);
        push(format!("{boiler} 12 {}", own[(round + 1) % own.len()]), &mut out);
    }
    // Sibling packages of one source: its description and a stock sentence of what each
    // holds, in two languages (template siblings: the stock words are fill-ins).
    let zstd = "Zstandard is a fast lossless compression algorithm targeting real time \
        compression scenarios at zlib level and better compression ratios with a very fast \
        decoder and a special mode for small data called dictionary compression";
    let stock = [
        "This package contains the development headers and the static library.",
        "This package provides the debug symbols for the library.",
        "Questo pacchetto contiene la documentazione di sviluppo della libreria.",
    ];
    for sentence in stock {
        push(format!("{zstd}. {sentence}"), &mut out);
    }
    out
}

/// The ids of [`relation_corpus`]'s sibling packages with a stock sentence each, after
/// the first (`r200`): each goes as a template sibling of it.
const STOCK_SIBLINGS: [&str; 2] = ["r201", "r202"];

#[test]
fn relations_decide_alike_at_every_shape() {
    let dir = Dir::new();
    let input = dir.write("relations.jsonl", &relation_corpus());
    let want = dir.path("want.out");
    let mut relations = std::collections::BTreeSet::new();
    for templates in ["remove", "keep"] {
        for command in ["dedup", "pairs", "cluster"] {
            let extras = ["--templates", templates];
            assert_dist_as_simhash(&dir, command, &input, &extras, &["1", "2", "4"]);
            if command == "pairs" {
                relations.extend(
                    read(&want)
                        .lines()
                        .skip(1)
                        .filter_map(|l| l.rsplit('\t').next().map(str::to_string)),
                );
            }
        }
    }
    // The corpus holds both relations that are listed, and records kept for their own
    // content.
    assert!(relations.contains("same") && relations.contains("template"), "{relations:?}");
    let removed = dir.path("removed.jsonl");
    let args = ["--removed", removed.to_str().unwrap()];
    assert_eq!(simhash_into("dedup", &input, &args, &want), ExitCode::SUCCESS);
    let removed = read(&removed);
    assert!(removed.contains("\"relation\":\"template\""), "{removed}");
    // The sibling packages go as template siblings of the first.
    for id in STOCK_SIBLINGS {
        let line = removed.lines().find(|l| l.contains(&format!("\"id\":\"{id}\"")));
        let line = line.unwrap_or_else(|| panic!("{id} not removed: {removed}"));
        assert!(line.contains("\"relation\":\"template\""), "{line}");
    }
    assert!(removed.contains("\"relation\":\"same\""), "{removed}");
    // No record with a paragraph of its own goes for a record with another paragraph.
    // (The corpus's texts hold no quotes: a field is what follows its key to the next one.)
    let field = |line: &str, key: &str| -> String {
        let from = line.find(&format!("\"{key}\":\"")).map(|at| at + key.len() + 4);
        from.map(|at| line[at..].split('"').next().unwrap_or("").to_string()).unwrap_or_default()
    };
    let corpus = relation_corpus();
    let texts: std::collections::HashMap<String, String> =
        corpus.lines().map(|l| (field(l, "id"), field(l, "text"))).collect();
    let paragraph = |text: &str| {
        let p = text.split(" communications ").nth(1)?;
        Some(p.trim_start_matches("twelve ").trim_start_matches("12 ")[..20].to_string())
    };
    let mut checked = 0;
    for line in removed.lines() {
        let (r, k) = (&texts[&field(line, "id")], &texts[&field(line, "duplicate_of")]);
        if let (Some(pr), Some(pk)) = (paragraph(r), paragraph(k)) {
            assert_eq!(pr, pk, "{line}");
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} removals checked");
    assert!(!removed.contains("\"id\":\"r1\""), "{removed}");
}

/// `command` with `extras` on `input` gives `simhash`'s output (left in `want.out` of `dir`)
/// from simhash-dist at each of `workers` workers in one process, and from 2 processes.
fn assert_dist_as_simhash(
    dir: &Dir,
    command: &str,
    input: &Path,
    extras: &[&str],
    workers: &[&str],
) {
    let (want, got) = (dir.path("want.out"), dir.path("got.out"));
    assert_eq!(simhash_into(command, input, extras, &want), ExitCode::SUCCESS);
    for w in workers {
        let mut a = strings(&[command, &s(input), "-q", "-w", w, "-o", &s(&got)]);
        a.extend(strings(extras));
        let out = dist(&a);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(read(&got) == read(&want), "{command} {extras:?} -w {w}");
    }
    let a = [command_line(command, input, &got), extras.to_vec()].concat();
    for (p, out) in dist_processes(dir, 2, 1, &a).iter().enumerate() {
        assert_eq!(out.status.code(), Some(0), "process {p}: {}", stderr(out));
    }
    assert!(read(&got) == read(&want), "{command} {extras:?}: 2 processes");
}

/// Records with one shingle set but their words in another order (`--window 1`: "Alice
/// pays Bob" and "Bob pays Alice"; a text shuffled) are not copies: their relation is read,
/// by simhash-dist as by `simhash`, at every shape; copies with the same words in the same
/// order still collapse.
#[test]
fn one_set_in_another_order_is_decided_as_simhash_decides() {
    let dir = Dir::new();
    let words = ["alice", "pays", "bob", "five", "dollars", "for", "the", "old", "red", "bicycle"];
    let mut corpus = String::new();
    let mut rng = 17u64;
    for i in 0..60 {
        let mut w = words.to_vec();
        match i % 4 {
            // The text itself (a copy of record 0).
            0 => {}
            // Its first and third words swapped.
            1 => w.swap(0, 2),
            // Shuffled.
            2 => {
                for k in (1..w.len()).rev() {
                    w.swap(k, (splitmix(&mut rng) % (k as u64 + 1)) as usize);
                }
            }
            // Reversed.
            _ => w.reverse(),
        }
        let _ = writeln!(corpus, "{{\"id\":\"r{i}\",\"text\":\"{}\"}}", w.join(" "));
    }
    let input = dir.write("orders.jsonl", &corpus);
    let want = dir.path("want.out");
    for templates in ["remove", "keep"] {
        for command in ["dedup", "pairs", "cluster"] {
            let extras = ["--window", "1", "--templates", templates];
            assert_dist_as_simhash(&dir, command, &input, &extras, &["1", "2"]);
        }
    }
    // With template siblings kept, only copies go (the same words in the same order, as the
    // same text): the 14 later copies of each of the three fixed orders.
    let removed = dir.path("removed.jsonl");
    let args = ["--window", "1", "--templates", "keep", "--removed", removed.to_str().unwrap()];
    assert_eq!(simhash_into("dedup", &input, &args, &want), ExitCode::SUCCESS);
    let removed = read(&removed);
    let number = |line: &str, key: &str| -> u64 {
        let at = line.find(&format!("\"{key}\":\"r")).expect(key) + key.len() + 5;
        line[at..].split('"').next().and_then(|n| n.parse().ok()).expect("a number")
    };
    assert!(removed.lines().count() >= 42, "{removed}");
    for line in removed.lines() {
        assert!(line.contains("\"relation\":\"same\""), "{line}");
        assert_eq!(number(line, "id") % 4, number(line, "duplicate_of") % 4, "{line}");
    }
}

/// Started processes, killed (SIGKILL ends a stopped one too) if a test fails before they
/// end, so that none is left behind.
#[cfg(unix)]
struct Processes(Vec<Child>);

#[cfg(unix)]
impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Process `p` of `n` on `hostfile` with `args`, its standard input `stdin`, its standard
/// error piped, SIGINT, SIGTERM and SIGHUP at their default dispositions (as in
/// [`signals_remove_the_temporary_output_and_exit_128_plus_the_signal`]).
/// Starts `cmd`'s child with the default dispositions of SIGTERM, SIGHUP and SIGINT: one
/// ignored by whoever started the tests (a background job of a script ignores SIGINT) is
/// inherited, and simhash-dist rightly leaves it ignored, so a test of the handler resets them.
#[cfg(unix)]
fn default_signals(cmd: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: signal(2) is async-signal-safe, as the child's code before exec must be.
    unsafe {
        cmd.pre_exec(|| {
            for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
                libc::signal(signal, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

#[cfg(unix)]
fn start_process(args: &[&str], (p, n): (usize, usize), hostfile: &Path, stdin: Stdio) -> Child {
    let mut cmd = Command::new(BIN);
    default_signals(&mut cmd);
    let mut a = strings(args);
    a.extend(strings(&["-n", &n.to_string(), "-p", &p.to_string(), "--hostfile", &s(hostfile)]));
    cmd.args(a)
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn simhash-dist")
}

/// `kill -SIGNAL` to `child`.
#[cfg(unix)]
fn send_signal(signal: &str, child: &Child) {
    let sent = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill -{signal}");
}

/// How `child` ended, and when, if within `limit`; then its standard error.
#[cfg(unix)]
fn ended_within(child: &mut Child, limit: Duration) -> (Option<i32>, Instant, String) {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "process {} still running after {limit:?}", child.id());
        std::thread::sleep(Duration::from_millis(10));
    };
    let ended = Instant::now();
    let mut err = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut err).expect("read stderr");
    }
    (status.code(), ended, err)
}

/// The names in `dir` that end in `.tmp` (unfinished outputs).
fn temporary_files(dir: &Dir) -> Vec<String> {
    std::fs::read_dir(dir.0.path())
        .expect("list")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| Path::new(name).extension().is_some_and(|e| e == "tmp"))
        .collect()
}

/// A stopped process (SIGSTOP: a paused VM, a frozen host) once left every other process
/// waiting for ever. Its heartbeats stop, and every other process exits 2 within
/// `--peer-timeout` (2 s here), one naming it, with no temporary output left; resumed, it
/// exits 2 too.
#[cfg(unix)]
#[test]
fn a_stopped_process_ends_every_other_process_within_the_peer_timeout() {
    use std::io::Write as _;
    let dir = Dir::new();
    let hostfile = hostfile(&dir, 3);
    let out = s(&dir.path("out.tsv"));
    let args = ["pairs", "-", "-q", "-o", &out, "--peer-timeout", "2", "--connect-timeout", "20"];
    let mut processes = Processes(
        (0..3)
            .map(|p| {
                // Process 0's standard input stays open: the job waits in its first rounds.
                let stdin = if p == 0 { Stdio::piped() } else { Stdio::null() };
                start_process(&args, (p, 3), &hostfile, stdin)
            })
            .collect(),
    );
    let mut stdin = processes.0[0].stdin.take().expect("stdin");
    stdin.write_all(jsonl_corpus(200, 13).as_bytes()).expect("feed");
    // Process 0 creates its temporary output once every process has connected and agreed.
    let deadline = Instant::now() + Duration::from_secs(30);
    while temporary_files(&dir).is_empty() {
        assert!(Instant::now() < deadline, "no temporary output file");
        std::thread::sleep(Duration::from_millis(10));
    }
    send_signal("STOP", &processes.0[1]);
    let stopped = Instant::now();
    let mut errs = String::new();
    for p in [0, 2] {
        let (code, ended, err) = ended_within(&mut processes.0[p], Duration::from_secs(15));
        let took = ended - stopped;
        assert_eq!(code, Some(2), "process {p}: {err}");
        // 2 s and a heartbeat's interval (0.4 s) for the first to notice; the other may
        // notice the first's exit instead, at once.
        assert!(took < Duration::from_secs(8), "process {p} took {took:?}: {err}");
        assert!(!err.contains("panicked"), "process {p}: {err}");
        errs.push_str(&err);
    }
    assert!(
        errs.contains("process 1 (127.0.0.1:")
            && errs.contains("sent nothing for 2 s: stopped or unreachable"),
        "{errs}"
    );
    assert!(temporary_files(&dir).is_empty(), "{:?}", temporary_files(&dir));
    assert!(!dir.path("out.tsv").exists());
    drop(stdin);
    send_signal("CONT", &processes.0[1]);
    let (code, _, err) = ended_within(&mut processes.0[1], Duration::from_secs(15));
    assert_eq!(code, Some(2), "process 1, resumed: {err}");
}

/// A signal after process 0 committed the output, while it waits for a process that hung
/// (`--inject-stall`), once only said "finishing the run" and waited on for ever. It ends
/// the process with 128 + the signal, saying what was committed, which stays in place; the
/// hung process, its connection closed, exits 2.
#[cfg(unix)]
#[test]
fn a_signal_after_the_commit_ends_the_wait_for_a_hung_process() {
    let dir = Dir::new();
    let input = s(&dir.write("corpus.jsonl", &jsonl_corpus(300, 14)));
    let hostfile = hostfile(&dir, 2);
    let out = dir.path("out.tsv");
    let args = ["pairs", &input, "-q", "-o", &s(&out), "--inject-stall", "1"];
    let mut processes =
        Processes((0..2).map(|p| start_process(&args, (p, 2), &hostfile, Stdio::null())).collect());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !out.exists() {
        assert!(Instant::now() < deadline, "no output committed");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Waiting for process 1's outcome round, which never comes.
    std::thread::sleep(Duration::from_millis(300));
    assert!(processes.0[0].try_wait().expect("wait").is_none(), "process 0 ended by itself");
    send_signal("TERM", &processes.0[0]);
    let (code, _, err) = ended_within(&mut processes.0[0], Duration::from_secs(10));
    assert_eq!(code, Some(143), "process 0: {err}");
    assert!(
        err.contains(&format!("SIGTERM after this process committed the output {}", s(&out))),
        "{err}"
    );
    assert!(!read(&out).is_empty(), "the committed output was removed");
    let (code, _, err) = ended_within(&mut processes.0[1], Duration::from_secs(10));
    assert_eq!(code, Some(2), "process 1: {err}");
}

/// A worker's spanning forest numbers its records with 32 bits; past that (a test-sized
/// limit here, `--forest-capacity`) the job once panicked (`expect`). It fails on every
/// worker with a message naming the limit, and writes nothing.
#[test]
fn a_forest_past_its_capacity_fails_the_job_naming_the_limit() {
    let dir = Dir::new();
    let input = s(&dir.write("corpus.jsonl", &jsonl_corpus(500, 15)));
    let got = dir.path("got.jsonl");
    for method in METHODS {
        for command in ["cluster", "dedup"] {
            let what = format!("{command} --method {method}");
            let out = dist(&strings(&[
                command,
                &input,
                "--method",
                method,
                "-w",
                "2",
                "-q",
                "--forest-capacity",
                "3",
                "-o",
                &s(&got),
            ]));
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{what}: {err}");
            assert!(
                err.contains("more than 3 distinct records in one worker's spanning forest"),
                "{what}: {err}"
            );
            assert!(!err.contains("panicked") && !err.contains("a worker failed"), "{what}: {err}");
            assert!(!got.exists(), "{what}");
        }
    }
    // Far from the limit, the same jobs run.
    let out = dist(&strings(&["cluster", &input, "-w", "2", "-q", "-o", &s(&got)]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A corpus for `decontaminate` ([`jsonl_corpus`], then a record whose id repeats an
/// earlier one's and holds eval text, which `simhash` skips, and a bad line) and an eval
/// set: passages of its texts (some re-cased, with punctuation), the corpus's boilerplate
/// sentence (in many documents: `--max-df` drops it), a short item that matches only whole,
/// and an item found nowhere.
fn decontaminate_inputs(dir: &Dir, seed: u64) -> (PathBuf, PathBuf) {
    let corpus = jsonl_corpus(700, seed);
    let texts: Vec<String> = corpus
        .lines()
        .filter_map(|l| {
            l.split("\"text\":\"").nth(1).map(|t| t.trim_end_matches("\"}").to_string())
        })
        .filter(|t| t.split(' ').count() >= 30)
        .collect();
    let mut rng = seed;
    let mut quiz = String::new();
    let mut first = String::new();
    for i in 0..25 {
        let words: Vec<&str> =
            texts[(splitmix(&mut rng) % texts.len() as u64) as usize].split(' ').collect();
        let at = (splitmix(&mut rng) % (words.len() as u64 - 14)) as usize;
        let mut item = words[at..at + 14].join(" ");
        if i % 3 == 0 {
            item = item.to_uppercase().replacen(' ', ", ", 2) + "?";
        } else if first.is_empty() {
            first.clone_from(&item);
        }
        let _ = writeln!(quiz, "{{\"id\":\"q{i}\",\"text\":\"{item}\"}}");
    }
    quiz.push_str(
        "{\"id\":\"boiler\",\"text\":\"The same boilerplate page again and again and again.\"}\n",
    );
    quiz.push_str("{\"id\":\"short\",\"text\":\"Harbour winter\"}\n");
    quiz.push_str(
        "{\"id\":\"none\",\"text\":\"nothing of this is written anywhere in the corpus at all\"}\n",
    );
    // Item q1 whole, in a record skipped for its id: no hit.
    let corpus = format!(
        "{corpus}\n{{\"id\":\"doc-5\",\"text\":\"{first}\"}}\nnot json\n{{\"id\":\"x\",\"text\":\"harbour winter\"}}\n"
    );
    (dir.write("corpus.jsonl", &corpus), dir.write("quiz.jsonl", &quiz))
}

/// `decontaminate`: the hits and the corpus without them, byte for byte `simhash
/// decontaminate`'s, at any number of workers and processes and at every kind of
/// `--max-df`; the exit code and the bad records as `simhash` gives them.
#[test]
fn decontaminate_matches_simhash_at_any_split() {
    let dir = Dir::new();
    let (corpus, quiz) = decontaminate_inputs(&dir, 21);
    let (corpus, quiz) = (s(&corpus), s(&quiz));
    let (want_hits, want_clean) = (s(&dir.path("want-hits.jsonl")), s(&dir.path("want.jsonl")));
    let (hits, clean) = (s(&dir.path("hits.jsonl")), s(&dir.path("clean.jsonl")));
    for max_df in ["1000", "20", "0.02", "none"] {
        let base = ["decontaminate", &corpus, "--eval", &quiz, "--max-df", max_df];
        let want = [&base[..], &["-q", "--hits", &want_hits, "-o", &want_clean]].concat();
        assert_eq!(simhash(&want), ExitCode::from(1), "--max-df {max_df}");
        let found = read(Path::new(&want_hits));
        assert!(found.lines().count() >= 20, "--max-df {max_df}: {found}");
        // The skipped record (a repeated id) holds item q1: no hit names it (the first
        // doc-5 has other text).
        assert!(!found.contains("{\"id\":\"doc-5\",\"eval\":\"quiz\",\"item\":\"q1\""));
        assert!(found.contains("\"item\":\"q1\""), "{found}");
        let got = [&base[..], &["--hits", &hits, "-o", &clean]].concat();
        let mut runs = Vec::new();
        for w in ["1", "2", "4"] {
            runs.push((format!("-w {w}"), vec![dist(&strings(&[&got[..], &["-w", w]].concat()))]));
        }
        runs.push(("2 x 1".to_string(), dist_processes(&dir, 2, 1, &got)));
        runs.push(("1 x 2".to_string(), dist_each(&dir, 2, std::slice::from_ref(&got))));
        for (shape, outs) in runs {
            for (p, out) in outs.iter().enumerate() {
                assert_eq!(out.status.code(), Some(1), "{shape} {p}: {}", stderr(out));
            }
            assert!(
                stderr(&outs[0]).contains("corpus.jsonl:704: invalid JSON"),
                "{}",
                stderr(&outs[0])
            );
            assert!(stderr(&outs[0]).contains("corpus.jsonl:703: duplicate id"), "{shape}");
            assert!(read(Path::new(&hits)) == found, "--max-df {max_df}, {shape}: hits differ");
            assert!(
                read(Path::new(&clean)) == read(Path::new(&want_clean)),
                "--max-df {max_df}, {shape}: -o differs"
            );
        }
    }
    // No output asked for: the hits on standard output, as `simhash` writes them.
    let want = ["decontaminate", &corpus, "--eval", &quiz, "-q", "--hits", &want_hits];
    assert_eq!(simhash(&want), ExitCode::from(1));
    let out = dist(&strings(&["decontaminate", &corpus, "--eval", &quiz, "-q", "-w", "2"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout) == read(Path::new(&want_hits)));
}

/// A bad record of an eval set alone (the corpus clean) ends `decontaminate` with exit 1,
/// as `simhash`'s, on every worker and process.
#[test]
fn decontaminate_exits_1_for_a_bad_eval_record_alone() {
    let dir = Dir::new();
    let corpus = s(&dir.write("corpus.jsonl", &jsonl_corpus(50, 5)));
    let quiz = s(&dir.write("quiz.jsonl", "{\"id\":\"q\",\"text\":\"a b c d e\"}\nnot json\n"));
    let args = ["decontaminate", &corpus, "--eval", &quiz, "-q"];
    let hits = s(&dir.path("hits.jsonl"));
    assert_eq!(simhash(&[&args[..], &["--hits", &hits]].concat()), ExitCode::from(1));
    let got = [&args[..], &["--hits", &hits]].concat();
    let mut outs = vec![dist(&strings(&[&got[..], &["-w", "2"]].concat()))];
    outs.extend(dist_processes(&dir, 2, 1, &got));
    for (p, out) in outs.iter().enumerate() {
        assert_eq!(out.status.code(), Some(1), "{p}: {}", stderr(out));
    }
    assert!(stderr(&outs[0]).contains("quiz.jsonl:2: invalid JSON"), "{}", stderr(&outs[0]));
}

/// `decontaminate` refuses what it does not write and outputs over an input, and a failed
/// worker leaves every output as it was.
#[test]
fn decontaminate_refuses_and_fails_without_output() {
    let dir = Dir::new();
    let (corpus, quiz) = decontaminate_inputs(&dir, 22);
    let (corpus, quiz) = (s(&corpus), s(&quiz));
    let hits = s(&dir.write("hits.jsonl", "previous hits\n"));
    let clean = s(&dir.write("clean.jsonl", "previous\n"));
    let base = ["decontaminate", &corpus, "--eval", &quiz];
    let refused = |more: &[&str], says: &str| {
        let out = dist(&strings(&[&base[..], more].concat()));
        assert_eq!(out.status.code(), Some(2), "{more:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{more:?}: {}", stderr(&out));
    };
    refused(&["--cut", "cut.jsonl"], "--cut is written by `simhash decontaminate`");
    refused(&["-o", &clean, "--annotate"], "--annotate is written by");
    refused(&["--report", "r.html"], "--report is written by");
    refused(&["-o", &corpus], "refusing to overwrite");
    refused(&["--hits", &quiz], "refusing to overwrite");
    refused(&["--ngram", "0"], "n-gram length");
    for hook in ["--inject-error", "--inject-write-error"] {
        let a = [&base[..], &["--hits", &hits, "-o", &clean, "-w", "2", hook, "1"]].concat();
        let out = dist(&strings(&a));
        assert_eq!(out.status.code(), Some(2), "{hook}: {}", stderr(&out));
        assert_eq!(read(Path::new(&hits)), "previous hits\n", "{hook}: --hits was touched");
        assert_eq!(read(Path::new(&clean)), "previous\n", "{hook}: -o was touched");
    }
}
