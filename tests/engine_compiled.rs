//! The engine's synthesis through recorded circuits: the first partition of a key records its
//! circuit, the rest run witness-only, proofs verify (and a changed input fails); a key read
//! from a file keeps the recording under baton's cache and a later request loads it; a
//! recording that no longer matches its circuit is caught, that partition proved by full
//! synthesis and the recording made again; with `synthesis.compiled = false` the recordings are
//! never used.

mod support;

use std::sync::Arc;

use baton::compiled::{self, Route};
use baton::testing::cpu_stages;
use baton::{Engine, ProvingKey, Request};
use support::{check_proofs, circuits, config, key, wait_settled};

fn routes(r: [u64; 4]) -> Vec<(Route, u64)> {
    Route::ALL
        .into_iter()
        .zip(r)
        .filter(|(_, n)| *n > 0)
        .collect()
}

#[test]
fn first_partition_records_the_rest_run_witness_only() {
    let pk = key();
    let stages = cpu_stages();
    let recordings = stages.recordings.clone();
    // One worker, so the order of routes is fixed.
    let engine = Engine::start_with(config(64 << 20, 1, None, 1), stages).expect("start");
    let cs = circuits(10..15);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("proofs");
    check_proofs(&pk, &proofs, &cs);
    assert_eq!(
        routes(recordings.routes()),
        vec![(Route::Compiled, 4), (Route::Recorded, 1)]
    );
    wait_settled(&engine);
    assert!(
        recordings.get(&pk).is_none(),
        "forgotten with its key's last job"
    );
    engine.shutdown_blocking();
}

fn key_file(dir: &str) -> (Arc<ProvingKey>, std::path::PathBuf) {
    support::own_cache();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("synthetic.params");
    key().write_file(&path).unwrap();
    let pk = ProvingKey::read_with(&path, baton::Check::None).unwrap();
    (Arc::new(pk), path)
}

#[test]
fn a_key_file_keeps_its_recording_and_the_next_request_loads_it() {
    let (pk, path) = key_file("engine-compiled-file");
    let stages = cpu_stages();
    let recordings = stages.recordings.clone();
    let engine = Engine::start_with(config(64 << 20, 1, None, 1), stages).expect("start");
    for (seeds, want) in [
        (20..23, vec![(Route::Compiled, 2), (Route::Recorded, 1)]),
        (
            23..26,
            vec![
                (Route::Compiled, 4),
                (Route::Loaded, 1),
                (Route::Recorded, 1),
            ],
        ),
    ] {
        let cs = circuits(seeds);
        let proofs = engine
            .prove_blocking(Request::new(pk.clone(), cs.clone()))
            .expect("proofs");
        check_proofs(&pk, &proofs, &cs);
        wait_settled(&engine);
        assert_eq!(routes(recordings.routes()), want);
        assert!(compiled::cache_path(&path).exists());
    }
    engine.shutdown_blocking();
}

#[test]
fn a_recording_that_no_longer_matches_is_proved_by_full_synthesis() {
    let (pk, path) = key_file("engine-compiled-stale");
    // The key's own recording with other C rows (same counts and densities): a stale or
    // tampered file that passes every structural check.
    let (good, _, _) = compiled::record(circuits(0..1).remove(0)).unwrap();
    let stale = support::stale_copy(&good);
    let stages = cpu_stages();
    let recordings = stages.recordings.clone();
    let engine = Engine::start_with(config(64 << 20, 1, None, 1), stages).expect("start");
    stale
        .write_for_key(&compiled::cache_path(&path), &pk)
        .expect("same shape as the key");
    let cs = circuits(30..34);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("proofs");
    check_proofs(&pk, &proofs, &cs);
    // The first partition finds the recording wrong (full synthesis proves the circuit fine),
    // the second records the circuit anew, the others use it.
    assert_eq!(
        routes(recordings.routes()),
        vec![(Route::Compiled, 2), (Route::Recorded, 1), (Route::Full, 1)]
    );
    engine.shutdown_blocking();
}

#[test]
fn compiled_synthesis_can_be_turned_off() {
    let pk = key();
    let mut stages = cpu_stages();
    stages.synthesis = Arc::new(|_| Box::new(baton::stages::pipeline::RealSynthesis));
    let recordings = stages.recordings.clone();
    let engine = Engine::start_with(config(64 << 20, 1, None, 1), stages).expect("start");
    let cs = circuits(40..42);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("proofs");
    check_proofs(&pk, &proofs, &cs);
    assert_eq!(recordings.routes(), [0; 4]);
    engine.shutdown_blocking();
}
