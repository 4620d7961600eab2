//! The original programs' reference vectors (copied from `shared/reference/`), reproduced bit for bit.

use simhash_core::{Fingerprinter, Preset, compute, jenkins64, unsigned_hash};

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex in reference file")
}

#[test]
fn fingerprints_tsv() {
    let tsv = include_str!("data/fingerprints.tsv");
    let moz = Fingerprinter::builder().preset(Preset::Moz).build();
    let fork = Fingerprinter::builder().preset(Preset::Fork).build();
    let mut rows = 0;
    for line in tsv.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 4, "{line}");
        let text: String = serde_json_lite(cols[1]);
        let got_moz = moz.fingerprint(&text).map_or(0, simhash_core::Fingerprint::get);
        let got_fork = fork.fingerprint(&text).map_or(0, simhash_core::Fingerprint::get);
        assert_eq!(got_moz, hex(cols[2]), "moz {}", cols[0]);
        assert_eq!(got_fork, hex(cols[3]), "fork {}", cols[0]);
        rows += 1;
    }
    assert_eq!(rows, 10);
}

/// The reference file's texts are JSON strings; these only use `\"`, `\\` and plain
/// characters, which is all this reads.
fn serde_json_lite(s: &str) -> String {
    let inner = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).expect("JSON string");
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => panic!("dangling escape"),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn components_tsv() {
    let tsv = include_str!("data/components.tsv");
    let mut rows = 0;
    for line in tsv.lines().filter(|l| !l.is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let want: u64 = cols[1].parse().expect("decimal");
        assert_eq!(want, hex(cols[2]), "{line}");
        let (name, input) = cols[0].split_once(':').unwrap_or((cols[0], ""));
        let got = match name {
            "jenkins64_seed0" => jenkins64(input.as_bytes(), 0),
            "jenkins64_seed0x0123456789abcdef" => jenkins64(input.as_bytes(), 0x0123456789abcdef),
            "unsigned_hash" => unsigned_hash(input.as_bytes()),
            "compute([0xABCD,0xBCDE,0xCDEF])" => compute([0xABCD, 0xBCDE, 0xCDEF]),
            "compute([])" => compute([]),
            _ => panic!("unknown component {name}"),
        };
        assert_eq!(got, want, "{line}");
        rows += 1;
    }
    assert_eq!(rows, 14);
}
