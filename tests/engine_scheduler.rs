//! The scheduler inside the engine: priorities across requests, cancellation (queued and
//! running: exact `was_running`, the ledger back to zero, the next job proves), pinned keys
//! in the ledger's resident bytes, and a job kept out by one (`EngineError::NoRoom`).
//! Synthesis is paced by `testing::Paced` so queues fill.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::circuits::Synthetic;
use baton::engine::{CancelOutcome, PartitionState};
use baton::scheduler::Priority;
use baton::testing::Paced;
use baton::{Engine, EngineError, Request};
use support::{check_proofs, circuits, config, key, wait_for, wait_settled};

fn paced(seed: u64, ms: u64) -> Paced<Synthetic> {
    Paced::new(Synthetic::new(support::CONSTRAINTS, seed), ms)
}

#[test]
fn a_critical_request_overtakes_the_waiting_low_ones_and_low_stays_fifo() {
    // No worker kept for CRITICAL: the queue order alone is under test here (the reserve is,
    // in a_critical_job_never_waits_for_another_jobs_synthesis).
    let cfg = baton::Config {
        critical_workers: 0,
        ..config(1 << 30, 1, None, 3)
    };
    let engine = Engine::start(cfg).expect("start");
    let pk = key();
    let ends: Arc<Mutex<Vec<(Instant, &str)>>> = Arc::default();
    let mut tickets = Vec::new();
    for (i, name) in ["low-0", "low-1", "low-2", "low-3", "low-4"]
        .into_iter()
        .enumerate()
    {
        let r = Request::new(pk.clone(), vec![paced(i as u64, 60)]).with_priority(Priority::Low);
        tickets.push((name, engine.submit(r)));
    }
    // The first LOW partition holds the one worker; the rest wait.
    wait_for(&engine, Duration::from_secs(10), |st| st.queued == 4);
    let r = Request::new(pk.clone(), vec![paced(9, 60)]).with_priority(Priority::Critical);
    tickets.push(("critical", engine.submit(r)));
    let st = engine.status_blocking().expect("status");
    assert_eq!(st.queued_by_priority, [4, 0, 0, 1]);
    std::thread::scope(|s| {
        for (name, t) in tickets {
            let ends = ends.clone();
            s.spawn(move || {
                let report = t.blocking_outcome().expect("proved");
                assert_eq!(report.proofs.len(), 1);
                ends.lock().expect("ends").push((Instant::now(), name));
            });
        }
    });
    let mut ends = ends.lock().expect("ends").clone();
    ends.sort();
    let order: Vec<&str> = ends.iter().map(|e| e.1).collect();
    assert_eq!(
        order,
        ["low-0", "critical", "low-1", "low-2", "low-3", "low-4"],
        "only the LOW partition already granted finishes before CRITICAL"
    );
    wait_settled(&engine);
    engine.shutdown_blocking();
}

/// A CRITICAL job arriving while every ordinary worker synthesizes a long partition: with a
/// worker (and slot) kept for CRITICAL it proves at once, without it it waits for that
/// synthesis to end.
#[test]
fn a_critical_job_never_waits_for_another_jobs_synthesis() {
    let run = |critical_workers: usize| {
        let cfg = baton::Config {
            critical_workers,
            ..config(1 << 30, 1, None, 3)
        };
        let engine = Engine::start(cfg).expect("start");
        let pk = key();
        let normal = engine.submit(Request::new(pk.clone(), vec![paced(1, 1500), paced(2, 10)]));
        wait_for(&engine, Duration::from_secs(10), |st| {
            st.jobs
                .iter()
                .any(|j| j.partitions[0] == PartitionState::At(baton::ledger::Stage::Synthesizing))
        });
        let urgent = vec![Synthetic::new(support::CONSTRAINTS, 9)];
        let sent = Instant::now();
        let critical = engine
            .submit(Request::new(pk.clone(), urgent.clone()).with_priority(Priority::Critical));
        let report = critical.blocking_outcome().expect("proved");
        let critical_done = Instant::now();
        check_proofs(&pk, &report.proofs, &urgent);
        normal.blocking_outcome().expect("proved");
        let normal_done = Instant::now();
        wait_settled(&engine);
        engine.shutdown_blocking();
        (
            critical_done.duration_since(sent),
            critical_done < normal_done,
        )
    };
    let (latency, first) = run(1);
    assert!(first, "the CRITICAL job ended after the NORMAL one");
    assert!(
        latency < Duration::from_millis(1200),
        "CRITICAL waited {latency:?}: it should not wait for the 1.5 s synthesis"
    );
    let (latency, _) = run(0);
    assert!(
        latency >= Duration::from_millis(700),
        "without a reserve CRITICAL waits for the worker ({latency:?})"
    );
}

/// Synthesized NORMAL partitions queued in front of a slow device: a CRITICAL partition
/// synthesized after them is the next one the device takes (it waits only for the partition
/// already on it), and its proof verifies.
#[test]
fn the_device_takes_a_critical_partition_before_the_normal_ones_queued_for_it() {
    let gpu_ms = 250;
    let gpu = baton::testing::FakeGpu::new().delay(Duration::from_millis(gpu_ms));
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        ..baton::testing::cpu_stages()
    };
    let engine = Engine::start_with(config(1 << 30, 2, Some(6), 3), stages).expect("start");
    let pk = key();
    let normal: Vec<Synthetic> = (0..8)
        .map(|i| Synthetic::new(support::CONSTRAINTS, 300 + i))
        .collect();
    let normal = engine.submit(Request::new(pk.clone(), normal));
    // Several synthesized partitions wait for the device.
    wait_for(&engine, Duration::from_secs(20), |st| {
        st.jobs
            .iter()
            .flat_map(|j| &j.partitions)
            .filter(|p| **p == PartitionState::At(baton::ledger::Stage::QueuedForGpu))
            .count()
            >= 3
    });
    let urgent = vec![Synthetic::new(support::CONSTRAINTS, 399)];
    let sent = Instant::now();
    let report = engine
        .submit(Request::new(pk.clone(), urgent.clone()).with_priority(Priority::Critical))
        .blocking_outcome()
        .expect("proved");
    let latency = sent.elapsed();
    check_proofs(&pk, &report.proofs, &urgent);
    // One partition on the device, then its own: well under the three queued ahead of it.
    assert!(
        latency < Duration::from_millis(3 * gpu_ms),
        "CRITICAL took {latency:?} behind a {gpu_ms} ms device"
    );
    normal
        .blocking_outcome()
        .expect("the NORMAL job proves too");
    wait_settled(&engine);
    engine.shutdown_blocking();
}

#[test]
fn cancel_queued_and_running_settles_the_ledger_and_the_next_job_proves() {
    let engine = Engine::start(config(1 << 30, 1, None, 3)).expect("start");
    let pk = key();
    let running = engine.submit(Request::new(pk.clone(), vec![paced(1, 400), paced(2, 400)]));
    let queued = engine.submit(Request::new(pk.clone(), vec![paced(3, 10)]));
    wait_for(&engine, Duration::from_secs(10), |st| {
        st.jobs
            .iter()
            .any(|j| j.partitions[0] == PartitionState::At(baton::ledger::Stage::Synthesizing))
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let c = rt.block_on(engine.cancel(queued.id)).expect("engine up");
    assert_eq!(c, CancelOutcome::Cancelled { was_running: false });
    let c = rt.block_on(engine.cancel(running.id)).expect("engine up");
    assert_eq!(c, CancelOutcome::Cancelled { was_running: true });
    assert_eq!(
        rt.block_on(engine.cancel(running.id)).ok(),
        Some(CancelOutcome::NotFound)
    );
    assert_eq!(
        rt.block_on(engine.cancel(999)).ok(),
        Some(CancelOutcome::NotFound)
    );
    let (r, q) = (running.id, queued.id);
    assert!(matches!(running.blocking_outcome(), Err(EngineError::Cancelled { job }) if job == r));
    assert!(matches!(queued.blocking_outcome(), Err(EngineError::Cancelled { job }) if job == q));
    let st = wait_settled(&engine);
    assert!(
        st.ledger.peak_charged_bytes > 0,
        "the running job had been charged"
    );
    assert!(support::metric(
        &engine,
        "baton_proofs_total{result=\"abandoned\"} 1"
    ));
    let next = circuits(10..12);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), next.clone()))
        .expect("the next job proves");
    check_proofs(&pk, &proofs, &next);
    wait_settled(&engine);
    engine.shutdown_blocking();
}

#[test]
fn a_pinned_key_is_set_aside_from_the_budget_until_unpinned() {
    // An auto budget: keys in use (and pinned ones) come out of it as resident bytes.
    let cfg = baton::Config {
        budget_bytes: None,
        ..config(1 << 30, 1, None, 3)
    };
    let engine = Engine::start(cfg).expect("start");
    let pk = key();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let bytes = pk.heap_bytes();
    assert_eq!(rt.block_on(engine.pin_key(pk.clone())).ok(), Some(bytes));
    assert_eq!(
        rt.block_on(engine.pin_key(pk.clone())).ok(),
        Some(0),
        "already pinned"
    );
    let st = engine.status_blocking().expect("status");
    assert_eq!(st.ledger.resident_bytes, bytes);
    // Jobs on a pinned key do not set it aside twice, and it stays after they end.
    let cs = circuits(20..22);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), cs.clone()))
        .expect("proves");
    check_proofs(&pk, &proofs, &cs);
    let st = wait_settled(&engine);
    assert_eq!(st.ledger.resident_bytes, bytes);
    assert_eq!(rt.block_on(engine.unpin_key(pk.id())).ok(), Some(bytes));
    assert_eq!(
        engine
            .status_blocking()
            .expect("status")
            .ledger
            .resident_bytes,
        0
    );
    assert_eq!(rt.block_on(engine.unpin_key(pk.id())).ok(), Some(0));
    engine.shutdown_blocking();
}

/// A CPU engine whose auto budget is `budget` (the host said to have that much available beyond
/// the margin), and a runtime for its async calls.
fn auto_budget_engine(budget: u64) -> (Engine, tokio::runtime::Runtime) {
    let cfg = baton::Config {
        budget_bytes: None,
        ..config(1 << 30, 1, None, 3)
    };
    let available = cfg.margin_bytes + budget;
    let stages = baton::testing::cpu_stages();
    let engine =
        Engine::start_with_memory(cfg, stages, Arc::new(move || Some(available))).expect("start");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    (engine, rt)
}

#[test]
fn a_job_kept_out_by_an_idle_pinned_key_is_told_how_many_bytes_short() {
    use rand::SeedableRng;
    let pk = key();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
    let other = Arc::new(
        baton::generate_random_parameters(Synthetic::new(support::CONSTRAINTS, 0), &mut rng)
            .expect("setup"),
    );
    let (k, f, o) = (
        pk.heap_bytes(),
        baton::engine::footprint_of(&pk).total_bytes(),
        other.heap_bytes(),
    );
    // An auto budget (the host said to have it beyond the margin) where the job fits beside its
    // own key but not beside the other, pinned one too: half its footprint short.
    let budget = f + k + o - f / 2;
    let (engine, rt) = auto_budget_engine(budget);
    assert_eq!(rt.block_on(engine.pin_key(other.clone())).ok(), Some(o));
    let cs = circuits(30..32);
    let request = || Request::new(pk.clone(), cs.clone());
    let short = f / 2;
    match rt.block_on(engine.room_for(&request())) {
        Err(EngineError::NoRoom {
            short_bytes,
            idle_bytes,
            ..
        }) => assert_eq!((short_bytes, idle_bytes), (short, o)),
        other => panic!("expected NoRoom, got {other:?}"),
    }
    let err = engine.prove_blocking(request()).expect_err("no room");
    let text = err.to_string();
    assert!(matches!(err, EngineError::NoRoom { .. }), "{text}");
    assert!(
        text.contains("request rejected") && text.contains(&format!("{short} bytes short")),
        "{text}"
    );
    let st = engine.status_blocking().expect("status");
    assert_eq!(
        st.ledger.resident_bytes, o,
        "neither the dry run nor the refusal counted"
    );
    // The idle key gone, the job fits and proves.
    assert_eq!(rt.block_on(engine.unpin_key(other.id())).ok(), Some(o));
    rt.block_on(engine.room_for(&request())).expect("room now");
    let proofs = engine.prove_blocking(request()).expect("proves");
    check_proofs(&pk, &proofs, &cs);
    wait_settled(&engine);
    engine.shutdown_blocking();
}

#[test]
fn status_names_the_job_and_partition_on_each_gpu_actor_and_their_times() {
    use baton::testing::{cpu_stages, FakeGpu};
    let gpu = FakeGpu::new().delay(Duration::from_millis(400));
    let stages = baton::stages::pipeline::Stages {
        gpu: gpu.factory(),
        ..cpu_stages()
    };
    let engine = Engine::start_with(config(1 << 30, 1, None, 3), stages).expect("start");
    let pk = key();
    let cs = circuits(30..31);
    let ticket = engine.submit(Request::new(pk.clone(), cs.clone()));
    let st = wait_for(&engine, Duration::from_secs(10), |st| !st.on_gpu.is_empty());
    assert_eq!(st.on_gpu, vec![("fake-gpu:0".to_string(), ticket.id, 0)]);
    // Its synthesis time is known once it is on the GPU; its GPU time not yet.
    let job = st.jobs.iter().find(|j| j.id == ticket.id).expect("listed");
    assert!(job.times[0].synthesis > Duration::ZERO, "{:?}", job.times);
    assert_eq!(job.times[0].gpu, Duration::ZERO, "{:?}", job.times);
    let proofs = ticket.blocking_outcome().expect("proves").proofs;
    check_proofs(&pk, &proofs, &cs);
    let st = wait_settled(&engine);
    assert!(st.on_gpu.is_empty(), "{:?}", st.on_gpu);
    engine.shutdown_blocking();
}

/// A circuit that records the nice value of the thread it is synthesized on.
#[derive(Clone)]
struct NiceProbe {
    inner: Synthetic,
    seen: Arc<Mutex<Vec<i32>>>,
}

impl bellperson::Circuit<blstrs::Scalar> for NiceProbe {
    fn synthesize<CS: bellperson::ConstraintSystem<blstrs::Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellperson::SynthesisError> {
        self.seen.lock().expect("seen").push(thread_nice());
        self.inner.synthesize(cs)
    }
}

/// This thread's nice value (Linux: per thread).
fn thread_nice() -> i32 {
    // SAFETY: gettid and getpriority have no preconditions; PRIO_PROCESS with a thread id
    // reads that thread's nice value.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
}

/// Ordinary synthesis runs niced by `synthesis.nice` (its parallel parts included, in the
/// pool it runs in); the worker kept for CRITICAL runs at the process's priority, and
/// `nice = 0` leaves ordinary synthesis there too. Proofs from both pools verify.
#[test]
fn ordinary_synthesis_runs_niced_and_critical_at_the_process_priority() {
    let base = thread_nice();
    for nice in [10u8, 0] {
        let cfg = baton::Config {
            synthesis_nice: nice,
            ..config(1 << 30, 1, None, 3)
        };
        let engine = Engine::start(cfg).expect("start");
        let pk = key();
        let probe = |seed: u64, seen: &Arc<Mutex<Vec<i32>>>| NiceProbe {
            inner: Synthetic::new(support::CONSTRAINTS, seed),
            seen: seen.clone(),
        };
        let (ordinary, critical) = (Arc::default(), Arc::default());
        let normal = engine.submit(Request::new(pk.clone(), vec![probe(1, &ordinary)]));
        let urgent = engine.submit(
            Request::new(pk.clone(), vec![probe(2, &critical)]).with_priority(Priority::Critical),
        );
        let normal = normal.blocking_outcome().expect("proved");
        let urgent = urgent.blocking_outcome().expect("proved");
        check_proofs(&pk, &normal.proofs, &circuits(1..2));
        check_proofs(&pk, &urgent.proofs, &circuits(2..3));
        let want = base.max(i32::from(nice));
        let ordinary = ordinary.lock().expect("seen").clone();
        assert!(
            !ordinary.is_empty() && ordinary.iter().all(|&n| n == want),
            "nice {nice}: ordinary synthesis ran at {ordinary:?}, want {want}"
        );
        let critical = critical.lock().expect("seen").clone();
        assert!(
            !critical.is_empty() && critical.iter().all(|&n| n == base),
            "nice {nice}: CRITICAL synthesis ran at {critical:?}, want {base}"
        );
        wait_settled(&engine);
        engine.shutdown_blocking();
    }
}

#[test]
fn a_key_about_to_be_read_is_told_how_many_bytes_idle_keys_stand_in_its_way() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let other = Arc::new(
        baton::generate_random_parameters(Synthetic::new(support::CONSTRAINTS, 0), &mut rng)
            .expect("setup"),
    );
    let o = other.heap_bytes();
    // An auto budget of 3 o: a new key of 2 o + 100 bytes fits only once the idle, pinned one
    // is gone; one above the whole budget never does, and eviction cannot help it.
    let budget = 3 * o;
    let (engine, rt) = auto_budget_engine(budget);
    rt.block_on(engine.room_for_key(2 * o + 100))
        .expect("fits beside nothing");
    assert_eq!(rt.block_on(engine.pin_key(other.clone())).ok(), Some(o));
    match rt.block_on(engine.room_for_key(2 * o + 100)) {
        Err(EngineError::NoRoom {
            short_bytes,
            idle_bytes,
            ..
        }) => assert_eq!((short_bytes, idle_bytes), (100, o)),
        other => panic!("expected NoRoom, got {other:?}"),
    }
    match rt.block_on(engine.room_for_key(budget + 1)) {
        Err(EngineError::Rejected(_)) => {}
        other => panic!("a key above the budget: expected Rejected, got {other:?}"),
    }
    rt.block_on(engine.room_for_key(2 * o))
        .expect("fits beside it");
    let st = engine.status_blocking().expect("status");
    assert_eq!(st.ledger.resident_bytes, o, "the dry runs counted nothing");
    assert_eq!(rt.block_on(engine.unpin_key(other.id())).ok(), Some(o));
    rt.block_on(engine.room_for_key(2 * o + 100))
        .expect("room once the idle key is gone");
    engine.shutdown_blocking();
}

/// What a [`Gated`] circuit does at its first padding allocation: the ordinary one counts its
/// allocations and waits for `go`; the CRITICAL one sets `go` and counts the ordinary one's
/// allocations over 300 ms of its own synthesis.
#[derive(Default)]
struct Hooks {
    go: std::sync::atomic::AtomicBool,
    ordinary_allocs: std::sync::atomic::AtomicUsize,
    during_critical: Mutex<Option<usize>>,
}

/// `Synthetic` after `PAD` allocations (each `v · 1 = v`) that call `hooks` (none: the key's shape).
#[derive(Clone)]
struct Gated {
    inner: Synthetic,
    hooks: Option<(Arc<Hooks>, bool)>,
}

const PAD: usize = 200;

impl bellperson::Circuit<blstrs::Scalar> for Gated {
    fn synthesize<CS: bellperson::ConstraintSystem<blstrs::Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), bellperson::SynthesisError> {
        use std::sync::atomic::Ordering::SeqCst;
        for i in 0..PAD {
            let v = cs.alloc(
                || format!("pad {i}"),
                || {
                    match &self.hooks {
                        Some((h, false)) => {
                            h.ordinary_allocs.fetch_add(1, SeqCst);
                            if i == 0 {
                                let until = Instant::now() + Duration::from_secs(20);
                                while !h.go.load(SeqCst) && Instant::now() < until {
                                    std::thread::sleep(Duration::from_millis(1));
                                }
                            } else {
                                std::thread::sleep(Duration::from_millis(1));
                            }
                        }
                        Some((h, true)) if i == 0 => {
                            h.go.store(true, SeqCst);
                            let before = h.ordinary_allocs.load(SeqCst);
                            std::thread::sleep(Duration::from_millis(300));
                            let after = h.ordinary_allocs.load(SeqCst);
                            *h.during_critical.lock().expect("hooks") = Some(after - before);
                        }
                        _ => {}
                    }
                    Ok(blstrs::Scalar::from(i as u64))
                },
            )?;
            cs.enforce(
                || format!("pad {i} = pad {i}"),
                |lc| lc + v,
                |lc| lc + CS::one(),
                |lc| lc + v,
            );
        }
        self.inner.synthesize(cs)
    }
}

/// With `synthesis.yield_to_critical` (the default) an ordinary partition's synthesis makes no
/// allocation while a CRITICAL one synthesizes, and its parked time is counted; off, it goes
/// on beside it. Every proof verifies and fails a wrong input, both ways.
#[test]
fn ordinary_synthesis_pauses_while_a_critical_partition_synthesizes() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let shape = Gated {
        inner: Synthetic::new(support::CONSTRAINTS, 0),
        hooks: None,
    };
    let pk = Arc::new(baton::generate_random_parameters(shape, &mut rng).expect("setup"));
    let pvk = baton::PreparedVerifyingKey::new(&pk.vk);
    for yields in [true, false] {
        let cfg = baton::Config {
            yield_to_critical: yields,
            compiled: false,
            ..config(1 << 30, 1, None, 1)
        };
        let engine = Engine::start(cfg).expect("start");
        let hooks = Arc::new(Hooks::default());
        let gated = |seed: u64, critical: bool| Gated {
            inner: Synthetic::new(support::CONSTRAINTS, seed),
            hooks: Some((hooks.clone(), critical)),
        };
        let normal = engine.submit(Request::new(pk.clone(), vec![gated(1, false)]));
        let started = Instant::now() + Duration::from_secs(20);
        while hooks
            .ordinary_allocs
            .load(std::sync::atomic::Ordering::SeqCst)
            == 0
        {
            assert!(
                Instant::now() < started,
                "the ordinary synthesis never started"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        let urgent = engine.submit(
            Request::new(pk.clone(), vec![gated(2, true)]).with_priority(Priority::Critical),
        );
        let urgent = urgent.blocking_outcome().expect("CRITICAL proved");
        let normal = normal.blocking_outcome().expect("NORMAL proved");
        for (report, seed) in [(&urgent, 2), (&normal, 1)] {
            let inputs = baton::circuits::KnownCircuit::public_inputs(&Synthetic::new(
                support::CONSTRAINTS,
                seed,
            ));
            baton::verify(&pvk, &report.proofs[0], &inputs).expect("verifies");
            let mut wrong = inputs.clone();
            wrong[0] += blstrs::Scalar::from(1u64);
            assert!(baton::verify(&pvk, &report.proofs[0], &wrong).is_err());
        }
        let during = hooks
            .during_critical
            .lock()
            .expect("hooks")
            .expect("measured");
        let parked = engine.metric_handles().synthesis_parked_seconds.get();
        if yields {
            assert_eq!(during, 0, "the ordinary synthesis allocated while paused");
            assert!(parked > 0.0, "parked {parked} s");
        } else {
            assert!(
                during >= 10,
                "without the pause it goes on ({during} allocations)"
            );
            assert_eq!(parked, 0.0);
        }
        wait_settled(&engine);
        engine.shutdown_blocking();
    }
}
