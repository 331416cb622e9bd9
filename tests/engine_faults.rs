//! The engine when parts of it go wrong or multiply: a GPU actor whose thread dies with a
//! partition (its grant is dropped unsettled and reconciled), and three GPU actors on fakes that
//! all take work while one request fails and another proves.

mod support;

use std::time::Duration;

use baton::circuits::KnownCircuit;
use baton::stages::pipeline::Stages;
use baton::testing::{cpu_stages, FakeGpu};
use baton::{Config, Engine, EngineError, Request};
use support::{check_proofs, circuits, config, key, metric, prove_concurrently, wait_settled};

/// `config` with one GPU actor per entry of `devices`.
fn with_devices(cfg: Config, devices: usize) -> Config {
    Config {
        gpu_devices: (0..devices).collect(),
        ..cfg
    }
}

#[test]
fn a_gpu_thread_that_dies_mid_partition_is_reconciled_and_the_next_request_proves() {
    let pk = key();
    // The second G1 call kills its actor's thread past catch_unwind: the partition's grant is
    // dropped with the message's buffers, unsettled. The other device takes the retry.
    let gpu = FakeGpu::new().kill_thread_on_call(2);
    let stages = Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let cfg = with_devices(config(64 << 20, 2, None, 3), 2);
    let engine = Engine::start_with(cfg, stages).expect("start");
    let cs = circuits(7000..7004);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("the lost partition is retried");
    check_proofs(&pk, &proofs, &cs);
    let st = wait_settled(&engine);
    assert_eq!(st.ledger.charged_bytes, 0, "{st:?}");
    assert!(metric(&engine, "baton_grants_lost_total 1"));
    assert!(metric(&engine, "baton_proofs_total{result=\"retried\"} 1"));
    assert!(metric(&engine, "baton_proofs_total{result=\"ok\"} 4"));
    // Nothing else was lost: the next request proves on the surviving device.
    let next = circuits(7100..7103);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), next.clone()))
        .expect("the next request proves");
    check_proofs(&pk, &proofs, &next);
    let st = wait_settled(&engine);
    assert_eq!(
        (st.ledger.charged_bytes, st.ledger.free_slots),
        (0, st.ledger.slots),
        "every byte and slot came back: {st:?}"
    );
    engine.shutdown_blocking();
}

#[test]
fn three_gpu_actors_all_take_work_one_request_fails_the_other_proves() {
    let pk = key();
    let good = circuits(8000..8012);
    let bad = circuits(8100..8104);
    let poisoned = bad[2].public_inputs()[0];
    let gpu = FakeGpu::new()
        .delay(Duration::from_millis(40))
        .fail_on_public_input(0, poisoned);
    let stages = Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let devices = 3;
    let engine = Engine::start_with(with_devices(config(64 << 20, 2, None, 2), devices), stages)
        .expect("start");
    let results = prove_concurrently(&engine, &pk, &[good.clone(), bad]);
    let mut results = results.into_iter();
    let proofs = results
        .next()
        .expect("two results")
        .expect("the good request proves");
    check_proofs(&pk, &proofs, &good);
    match results.next().expect("two results") {
        Err(EngineError::PartitionFailed {
            index,
            attempts,
            actor,
            cause,
            ..
        }) => {
            assert_eq!((index, attempts, actor), (2, 2, "gpu"), "{cause}");
            assert!(cause.contains("injected failure"), "{cause}");
        }
        other => panic!(
            "expected the poisoned partition to fail, got {:?}",
            other.map(|p| p.len())
        ),
    }
    wait_settled(&engine);
    let busy = &engine.metric_handles().gpu_busy_seconds;
    for d in 0..devices {
        let secs = busy.with_label_values(&[&format!("fake-gpu:{d}")]).get();
        assert!(secs >= 0.04, "device {d} took no partition ({secs} s)");
    }
    assert!(metric(&engine, "baton_proofs_total{result=\"failed\"} 1"));
    engine.shutdown_blocking();
}
