//! Cross-checks with bellperson: proofs and keys move both ways, wrong inputs fail, bad keys and
//! unsatisfied circuits are rejected with clear errors.

use baton::circuits::{KnownCircuit, MimcChain, Synthetic};
use baton::{Check, Error, PreparedVerifyingKey, Proof, ProvingKey, Scalar};
use bellperson::groth16 as bp;
use blstrs::Bls12;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn key_bytes(pk: &ProvingKey) -> Vec<u8> {
    let mut v = Vec::new();
    pk.write(&mut v).expect("write key");
    v
}

fn to_bellperson_params(pk: &ProvingKey) -> bp::Parameters<Bls12> {
    bp::Parameters::read(&key_bytes(pk)[..], true).expect("bellperson reads our key")
}

fn to_bellperson_proof(p: &Proof) -> bp::Proof<Bls12> {
    bp::Proof::read(&p.to_bytes()[..]).expect("bellperson reads our proof")
}

fn wrong(inputs: &[Scalar]) -> Vec<Scalar> {
    let mut w = inputs.to_vec();
    w[0] += Scalar::ONE;
    w
}

/// Setup on one witness, prove another of the same shape: a key serves every witness.
fn check_ours_with_bellperson<C: KnownCircuit>(setup_circuit: C, circuit: C, seed: u64) {
    let mut r = rng(seed);
    let pk = baton::generate_random_parameters(setup_circuit, &mut r).expect("setup");
    let inputs = circuit.public_inputs();
    let proof = baton::prove(circuit, &pk, &mut r).expect("prove");

    let bpvk = bp::prepare_verifying_key(&to_bellperson_params(&pk).vk);
    let bproof = to_bellperson_proof(&proof);
    assert!(
        bp::verify_proof(&bpvk, &bproof, &inputs).expect("verify"),
        "bellperson rejects our proof"
    );
    assert!(
        !bp::verify_proof(&bpvk, &bproof, &wrong(&inputs)).expect("verify"),
        "bellperson accepts a wrong input"
    );

    let pvk = PreparedVerifyingKey::new(&pk.vk);
    baton::verify(&pvk, &proof, &inputs).expect("our verifier accepts our proof");
    assert!(matches!(
        baton::verify(&pvk, &proof, &wrong(&inputs)),
        Err(Error::VerificationFailed)
    ));
}

#[test]
fn our_synthetic_proof_verifies_with_bellperson() {
    check_ours_with_bellperson(Synthetic::new(1 << 10, 3), Synthetic::new(1 << 10, 4), 10);
}

#[test]
fn our_mimc_proof_verifies_with_bellperson() {
    check_ours_with_bellperson(
        MimcChain::with_constraints(700, 4),
        MimcChain::with_constraints(700, 5),
        11,
    );
}

#[test]
fn bellperson_key_and_proof_work_with_baton() {
    let circuit = Synthetic::new(1 << 9, 5);
    let inputs = circuit.public_inputs();
    let mut r = rng(12);
    let params = bp::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut r)
        .expect("bellperson setup");
    let mut bytes = Vec::new();
    params.write(&mut bytes).expect("write");
    let pk = ProvingKey::from_bytes(&bytes, Check::Full).expect("we read bellperson's key");
    assert_eq!(key_bytes(&pk), bytes, "re-encoding a key is byte-identical");

    // Our proof with bellperson's key, checked by both verifiers.
    let proof = baton::prove(circuit.clone(), &pk, &mut r).expect("prove");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    baton::verify(&pvk, &proof, &inputs).expect("ours verifies");
    let bpvk = bp::prepare_verifying_key(&params.vk);
    assert!(bp::verify_proof(&bpvk, &to_bellperson_proof(&proof), &inputs).expect("verify"));

    // Bellperson's proof, checked by our verifier, through the byte encoding.
    let bproof = bp::create_random_proof(circuit, &params, &mut r).expect("bellperson proves");
    let mut pbytes = Vec::new();
    bproof.write(&mut pbytes).expect("write proof");
    let ours = Proof::read(&pbytes[..]).expect("we read bellperson's proof");
    baton::verify(&pvk, &ours, &inputs).expect("bellperson's proof verifies with baton");
    assert!(baton::verify(&pvk, &ours, &wrong(&inputs)).is_err());
}

#[test]
fn bellperson_proves_with_our_key() {
    let circuit = MimcChain::with_constraints(300, 6);
    let inputs = circuit.public_inputs();
    let mut r = rng(13);
    let pk = baton::generate_random_parameters(circuit.clone(), &mut r).expect("setup");
    let params = to_bellperson_params(&pk);
    let bproof =
        bp::create_random_proof(circuit, &params, &mut r).expect("bellperson proves with our key");
    let ours = Proof::read(&bproof_bytes(&bproof)[..]).expect("decode");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    baton::verify(&pvk, &ours, &inputs).expect("verifies");
    assert!(baton::verify(&pvk, &ours, &wrong(&inputs)).is_err());
}

fn bproof_bytes(p: &bp::Proof<Bls12>) -> Vec<u8> {
    let mut v = Vec::new();
    p.write(&mut v).expect("write");
    v
}

#[test]
fn unsatisfied_circuit_names_its_constraint() {
    let mut r = rng(14);
    let good = Synthetic::new(1 << 9, 7);
    let pk = baton::generate_random_parameters(good.clone(), &mut r).expect("setup");
    let bad = Synthetic {
        break_at: Some(77),
        ..good
    };
    match baton::prove(bad, &pk, &mut r) {
        Err(Error::Unsatisfied { index, .. }) => assert_eq!(index, 77),
        other => panic!("expected Unsatisfied at 77, got {other:?}"),
    }
}

#[test]
fn bad_key_files_give_clear_errors() {
    let mut r = rng(15);
    let circuit = Synthetic::new(1 << 8, 8);
    let pk = baton::generate_random_parameters(circuit.clone(), &mut r).expect("setup");
    let bytes = key_bytes(&pk);

    let cut = &bytes[..bytes.len() - 10];
    let err = ProvingKey::from_bytes(cut, Check::Full).expect_err("truncated key must fail");
    assert!(err.to_string().contains("truncated"), "{err}");

    let mut corrupt = bytes.clone();
    let at = bytes.len() / 2;
    corrupt[at] ^= 0x55;
    let err = ProvingKey::from_bytes(&corrupt, Check::Full).expect_err("corrupt key must fail");
    assert!(matches!(err, Error::Malformed { .. }), "{err}");

    let mut extra = bytes.clone();
    extra.push(0);
    assert!(ProvingKey::from_bytes(&extra, Check::Full).is_err());

    let other = Synthetic::new(1 << 9, 8);
    match baton::prove(other, &pk, &mut r) {
        Err(Error::KeyMismatch { what, key, circuit }) => assert_ne!(key, circuit, "{what}"),
        other => panic!("expected KeyMismatch, got {other:?}"),
    }
}

#[test]
fn key_file_round_trip_through_disk() {
    let mut r = rng(16);
    let circuit = MimcChain::with_constraints(100, 9);
    let pk = baton::generate_random_parameters(circuit, &mut r).expect("setup");
    let dir = std::env::temp_dir().join(format!("baton-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("k.params");
    pk.write_file(&path).expect("write");
    assert_eq!(ProvingKey::read(&path).expect("read checked"), pk);
    assert_eq!(
        ProvingKey::read_with(&path, Check::None).expect("read unchecked"),
        pk
    );
    std::fs::remove_dir_all(&dir).ok();
}
