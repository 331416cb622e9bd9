//! Throughput of the engine with 1 and with N GPU actors on the same stream of requests.
//!
//! Each run starts a fresh engine with `gpu.devices = 0..k`, keeps `--concurrent` requests in
//! flight (a steady backlog, as an orchestrator would) until `--requests` requests of
//! `--partitions` synthetic PoRep-like circuits of 2^`--log` constraints are proved, and prints
//! proofs per hour, each device's busy fraction, peak RSS and peak ledger bytes against the
//! budget.
//!
//! The key is NOT a real setup at these sizes: its points are a few thousand random points
//! tiled to the shape of the circuit (a real 2^24 setup takes far longer than a device lease).
//! The work per partition is exactly a real proof's, but the proofs cannot verify; correctness is
//! shown by the conformance tests at sizes where a real key is made. Use `--verify` with a small
//! `--log` to make a real key and verify every proof.
//!
//! `cargo run --release --features cuda --example 05-multi-gpu -- --log 24 --devices 1,2`

use std::sync::Arc;
use std::time::Instant;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::config::{parse_bytes, BackendChoice, Bg2Device};
use baton::{Config, Engine, PreparedVerifyingKey, Request};
use clap::Parser;

#[derive(Parser)]
struct Args {
    /// log2 of the constraints per partition.
    #[arg(long, default_value_t = 14)]
    log: u32,
    /// Partitions per request.
    #[arg(long, default_value_t = 10)]
    partitions: usize,
    /// Requests per run.
    #[arg(long, default_value_t = 3)]
    requests: usize,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 2)]
    concurrent: usize,
    /// GPU actor counts to compare, e.g. "1,2".
    #[arg(long, default_value = "1,2")]
    devices: String,
    /// Synthesis workers (default: the number of CPUs).
    #[arg(long)]
    workers: Option<usize>,
    /// B_G2 workers.
    #[arg(long, default_value_t = 2)]
    bg2_workers: usize,
    /// Ledger budget.
    #[arg(long, default_value = "32GiB")]
    budget: String,
    /// bg2.device: where the B_G2 MSM runs (auto, cpu or gpu).
    #[arg(long, default_value = "auto")]
    bg2_device: String,
    /// gpu.backend: auto, cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// Make a real key and verify every proof (small sizes only).
    #[arg(long)]
    verify: bool,
    /// `[gpu]` knobs for the engine as key=value pairs joined by commas, e.g.
    /// "warm_keys=false" (the defaults when empty).
    #[arg(long, default_value = "")]
    gpu: String,
}

fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .map_or(0, |kib: u64| kib * 1024)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = Args::parse();
    let n = 1usize << a.log;
    let t = Instant::now();
    let pk = Arc::new(if a.verify {
        baton::generate_random_parameters(Synthetic::new(n, 0), &mut rand::rngs::OsRng)?
    } else {
        baton::testing::tiled_key(&Synthetic::new(n, 0))?
    });
    eprintln!(
        "key for 2^{} ready in {:.1?} ({})",
        a.log,
        t.elapsed(),
        if a.verify {
            "real setup"
        } else {
            "tiled points"
        }
    );
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    let backend = match a.backend.as_str() {
        "cpu" => BackendChoice::Cpu,
        "cuda" => BackendChoice::Cuda,
        _ => BackendChoice::Auto,
    };
    let budget = parse_bytes(&a.budget).ok_or("--budget: not a size")?;
    let mut rows = Vec::new();
    for k in a
        .devices
        .split(',')
        .filter_map(|s| s.trim().parse::<usize>().ok())
    {
        let cfg = Config {
            budget_bytes: Some(budget),
            gpu_devices: (0..k).collect(),
            backend,
            bg2_workers: a.bg2_workers,
            bg2_device: match a.bg2_device.as_str() {
                "auto" => Bg2Device::Auto,
                "cpu" => Bg2Device::Cpu,
                "gpu" => Bg2Device::Gpu,
                other => {
                    return Err(
                        format!("--bg2-device: expected auto, cpu or gpu, got {other:?}").into(),
                    )
                }
            },
            synthesis_workers: a.workers.unwrap_or(Config::default().synthesis_workers),
            gpu: baton::gpu::options::variant(&Config::default().gpu, &a.gpu)
                .map_err(|e| format!("--gpu: {e}"))?,
            // The rest (synthesis.pack_witness, synthesis.nice, ...) from BATON_* variables.
            ..Config::load()?
        };
        let engine = Engine::start(cfg)?;
        let name = engine.backend_name().to_string();
        let started = Instant::now();
        // A steady backlog: `concurrent` clients, each submitting its next request as soon as
        // the previous one is answered, so the engine always has work queued (submitting in
        // waves would drain the pipeline between waves and starve the GPUs).
        let next = std::sync::atomic::AtomicUsize::new(0);
        // When each request was answered and with how many proofs: the steady rate leaves out
        // the pipeline fill before the first answer (synthesis of the first partitions).
        let done = std::sync::Mutex::new(Vec::<(Instant, usize)>::new());
        let counts: Vec<Result<(usize, usize), baton::EngineError>> = std::thread::scope(|s| {
            let clients: Vec<_> = (0..a.concurrent.max(1))
                .map(|_| {
                    let (engine, pk, pvk, next, a, done) =
                        (&engine, pk.clone(), &pvk, &next, &a, &done);
                    s.spawn(move || -> Result<(usize, usize), baton::EngineError> {
                        let (mut proofs, mut verified) = (0, 0);
                        loop {
                            let r = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if r >= a.requests {
                                return Ok((proofs, verified));
                            }
                            let batch: Vec<Synthetic> = (0..a.partitions)
                                .map(|p| Synthetic::new(n, 1 + (r * a.partitions + p) as u64))
                                .collect();
                            let ps =
                                engine.prove_blocking(Request::new(pk.clone(), batch.clone()))?;
                            proofs += ps.len();
                            if let Ok(mut d) = done.lock() {
                                d.push((Instant::now(), ps.len()));
                            }
                            if a.verify {
                                verified += ps
                                    .iter()
                                    .zip(&batch)
                                    .filter(|(p, c)| {
                                        baton::verify(pvk, p, &c.public_inputs()).is_ok()
                                    })
                                    .count();
                            }
                        }
                    })
                })
                .collect();
            clients
                .into_iter()
                .map(|c| c.join().unwrap_or(Err(baton::EngineError::Stopped)))
                .collect()
        });
        let (mut proofs, mut verified) = (0usize, 0usize);
        for c in counts {
            let (p, v) = c?;
            proofs += p;
            verified += v;
        }
        let secs = started.elapsed().as_secs_f64();
        let mut done = done.into_inner().unwrap_or_default();
        done.sort_by_key(|d| d.0);
        let steady = match (done.first(), done.last()) {
            (Some(first), Some(last)) if last.0 > first.0 => {
                let after: usize = done[1..].iter().map(|d| d.1).sum();
                format!(
                    "{:.0}",
                    after as f64 * 3600.0 / (last.0 - first.0).as_secs_f64()
                )
            }
            _ => "–".into(),
        };
        let st = engine.status_blocking()?;
        let means: Vec<String> = engine
            .stage_means()
            .iter()
            .map(|(s, v)| format!("{s} {v:.2}"))
            .collect();
        eprintln!("{k} GPU actor(s): stage means (s): {}", means.join(", "));
        let busy: Vec<String> = engine
            .metrics()
            .gather()
            .iter()
            .filter(|f| f.get_name() == "baton_gpu_busy_seconds_total")
            .flat_map(|f| f.get_metric().to_vec())
            .map(|m| {
                let label = m
                    .get_label()
                    .first()
                    .map_or("?", |l| l.get_value())
                    .to_string();
                format!("{label} {:.0}%", 100.0 * m.get_counter().get_value() / secs)
            })
            .collect();
        rows.push(format!(
            "| {k} | {name} | {proofs} | {secs:.1} s | {:.0} | {steady} | {} | {:.1} GiB | {:.1} / {:.1} GiB | {} |",
            proofs as f64 * 3600.0 / secs,
            busy.join(", "),
            peak_rss_bytes() as f64 / (1u64 << 30) as f64,
            st.ledger.peak_charged_bytes as f64 / (1u64 << 30) as f64,
            st.ledger.budget_bytes as f64 / (1u64 << 30) as f64,
            if a.verify {
                format!("{verified}/{proofs}")
            } else {
                "n/a (tiled key)".into()
            },
        ));
        engine.shutdown_blocking();
    }
    println!(
        "\n2^{} constraints, {} requests x {} partitions, {} in flight, B_G2 on the {}",
        a.log, a.requests, a.partitions, a.concurrent, a.bg2_device
    );
    println!("| GPU actors | backend | proofs | wall | proofs/hour | steady proofs/hour (after the first answer) | busy per device | peak RSS (process, cumulative) | peak ledger / budget | verified |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    Ok(())
}
