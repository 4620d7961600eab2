//! The settings a job runs with, validated by the front end before any input is read: the
//! run's ([`Run`]: threads, quiet, `--stats`, the memory budget), the input's ([`Input`]:
//! the files and how their records are read) and the clusters' ([`Grouping`]).

use std::path::PathBuf;

use simhash_cluster::{KeepPolicy, Mode};
use simhash_io::Inputs;

use crate::corpus::Reading;
use crate::summary::Summary;

/// Threads, progress and the summary.
#[derive(Debug)]
pub struct Run {
    /// Worker threads (`-j`; all the cores when not given).
    pub threads: usize,
    /// `--quiet`: no progress and no summary.
    pub quiet: bool,
    /// `--stats`: where the run's counts go, as JSON.
    pub stats: Option<PathBuf>,
    /// `--memory`: the budget of all pairs within k bits (none: one pass).
    pub memory: Option<u64>,
}

/// How clusters are formed and which record of each is kept.
#[derive(Clone, Copy, Debug)]
pub struct Grouping {
    /// `--mode`: star (each kept record's duplicates) or components.
    pub mode: Mode,
    /// `--keep`: which record of a cluster is kept.
    pub keep: KeepPolicy,
    /// `--big-cluster`: clusters larger than this are warned about.
    pub big_cluster: usize,
}

/// `--big-cluster`'s default: every front end's (and simhash-cpp's programs').
pub const DEFAULT_BIG_CLUSTER: usize = 1000;

/// Where records come from and how they are read.
#[derive(Debug)]
pub struct Input {
    /// The input files, directories expanded.
    pub inputs: Inputs,
    /// The input arguments as given (files and directories).
    pub named: Vec<PathBuf>,
    /// `--strict`: the first bad record fails the run.
    pub strict: bool,
    /// `--max-record-bytes`: a longer line is a bad record.
    pub max_record_bytes: u64,
    /// `--sample N` and `--seed`.
    pub sample: Option<(u64, u64)>,
    /// The record parser, fingerprinter and sketcher.
    pub reading: Reading,
}

impl Input {
    /// The plan of what the run writes ([`simhash_io::WritePlan`]), with the inputs (the
    /// files and the arguments that named them) and `run`'s `--stats`: the command adds
    /// its outputs, and checks it before anything is read.
    pub fn write_plan(&self, run: &Run) -> simhash_io::WritePlan {
        let mut plan = simhash_io::WritePlan::new();
        plan.inputs(self.inputs.paths()).inputs(&self.named);
        if let Some(stats) = &run.stats {
            plan.output("--stats", stats);
        }
        plan
    }

    /// Notes the fingerprinter and the LSH bands in the summary.
    pub fn note(&self, summary: &mut Summary) {
        if let Some(fingerprinter) = &self.reading.fingerprinter {
            summary.preset =
                Some(format!("{} (window {})", fingerprinter.preset(), fingerprinter.window()));
            if let Some(s) = &self.reading.sketcher {
                summary.lsh_bands = Some(format!("{} x {}", s.banding().bands, s.banding().rows));
            }
        }
    }
}
