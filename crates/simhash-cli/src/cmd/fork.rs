//! The top-level command, without a subcommand: the OpenMP fork's job with its flags and,
//! by default, its fingerprints (`--preset fork`) and method (simhash). It writes what
//! `simhash cluster` writes.

use std::process::ExitCode;

use crate::flags::ClusterArgs;
use crate::settings::ClusterSettings;

/// Runs the top-level command, the OpenMP fork's job: `cluster` with the fork's defaults.
pub fn run(args: &ClusterArgs) -> anyhow::Result<ExitCode> {
    super::cluster::run(&ClusterSettings::new(args, true)?)
}
