//! One module per command, each a `run` over its validated settings.

pub mod cluster;
pub mod cpp;
pub mod dedup;
pub mod eval;
pub mod fingerprint;
pub mod fork;
pub mod pairs;

use std::process::ExitCode;

use crate::flags::Command;
use crate::settings::{
    ClusterSettings, CppSettings, DedupSettings, EvalSettings, FingerprintSettings, PairsSettings,
};

/// Runs a subcommand: its flags become settings, then it runs.
pub fn run(command: &Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Fingerprint(args) => fingerprint::run(&FingerprintSettings::new(args)?),
        Command::Pairs(args) => pairs::run(&PairsSettings::new(args)?),
        Command::Dedup(args) => dedup::run(&DedupSettings::new(args)?),
        Command::Cluster(args) => cluster::run(&ClusterSettings::new(args, false)?),
        Command::FindAll(args) => cpp::run(&CppSettings::new(args)?, false),
        Command::FindClusters(args) => cpp::run(&CppSettings::new(args)?, true),
        Command::Eval(args) => eval::run(&EvalSettings::new(args)),
    }
}
