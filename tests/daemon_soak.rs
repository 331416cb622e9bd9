//! Load soak of `baton serve` (ignored by default; it takes minutes): 1,000 proofs of the
//! built-in 2^10 circuit from 16 concurrent gRPC clients, every proof verified, the daemon's RSS
//! sampled throughout. Prints requests/s and RSS after warm-up and at the end.
//!
//! `cargo test --release --all-features --test daemon_soak -- --ignored --nocapture`
//! (`BATON_SOAK_JOBS`, `BATON_SOAK_CLIENTS` change the counts).

#[path = "daemon/harness.rs"]
mod harness;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::server::proto::proving_engine_client::ProvingEngineClient;
use baton::server::proto::{await_proof_response, ProofKind, ProveRequest, SubmitProofRequest};
use baton::{Check, PreparedVerifyingKey, Proof, ProvingKey};
use harness::{config, scratch, Daemon};

fn rss_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "a soak of minutes; run with --ignored --nocapture"]
fn thousand_jobs_from_sixteen_clients() {
    let jobs = env_count("BATON_SOAK_JOBS", 1000);
    let clients = env_count("BATON_SOAK_CLIENTS", 16);
    let dir = scratch("soak");
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let toml = config("").replace("workers = 1", &format!("workers = {cores}"));
    let d = Daemon::start(&dir, &toml, "127.0.0.1:0").expect("daemon starts");
    let pid = d.pid().expect("running");
    let samples: Arc<Mutex<Vec<(f64, u64)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (samples, stop) = (samples.clone(), stop.clone());
        std::thread::spawn(move || {
            let t = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let kib = rss_kib(pid, "VmRSS:");
                samples
                    .lock()
                    .expect("samples")
                    .push((t.elapsed().as_secs_f64(), kib));
                std::thread::sleep(Duration::from_millis(250));
            }
        })
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let next = Arc::new(AtomicUsize::new(0));
    let addr = format!("http://{}", d.grpc);
    let started = Instant::now();
    let results: Vec<(u64, Vec<u8>)> = rt.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let (next, addr) = (next.clone(), addr.clone());
            tasks.push(tokio::spawn(async move {
                let mut c = ProvingEngineClient::connect(addr).await.expect("connect");
                let mut got = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= jobs {
                        return got;
                    }
                    let seed = 1000 + i as u64;
                    let body = format!("{{\"constraints\":1024,\"seed\":{seed}}}");
                    let submit = SubmitProofRequest {
                        request_id: format!("soak-{i}"),
                        proof_kind: ProofKind::BatonSynthetic as i32,
                        vanilla_proof: body.into_bytes(),
                        ..SubmitProofRequest::default()
                    };
                    let r = c
                        .prove(ProveRequest {
                            submit: Some(submit),
                        })
                        .await
                        .expect("prove")
                        .into_inner()
                        .result
                        .expect("result");
                    assert_eq!(
                        r.status(),
                        await_proof_response::Status::Completed,
                        "{}",
                        r.error_message
                    );
                    got.push((seed, r.proof));
                }
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.expect("client task"));
        }
        all
    });
    let secs = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let peak_kib = rss_kib(pid, "VmHWM:");
    assert_eq!(results.len(), jobs);
    let pk = ProvingKey::read_with(
        d.state
            .join("keys")
            .join(format!("{}.params", Synthetic::new(1024, 0).shape_name())),
        Check::None,
    )
    .expect("key");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (seed, bytes) in &results {
        let arr: &[u8; 192] = bytes.as_slice().try_into().expect("one proof");
        let proof = Proof::from_bytes(arr).expect("proof");
        let c = Synthetic::new(1024, *seed);
        baton::verify(&pvk, &proof, &c.public_inputs()).expect("verifies");
        let mut wrong = c.public_inputs();
        wrong[1] += baton::Scalar::from(1u64);
        assert!(baton::verify(&pvk, &proof, &wrong).is_err());
    }
    drop(d);
    // The reference in the same run: the same proofs through an in-process Engine (same
    // config, same key, 16 threads each proving one-circuit requests), no gRPC, no journal.
    let engine_secs = {
        let cfg = baton::Config::from_toml(&toml).expect("config");
        let engine = baton::Engine::start(cfg).expect("engine");
        let pk = Arc::new(pk.clone());
        let next = AtomicUsize::new(0);
        let t = Instant::now();
        std::thread::scope(|sc| {
            for _ in 0..clients {
                sc.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= jobs {
                        return;
                    }
                    let c = Synthetic::new(1024, 1000 + i as u64);
                    let r = engine.prove_blocking(baton::Request::new(pk.clone(), vec![c]));
                    assert_eq!(r.map(|p| p.len()).ok(), Some(1));
                });
            }
        });
        let secs = t.elapsed().as_secs_f64();
        engine.shutdown_blocking();
        secs
    };
    let s = samples.lock().expect("samples").clone();
    let at = |frac: f64| {
        let t = secs * frac;
        s.iter().find(|(x, _)| *x >= t).map_or(0, |(_, k)| *k)
    };
    let (warm, end) = (at(0.2), s.last().map_or(0, |x| x.1));
    println!("| jobs | clients | wall s | requests/s | in-process engine proofs/s | ratio | RSS after 20% MiB | RSS at end MiB | peak RSS MiB |");
    println!(
        "| {jobs} | {clients} | {secs:.1} | {:.1} | {:.1} | {:.2} | {:.0} | {:.0} | {:.0} |",
        jobs as f64 / secs,
        jobs as f64 / engine_secs,
        engine_secs / secs,
        warm as f64 / 1024.0,
        end as f64 / 1024.0,
        peak_kib as f64 / 1024.0
    );
    // Flat after warm-up: the end within 25 % (and 64 MiB) of the level at 20 %.
    assert!(
        (end as f64) < warm as f64 * 1.25 + 65536.0,
        "RSS grew from {warm} KiB to {end} KiB"
    );
}
