//! `simhash`: near-duplicate detection with simhash fingerprints. See `simhash --help`.

fn main() -> std::process::ExitCode {
    simhash_cli::main_with(std::env::args_os())
}
