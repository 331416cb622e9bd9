//! The actors under stress, with the `test-util` fakes: a slow GPU that makes synthesis wait at
//! the budget, a GPU that fails one partition, a synthesis actor that panics and is restarted,
//! many concurrent requests, a request larger than the budget, and a graceful shutdown.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::engine::{footprint_of, Rejection};
use baton::ledger::Footprint;
use baton::testing::{
    counted, cpu_stages, submit_detached, FakeGpu, Gauge, PanickingSynthesis, RecordingBg2,
};
use baton::{Engine, EngineError, PreparedVerifyingKey, Request, Scalar};
use ff::Field;
use support::{
    check_proofs, circuits, config, key, metric, prove_concurrently, wait_for, wait_settled,
};

#[test]
fn slow_gpu_makes_synthesis_wait_at_the_budget() {
    let pk = key();
    let f = footprint_of(&pk).total_bytes();
    // Three footprints fit; four slots would allow a fourth, so only the bytes can stop it.
    let budget = 3 * f + f / 2;
    let slots = 4;
    let on_gpu = Gauge::new();
    let gpu = FakeGpu::new()
        .delay(Duration::from_millis(60))
        .in_flight(on_gpu.clone());
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let engine = Engine::start_with(config(budget, 2, Some(slots), 1), stages).expect("start");
    let cs = circuits(100..112);
    let mut samples = 0usize;
    let mut waited_on_bytes = 0usize;
    let proofs = std::thread::scope(|s| {
        let job = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), cs.clone())));
        while !job.is_finished() {
            let st = engine.status_blocking().expect("status");
            assert!(
                st.ledger.charged_bytes <= budget,
                "charged {} > budget {budget}: {st:?}",
                st.ledger.charged_bytes
            );
            assert!(st.synthesized_alive <= slots, "{st:?}");
            // Work waits although a slot is free: the budget is what holds it back.
            if st.queued > 0 && st.ledger.free_slots > 0 && st.ledger.charged_bytes + f > budget {
                waited_on_bytes += 1;
            }
            samples += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
        job.join().expect("join")
    })
    .expect("prove");
    check_proofs(&pk, &proofs, &cs);
    let st = wait_settled(&engine);
    assert!(samples > 10, "only {samples} samples");
    assert!(st.ledger.peak_charged_bytes <= budget, "{st:?}");
    assert!(
        st.ledger.peak_charged_bytes >= 3 * f,
        "the budget was never reached (peak {}, footprint {f}): the GPU was not the bottleneck",
        st.ledger.peak_charged_bytes
    );
    assert!(
        waited_on_bytes > 0,
        "no sample saw synthesis waiting at the budget ({samples} samples)"
    );
    assert!(
        st.synthesized_alive_peak >= 1 && st.synthesized_alive_peak <= slots,
        "{st:?}"
    );
    assert_eq!(on_gpu.max(), 1, "one device takes one partition at a time");
    assert_eq!(on_gpu.now(), 0);
    engine.shutdown_blocking();
}

#[test]
fn gpu_failing_on_one_partition_fails_that_job_only() {
    let pk = key();
    let requests: Vec<Vec<Synthetic>> = (0..4u64)
        .map(|r| circuits(1000 + 10 * r..1003 + 10 * r))
        .collect();
    let poisoned = requests[2][1].public_inputs()[0];
    let failures = Arc::new(AtomicUsize::new(0));
    let gpu = FakeGpu::new()
        .fail_on_public_input(0, poisoned)
        .failures(failures.clone());
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let engine = Engine::start_with(config(64 << 20, 2, None, 2), stages).expect("start");
    let results = prove_concurrently(&engine, &pk, &requests);
    for (r, (result, cs)) in results.into_iter().zip(&requests).enumerate() {
        if r == 2 {
            let err = result.expect_err("the poisoned request fails");
            match &err {
                EngineError::PartitionFailed {
                    index,
                    attempts,
                    actor,
                    cause,
                    ..
                } => {
                    assert_eq!(*index, 1, "{err}");
                    assert_eq!(*attempts, 2, "{err}");
                    assert_eq!(*actor, "gpu", "{err}");
                    assert!(cause.contains("injected failure"), "{err}");
                }
                other => panic!("wrong error: {other}"),
            }
            assert!(err.to_string().contains("partition 1"), "{err}");
        } else {
            let proofs = result.unwrap_or_else(|e| panic!("request {r}: {e}"));
            check_proofs(&pk, &proofs, cs);
        }
    }
    assert_eq!(
        failures.load(Ordering::SeqCst),
        2,
        "one failure per attempt"
    );
    wait_settled(&engine);
    assert!(metric(&engine, "baton_proofs_total{result=\"failed\"} 1"));
    assert!(metric(&engine, "baton_proofs_total{result=\"retried\"} 1"));
    engine.shutdown_blocking();
}

#[test]
fn panicking_synthesis_is_restarted_and_its_partition_retried() {
    let pk = key();
    let workers = 2;
    let built = Arc::new(AtomicUsize::new(0));
    let calls = Arc::new(AtomicUsize::new(0));
    let synthesis = PanickingSynthesis::new(2, calls.clone());
    let stages = baton::stages::pipeline::Stages {
        synthesis: counted(synthesis.factory(), built.clone()),
        ..cpu_stages()
    };
    let cfg = config(64 << 20, workers, None, 3);
    // The pool has the worker kept for CRITICAL jobs too.
    let threads = workers + cfg.critical_workers;
    let engine = Engine::start_with(cfg, stages).expect("start");
    let cs = circuits(200..204);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("the job survives the panic");
    check_proofs(&pk, &proofs, &cs);
    assert_eq!(calls.load(Ordering::SeqCst), cs.len() + 1, "one retry");
    // The panicked actor is rebuilt right after its handler returns; give it a moment.
    let until = Instant::now() + Duration::from_secs(5);
    while built.load(Ordering::SeqCst) < threads + 1 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        built.load(Ordering::SeqCst),
        threads + 1,
        "each worker built once, plus one restart"
    );
    wait_settled(&engine);
    let text = engine.metric_handles().render();
    assert!(
        text.lines()
            .any(|l| l == "baton_restarts_total{actor=\"synthesis\"} 1"),
        "{text}"
    );
    assert!(metric(&engine, "baton_proofs_total{result=\"retried\"} 1"));
    assert!(metric(&engine, "baton_proofs_total{result=\"ok\"} 4"));
    engine.shutdown_blocking();
}

#[test]
fn fifty_concurrent_requests_all_finish() {
    let pk = key();
    let engine = Engine::start_with(config(64 << 20, 2, None, 1), cpu_stages()).expect("start");
    // Requests of one or two partitions, each with its own witnesses.
    let requests: Vec<Vec<Synthetic>> = (0..50u64)
        .map(|r| circuits(5000 + 2 * r..5000 + 2 * r + 1 + r % 2))
        .collect();
    let total: usize = requests.iter().map(Vec::len).sum();
    let t = Instant::now();
    let results = prove_concurrently(&engine, &pk, &requests);
    let secs = t.elapsed().as_secs_f64();
    for (r, (result, cs)) in results.into_iter().zip(&requests).enumerate() {
        let proofs = result.unwrap_or_else(|e| panic!("request {r}: {e}"));
        check_proofs(&pk, &proofs, cs);
    }
    assert!(secs < 60.0, "{total} partitions took {secs:.1} s");
    let st = wait_settled(&engine);
    assert!(st.ledger.peak_charged_bytes <= st.ledger.budget_bytes);
    assert!(metric(
        &engine,
        &format!("baton_proofs_total{{result=\"ok\"}} {total}")
    ));
    engine.shutdown_blocking();
}

#[test]
fn request_larger_than_the_budget_is_refused_at_once() {
    let pk = key();
    let f = footprint_of(&pk).total_bytes();
    let budget = 4 * f;
    let gpu = FakeGpu::new().delay(Duration::from_millis(150));
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let engine = Engine::start_with(config(budget, 2, None, 1), stages).expect("start");
    let cs = circuits(300..303);
    std::thread::scope(|s| {
        let job = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), cs.clone())));
        wait_for(&engine, Duration::from_secs(10), |st| !st.jobs.is_empty());
        let needed = budget + 1;
        let huge = Request::new(pk.clone(), circuits(400..401)).with_footprint(Footprint::new(
            needed - 3,
            1,
            1,
            1,
        ));
        let t = Instant::now();
        let err = engine.prove_blocking(huge).expect_err("too large");
        let waited = t.elapsed();
        let text = err.to_string();
        assert!(
            matches!(err, EngineError::Rejected(Rejection::Ledger(_))),
            "{text}"
        );
        assert!(text.contains(&needed.to_string()), "names the need: {text}");
        assert!(
            text.contains(&budget.to_string()),
            "names the budget: {text}"
        );
        // It did not wait for the job in flight (3 × 150 ms on the slow GPU).
        let st = engine.status_blocking().expect("status");
        assert_eq!(st.jobs.len(), 1, "the first job is still in flight: {st:?}");
        assert!(
            waited < Duration::from_millis(300),
            "refusal took {waited:?}"
        );
        let proofs = job
            .join()
            .expect("join")
            .expect("the job in flight finishes");
        check_proofs(&pk, &proofs, &cs);
    });
    wait_settled(&engine);
    engine.shutdown_blocking();
}

#[test]
fn shutdown_waits_for_work_in_flight() {
    let pk = key();
    let calls = Arc::new(AtomicUsize::new(0));
    let gpu = FakeGpu::new()
        .delay(Duration::from_millis(150))
        .calls(calls.clone());
    let bg2 = RecordingBg2::new();
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        bg2: bg2.factory(),
        ..cpu_stages()
    };
    let engine = Engine::start_with(config(64 << 20, 2, None, 1), stages).expect("start");
    let cs = circuits(600..603);
    // `shutdown_blocking` takes the engine by value, so the job is submitted without keeping a
    // borrow for its reply; its proofs are read from the recording B_G2 stage instead.
    std::thread::scope(|s| {
        s.spawn(|| submit_detached(&engine, Request::new(pk.clone(), cs.clone())));
    });
    wait_for(&engine, Duration::from_secs(10), |st| !st.jobs.is_empty());
    assert!(
        bg2.recorded().len() < cs.len(),
        "the job must still be in flight when shutdown starts"
    );
    let t = Instant::now();
    engine.shutdown_blocking();
    let took = t.elapsed();
    let recorded = bg2.recorded();
    assert_eq!(
        recorded.len(),
        cs.len(),
        "shutdown returned after {took:?} with {} of {} proofs made",
        recorded.len(),
        cs.len()
    );
    assert_eq!(calls.load(Ordering::SeqCst), cs.len());
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for c in &cs {
        let inputs = c.public_inputs();
        let r = recorded
            .iter()
            .find(|r| r.public_inputs == inputs)
            .expect("a proof for every partition");
        baton::verify(&pvk, &r.proof, &inputs).expect("verifies");
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(baton::verify(&pvk, &r.proof, &wrong).is_err());
    }
}

#[test]
fn a_failed_job_skips_its_partitions_in_flight_and_the_next_job_proves() {
    let pk = key();
    let bad = circuits(2000..2012);
    let poisoned = bad[0].public_inputs()[0];
    let calls = Arc::new(AtomicUsize::new(0));
    // The number of the GPU call that failed partition 0.
    let failed_at = Arc::new(AtomicUsize::new(0));
    let at = failed_at.clone();
    // A slow GPU, so synthesized partitions queue in front of it; partition 0 fails for good on
    // its first attempt (one attempt allowed).
    let gpu = FakeGpu::new()
        .delay(Duration::from_millis(100))
        .calls(calls.clone())
        .fail_when(move |c| {
            let hit = c.public_inputs.first() == Some(&poisoned);
            if hit {
                at.store(c.number, Ordering::SeqCst);
            }
            hit
        });
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let slots = 6;
    let engine = Engine::start_with(config(64 << 20, 2, Some(slots), 1), stages).expect("start");
    let err = engine
        .prove_blocking(Request::new(pk.clone(), bad))
        .expect_err("partition 0 fails the job");
    assert!(
        matches!(err, EngineError::PartitionFailed { index: 0, .. }),
        "{err}"
    );
    wait_settled(&engine);
    let abandoned = engine
        .metric_handles()
        .proofs_total
        .with_label_values(&["abandoned"])
        .get();
    assert!(
        abandoned >= 1,
        "partitions in flight when the job failed were skipped"
    );
    // When partition 0 failed, at most `slots - 1` other partitions held grants; none granted
    // after the failure reached `g1_msms`. (Partition 0 need not be the first call: under
    // load, or while it records the circuit, others may pass it on the way to the GPU.)
    let ran = calls.load(Ordering::SeqCst);
    let failed = failed_at.load(Ordering::SeqCst);
    assert!(failed >= 1, "partition 0 reached the GPU");
    assert!(
        ran < failed + slots,
        "{ran} GPU calls, partition 0 failed on call {failed}"
    );
    assert!(ran < 12, "{ran} GPU calls: some partitions were skipped");
    assert!(metric(&engine, "baton_proofs_total{result=\"failed\"} 1"));
    // Nothing else was lost: the next request proves.
    let good = circuits(2100..2103);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), good.clone()))
        .expect("the next request proves");
    check_proofs(&pk, &proofs, &good);
    wait_settled(&engine);
    engine.shutdown_blocking();
}
