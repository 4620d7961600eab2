//! simhash-cpp's `simhash-find-clusters`: decimal hashes in, one JSON array per cluster out.

fn main() -> std::process::ExitCode {
    simhash_cli::main_cpp(true)
}
