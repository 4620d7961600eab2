//! simhash-cpp's `find-all` and `find-clusters` (also the `simhash-find-all` and
//! `simhash-find-clusters` binaries): decimal hashes in, JSON pairs or clusters out.

use std::process::ExitCode;

use simhash_io::Output;

use crate::corpus::Reading;
use crate::flags::{ClusterMode, KeepPolicy};
use crate::matching::{clusters, match_docs};
use crate::session::Session;
use crate::settings::{CppSettings, Grouping};

/// simhash-cpp's `find-all` and `find-clusters`.
pub fn run(settings: &CppSettings, clusters_out: bool) -> anyhow::Result<ExitCode> {
    simhash_io::register_inputs(&settings.inputs.paths())?;
    let command = if clusters_out { "find-clusters" } else { "find-all" };
    let mut session = Session::new(command, &settings.run, settings.strict)?;
    session.note_skipped(&settings.inputs);
    let matching = settings.matching;
    matching.note(&mut session.summary);
    let mut out = Output::create_for("--output", &settings.output)?;
    let mut sources = settings.inputs.sources();
    let corpus =
        session.read(&mut sources, Reading::hashes(simhash_io::Parser::CppHash), None, false)?;
    let hash = |d: u32| corpus.fingerprint(d as usize).unwrap_or_default().get();
    if clusters_out {
        let grouping =
            Grouping { mode: ClusterMode::Components, keep: KeepPolicy::First, big_cluster: 1000 };
        let clusters = clusters(&mut session, &corpus, &matching, &grouping)?.clusters;
        session.reporter.phase("writing", None);
        for members in clusters.iter().filter(|m| m.len() > 1) {
            let hashes: Vec<u64> = members.iter().map(|&d| hash(d)).collect();
            simhash_io::write_hash_list(&mut out, &hashes)?;
            session.summary.written += 1;
        }
    } else {
        // Each line `[h(a),h(b)]` once, in order of the first pair of lines `a < b` that
        // gives it, as simhash-cpp's set of hash pairs does: a group of identical hashes
        // gives `[h,h]` once, and two groups within k bits give `[h1,h2]` if a line of h1
        // comes before one of h2 (and `[h2,h1]` if one of h2 comes before one of h1),
        // without pairing every line of one group with every line of the other. The
        // groups of identical hashes hold their first line, then the others in line order;
        // `group_of` maps a first line to its group (`NO_GROUP`: its hash is on no other
        // line).
        const NO_GROUP: u32 = u32::MAX;
        let mut group_of: Vec<u32> = vec![NO_GROUP; corpus.len()];
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        match_docs(&mut session, &corpus, &matching, |a, b, _| {
            if hash(a) == hash(b) {
                let g = &mut group_of[a as usize];
                if *g == NO_GROUP {
                    *g = groups.len() as u32;
                    groups.push(vec![a]);
                }
                groups[*g as usize].push(b);
            } else {
                pairs.push((a, b));
            }
        })?;
        session.reporter.phase("writing", None);
        let mut lines: Vec<(u32, u32)> = Vec::with_capacity(pairs.len() + groups.len());
        lines.extend(groups.iter().map(|m| (m[0], m[1])));
        for &(a, b) in &pairs {
            lines.push((a, b));
            // The first line of b's group after a's first line of a's group, reversed.
            if let Some(&g) = group_of.get(a as usize).filter(|&&g| g != NO_GROUP) {
                let group = &groups[g as usize];
                let at = group.partition_point(|&d| d < b);
                if let Some(&later) = group.get(at) {
                    lines.push((b, later));
                }
            }
        }
        lines.sort_unstable();
        for &(a, b) in &lines {
            simhash_io::write_hash_pair(&mut out, hash(a), hash(b))?;
        }
        let pairs = lines;
        session.summary.written = pairs.len() as u64;
    }
    session.finish(vec![out])
}
