//! baton vs bellperson on the CPU: the same synthetic PoRep-like circuits and the same key,
//! proved alternately, printing the median time of each and the throughput ratio.
//!
//! `cargo bench --bench vs_bellperson` (env: BATON_BENCH_SIZES="14,16,18", BATON_BENCH_RUNS=5).

use std::time::Instant;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::{PreparedVerifyingKey, ProvingKey};
use bellperson::groth16 as bp;
use blstrs::Bls12;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

mod common;
use common::{env_list, median};

fn key_for(log: u32) -> ProvingKey {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-keys");
    let path = dir.join(format!("synthetic-{log}.params"));
    if let Ok(pk) = ProvingKey::read_with(&path, baton::Check::None) {
        return pk;
    }
    let pk = baton::generate_random_parameters(
        Synthetic::new(1 << log, 0),
        &mut ChaCha8Rng::seed_from_u64(log as u64),
    )
    .expect("setup");
    std::fs::create_dir_all(&dir).expect("key dir");
    pk.write_file(&path).expect("write key");
    pk
}

fn main() {
    let sizes = env_list("BATON_BENCH_SIZES", &[14, 15, 16, 17, 18]);
    let runs = env_list("BATON_BENCH_RUNS", &[5])[0].max(1) as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let mut rows = Vec::new();
    for log in sizes {
        let pk = key_for(log);
        let mut bytes = Vec::new();
        pk.write(&mut bytes).expect("encode");
        let params =
            bp::Parameters::<Bls12>::read(&bytes[..], false).expect("bellperson reads the key");
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for run in 0..runs + 1 {
            let circuit = Synthetic::new(1 << log, 1000 + run as u64);
            let inputs = circuit.public_inputs();
            let t = Instant::now();
            let proof = baton::prove(circuit.clone(), &pk, &mut rng).expect("baton proves");
            let d_ours = t.elapsed();
            let t = Instant::now();
            let bproof =
                bp::create_random_proof(circuit, &params, &mut rng).expect("bellperson proves");
            let d_theirs = t.elapsed();
            baton::verify(&pvk, &proof, &inputs).expect("baton proof verifies");
            let mut b = Vec::new();
            bproof.write(&mut b).expect("encode");
            let bp_as_ours = baton::Proof::read(&b[..]).expect("decode");
            baton::verify(&pvk, &bp_as_ours, &inputs).expect("bellperson proof verifies");
            if run > 0 {
                // run 0 warms caches and thread pools
                ours.push(d_ours);
                theirs.push(d_theirs);
            }
        }
        let (o, t) = (median(ours), median(theirs));
        let ratio = t.as_secs_f64() / o.as_secs_f64();
        eprintln!("2^{log}: baton {o:.2?} bellperson {t:.2?} ratio {ratio:.2}");
        rows.push((log, o, t, ratio));
    }
    println!("\n| constraints | baton median | bellperson median | throughput ratio (bellperson/baton time) |");
    println!("|---|---|---|---|");
    for (log, o, t, r) in rows {
        println!("| 2^{log} | {o:.3?} | {t:.3?} | {r:.2}x |");
    }
}
