//! `simhash decontaminate`'s settings: the job's ([`Settings::from_flags`], which
//! simhash-dist would call too) and the run's.

use simhash_jobs::Run;
use simhash_jobs::decontaminate::Settings;

use crate::flags::DecontaminateArgs;

/// `simhash decontaminate`.
#[derive(Debug)]
pub struct DecontaminateSettings {
    /// The job's settings.
    pub job: Settings,
    /// Threads, progress and the summary.
    pub run: Run,
}

impl DecontaminateSettings {
    /// The settings of `args`: with no output asked for, the hits go to standard output.
    pub fn new(args: &DecontaminateArgs) -> anyhow::Result<DecontaminateSettings> {
        let parquet = args.parquet.parquet_compression;
        let job = Settings::from_flags(&args.inputs, &args.records, &args.decontaminate, parquet)?;
        Ok(DecontaminateSettings { job, run: super::run(&args.run) })
    }
}
