//! Prints each line of standard input's fingerprint under every preset:
//! `cargo run -p simhash-core --example print_fingerprints < file.txt`.
use std::io::BufRead;

use simhash_core::{Fingerprinter, Preset};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fps: Vec<_> =
        Preset::ALL.iter().map(|&p| Fingerprinter::builder().preset(p).build()).collect();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let cols: Vec<String> = fps
            .iter()
            .map(|f| f.fingerprint(&line).map_or_else(|| "none".to_string(), |x| format!("{x:#}")))
            .collect();
        #[allow(clippy::print_stdout)]
        {
            println!("{}\t{line}", cols.join("\t"));
        }
    }
    Ok(())
}
