//! The engine end to end on the CPU: real stages, proofs that verify, a wrong input that fails,
//! and a ledger that reads zero afterwards.

use std::sync::Arc;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::{Config, Engine, PreparedVerifyingKey, Request, Scalar};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A good proof verifies and the same proof fails once public input `k` is changed.
fn check_proof(pvk: &PreparedVerifyingKey, proof: &baton::Proof, inputs: &[Scalar], k: usize) {
    baton::verify(pvk, proof, inputs).expect("verifies");
    let mut wrong = inputs.to_vec();
    wrong[k] += Scalar::ONE;
    assert!(
        baton::verify(pvk, proof, &wrong).is_err(),
        "a wrong public input must fail"
    );
}

/// A real key for `Synthetic` of `size` constraints, from a seeded setup.
fn key(size: usize, seed: u64) -> Arc<baton::ProvingKey> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Arc::new(baton::generate_random_parameters(Synthetic::new(size, 0), &mut rng).expect("setup"))
}

#[test]
fn engine_proves_a_request_and_reconciles_the_ledger() {
    let pk = key(1 << 9, 21);
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 2,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    assert_eq!(engine.backend_name(), "cpu");
    let circuits: Vec<Synthetic> = (0..5).map(|s| Synthetic::new(1 << 9, 100 + s)).collect();
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("prove");
    assert_eq!(proofs.len(), 5);
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (p, c) in proofs.iter().zip(&circuits) {
        let inputs = c.public_inputs();
        check_proof(&pvk, p, &inputs, 1);
    }
    // Frees are settled just after the reply; wait for them.
    let mut status = engine.status_blocking().expect("status");
    for _ in 0..200 {
        if status.ledger.charged_bytes == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        status = engine.status_blocking().expect("status");
    }
    assert_eq!(status.ledger.charged_bytes, 0, "{status:?}");
    assert!(status.ledger.peak_charged_bytes > 0);
    assert!(engine
        .metric_handles()
        .render()
        .contains("baton_proofs_total{result=\"ok\"} 5"));
    engine.shutdown_blocking();
}

#[test]
fn two_gpu_actors_share_the_work_and_report_busy_time_per_device() {
    use baton::testing::{cpu_stages, FakeGpu};
    let pk = key(1 << 8, 22);
    let stages = baton::stages::pipeline::Stages {
        gpu: FakeGpu::new()
            .delay(std::time::Duration::from_millis(40))
            .factory(),
        ..cpu_stages()
    };
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 2,
        gpu_devices: vec![0, 1],
        ..Config::default()
    };
    let engine = Engine::start_with(cfg, stages).expect("start");
    let circuits: Vec<Synthetic> = (0..8).map(|s| Synthetic::new(1 << 8, 200 + s)).collect();
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("prove");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (p, c) in proofs.iter().zip(&circuits) {
        check_proof(&pvk, p, &c.public_inputs(), 0);
    }
    let busy = &engine.metric_handles().gpu_busy_seconds;
    let names: Vec<String> = engine
        .metrics()
        .gather()
        .iter()
        .filter(|f| f.get_name() == "baton_gpu_busy_seconds_total")
        .flat_map(|f| {
            f.get_metric()
                .iter()
                .map(|m| m.get_label()[0].get_value().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(names.len(), 2, "one busy counter per device: {names:?}");
    for n in &names {
        let secs = busy.with_label_values(&[n]).get();
        assert!(secs >= 0.04, "device {n} did no work ({secs} s)");
    }
    engine.shutdown_blocking();
}

#[test]
fn metrics_endpoint_serves_prometheus_text() {
    use std::io::{Read, Write};
    let cfg = Config {
        budget_bytes: Some(16 << 20),
        metrics_listen: Some("127.0.0.1:0".into()),
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    let addr = engine.metrics_addr().expect("endpoint bound");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    // The endpoint keeps HTTP/1.1 connections alive (hyper); a client reading to EOF says close.
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut body = String::new();
    s.read_to_string(&mut body).expect("read");
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    assert!(
        body.contains("baton_ledger_budget_bytes 16777216"),
        "{body}"
    );
    assert!(
        body.contains("baton_mailbox_depth{actor=\"gpu\"}"),
        "{body}"
    );
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.write_all(b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut body = String::new();
    s.read_to_string(&mut body).expect("read");
    assert!(body.starts_with("HTTP/1.1 404"), "{body}");
    engine.shutdown_blocking();
}

#[test]
fn unsatisfied_partition_fails_its_job_at_once_naming_the_constraint() {
    let pk = key(1 << 8, 23);
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 2,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    let mut circuits: Vec<Synthetic> = (0..3).map(|s| Synthetic::new(1 << 8, 300 + s)).collect();
    circuits[2].break_at = Some(5);
    match engine.prove_blocking(Request::new(pk.clone(), circuits)) {
        Err(baton::EngineError::PartitionFailed {
            index,
            attempts,
            actor,
            cause,
            ..
        }) => {
            assert_eq!(
                (index, attempts, actor),
                (2, 1, "synthesis"),
                "not retried: {cause}"
            );
            assert!(cause.contains("constraint 5"), "{cause}");
        }
        other => panic!("expected PartitionFailed, got {:?}", other.map(|p| p.len())),
    }
    // The engine goes on: a good request right after still proves and verifies.
    let good = Synthetic::new(1 << 8, 400);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), vec![good.clone()]))
        .expect("prove");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    check_proof(&pvk, &proofs[0], &good.public_inputs(), 0);
    engine.shutdown_blocking();
}

#[test]
fn a_stated_footprint_without_witness_bytes_still_lets_shutdown_finish() {
    let pk = key(1 << 8, 24);
    assert_ne!(
        pk.id(),
        (*pk).clone().id(),
        "a clone is a different key for resident-base caches"
    );
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    let circuit = Synthetic::new(1 << 8, 500);
    let request = Request::new(pk.clone(), vec![circuit.clone()])
        .with_footprint(baton::ledger::Footprint::new(3 << 20, 0, 0, 0));
    let proofs = engine.prove_blocking(request).expect("prove");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    check_proof(&pvk, &proofs[0], &circuit.public_inputs(), 0);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        engine.shutdown_blocking();
        let _ = tx.send(());
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("shutdown finished");
}

#[test]
fn an_auto_budget_sets_the_key_in_use_aside() {
    use baton::testing::{cpu_stages, FakeGpu};
    let pk = key(1 << 8, 25);
    let stages = baton::stages::pipeline::Stages {
        gpu: FakeGpu::new()
            .delay(std::time::Duration::from_millis(300))
            .factory(),
        ..cpu_stages()
    };
    let cfg = Config {
        budget_bytes: None,
        ..Config::default()
    };
    let engine = Arc::new(Engine::start_with(cfg, stages).expect("start"));
    let circuit = Synthetic::new(1 << 8, 600);
    let (e2, pk2, c2) = (engine.clone(), pk.clone(), circuit.clone());
    let job = std::thread::spawn(move || e2.prove_blocking(Request::new(pk2, vec![c2])));
    let mut seen = 0;
    for _ in 0..200 {
        let st = engine.status_blocking().expect("status");
        if !st.jobs.is_empty() {
            seen = st.ledger.resident_bytes;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(
        seen,
        pk.heap_bytes(),
        "the key's bytes are set aside while its job runs"
    );
    let proofs = job.join().expect("join").expect("prove");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    check_proof(&pvk, &proofs[0], &circuit.public_inputs(), 0);
    let mut st = engine.status_blocking().expect("status");
    for _ in 0..200 {
        if st.jobs.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        st = engine.status_blocking().expect("status");
    }
    assert_eq!(st.ledger.resident_bytes, 0, "given back with the last job");
    engine.shutdown_blocking();
}

#[test]
fn b_g2_on_the_backend_gives_verifying_proofs_with_two_devices() {
    // `bg2.device = "gpu"` on the CPU backend: the B_G2 workers use the devices' backends
    // (worker i on device i mod 2); the proofs must be the same valid proofs.
    let pk = key(1 << 8, 23);
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 2,
        gpu_devices: vec![0, 1],
        bg2_workers: 3,
        bg2_device: baton::config::Bg2Device::Gpu,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    let circuits: Vec<Synthetic> = (0..6).map(|s| Synthetic::new(1 << 8, 300 + s)).collect();
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("prove");
    assert_eq!(proofs.len(), 6);
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (p, c) in proofs.iter().zip(&circuits) {
        check_proof(&pvk, p, &c.public_inputs(), 2);
    }
    engine.shutdown_blocking();
}

#[test]
fn a_budget_beyond_the_hosts_memory_is_refused_at_start_unless_overcommitted() {
    let available = baton::ledger::available_memory_bytes().expect("this test reads /proc/meminfo");
    let budget = available.saturating_mul(4);
    let cfg = Config {
        budget_bytes: Some(budget),
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let err = Engine::start(cfg.clone())
        .err()
        .expect("a budget 4x the available memory is refused");
    let text = err.to_string();
    for part in [
        "memory.budget",
        &budget.to_string(),
        "resident proving keys (0 bytes)",
        "memory.overcommit",
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    // Warned, not refused: the engine starts and proves.
    let engine = Engine::start(Config {
        overcommit: true,
        ..cfg
    })
    .expect("memory.overcommit = true starts anyway");
    let pk = key(1 << 8, 26);
    let circuit = Synthetic::new(1 << 8, 700);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), vec![circuit.clone()]))
        .expect("prove");
    check_proof(
        &PreparedVerifyingKey::new(&pk.vk),
        &proofs[0],
        &circuit.public_inputs(),
        0,
    );
    engine.shutdown_blocking();
}

/// Refusals are typed: a configuration that breaks a rule stops the start with the config's
/// error (its text kept), a budget the host cannot hold with the ledger's, and a request with
/// no circuits is rejected as empty while the engine goes on proving.
#[test]
fn start_and_request_refusals_say_which_kind() {
    use baton::engine::{Rejection, StartError};
    use baton::EngineError;
    let bad = Config {
        synthesis_workers: 0,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    match Engine::start(bad) {
        Err(EngineError::Start(e)) => {
            assert!(matches!(*e, StartError::Config(_)), "{e:?}");
            assert!(e.to_string().contains("synthesis.workers"), "{e}");
        }
        Err(e) => panic!("expected a start error, got {e}"),
        Ok(_) => panic!("0 synthesis workers started"),
    }
    let too_big = Config {
        budget_bytes: Some(u64::MAX / 2),
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    match Engine::start(too_big) {
        Err(EngineError::Start(e)) => assert!(matches!(*e, StartError::Ledger(_)), "{e:?}"),
        Err(e) => panic!("expected a start error, got {e}"),
        Ok(_) => panic!("a budget beyond the host's memory started"),
    }
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 1,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    let pk = key(1 << 9, 22);
    let empty = engine.prove_blocking(Request::new(pk.clone(), Vec::<Synthetic>::new()));
    assert!(
        matches!(empty, Err(EngineError::Rejected(Rejection::Empty))),
        "{:?}",
        empty.map(|p| p.len())
    );
    let c = Synthetic::new(1 << 9, 7);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), vec![c.clone()]))
        .expect("the engine goes on");
    check_proof(
        &PreparedVerifyingKey::new(&pk.vk),
        &proofs[0],
        &c.public_inputs(),
        1,
    );
    engine.shutdown_blocking();
}

/// The actors' threads carry their actors' names (what `top -H`, a profiler and the CRITICAL
/// bench's CPU table read), not the name of the thread that started them.
#[cfg(target_os = "linux")]
#[test]
fn actor_threads_are_named_after_their_actors() {
    let pk = key(1 << 8, 23);
    let cfg = Config {
        synthesis_workers: 2,
        critical_workers: 1,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start(cfg).expect("start");
    engine
        .prove_blocking(Request::new(pk, vec![Synthetic::new(1 << 8, 5)]))
        .expect("prove");
    let names = || -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .expect("/proc/self/task")
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .map(|n| n.trim().to_string())
            .collect()
    };
    let want = [
        "baton-dealloc",
        "baton-gpu0",
        "baton-bg2-0",
        "baton-worker-0",
        "baton-worker-1",
        "baton-crit-0",
    ];
    let mut missing = Vec::new();
    for _ in 0..200 {
        let now = names();
        missing = want
            .iter()
            .filter(|w| !now.iter().any(|n| n == *w))
            .copied()
            .collect();
        if missing.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        missing.is_empty(),
        "threads not named: {missing:?} among {:?}",
        names()
    );
    engine.shutdown_blocking();
}
