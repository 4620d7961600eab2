//! simhash-cpp's `simhash-find-all`: decimal hashes in, one JSON pair `[a,b]` per line out.

fn main() -> std::process::ExitCode {
    simhash_cli::main_cpp(false)
}
