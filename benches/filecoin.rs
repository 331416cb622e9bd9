//! Filecoin benchmarks, printing tables.
//!
//! `c2`: PoRep C2 of one sealed sector through baton's engine and through filecoin-proofs' own
//! `seal_commit_phase2` (bellperson on the CPU), same parameters (made by baton's setup, cached
//! under `$BATON_TEST_CACHE`) and same C1, interleaved; medians and the ratio, with the
//! constraint count per partition. Both sides include their verification of the output.
//!
//! `keys`: reading the PoRep `.params` file of that sector size: unchecked, with the full check
//! (per-point curve check, batched subgroup test), remembered by its record, and the per-point
//! subgroup check it replaces (one run: it is slow).
//!
//! `synth`: one partition's synthesis on the real circuit, as the engine's synthesis stage does
//! it: full synthesis (linear combinations built, a/b/c evaluated on the fly) against the
//! compiled path (witness-only synthesis, then a/b/c = A·w, B·w, C·w from the recording with
//! the a·b = c check; and the two streamed side by side, the engine's CPU route), interleaved;
//! medians, ratios, and the recording's size and the time to make and write it. The compiled
//! a/b/c and witness are checked equal to full synthesis.
//!
//! `c2` also runs the engine with `synthesis.compiled = false` in the same runs, so the table
//! has the whole C2 with full synthesis, with the compiled path (the key pinned, so its
//! recording stays in memory between jobs as in a daemon; the routes are checked) and
//! filecoin-proofs' own.
//!
//! `c2-32g`, `c2-64g`, `c2-shape` (at BATON_BENCH_SECTOR): a whole C2 at that size with a shape
//! key and generated C1 outputs, through the engine: warm-up, isolated, steady
//! (`filecoin/shape_c2.rs`; run only when named).
//!
//! `cargo bench --features filecoin,test-util --bench filecoin -- [synth] [c2] [keys] [c2-32g]`
//! (env: BATON_BENCH_SECTOR=2KiB|8MiB, BATON_BENCH_RUNS=3, BATON_BENCH_PROOFS=5).

use std::time::{Duration, Instant};

use baton::filecoin::testing::{
    all_circuits, ensure_params, porep_shape, seal_sector, use_test_cache,
};
use baton::filecoin::{parse_sector_size, seal_proof_for, CircuitId, CircuitKind, Filecoin};
use baton::{Check, Config, Engine, KeyStore, ProvingKey};
use rayon::prelude::*;

#[path = "common/log.rs"]
mod bench_log;
#[path = "filecoin/shape_c2.rs"]
mod shape_c2;
#[path = "filecoin/synth.rs"]
mod synth;

/// The median (the mean of the middle two for an even count).
fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    let n = v.len();
    if n.is_multiple_of(2) {
        (v[n / 2 - 1] + v[n / 2]) / 2
    } else {
        v[n / 2]
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| args.is_empty() || args.iter().any(|a| a == s);
    let size_name = std::env::var("BATON_BENCH_SECTOR").unwrap_or_else(|_| "2KiB".into());
    let size = parse_sector_size(&size_name).expect("BATON_BENCH_SECTOR");
    let runs: usize = std::env::var("BATON_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    // Shape-key C2s need no parameters: they run only when named.
    let shaped = ["c2-32g", "c2-64g", "c2-shape"];
    // Five: a steady phase pays its ramp-up once (the first partitions' synthesis), so wall
    // ÷ proofs nears the device's rate as proofs are added (3 gave 20.6 s a 32 GiB proof on an
    // H100, 5 gave 19.8 s: BENCHMARKS.md, "H100 — 32 and 64 GiB PoRep C2 through the engine").
    let steady: usize = std::env::var("BATON_BENCH_PROOFS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    for a in args.iter().filter(|a| shaped.contains(&a.as_str())) {
        let name = match a.as_str() {
            "c2-32g" => "32GiB",
            "c2-64g" => "64GiB",
            _ => size_name.as_str(),
        };
        let s = parse_sector_size(name).expect("sector size");
        shape_c2::run(s, name, steady);
    }
    if !args.is_empty() && args.iter().all(|a| shaped.contains(&a.as_str())) {
        return;
    }
    let cache = use_test_cache();
    let t = Instant::now();
    let circuits: Vec<CircuitId> = all_circuits(size)
        .into_iter()
        .filter(|c| c.kind == CircuitKind::Porep)
        .collect();
    let made = ensure_params(&cache, &circuits).expect("parameters");
    println!(
        "parameters ({size_name}): {} in {:.1} s",
        if made[0].made {
            "made by baton's setup"
        } else {
            "cached"
        },
        secs(t.elapsed())
    );
    let porep = CircuitId {
        kind: CircuitKind::Porep,
        sector_size: size,
    };
    if want("synth") {
        synth::synth(size, &size_name, runs);
    }
    if want("c2") {
        c2(size, &size_name, runs);
    }
    if want("keys") {
        keys(&cache.files(porep).expect("named").params, runs);
    }
}

fn c2(size: u64, size_name: &str, runs: usize) {
    let dir = std::env::temp_dir().join(format!("baton-bench-c2-{}", std::process::id()));
    let proof_type = seal_proof_for(size).expect("seal proof");
    let t = Instant::now();
    let s = seal_sector(&dir, proof_type, 1000, 1, 42).expect("seal");
    println!(
        "sealed offline (piece, PC1, PC2, C1) in {:.2} s",
        secs(t.elapsed())
    );
    let fil = Filecoin::from_env();
    let t = Instant::now();
    let job = fil.porep_c2(&s.c1, s.prover_id, s.sector_id).expect("job");
    println!(
        "first job (key read with the full check or its record) in {:.1} s",
        secs(t.elapsed())
    );
    let partitions = job.finisher.partitions();
    let pk = fil.loaded().first().map(|k| k.bytes).unwrap_or(0);
    drop(job);
    let shape = porep_shape(&s).expect("counts");
    let start = |compiled: bool| {
        Engine::start(Config {
            budget_bytes: Some(16 << 30),
            compiled,
            ..Config::default()
        })
        .expect("engine")
    };
    let (compiled, full) = (start(true), start(false));
    // As a daemon does with a preloaded key: the recording stays in memory between jobs.
    let key = fil
        .porep_c2(&s.c1, s.prover_id, s.sector_id)
        .expect("job")
        .request
        .key()
        .clone();
    synth::block_on(compiled.pin_key(key.clone())).expect("pinned");
    let baton = |engine: &Engine| {
        let t = Instant::now();
        let job = fil.porep_c2(&s.c1, s.prover_id, s.sector_id).expect("job");
        let out = baton::filecoin::prove_job(engine, job).expect("baton C2 verifies");
        assert_eq!(out.len(), 192 * partitions);
        t.elapsed()
    };
    let (mut ours_c, mut ours_f, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=runs {
        let c = baton(&compiled);
        let f = baton(&full);
        let t = Instant::now();
        let theirs_out = filecoin_proofs_api::seal::seal_commit_phase2(
            s.c1.clone(),
            s.prover_id,
            s.sector_id.into(),
        )
        .expect("filecoin-proofs C2");
        let e = t.elapsed();
        assert_eq!(theirs_out.proof.len(), 192 * partitions);
        println!(
            "run {run}: baton compiled {:.2} s, baton full synthesis {:.2} s, filecoin-proofs {:.2} s{}",
            secs(c),
            secs(f),
            secs(e),
            if run == 0 {
                " (warm-up, not counted; the compiled engine records the circuit or reads its file)"
            } else {
                ""
            }
        );
        if run > 0 {
            ours_c.push(c);
            ours_f.push(f);
            theirs.push(e);
        }
    }
    let routes = compiled.status_blocking().expect("status").synthesis_routes;
    let full_routes = full.status_blocking().expect("status").synthesis_routes;
    // Route::ALL order: compiled, loaded, recorded, full.
    assert_eq!(
        routes[3], 0,
        "the compiled engine never fell back: {routes:?}"
    );
    assert_eq!(
        routes[0] as usize,
        runs * partitions,
        "witness-only after the warm-up"
    );
    assert_eq!(
        full_routes[..3],
        [0, 0, 0],
        "the other engine synthesized in full"
    );
    // Where the time went inside each engine (means per partition over every run, warm-up
    // included): the synthesis stage is where the two differ.
    for (name, engine) in [("compiled", &compiled), ("full synthesis", &full)] {
        let means: Vec<String> = engine
            .stage_means()
            .iter()
            .map(|(stage, s)| format!("{stage} {s:.2} s"))
            .collect();
        println!("engine stage means, {name}: {}", means.join(", "));
    }
    compiled.shutdown_blocking();
    full.shutdown_blocking();
    let (c, f, b) = (median(ours_c), median(ours_f), median(theirs));
    println!();
    println!("| sector | partitions | constraints/partition | inputs | aux | key bytes in memory | baton C2, compiled (s) | baton C2, full synthesis (s) | filecoin-proofs C2 (s) | compiled vs full | compiled vs filecoin-proofs | full vs filecoin-proofs |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    println!(
        "| {size_name} | {partitions} | {} | {} | {} | {:.2} GiB | {:.2} | {:.2} | {:.2} | {:.2}x | {:.2}x | {:.2}x |",
        shape.constraints,
        shape.inputs,
        shape.aux,
        pk as f64 / (1u64 << 30) as f64,
        secs(c),
        secs(f),
        secs(b),
        secs(f) / secs(c),
        secs(b) / secs(c),
        secs(b) / secs(f)
    );
    println!("(medians of {runs} interleaved runs; all include their verify_seal; synthesis routes of the compiled engine {routes:?})");
    let _ = std::fs::remove_dir_all(&dir);
}

fn keys(path: &std::path::Path, runs: usize) {
    let bytes = std::fs::read(path).expect("params file");
    let gib = bytes.len() as f64 / (1u64 << 30) as f64;
    let time = |check: Check| {
        let v: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                ProvingKey::from_bytes(&bytes, check).expect("reads");
                t.elapsed()
            })
            .collect();
        median(v)
    };
    let none = time(Check::None);
    let full = time(Check::Full);
    let store = KeyStore::new();
    let remembered = median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                store.load("bench", path).expect("loads");
                let d = t.elapsed();
                store.evict("bench");
                d
            })
            .collect(),
    );
    // What the full check cost before: every point's subgroup check on its own.
    let pk = ProvingKey::from_bytes(&bytes, Check::None).expect("reads");
    let t = Instant::now();
    let ok =
        pk.h.par_iter()
            .chain(&pk.l)
            .chain(&pk.a)
            .chain(&pk.b_g1)
            .all(|p| bool::from(p.is_torsion_free()))
            && pk.b_g2.par_iter().all(|p| bool::from(p.is_torsion_free()));
    let per_point = none + t.elapsed();
    assert!(ok);
    let points = pk.h.len() + pk.l.len() + pk.a.len() + pk.b_g1.len() + pk.b_g2.len();
    println!();
    println!(
        "| key read ({:.2} GiB, {} points, {} of them G2) | seconds | vs unchecked |",
        gib,
        points,
        pk.b_g2.len()
    );
    println!("|---|---|---|");
    for (name, d) in [
        ("unchecked (Check::None)", none),
        (
            "full check: curve per point, subgroup batched (Check::Full)",
            full,
        ),
        (
            "remembered by its record (key_store / key_trust)",
            remembered,
        ),
        ("per-point subgroup checks (before; 1 run)", per_point),
    ] {
        println!("| {name} | {:.2} | {:.2}x |", secs(d), secs(d) / secs(none));
    }
    println!(
        "(medians of {runs} runs from memory, except the last; per-point vs batched: {:.1}x)",
        secs(per_point) / secs(full)
    );
}
