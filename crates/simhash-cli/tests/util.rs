//! A temporary directory to run the binaries in, and helpers to build corpora.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub struct Dir {
    dir: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Dir {
    pub fn new() -> Dir {
        Dir { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).expect("write fixture");
        path
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_else(|e| panic!("read {name}: {e}"))
    }

    /// Files in the directory (to check no temporary file is left behind).
    pub fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    pub fn cmd(&self, bin: &str) -> Command {
        let exe = match bin {
            "simhash" => env!("CARGO_BIN_EXE_simhash"),
            "simhash-find-all" => env!("CARGO_BIN_EXE_simhash-find-all"),
            "simhash-find-clusters" => env!("CARGO_BIN_EXE_simhash-find-clusters"),
            other => panic!("unknown binary {other}"),
        };
        let mut cmd = Command::new(exe);
        cmd.current_dir(self.dir.path());
        cmd
    }

    /// Starts `simhash ARGS` paused between its two passes (the debug build's
    /// `SIMHASH_TEST_BETWEEN_PASSES` hook) and returns it, once its first pass is done, with
    /// the marker file to remove to let it go on (its standard error piped).
    pub fn spawn_paused(&self, args: &[&str]) -> (std::process::Child, PathBuf) {
        let marker = self.path("between");
        let child = self
            .cmd("simhash")
            .args(args)
            .env("SIMHASH_TEST_BETWEEN_PASSES", &marker)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn simhash");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !marker.exists() {
            assert!(std::time::Instant::now() < deadline, "the first pass did not finish");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        (child, marker)
    }

    /// Runs `simhash ARGS` with no standard input.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_bin("simhash", args, None)
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        self.run_bin("simhash", args, Some(stdin))
    }

    pub fn run_bin(&self, bin: &str, args: &[&str], stdin: Option<&[u8]>) -> Run {
        let mut cmd = self.cmd(bin);
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = cmd.spawn().expect("spawn");
        if let Some(input) = stdin {
            let mut pipe = child.stdin.take().expect("stdin");
            let input = input.to_vec();
            std::thread::spawn(move || {
                let _ = pipe.write_all(&input);
            });
        }
        let Output { status, stdout, stderr } = child.wait_with_output().expect("wait");
        Run {
            code: status.code().unwrap_or(-1),
            stdout: String::from_utf8(stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        }
    }
}

impl Run {
    /// Asserts the exit code, showing stderr when it is not the one expected.
    pub fn code(&self, want: i32) -> &Run {
        assert_eq!(
            self.code, want,
            "exit code; stderr:\n{}\nstdout:\n{}",
            self.stderr, self.stdout
        );
        self
    }
}

/// A deterministic corpus: `bases` random "articles" of 40..120 words, each followed at
/// random later places by near-copies (a word or two changed, case, punctuation) and exact
/// copies, plus unrelated filler. Returns JSONL with ids `d<n>`.
pub fn corpus(bases: usize, seed: u64) -> String {
    let vocab: Vec<&str> = include_str!("../../../LICENSE-APACHE").split_whitespace().collect();
    let mut rng = Rng(seed | 1);
    let mut docs: Vec<String> = Vec::new();
    for _ in 0..bases {
        let n = 40 + rng.below(80) as usize;
        let words: Vec<&str> =
            (0..n).map(|_| vocab[rng.below(vocab.len() as u64) as usize]).collect();
        docs.push(words.join(" "));
        for _ in 0..rng.below(3) {
            let mut copy = words.clone();
            if rng.below(2) == 0 {
                let at = rng.below(n as u64) as usize;
                copy[at] = "CHANGED";
            }
            let text =
                if rng.below(3) == 0 { copy.join(" ").to_uppercase() } else { copy.join(" ") };
            docs.push(text);
        }
    }
    // Shuffle deterministically so copies are not next to their originals.
    for i in (1..docs.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        docs.swap(i, j);
    }
    let mut out = String::new();
    for (i, text) in docs.iter().enumerate() {
        out += &serde_json::json!({"id": format!("d{i}"), "text": text}).to_string();
        out.push('\n');
    }
    out
}

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Parses TSV output into rows of columns, without the header.
pub fn rows(tsv: &str) -> Vec<Vec<String>> {
    tsv.lines().skip(1).map(|l| l.split('\t').map(str::to_string).collect()).collect()
}
