//! Embedding the engine in a small orchestrator loop: many requests of several partitions each,
//! submitted from several client threads, with status and metrics read while it runs.
//!
//! `cargo run --release --example 04-orchestrator`

use std::sync::Arc;
use std::time::{Duration, Instant};

use baton::circuits::{KnownCircuit, Synthetic};
use baton::{Config, Engine, PreparedVerifyingKey, Request};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let constraints = 1 << 12;
    let pk = Arc::new(baton::generate_random_parameters(
        Synthetic::new(constraints, 0),
        &mut rand::rngs::OsRng,
    )?);
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    let cfg = Config {
        budget_bytes: Some(256 << 20),
        backend: baton::config::BackendChoice::Cpu,
        ..Config::load()?
    };
    let engine = Engine::start(cfg)?;
    let started = Instant::now();
    let (requests, partitions) = (12u64, 3u64);
    let verified = std::thread::scope(|s| {
        let clients: Vec<_> = (0..requests)
            .map(|r| {
                let (engine, pk, pvk) = (&engine, pk.clone(), &pvk);
                s.spawn(move || -> usize {
                    let circuits: Vec<Synthetic> = (0..partitions)
                        .map(|p| Synthetic::new(constraints, 1 + r * partitions + p))
                        .collect();
                    match engine.prove_blocking(Request::new(pk, circuits.clone())) {
                        Ok(proofs) => proofs
                            .iter()
                            .zip(&circuits)
                            .filter(|(p, c)| baton::verify(pvk, p, &c.public_inputs()).is_ok())
                            .count(),
                        Err(e) => {
                            eprintln!("request {r} failed: {e}");
                            0
                        }
                    }
                })
            })
            .collect();
        while !clients.iter().all(|c| c.is_finished()) {
            if let Ok(st) = engine.status_blocking() {
                println!(
                    "jobs {:>2}  queued {:>2}  ledger {:>6.1} MiB  synthesized waiting {}",
                    st.jobs.len(),
                    st.queued,
                    st.ledger.charged_bytes as f64 / (1 << 20) as f64,
                    st.synthesized_alive
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        clients
            .into_iter()
            .map(|c| c.join().unwrap_or(0))
            .sum::<usize>()
    });
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{verified}/{} proofs verified in {secs:.1} s",
        requests * partitions
    );
    let text = engine.metric_handles().render();
    for line in text
        .lines()
        .filter(|l| l.starts_with("baton_proofs_total") || l.starts_with("baton_ledger_peak"))
    {
        println!("{line}");
    }
    engine.shutdown_blocking();
    Ok(())
}
