//! Outputs never replace inputs, special paths are written through, signals clean up,
//! and failures name what failed.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Dir, corpus};

const SIMHASH: &str = env!("CARGO_BIN_EXE_simhash");

/// Runs `sh -c SCRIPT` in `dir`, with `$SIMHASH` set to the binary.
#[cfg(unix)]
fn sh(dir: &Dir, script: &str) -> (i32, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("SIMHASH", SIMHASH)
        .current_dir(dir.path("."))
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn temp_files(dir: &Dir) -> Vec<String> {
    let ext =
        |n: &str| std::path::Path::new(n).extension().and_then(|e| e.to_str()).map(str::to_owned);
    dir.files().into_iter().filter(|n| matches!(ext(n).as_deref(), Some("tmp" | "bak"))).collect()
}

#[test]
fn an_output_is_never_an_input() {
    let dir = Dir::new();
    let input = corpus(40, 3);
    dir.write("c.jsonl", &input);
    let refused = |args: &[&str], want: &str| {
        let run = dir.run(args);
        run.code(2);
        assert!(run.stderr.contains(want), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("refusing"), "{args:?}: {}", run.stderr);
        assert_eq!(dir.read("c.jsonl"), input, "{args:?} changed the input");
        assert!(temp_files(&dir).is_empty(), "{:?}", dir.files());
    };
    refused(&["pairs", "c.jsonl", "-o", "c.jsonl"], "is the input c.jsonl");
    refused(&["dedup", "c.jsonl", "-o", "k.jsonl", "--removed", "c.jsonl"], "is the input");
    assert!(!dir.path("k.jsonl").exists(), "nothing is written when the run is refused");
    refused(&["dedup", "c.jsonl", "-o", "out", "--removed", "out"], "refusing to write both");
    refused(&["dedup", "c.jsonl", "-o", "k.jsonl", "--stats", "k.jsonl"], "refusing");
    refused(&["dedup", "c.jsonl", "-o", "k.jsonl", "--stats", "c.jsonl"], "is the input");
    refused(&["cluster", "c.jsonl", "--stats", "c.jsonl"], "is the input");
    // Standard input redirected from the file is that file.
    let stdin = std::fs::File::open(dir.path("c.jsonl")).unwrap();
    let out =
        dir.cmd("simhash").args(["dedup", "-", "-o", "c.jsonl"]).stdin(stdin).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(dir.read("c.jsonl"), input);
    // The same file under another name.
    std::fs::hard_link(dir.path("c.jsonl"), dir.path("hard.jsonl")).unwrap();
    refused(&["dedup", "c.jsonl", "-o", "hard.jsonl"], "is the input c.jsonl");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("c.jsonl", dir.path("link.jsonl")).unwrap();
        refused(&["dedup", "c.jsonl", "-o", "link.jsonl"], "is the input c.jsonl");
        refused(&["dedup", "link.jsonl", "--removed", "c.jsonl"], "is the input link.jsonl");
    }
    // eval: the prediction is an input too.
    dir.write("p.tsv", "id\tcluster\na\t1\n");
    refused(&["eval", "p.tsv", "--truth", "p.tsv", "-o", "p.tsv"], "is the input");
    // /dev/null may be named twice.
    dir.run(&["dedup", "c.jsonl", "-o", "/dev/null", "--removed", "/dev/null"]).code(0);
}

#[cfg(unix)]
#[test]
fn stdout_paths_write_to_the_open_descriptor() {
    let dir = Dir::new();
    let input = corpus(40, 5);
    dir.write("c.jsonl", &input);
    // `>> log` appends: log keeps its lines and gets the removed records after them.
    dir.write("log", "before\n");
    let (code, err) = sh(&dir, "$SIMHASH dedup c.jsonl -o k.jsonl --removed /dev/stdout >> log");
    assert_eq!(code, 0, "{err}");
    let log = dir.read("log");
    assert!(log.starts_with("before\n"), "{log}");
    assert!(log.lines().count() > 1 && log.contains("duplicate_of"), "{log}");
    for spelling in ["/dev/fd/1", "/proc/self/fd/1"] {
        if !std::path::Path::new(spelling).exists() {
            continue;
        }
        dir.write("log", "before\n");
        let script = format!("$SIMHASH dedup c.jsonl -o k.jsonl --removed {spelling} >> log");
        let (code, err) = sh(&dir, &script);
        assert_eq!(code, 0, "{spelling}: {err}");
        assert_eq!(dir.read("log"), log, "{spelling}");
    }
    let (code, err) = sh(&dir, "$SIMHASH dedup c.jsonl -o k.jsonl --removed /dev/stderr 2>> log");
    assert_eq!(code, 0, "{err}");
    // Standard output redirected to the input is the input.
    dir.write("in.jsonl", &input);
    let (code, err) = sh(&dir, "$SIMHASH dedup in.jsonl -o /dev/stdout >> in.jsonl");
    assert_eq!(code, 2, "{err}");
    assert_eq!(dir.read("in.jsonl"), input);
    let (code, err) = sh(&dir, "$SIMHASH dedup in.jsonl >> in.jsonl");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--output - (standard output) is the input in.jsonl"), "{err}");
    assert_eq!(dir.read("in.jsonl"), input);
    // Two outputs to one pipe would interleave.
    let run = dir.run(&["dedup", "c.jsonl", "-o", "-", "--removed", "/dev/stdout"]);
    run.code(2);
    assert!(run.stderr.contains("refusing to write both"), "{}", run.stderr);
    // Both named by their flags (not "standard output is also standard output").
    let run = dir.run(&["dedup", "c.jsonl", "-o", "-", "--report", "-"]);
    run.code(2);
    let both = "--report - (standard output) is also --output - (standard output)";
    assert!(run.stderr.contains(both), "{}", run.stderr);
}

#[cfg(unix)]
#[test]
fn symlinked_outputs_are_written_through() {
    use std::os::unix::fs::symlink;
    let dir = Dir::new();
    dir.write("news.jsonl", include_str!("../../../examples/news.jsonl"));
    let want = dir.run(&["fingerprint", "news.jsonl"]).stdout;
    let is_link = |name: &str| std::fs::symlink_metadata(dir.path(name)).unwrap().is_symlink();
    // To an existing file.
    dir.write("target.tsv", "old\n");
    symlink("target.tsv", dir.path("link.tsv")).unwrap();
    dir.run(&["fingerprint", "news.jsonl", "-o", "link.tsv"]).code(0);
    assert!(is_link("link.tsv"));
    assert_eq!(dir.read("target.tsv"), want);
    // Dangling: the file it names is created.
    symlink("new.tsv", dir.path("dangling.tsv")).unwrap();
    dir.run(&["fingerprint", "news.jsonl", "-o", "dangling.tsv"]).code(0);
    assert!(is_link("dangling.tsv"));
    assert_eq!(dir.read("new.tsv"), want);
    // A chain of relative links across directories.
    std::fs::create_dir(dir.path("a")).unwrap();
    std::fs::create_dir(dir.path("b")).unwrap();
    symlink("../b/second", dir.path("a/first")).unwrap();
    symlink("final.tsv", dir.path("b/second")).unwrap();
    dir.run(&["fingerprint", "news.jsonl", "-o", "a/first"]).code(0);
    assert!(is_link("a/first") && is_link("b/second"));
    assert_eq!(dir.read("b/final.tsv"), want);
    assert!(temp_files(&dir).is_empty(), "{:?}", dir.files());
}

#[cfg(unix)]
#[test]
fn write_errors_name_the_output() {
    let dir = Dir::new();
    dir.write("c.jsonl", corpus(40, 6));
    if std::path::Path::new("/dev/full").exists() {
        let run = dir.run(&["fingerprint", "c.jsonl", "-o", "/dev/full"]);
        run.code(2);
        assert!(run.stderr.contains("/dev/full: No space left on device"), "{}", run.stderr);
    }
    // A temporary file that cannot be created names the directory.
    let run = dir
        .cmd("simhash")
        .args(["dedup", "-"])
        .env("TMPDIR", "/nonexistent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let mut stdin = child.stdin.take().expect("stdin");
            let _ = stdin.write_all(b"{\"text\":\"a b c\"}\n");
            drop(stdin);
            child.wait_with_output()
        })
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent") && stderr.contains("TMPDIR"), "{stderr}");
}

#[test]
fn compressed_data_without_its_extension_is_one_error() {
    let dir = Dir::new();
    let input = corpus(40, 7);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(input.as_bytes()).unwrap();
    dir.write("g.jsonl", gz.finish().unwrap());
    dir.write("z.jsonl", zstd::encode_all(input.as_bytes(), 1).unwrap());
    for (name, kind) in [("g.jsonl", "gzip"), ("z.jsonl", "zstd")] {
        let run = dir.run(&["dedup", name]);
        run.code(2);
        let want = format!("{name}: looks {kind}-compressed but is not named");
        assert!(run.stderr.contains(&want), "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
    let run = dir.run_stdin(&["pairs", "-"], &std::fs::read(dir.path("g.jsonl")).unwrap());
    run.code(2);
    assert!(run.stderr.contains("<stdin>: looks gzip-compressed"), "{}", run.stderr);
    // Named for what it is, it is read.
    std::fs::rename(dir.path("g.jsonl"), dir.path("g.jsonl.gz")).unwrap();
    dir.run(&["dedup", "g.jsonl.gz", "-o", "/dev/null"]).code(0);
}

/// Starts `simhash dedup - -o out.jsonl` with a standard input kept open (so the run waits
/// mid-read), waits for its temporary output file, sends `signal`, and returns the exit code.
#[cfg(unix)]
fn interrupted(signal: i32) -> (Option<i32>, Vec<String>) {
    use std::os::unix::process::CommandExt;
    let dir = Dir::new();
    let mut cmd = dir.cmd("simhash");
    // A signal ignored by whoever started the tests (a background job of a script ignores
    // SIGINT) is inherited, and simhash rightly leaves it ignored: the child starts with the
    // default disposition, as from a terminal, so that the test reaches the handler.
    // SAFETY: signal(2) is async-signal-safe, as the child's code before exec must be.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(signal, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd
        .args(["dedup", "-", "-o", "out.jsonl", "--removed", "removed.jsonl", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(corpus(200, 8).as_bytes()).expect("feed");
    let deadline = Instant::now() + Duration::from_secs(20);
    while temp_files(&dir).len() < 2 {
        assert!(Instant::now() < deadline, "no temporary files: {:?}", dir.files());
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill with a live child's pid.
    let sent = unsafe { libc::kill(child.id().cast_signed(), signal) };
    assert_eq!(sent, 0);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "still running after the signal");
        std::thread::sleep(Duration::from_millis(10));
    };
    drop(stdin);
    (status.code(), dir.files())
}

#[cfg(unix)]
#[test]
fn signals_remove_temporary_files_and_exit_128_plus_the_signal() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129), (libc::SIGINT, 130)] {
        let (got, files) = interrupted(signal);
        assert_eq!(got, Some(code), "signal {signal}");
        assert!(files.is_empty(), "signal {signal} left {files:?}");
    }
}

/// An existing output the user may not write (mode 444) is refused, as the shell's `>`
/// would refuse it, where renaming a new file over it needed only the directory's
/// permission: exit 2, the file as it was, no other output written.
#[cfg(unix)]
#[test]
fn a_read_only_output_is_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    dir.write("c.jsonl", include_str!("../../../examples/news.jsonl"));
    for (flag, name) in
        [("-o", "kept.jsonl"), ("--removed", "removed.jsonl"), ("--stats", "s.json")]
    {
        dir.write(name, "before\n");
        std::fs::set_permissions(dir.path(name), std::fs::Permissions::from_mode(0o444))
            .expect("chmod");
        let mut args = vec!["dedup", "c.jsonl", "-o", "out.jsonl", "--removed", "rm.jsonl"];
        if flag == "-o" {
            args[3] = name;
        } else if flag == "--removed" {
            args[5] = name;
        } else {
            args.extend([flag, name]);
        }
        let run = dir.run(&args);
        run.code(2);
        assert!(run.stderr.contains(&format!("{name}: not writable (mode 444)")), "{}", run.stderr);
        assert_eq!(dir.read(name), "before\n", "{flag}");
        assert!(!dir.path("out.jsonl").exists() && !dir.path("rm.jsonl").exists(), "{flag}");
        std::fs::set_permissions(dir.path(name), std::fs::Permissions::from_mode(0o644))
            .expect("chmod");
    }
    // Writable, it is replaced as before.
    dir.run(&["dedup", "c.jsonl", "-o", "kept.jsonl", "-q"]).code(0);
    assert_ne!(dir.read("kept.jsonl"), "before\n");
}
