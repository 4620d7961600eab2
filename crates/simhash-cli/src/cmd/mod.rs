//! One module per command, each a `run` over its validated settings.

pub mod audit;
pub mod cluster;
pub mod cpp;
pub mod decontaminate;
pub mod dedup;
pub mod eval;
pub mod explain;
pub mod fingerprint;
pub mod fork;
pub mod index;
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
        Command::Dedup(args) => {
            let index = match &args.against {
                Some(path) if args.update => index::open_if_any(path)?,
                Some(path) => Some(simhash_index::disk::DiskIndex::open(path)?),
                None => None,
            };
            dedup::run(&DedupSettings::new(
                args,
                index.as_ref().map(simhash_index::disk::DiskIndex::settings),
            )?)
        }
        Command::Decontaminate(args) => {
            decontaminate::run(&crate::settings::DecontaminateSettings::new(args)?)
        }
        Command::Cluster(args) => cluster::run(&ClusterSettings::new(args, false)?),
        Command::FindAll(args) => cpp::run(&CppSettings::new(args)?, false),
        Command::FindClusters(args) => cpp::run(&CppSettings::new(args)?, true),
        Command::Eval(args) => eval::run(&EvalSettings::new(args)),
        Command::Index(command) => index::run(command),
        Command::Explain(args) => explain::run(&crate::settings::ExplainSettings::new(args)?),
        Command::Audit(args) => audit::run(args),
    }
}
