//! Output pinned byte for byte: every command and mode of the three binaries on generated
//! corpora (near copies, a flood, templated records, nested JSON, bad records, hash files),
//! hashed together with the exit code, stderr and every output file.
//!
//! A refactor must not change a single byte of any of them. A change that is meant to change
//! output updates the digest here in the same commit and says why. To print the current
//! digests: `SIMHASH_PRINT_DIGESTS=1 cargo test -p simhash-cli --test integration digests -- --nocapture`.

use std::fmt::Write as _;

use crate::util::{Dir, Rng, corpus};

/// `(name, digest)`: one per case of [`cases`].
const PINNED: &[(&str, &str)] = &[
    ("near:fingerprint", "0ed61066a323ad1e13df3be400dad5c8"),
    ("near:fingerprint-fork", "db9b06656d30441c1caa18b4dfd10878"),
    ("near:pairs", "5cc9f36522403c2da2b27fa1bb1a80ee"),
    ("near:pairs-j09", "48299a0175ee4cd4baa8a601d7ab74e4"),
    ("near:pairs-k3", "d6336992671b60a1576e2d14ce497d07"),
    ("near:pairs-k8", "5588e1b740390a648bd6d1410f18c740"),
    ("near:dedup", "53070d3de69cbd36116f9b10b2740d89"),
    ("near:dedup-stdout", "5159bca5567585be6d5c6bf458a6e2d3"),
    ("near:dedup-components", "94ad173eee000c4eea7b698d611e6f58"),
    ("near:dedup-simhash", "93e6922a534dc43e445bcd9d6d1201d1"),
    ("near:cluster", "3fd7eaa4e093f15bfa54be85253be563"),
    ("near:cluster-minhash", "3fd7eaa4e093f15bfa54be85253be563"),
    ("near:cluster-star-singletons", "096c98ab86fb12b42164765993b596cf"),
    ("near:cluster-sample", "addb71653850625ae91df9c03fbc6509"),
    ("near:fork", "62a97b9e3c7f01c9238d91a7d89adafd"),
    ("news:fingerprint", "16f6584c6446776d6239d34336294634"),
    ("news:fingerprint-fork", "d90b4eb4ac2cadc79bc565c6cc84eb81"),
    ("news:pairs", "f25747f22e99f1e6e5a4bc6867e4b787"),
    ("news:pairs-j09", "466731de4b819160925935243e45919b"),
    ("news:pairs-k3", "635f3f6bf24e3e849f28e7fefaa91e88"),
    ("news:pairs-k8", "e3da1c871d62d173f61b39758b4165e4"),
    ("news:dedup", "e190d75a15c0ee11230a8c4b1c05518d"),
    ("news:dedup-stdout", "f65cb574bd6f0ada455bd1625b9232b2"),
    ("news:dedup-components", "7b4f3cda143ebf82d5c0f0eaa5d0496d"),
    ("news:dedup-simhash", "3f607bd103640c641ef36140bd02cb50"),
    ("news:cluster", "b335af740d26922c6d2e4944e7d58974"),
    ("news:cluster-minhash", "b335af740d26922c6d2e4944e7d58974"),
    ("news:cluster-star-singletons", "a2ecbc882035c56f83c4ac79e1646bdd"),
    ("news:cluster-sample", "2c11465022d4cfc515cb5c7407a907a9"),
    ("news:fork", "ca5e4bdfb995c79582d53ab19d023f04"),
    ("flood:fingerprint", "0b22b4bca850270820b8ee67a6e983d3"),
    ("flood:fingerprint-fork", "8312f3bf7822ce2c899d4ded23a1e199"),
    ("flood:pairs", "e35673b4a2c1a835b63b74821f4182d7"),
    ("flood:pairs-j09", "7f4f46e904d62adbb038da26d5c712dc"),
    ("flood:pairs-k3", "b4a60fa71ee5377ae48878559a70fe4a"),
    ("flood:pairs-k8", "fd97a1119ace4d118b5f05f042fbe519"),
    ("flood:dedup", "64ab14899ec669c06bca0ba4a7440408"),
    ("flood:dedup-stdout", "4f3df835cc5ecfce60a5747a896f406b"),
    ("flood:dedup-components", "40e5e1cf79bedb302996be15fc3eaf17"),
    ("flood:dedup-simhash", "8470f5ce2640469e100e0b2e6cf39942"),
    ("flood:cluster", "a007ebc1665521297662892fe1d12d74"),
    ("flood:cluster-minhash", "a007ebc1665521297662892fe1d12d74"),
    ("flood:cluster-star-singletons", "c86b953bac42627536accfeafd8ae53f"),
    ("flood:cluster-sample", "9c7490311f7a5b1ec1b9682c1389125a"),
    ("flood:fork", "f4571dd99b19503daef3751a18fc0c3f"),
    ("bad:fingerprint", "50e10ef416f1b94c179c15a0c3b32aeb"),
    ("bad:fingerprint-fork", "a0a104b57d1336af8a2e109380cb96bf"),
    ("bad:pairs", "7aacbe6a16700020c83990b8a8aae54c"),
    ("bad:pairs-j09", "c06d08d76638ffae413550154260d047"),
    ("bad:pairs-k3", "bd2d61f06f6537c91fad4232e0226f74"),
    ("bad:pairs-k8", "dc0aecdb45cefd21ec952498a2b1386e"),
    ("bad:dedup", "82df53e111de0e2391baf5194ffa369a"),
    ("bad:dedup-stdout", "9220e35484ba8bd5cd4b880cebb66287"),
    ("bad:dedup-components", "efaf3a811436b083abe117a25dbeb527"),
    ("bad:dedup-simhash", "53f7d35cc23a032079a73c5fe92113aa"),
    ("bad:cluster", "1dc78211cd54bafed385a54da9d151b0"),
    ("bad:cluster-minhash", "1dc78211cd54bafed385a54da9d151b0"),
    ("bad:cluster-star-singletons", "83cbb61ea8d18b02d74460febdb11724"),
    ("bad:cluster-sample", "e7c5e24e9cb1013d22001c0bdd93e8cd"),
    ("bad:fork", "88a0a01d875d521174440fd28df0933e"),
    ("nested:pairs", "063a5bdd357997aefa0ff91300df3629"),
    ("nested:dedup", "e83aff3e448be1817ea5165c9251801a"),
    ("nested:cluster", "79b5bd4ba22b956272bb310f62b2f90f"),
    ("nested:no-id", "25f7db8bd992ebb727a666c153e548c3"),
    ("bad:strict", "140c16e0faa6552093285f8546e4c9b3"),
    ("bad:max-bytes", "22a318dcd109c911b4ddc9baea3f0f3a"),
    ("hash:pairs", "5e93d1aa557c07b826c631809ecc3f5f"),
    ("hash:pairs-k4", "206fd477bd6c091111b3e065f2903ffc"),
    ("hash:cluster", "3027df94e09b23497a082e75ac141084"),
    ("hash:dedup", "062e4b264bdf73aff659ffc9bbcde8f3"),
    ("decimal:find-all", "010924aa2a04105a9dce04f45399c442"),
    ("decimal:find-clusters", "5616c6497a0cc5788d87dcc9aa286aa8"),
    ("decimal:cpp-find-all", "d8abcb15b87cf87c04a78b4fce728615"),
    ("decimal:cpp-find-clusters", "5616c6497a0cc5788d87dcc9aa286aa8"),
    ("decimal:bad-find-all", "67fe6e1bcd53425b2f25887a6c9a056f"),
    ("eval:text", "dc141e6a97f5c492dd9154033ba57292"),
    ("eval:json", "8d2e46f70a10d78371d4c96b76ec8ab8"),
    ("eval:bad", "fb80106a6f4e5509fb70bb6995461db9"),
];

/// The corpora, written into `dir`.
fn write_corpora(dir: &Dir) {
    dir.write("near.jsonl", corpus(250, 7));
    dir.write("news.jsonl", include_str!("../../../examples/news.jsonl"));
    dir.write("flood.jsonl", flood());
    dir.write("nested.jsonl", nested());
    dir.write("bad.jsonl", bad());
    dir.write("hashes.tsv", hashes());
    dir.write("decimal.txt", decimal());
}

/// 300 identical records, 200 templated ones (one number differs), and tiny records.
fn flood() -> String {
    let mut out = String::new();
    let body = "the quick brown fox jumps over the lazy dog near the river bank today";
    for i in 0..300 {
        writeln!(out, r#"{{"id":"same{i}","text":"{body}"}}"#).unwrap();
        if i < 200 {
            writeln!(out, r#"{{"id":"tpl{i}","text":"{body} order number {i} shipped"}}"#).unwrap();
        }
    }
    for (i, text) in ["a", "", "a b", "!!", "a b c", "a b c"].iter().enumerate() {
        writeln!(out, r#"{{"id":"tiny{i}","text":"{text}"}}"#).unwrap();
    }
    out
}

/// Text at a nested path, numeric ids (some equal as numbers), unicode and escapes.
fn nested() -> String {
    let mut rng = Rng(99);
    let words = ["α", "βeta", "汉字", "word", "tab\\t", "quote\\\"", "x", "y", "naïve", "z"];
    let mut out = String::new();
    let mut text: Vec<&str> = Vec::new();
    for i in 0..120u64 {
        if i % 3 == 1 {
            // A near copy of the record before: one word dropped.
            text.remove(rng.below(text.len() as u64) as usize);
        } else {
            let n = 20 + rng.below(20);
            text = (0..n).map(|_| words[rng.below(10) as usize]).collect();
        }
        let body = text.join(" ");
        writeln!(out, r#"{{"meta":{{"n":{i},"body":"{body}"}},"num":{}}}"#, i * 7 + 1).unwrap();
    }
    out
}

/// Good records mixed with every kind of bad one.
fn bad() -> String {
    let mut out = corpus(20, 3);
    out += "not json\n";
    out += "{\"id\":\"d1\",\"text\":\"duplicate id\"}\n";
    out += "{\"id\":\"nt\"}\n";
    out += "{\"id\":\"num\",\"text\":5}\n";
    out += "{\"id\":7,\"text\":\"numeric id seven\"}\n";
    out += "{\"id\":\"7\",\"text\":\"string id seven\"}\n";
    out += "[1,2]\n";
    out += "\n";
    out += "{\"id\":\"bin\",\"text\":\"\\ud800\"}\n";
    writeln!(out, "{{\"id\":\"long\",\"text\":\"{}\"}}", "w ".repeat(3000)).unwrap();
    out += "{\"id\":\"last\",\"text\":\"no final newline here\"}";
    out
}

/// Fingerprint TSV with near pairs at exactly 3 and 4 bits, an empty hash and decimal/hex.
fn hashes() -> String {
    let mut rng = Rng(5);
    let mut out = String::from("id\thash\n");
    for i in 0..400u64 {
        let fp = rng.next();
        writeln!(out, "h{i}\t{fp}").unwrap();
        if i % 5 == 0 {
            writeln!(out, "h{i}k3\t0x{:016x}", fp ^ 0b1011).unwrap();
            writeln!(out, "h{i}k4\t{}", fp ^ 0b1_0000_0111).unwrap();
        }
    }
    out += "empty\t\n";
    out
}

/// simhash-cpp's input: one decimal hash per line, with copies and near copies.
fn decimal() -> String {
    let mut rng = Rng(17);
    let mut out = String::new();
    for i in 0..500u64 {
        let fp = rng.next();
        writeln!(out, "{fp}").unwrap();
        if i % 7 == 0 {
            writeln!(out, "{}", fp ^ (1 << (i % 64)) ^ 1).unwrap();
            writeln!(out, "{fp}").unwrap();
        }
    }
    out
}

/// `(name, binary, arguments, output files to include)`.
fn cases() -> Vec<(&'static str, &'static str, Vec<&'static str>, Vec<&'static str>)> {
    let mut cases = Vec::new();
    let mut add = |name, bin, args: &[&'static str], files: &[&'static str]| {
        cases.push((name, bin, args.to_vec(), files.to_vec()));
    };
    for input in ["near.jsonl", "news.jsonl", "flood.jsonl", "bad.jsonl"] {
        let tag = input.trim_end_matches(".jsonl");
        let name = |what: &str| -> &'static str { format!("{tag}:{what}").leak() };
        add(name("fingerprint"), "simhash", &["fingerprint", input], &[]);
        add(name("fingerprint-fork"), "simhash", &["fingerprint", "--preset", "fork", input], &[]);
        add(name("pairs"), "simhash", &["pairs", input], &[]);
        add(name("pairs-j09"), "simhash", &["pairs", "--jaccard", "0.9", input], &[]);
        add(name("pairs-k3"), "simhash", &["pairs", "--method", "simhash", input], &[]);
        add(name("pairs-k8"), "simhash", &["pairs", "-k", "8", "--blocks", "10", input], &[]);
        add(
            name("dedup"),
            "simhash",
            &["dedup", input, "-o", "out.jsonl", "--removed", "rm.jsonl"],
            &["out.jsonl", "rm.jsonl"],
        );
        add(name("dedup-stdout"), "simhash", &["dedup", "--keep", "longest", input], &[]);
        add(
            name("dedup-components"),
            "simhash",
            &[
                "dedup",
                "--mode",
                "components",
                "--keep",
                "lowest-id",
                input,
                "--removed",
                "rm.jsonl",
            ],
            &["rm.jsonl"],
        );
        add(
            name("dedup-simhash"),
            "simhash",
            &["dedup", "--method", "simhash", "-k", "4", input, "--removed", "rm.jsonl"],
            &["rm.jsonl"],
        );
        add(name("cluster"), "simhash", &["cluster", input], &[]);
        add(name("cluster-minhash"), "simhash", &["cluster", "--method", "minhash", input], &[]);
        add(
            name("cluster-star-singletons"),
            "simhash",
            &["cluster", "--method", "minhash", "--mode", "star", "--singletons", input],
            &[],
        );
        add(
            name("cluster-sample"),
            "simhash",
            &["cluster", "--sample", "15", "--seed", "3", input],
            &[],
        );
        add(
            name("fork"),
            "simhash",
            &[
                "--format",
                "json",
                "--text_column=text",
                "--id_column=id",
                "--window=5",
                "--blocks",
                "5",
                "--distance",
                "3",
                "--input",
                input,
            ],
            &[],
        );
    }
    add(
        "nested:pairs",
        "simhash",
        &["pairs", "--text-column", "meta.body", "--id-column", "num", "nested.jsonl"],
        &[],
    );
    add(
        "nested:dedup",
        "simhash",
        &["dedup", "--text-column", "meta.body", "--id-column", "num", "nested.jsonl"],
        &[],
    );
    add(
        "nested:cluster",
        "simhash",
        &["cluster", "--text-column", "meta.body", "nested.jsonl", "-k", "6"],
        &[],
    );
    add(
        "nested:no-id",
        "simhash",
        &["fingerprint", "--text-column", "meta.body", "--id-column", "missing", "nested.jsonl"],
        &[],
    );
    add("bad:strict", "simhash", &["dedup", "--strict", "bad.jsonl"], &[]);
    add("bad:max-bytes", "simhash", &["pairs", "--max-record-bytes", "2000", "bad.jsonl"], &[]);
    add("hash:pairs", "simhash", &["pairs", "hashes.tsv"], &[]);
    add("hash:pairs-k4", "simhash", &["pairs", "-k", "4", "hashes.tsv"], &[]);
    add(
        "hash:cluster",
        "simhash",
        &["cluster", "hashes.tsv", "--mode", "star", "--keep", "lowest-id"],
        &[],
    );
    add("hash:dedup", "simhash", &["dedup", "hashes.tsv", "--removed", "rm.jsonl"], &["rm.jsonl"]);
    add(
        "decimal:find-all",
        "simhash",
        &["find-all", "-i", "decimal.txt", "-d", "3", "-b", "6"],
        &[],
    );
    add(
        "decimal:find-clusters",
        "simhash",
        &["find-clusters", "-i", "decimal.txt", "-d", "3", "-b", "6"],
        &[],
    );
    add(
        "decimal:cpp-find-all",
        "simhash-find-all",
        &["-i", "decimal.txt", "-o", "o.json", "-d", "4", "-b", "7"],
        &["o.json"],
    );
    add(
        "decimal:cpp-find-clusters",
        "simhash-find-clusters",
        &["-i", "decimal.txt", "-d", "3", "-b", "6"],
        &[],
    );
    add(
        "decimal:bad-find-all",
        "simhash",
        &["find-all", "-i", "hashes.tsv", "-d", "3", "-b", "6"],
        &[],
    );
    cases
}

/// Runs `simhash pairs` on near.jsonl to have a prediction, then `eval` in each output form.
fn eval_cases(dir: &Dir, out: &mut Vec<(String, String)>) {
    let truth = dir.run(&["cluster", "--method", "minhash", "near.jsonl", "-o", "truth.tsv"]);
    truth.code(0);
    let pred = dir.run(&["pairs", "-k", "8", "near.jsonl", "-o", "pred.tsv"]);
    pred.code(0);
    for (name, args) in [
        ("eval:text", vec!["eval", "pred.tsv", "--truth", "truth.tsv"]),
        ("eval:json", vec!["eval", "pred.tsv", "--truth", "truth.tsv", "--json"]),
        ("eval:bad", vec!["eval", "bad.jsonl", "--truth", "truth.tsv"]),
    ] {
        let run = dir.run(&args);
        out.push((
            name.to_string(),
            digest(&[&run.code.to_string(), &run.stdout, &normalize(&run.stderr)]),
        ));
    }
}

/// stderr without the elapsed time of the closing summary (` in 0.04s`).
fn normalize(stderr: &str) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        let line = match line.rfind(" in ") {
            Some(at)
                if line.ends_with('s') && line[at + 4..line.len() - 1].parse::<f64>().is_ok() =>
            {
                &line[..at]
            }
            _ => line,
        };
        out += line;
        out.push('\n');
    }
    out
}

fn digest(parts: &[&str]) -> String {
    let mut all = Vec::new();
    for part in parts {
        all.extend_from_slice(&(part.len() as u64).to_le_bytes());
        all.extend_from_slice(part.as_bytes());
    }
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&all))
}

#[test]
fn digests_of_every_command_are_pinned() {
    let dir = Dir::new();
    write_corpora(&dir);
    let mut got: Vec<(String, String)> = Vec::new();
    for (name, bin, args, files) in cases() {
        for file in &files {
            let _ = std::fs::remove_file(dir.path(file));
        }
        let run = dir.run_bin(bin, &args, None);
        let mut parts = vec![run.code.to_string(), run.stdout.clone(), normalize(&run.stderr)];
        for file in &files {
            parts.push(
                std::fs::read_to_string(dir.path(file)).unwrap_or_else(|_| "<missing>".into()),
            );
        }
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        got.push((name.to_string(), digest(&parts)));
        if std::env::var_os("SIMHASH_PRINT_DIGESTS").is_some() {
            let first = run.stderr.lines().next().unwrap_or("");
            println!(
                "// {name}: exit {}, {} bytes out, stderr: {first}",
                run.code,
                run.stdout.len()
            );
        }
    }
    eval_cases(&dir, &mut got);
    // A case that changes a setting must change the output where the corpus has pairs to
    // tell (a pinned digest equal to its base's passes with the setting ignored).
    let of = |name: &str| got.iter().find(|(n, _)| n == name).map(|(_, d)| d.clone());
    for tag in ["near", "news", "flood"] {
        for (base, varied) in
            [("pairs", "pairs-j09"), ("pairs-k3", "pairs-k8"), ("dedup-stdout", "dedup-simhash")]
        {
            let (b, v) = (of(&format!("{tag}:{base}")), of(&format!("{tag}:{varied}")));
            assert!(
                b.is_some() && b != v,
                "{tag}: {varied} gives {base}'s output: its setting is not tested"
            );
        }
    }
    if std::env::var_os("SIMHASH_PRINT_DIGESTS").is_some() {
        for (name, d) in &got {
            println!("    (\"{name}\", \"{d}\"),");
        }
    }
    let changed: Vec<String> = got
        .iter()
        .filter(|(name, d)| {
            PINNED.iter().find(|(n, _)| n == name).map(|(_, p)| p) != Some(&d.as_str())
        })
        .map(|(name, d)| format!("{name}: {d}"))
        .collect();
    assert_eq!(got.len(), PINNED.len(), "cases and pinned digests differ in number");
    assert!(changed.is_empty(), "outputs changed:\n{}", changed.join("\n"));
}
