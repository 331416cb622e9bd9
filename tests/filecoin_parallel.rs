//! Parallel witness generation on the real 2 KiB circuits (sectors sealed offline, parameters
//! from `$BATON_TEST_CACHE`): the PoRep partition the engine gets runs its challenges' witness
//! code in parallel, and baton's witness-only system is extensible, so the fallback-PoSt circuit
//! runs its sectors in parallel through it. Each witness must equal, element for element, the
//! one the same circuit gives when synthesized in one sequence (packed as bits by the tasks or
//! not), and a recording of another
//! circuit must be refused by its counts. (The whole C2 through this path, checked with
//! `verify_seal`, is in tests/filecoin.rs.)
#![cfg(feature = "filecoin")]

use std::path::PathBuf;

use baton::circuits::Synthetic;
use baton::compiled::{self, CompiledError, WitnessCs};
use baton::filecoin::testing::{
    all_circuits, ensure_params, porep_partition_pair, post_vanilla, randomness, seal_sector,
    use_test_cache,
};
use baton::filecoin::{CircuitKind, Filecoin, RegisteredPoStProof, RegisteredSealProof};
use baton::groth16::prover::{Abc, Witness};
use bellperson::ConstraintSystem;
use blstrs::Scalar;

const SECTOR: u64 = 2048;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("baton-par-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn params(kinds: &[CircuitKind]) {
    let circuits: Vec<_> = all_circuits(SECTOR)
        .into_iter()
        .filter(|c| kinds.contains(&c.kind))
        .collect();
    ensure_params(&use_test_cache(), &circuits).expect("test parameters");
}

fn same_witness(got: &Witness, want: &Witness, what: &str) {
    assert_eq!(got.inputs.len(), want.inputs.len(), "{what}: input count");
    assert_eq!(got.aux.len(), want.aux.len(), "{what}: aux count");
    if let Some(i) = (0..got.inputs.len()).find(|&i| got.inputs[i] != want.inputs[i]) {
        panic!("{what}: input {i} differs");
    }
    if let Some(i) = (0..got.aux.len()).find(|&i| got.aux[i] != want.aux[i]) {
        panic!("{what}: aux {i} differs");
    }
}

fn same_abc(got: &Abc, want: &Abc, rows: usize, what: &str) {
    assert!(
        got.a[..rows] == want.a[..rows]
            && got.b[..rows] == want.b[..rows]
            && got.c[..rows] == want.c[..rows],
        "{what}: a/b/c differ"
    );
}

#[test]
fn porep_parallel_witness_equals_the_sequential_one() {
    params(&[CircuitKind::Porep]);
    let dir = scratch("porep");
    let s = seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1010, 11, 21).expect("seal");
    let pair = porep_partition_pair(&s).expect("partition 0");
    let (parallel, bare, challenges) = (pair.parallel, pair.bare, pair.challenges);
    assert!(
        challenges >= 2,
        "{challenges} challenges: nothing to run in parallel"
    );

    // The recording is made by the bare circuit, in one sequence, as filecoin-proofs runs it.
    let (rec, rec_abc, rec_w) = bare.record().expect("recorded");
    let sequential = bare.synthesize_witness(&rec).expect("sequential witness");
    same_witness(&sequential, &rec_w, "the sequential WitnessCs witness");
    let par = parallel.synthesize_witness(&rec).expect("parallel witness");
    same_witness(&par, &sequential, "the parallel witness");
    // Packed by each challenge's task as it goes: the same values, never held plain.
    let mut packed = parallel
        .synthesize_packed_witness(&rec)
        .expect("packed witness");
    assert!(
        packed.aux.is_empty() && packed.packed.is_some(),
        "kept packed"
    );
    assert!(packed.aux_bytes() * 20 < (sequential.aux.len() * 32) as u64);
    packed.expand();
    same_witness(&packed, &sequential, "the packed parallel witness");
    assert!(
        packed.a_aux_density == sequential.a_aux_density
            && packed.b_aux_density == sequential.b_aux_density,
        "densities from the recording"
    );
    let (abc, par_c) = parallel
        .synthesize_compiled(&rec)
        .expect("parallel compiled");
    same_witness(&par_c, &sequential, "the parallel compiled witness");
    same_abc(
        &abc,
        &rec_abc,
        rec.shape().rows(),
        "the parallel compiled path",
    );

    // Another circuit's recording: refused by the counts, never a wrong witness.
    let (other, _, _) = compiled::record(Synthetic::new(1 << 10, 3)).expect("other recording");
    match parallel.synthesize_witness(&other) {
        Err(CompiledError::Diverged { .. }) => {}
        got => panic!("expected a divergence, got {:?}", got.err()),
    }
    match parallel.synthesize_packed_witness(&other) {
        Err(CompiledError::Diverged { .. }) => {}
        got => panic!("expected a divergence, got {:?}", got.err()),
    }
    match parallel.synthesize_compiled(&other) {
        Err(CompiledError::Diverged { .. }) => {}
        got => panic!("expected a divergence, got {:?}", got.err()),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn post_witness_through_the_extensible_system_equals_the_sequential_one() {
    assert!(<WitnessCs as ConstraintSystem<Scalar>>::is_extensible());
    params(&[CircuitKind::WindowPost]);
    let dir = scratch("post");
    let s = seal_sector(&dir, RegisteredSealProof::StackedDrg2KiBV1_1, 1011, 12, 22).expect("seal");
    let p = RegisteredPoStProof::StackedDrgWindow2KiBV1_2;
    let r = randomness(9);
    let vanilla = vec![post_vanilla(&s, p, &r).expect("vanilla proof")];
    let fil = Filecoin::from_env();
    let job = fil
        .window_post(p, &r, s.prover_id, &vanilla, None)
        .expect("job");
    let pk = job.request.key().clone();
    let circuit = job.request.circuits()[0].clone();
    // The recording system and full synthesis are not extensible: PoSt runs its sectors in one
    // sequence there; WitnessCs takes the parallel branch (a partition holds two sectors).
    let (rec, _, rec_w) = circuit.record().expect("recorded");
    let (_, full) = circuit.synthesize(&pk).expect("full synthesis");
    same_witness(&rec_w, &full, "the recorded witness");
    let par = circuit
        .synthesize_witness(&rec)
        .expect("witness through WitnessCs");
    same_witness(&par, &full, "the extensible WitnessCs witness");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The extension rule on its own: a sub-system appended after its constant one, counts summed.
#[test]
fn witness_systems_extend_in_order() {
    let one = |v: u64| Scalar::from(v);
    // One aux value and two constraints already there.
    let mut extended = WitnessCs::with_room(compiled::Shape {
        inputs: 1,
        aux: 0,
        constraints: 0,
    });
    extended.aux.push(one(7));
    extended.constraints = 2;
    let sub = WitnessCs {
        inputs: vec![Scalar::from(1u64), one(10), one(11)],
        aux: vec![one(20), one(21), one(22)],
        constraints: 5,
    };
    extended.extend(&sub);
    assert_eq!(extended.inputs, vec![Scalar::from(1u64), one(10), one(11)]);
    assert_eq!(extended.aux, vec![one(7), one(20), one(21), one(22)]);
    assert_eq!(extended.constraints, 7);
}
