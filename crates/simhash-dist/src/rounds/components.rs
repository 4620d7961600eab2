//! Round `components`: the connected components of the near-duplicate graph, each named by
//! its smallest position, computed by all workers together, so that no worker holds more
//! than its share of the graph (worker 0 used to join every edge in one union-find).
//!
//! The algorithm is the alternating *large-star* / *small-star* of Kiveris, Lattanzi,
//! Mirrokni, Rastogi and Vassilvitskii ("Connected Components in MapReduce and Beyond",
//! SoCC 2014): each vertex (a record's position) is owned by the worker a well-mixed hash
//! of it picks ([`mix`]), and each step is one exchange of the edges:
//!
//! * **large-star**: each vertex `u` gets every edge it is an end of; with `m` the smallest
//!   of `u` and its neighbours, each neighbour `v > u` is linked to `m` instead of `u`;
//! * **small-star**: each edge goes to its larger end `u`; with `m` the smallest of `u`
//!   and its smaller neighbours, each of them (and `u`) is linked to `m`.
//!
//! Both keep every component connected and never join two, and both only ever link a vertex
//! to a smaller one; alternated, they turn each component into a star around its smallest
//! vertex in O(log² n) rounds (in the tests: 1 for a star around its smallest vertex, 2
//! around its largest, 3 to 7 for random graphs, 8 for a binary tree, 13 for paths of 3,000
//! in any label order). The end
//! is decided exactly, at the large-star step, with no hash comparisons: every vertex is
//! either a *leaf* (one neighbour, smaller than itself) or a *root* (every neighbour larger),
//! on every worker (one all-gather of a flag). A leaf's neighbour is then a root, so each
//! component is one star around its smallest vertex.
//!
//! Crosses the network, per round: each edge twice (large-star, 16 bytes each way) and once
//! (small-star), and one flag per worker; at the end, each vertex's `(position, name)` to
//! the worker that read the record.

use timely::worker::Worker;

use super::{all_gather, exchange, mix};
use crate::share::InputPlan;

/// The routing table of the vertices, apart from the permutation tables' and the
/// components' ([`super::dedup`]) numbers.
const VERTEX_TABLE: u64 = u64::MAX - 3;

/// Every worker's `edges` (pairs of positions; any order, repeats and self-loops allowed)
/// joined into components; returns, for each position an edge names that this worker read
/// ([`InputPlan::owner`]), `(position, component)`, sorted, the component named by its
/// smallest position. Every worker must call it at the same point.
pub(crate) fn run(
    worker: &mut Worker,
    plan: &InputPlan,
    edges: Vec<(u64, u64)>,
) -> Vec<(u64, u64)> {
    let (named, _rounds) = stars(worker, edges);
    let mut roots: Vec<(u64, u64)> =
        exchange(worker, named.into_iter().map(|(p, root)| (plan.owner(p), (p, root))));
    roots.sort_unstable();
    roots
}

/// The worker that owns vertex `v`.
fn owner(v: u64, peers: usize) -> usize {
    (mix(VERTEX_TABLE, v) % peers as u64) as usize
}

/// The large-star / small-star rounds: returns, for each vertex this worker owns,
/// `(vertex, smallest vertex of its component)` (the smallest named by itself), and the
/// number of rounds. A self-loop is no edge (as in [`crate::forest::Forest`]): a vertex
/// only in self-loops is in no component.
fn stars(worker: &mut Worker, edges: Vec<(u64, u64)>) -> (Vec<(u64, u64)>, usize) {
    let peers = worker.peers();
    let mut edges: Vec<(u64, u64)> = edges.into_iter().filter(|(a, b)| a != b).collect();
    let mut rounds = 0;
    loop {
        rounds += 1;
        // Large-star: each vertex gets all of its edges.
        let both = edges
            .drain(..)
            .flat_map(|(a, b)| [(owner(a, peers), (a, b)), (owner(b, peers), (b, a))]);
        let mut adjacency = exchange(worker, both);
        adjacency.sort_unstable();
        adjacency.dedup();
        let groups = || adjacency.chunk_by(|x, y| x.0 == y.0);
        // Settled: every vertex a leaf (one neighbour, smaller) or a root (all larger).
        let settled = groups().all(|g| {
            let u = g[0].0;
            (g.len() == 1 && g[0].1 < u) || g[0].1 > u
        });
        if all_gather(worker, &settled).into_iter().all(|s| s) {
            return (groups().map(|g| (g[0].0, g[0].1.min(g[0].0))).collect(), rounds);
        }
        let mut linked = Vec::new();
        for g in groups() {
            let u = g[0].0;
            // Sorted: the first neighbour is the smallest.
            let m = g[0].1.min(u);
            linked.extend(g.iter().filter(|x| x.1 > u).map(|x| (x.1, m)));
        }
        // Small-star: each edge at its larger end.
        let larger = linked.into_iter().map(|(a, b)| {
            let (hi, lo) = if a > b { (a, b) } else { (b, a) };
            (owner(hi, peers), (hi, lo))
        });
        let mut smaller = exchange(worker, larger);
        smaller.sort_unstable();
        smaller.dedup();
        for g in smaller.chunk_by(|x, y| x.0 == y.0) {
            let u = g[0].0;
            let m = g[0].1; // the smallest of u's smaller neighbours, so of them and u
            edges.extend(g.iter().filter(|x| x.1 != m).map(|x| (x.1, m)));
            edges.push((u, m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::Forest;

    /// The components by the union-find, as [`stars`] names them: `(vertex, smallest)`.
    fn by_forest(edges: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut forest = Forest::default();
        for &(a, b) in edges {
            forest.union(a, b);
        }
        forest.components()
    }

    /// [`stars`] on `workers` workers, the edges dealt round-robin; returns every worker's
    /// answers, sorted, and the rounds it took.
    fn by_stars(workers: usize, edges: &[(u64, u64)]) -> (Vec<(u64, u64)>, usize) {
        let edges = edges.to_vec();
        let guards = timely::execute(timely::Config::process(workers), move |worker| {
            let (me, peers) = (worker.index(), worker.peers());
            let mine: Vec<(u64, u64)> =
                edges.iter().enumerate().filter(|(i, _)| i % peers == me).map(|e| *e.1).collect();
            stars(worker, mine)
        })
        .expect("timely");
        let results: Vec<_> = guards.join().into_iter().map(|r| r.expect("worker")).collect();
        let rounds = results.iter().map(|r| r.1).max().unwrap_or(0);
        assert!(results.iter().all(|r| r.1 == rounds), "the workers ran different rounds");
        let mut all: Vec<(u64, u64)> = results.into_iter().flat_map(|r| r.0).collect();
        all.sort_unstable();
        (all, rounds)
    }

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn graphs() -> Vec<(String, Vec<(u64, u64)>)> {
        let mut out: Vec<(String, Vec<(u64, u64)>)> = Vec::new();
        let n = 3000u64;
        out.push(("path up".into(), (0..n).map(|i| (i, i + 1)).collect()));
        out.push(("path down".into(), (0..n).map(|i| (i + 1, i)).collect()));
        // A path whose labels zigzag: the worst order for label propagation.
        let zig = |i: u64| if i.is_multiple_of(2) { i / 2 } else { n - i / 2 };
        out.push(("path zigzag".into(), (0..n - 1).map(|i| (zig(i), zig(i + 1))).collect()));
        out.push(("star at the largest".into(), (0..n).map(|i| (n, i)).collect()));
        out.push(("star at the smallest".into(), (1..n).map(|i| (0, i)).collect()));
        out.push(("flood of repeats".into(), (0..n).map(|i| (7, 9 + i % 2)).collect()));
        out.push(("one edge".into(), vec![(5, 3)]));
        out.push(("self-loops and one edge".into(), vec![(4, 4), (2, 9), (9, 9)]));
        out.push(("nothing".into(), Vec::new()));
        let mut state = 11;
        for (name, vertices, count) in [("sparse", 2000, 1200), ("dense", 300, 1500)] {
            let edges = (0..count)
                .map(|_| {
                    // Positions as the job has them: file in the high bits, offsets below.
                    let a = splitmix(&mut state) % vertices;
                    let b = splitmix(&mut state) % vertices;
                    (((a % 3) << 40) | (a * 97), ((b % 3) << 40) | (b * 97))
                })
                .collect();
            out.push((format!("random {name}"), edges));
        }
        // Binary trees, with the root at the largest label.
        out.push(("tree".into(), (1..n).map(|i| (n - i, n - (i - 1) / 2)).collect()));
        out
    }

    #[test]
    fn components_equal_the_union_find_on_any_number_of_workers() {
        for (name, edges) in graphs() {
            let want = by_forest(&edges);
            for workers in [1, 2, 3] {
                let (got, rounds) = by_stars(workers, &edges);
                assert_eq!(got, want, "{name}, {workers} workers");
                // O(log² n): far from one round per vertex of a path.
                assert!(rounds <= 20, "{name}: {rounds} rounds");
            }
        }
    }
}
