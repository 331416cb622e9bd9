//! Keys under memory pressure, the daemon in-process (its gRPC service called directly) on the
//! CPU: with an auto budget sized (through a stated host memory) so that a job's key and
//! partition do not fit beside two preloaded keys, the least recently used idle key is evicted,
//! counted and gone from GetStatus, the other stays, and the job proves; a key held by a running
//! job is never evicted; where evicting idle keys cannot make room, none is evicted; and idle
//! keys make way before a new key is read, not after.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::engine::PartitionState;
use baton::server::grpc::service::Service;
use baton::server::jobs::daemon::Daemon;
use baton::server::jobs::journal::Journal;
use baton::server::keys::held::Keys;
use baton::server::proto::await_proof_response::Status as Ended;
use baton::server::proto::proving_engine_server::ProvingEngine;
use baton::server::proto::{
    AwaitProofRequest, AwaitProofResponse, GetStatusRequest, PreloadSrsRequest, ProofKind,
    ProveRequest, SubmitProofRequest,
};
use baton::{Config, Engine, PreparedVerifyingKey, Proof, ProvingKey, Scalar};
use rand::SeedableRng;
use tonic::Request;

const MARGIN: u64 = 1 << 30;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("evict-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("keys")).expect("scratch dir");
    dir
}

/// Writes the key of the built-in synthetic circuit of `n` constraints where the daemon looks
/// for it; returns the key and what a job of it weighs: key bytes, partition footprint bytes.
fn key(state: &Path, n: usize) -> (ProvingKey, u64, u64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(n as u64);
    let c = Synthetic::new(n, 0);
    let pk = baton::generate_random_parameters(c.clone(), &mut rng).expect("setup");
    let path = state
        .join("keys")
        .join(format!("{}.params", c.shape_name()));
    pk.write_file(&path).expect("write key");
    let (bytes, footprint) = (
        pk.heap_bytes(),
        baton::engine::footprint_of(&pk).total_bytes(),
    );
    (pk, bytes, footprint)
}

/// A daemon on the CPU whose auto budget is `budget_bytes` (the host is said to have that much
/// available beyond the margin).
fn daemon(state: &Path, budget_bytes: u64) -> (Service, Arc<Daemon>, Arc<Engine>) {
    let cfg = Config {
        budget_bytes: None,
        margin_bytes: MARGIN,
        synthesis_workers: 1,
        backend: baton::config::BackendChoice::Cpu,
        ..Config::default()
    };
    let available = Arc::new(move || Some(MARGIN + budget_bytes));
    let stages = baton::testing::cpu_stages();
    let engine = Arc::new(Engine::start_with_memory(cfg, stages, available).expect("engine"));
    let journal = Arc::new(Journal::open(&state.join("journal")).expect("journal"));
    let d = Daemon::new(
        engine.clone(),
        journal,
        Keys::new(Arc::new(baton::KeyStore::new()), state.join("keys")),
        0,
    );
    (Service::new(d.clone()), d, engine)
}

fn job(n: usize, seed: u64, synth_delay_ms: u64) -> SubmitProofRequest {
    let body = format!(r#"{{"constraints":{n},"seed":{seed},"synth_delay_ms":{synth_delay_ms}}}"#);
    SubmitProofRequest {
        proof_kind: ProofKind::BatonSynthetic as i32,
        vanilla_proof: body.into_bytes(),
        ..SubmitProofRequest::default()
    }
}

async fn prove(svc: &Service, n: usize, seed: u64) -> AwaitProofResponse {
    let submit = Some(job(n, seed, 0));
    let r = svc.prove(Request::new(ProveRequest { submit })).await;
    r.expect("prove call")
        .into_inner()
        .result
        .expect("a result")
}

async fn preload(svc: &Service, n: usize) {
    let circuit_id = format!("baton-synthetic-{n}");
    let r = svc.preload_srs(Request::new(PreloadSrsRequest { circuit_id }));
    r.await.expect("preloaded");
}

async fn loaded(svc: &Service) -> Vec<String> {
    let st = svc.get_status(Request::new(GetStatusRequest {})).await;
    let mut ids: Vec<String> = st
        .expect("status")
        .into_inner()
        .loaded_srs
        .into_iter()
        .map(|k| k.circuit_id)
        .collect();
    ids.sort();
    ids
}

fn evictions(engine: &Engine, reason: &str) -> String {
    let text = engine.metric_handles().render();
    let name = format!("baton_key_evictions_total{{reason=\"{reason}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&name))
        .unwrap_or("absent")
        .to_string()
}

/// The job's proof verifies against its circuit's inputs and fails against a wrong one.
fn check(pk: &ProvingKey, r: &AwaitProofResponse, n: usize, seed: u64) {
    assert_eq!(r.status(), Ended::Completed, "{}", r.error_message);
    let bytes: &[u8; 192] = r.proof.as_slice().try_into().expect("one proof");
    let proof = Proof::from_bytes(bytes).expect("a proof");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    let inputs = Synthetic::new(n, seed).public_inputs();
    baton::verify(&pvk, &proof, &inputs).expect("verifies");
    let mut wrong = inputs;
    wrong[0] += Scalar::from(1u64);
    assert!(
        baton::verify(&pvk, &proof, &wrong).is_err(),
        "a wrong input verified"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_least_recently_used_idle_key_makes_room_and_no_more() {
    let state = scratch("lru");
    let (_, k1, _) = key(&state, 512);
    let (_, k2, _) = key(&state, 256);
    let (pk3, k3, f3) = key(&state, 1024);
    let (_, k4, f4) = key(&state, 2048);
    // Job 3 fits beside key 2 but not beside keys 1 and 2.
    let budget = f3 + k3 + k2 + k1 / 2;
    assert!(
        f4 + k4 > budget,
        "job 4 does not fit even alone: {f4} + {k4} > {budget}"
    );
    let (svc, _d, engine) = daemon(&state, budget);
    preload(&svc, 512).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    preload(&svc, 256).await;
    assert_eq!(evictions(&engine, "pressure"), "0");

    let r = prove(&svc, 1024, 5).await;
    check(&pk3, &r, 1024, 5);
    assert_eq!(
        loaded(&svc).await,
        ["baton-synthetic-256"],
        "key 1 (least recently used) evicted, key 2 kept, job 3's key gone with its job"
    );
    assert_eq!(evictions(&engine, "pressure"), "1");
    assert_eq!(evictions(&engine, "request"), "0");

    // Job 4 cannot fit however many idle keys go: none is evicted, and it fails saying why.
    let r = prove(&svc, 2048, 1).await;
    assert_eq!(r.status(), Ended::Failed);
    assert!(
        r.error_message.contains("request rejected"),
        "{}",
        r.error_message
    );
    assert_eq!(loaded(&svc).await, ["baton-synthetic-256"]);
    assert_eq!(evictions(&engine, "pressure"), "1");
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&state);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_held_by_a_running_job_is_never_evicted() {
    let state = scratch("held");
    let (pk1, k1, _) = key(&state, 256);
    let (_, k2, _) = key(&state, 512);
    let (pk3, k3, f3) = key(&state, 1024);
    // Job 3 fits beside key 1 but not beside keys 1 and 2.
    let budget = f3 + k3 + k1 + k2 / 2;
    let (svc, d, engine) = daemon(&state, budget);
    preload(&svc, 256).await;
    // A slow job on key 1: it takes key 1 after the preload, and holds it.
    let slow = svc.submit_proof(Request::new(job(256, 3, 1500))).await;
    let slow = slow.expect("submitted").into_inner().job_id;
    let t = Instant::now();
    loop {
        let st = engine.status().await.expect("status");
        let started = |s: &PartitionState| *s != PartitionState::Queued;
        if st.jobs.iter().any(|j| j.partitions.iter().any(started)) {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "the slow job starts");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    preload(&svc, 512).await;
    assert_eq!(d.live_jobs().len(), 1, "the slow job still runs");

    // Key 1 was used longest ago, but its job holds it: key 2 goes.
    let r = prove(&svc, 1024, 7).await;
    check(&pk3, &r, 1024, 7);
    assert_eq!(loaded(&svc).await, ["baton-synthetic-256"]);
    assert_eq!(evictions(&engine, "pressure"), "1");
    let wait = AwaitProofRequest {
        job_id: slow,
        timeout_ms: 60_000,
    };
    let r = svc.await_proof(Request::new(wait)).await;
    check(&pk1, &r.expect("awaited").into_inner(), 256, 3);
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&state);
}

/// Idle keys make way before a key is read, not after: here the new key's file (zeros of the
/// size that does not fit beside both idle keys) cannot even be read, yet the least recently
/// used idle key is already gone when its load fails, and only that one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_keys_make_way_before_a_key_is_read() {
    let state = scratch("before-read");
    let (_, k1, _) = key(&state, 512);
    let (_, k2, _) = key(&state, 256);
    let (_, k3, f3) = key(&state, 1024);
    let budget = f3 + k3 + k2 + k1 / 2;
    // The 1024 key's file: as large as fits beside key 2 alone, and unreadable.
    let c = Synthetic::new(1024, 0);
    let path = state
        .join("keys")
        .join(format!("{}.params", c.shape_name()));
    std::fs::write(&path, vec![0u8; (f3 + k3) as usize]).expect("an unreadable key file");
    let (svc, _d, engine) = daemon(&state, budget);
    preload(&svc, 512).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    preload(&svc, 256).await;
    assert_eq!(evictions(&engine, "pressure"), "0");

    let submit = Some(job(1024, 5, 0));
    let r = svc.prove(Request::new(ProveRequest { submit })).await;
    let r = r
        .expect("prove call")
        .into_inner()
        .result
        .expect("a result");
    assert_eq!(r.status(), Ended::Failed, "the key cannot be read");
    assert_eq!(
        evictions(&engine, "pressure"),
        "1",
        "key 1 was evicted before the read failed"
    );
    assert_eq!(loaded(&svc).await, ["baton-synthetic-256"], "key 2 kept");
    engine.shutdown().await;
    let _ = std::fs::remove_dir_all(&state);
}
