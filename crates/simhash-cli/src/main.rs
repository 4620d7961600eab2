//! `simhash`: near-duplicate detection with simhash fingerprints. See `simhash --help`.

fn main() -> std::process::ExitCode {
    simhash_io::give_back_large_buffers();
    simhash_cli::main_with(std::env::args_os())
}
