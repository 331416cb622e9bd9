//! The engine end to end on the CPU: real stages, proofs that verify, a wrong input that fails,
//! and a ledger that reads zero afterwards.

use std::sync::Arc;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::{Config, Engine, PreparedVerifyingKey, Request, Scalar};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn engine_proves_a_request_and_reconciles_the_ledger() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let pk = Arc::new(
        baton::generate_random_parameters(Synthetic::new(1 << 9, 0), &mut rng).expect("setup"),
    );
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
        baton::verify(&pvk, p, &inputs).expect("verifies");
        let mut wrong = inputs.clone();
        wrong[1] += Scalar::ONE;
        assert!(baton::verify(&pvk, p, &wrong).is_err());
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
