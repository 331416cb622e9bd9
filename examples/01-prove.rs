//! One proof on the CPU, no actors: make a key, prove, verify, and check a wrong input fails.
//!
//! `cargo run --release --example 01-prove`

use baton::circuits::{KnownCircuit, MimcChain};
use baton::{PreparedVerifyingKey, Scalar};
use ff::Field;

fn main() -> Result<(), baton::Error> {
    let mut rng = rand::rngs::OsRng;
    let circuit = MimcChain::with_constraints(1 << 12, 1);
    let pk = baton::generate_random_parameters(circuit.clone(), &mut rng)?;
    let inputs = circuit.public_inputs();
    let proof = baton::prove(circuit, &pk, &mut rng)?;
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    baton::verify(&pvk, &proof, &inputs)?;
    println!(
        "proof ({} bytes) verifies: {}",
        baton::groth16::proof::PROOF_BYTES,
        hex::encode(proof.to_bytes())
    );
    let wrong = vec![inputs[0] + Scalar::ONE];
    assert!(baton::verify(&pvk, &proof, &wrong).is_err());
    println!("and a wrong digest is rejected");
    Ok(())
}
