//! Compiled circuits: the recorded R1CS and witness-only synthesis give exactly the a/b/c,
//! witness and densities of full synthesis; proofs through them verify with bellperson (and a
//! wrong input fails); a circuit that diverges from its recording is caught; the cache file
//! round-trips and refuses truncated, corrupt, foreign and mismatched files by name.

use baton::circuits::{KnownCircuit, MimcChain, Synthetic};
use baton::compiled::{self, CoeffIndices, CompiledError, KeyTag, Recording};
use baton::groth16::cs::ProvingAssignment;
use baton::groth16::prover::{self, Abc, Witness};
use baton::{CpuBackend, ProvingKey, Scalar};
use bellperson::groth16 as bp;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Bls12;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn full(circuit: impl Circuit<Scalar>) -> (Abc, Witness) {
    ProvingAssignment::synthesize(circuit)
        .expect("full synthesis")
        .into_parts()
}

fn assert_same(what: &str, got: &(Abc, Witness), want: &(Abc, Witness)) {
    let ((ga, gw), (wa, ww)) = (got, want);
    assert!(
        ga.a == wa.a && ga.b == wa.b && ga.c == wa.c,
        "{what}: a/b/c differ"
    );
    assert_eq!(gw.inputs, ww.inputs, "{what}: inputs");
    assert_eq!(gw.aux, ww.aux, "{what}: aux");
    assert_eq!(gw.a_aux_density, ww.a_aux_density, "{what}: A aux density");
    assert_eq!(
        gw.b_input_density, ww.b_input_density,
        "{what}: B input density"
    );
    assert_eq!(gw.b_aux_density, ww.b_aux_density, "{what}: B aux density");
}

/// Records one witness of a shape, then synthesizes another witness-only; both must equal
/// full synthesis of the same circuit.
fn check_matches_full<C: KnownCircuit>(make: impl Fn(u64) -> C) {
    let (recording, abc, w) = compiled::record(make(1)).expect("record");
    assert_same("recording pass", &(abc, w), &full(make(1)));
    let got = compiled::synthesize(make(2), &recording).expect("witness-only");
    assert_same("witness-only pass", &got, &full(make(2)));
    assert!(got.0.a.capacity() >= recording.shape().domain_size());
}

#[test]
fn synthetic_matches_full_synthesis_at_several_sizes() {
    for log in [6, 9, 12, 15] {
        check_matches_full(|seed| Synthetic::new(1 << log, seed));
    }
    // Not a power of two, and more public inputs.
    check_matches_full(|seed| Synthetic {
        public_inputs: 7,
        ..Synthetic::new(3000, seed)
    });
}

#[test]
fn mimc_matches_full_synthesis() {
    check_matches_full(|seed| MimcChain::with_constraints(2001, seed));
}

#[test]
fn coefficients_are_deduplicated_into_a_small_table() {
    let (rec, _, _) = compiled::record(Synthetic::new(1 << 12, 0)).unwrap();
    // ±1, 2 and the packing powers 2^1..2^7, plus the dense rows' step constants.
    assert!(
        rec.coeffs().len() < rec.terms() / 10,
        "{} coefficients",
        rec.coeffs().len()
    );
    for m in rec.matrices() {
        assert_eq!(
            m.coeffs().width(),
            CoeffIndices::width_for(rec.coeffs().len())
        );
    }
    let (rec, _, _) = compiled::record(MimcChain::with_constraints(601, 0)).unwrap();
    // Every round has its own constant: more than a byte can index.
    assert!(rec.coeffs().len() > 256);
    assert_eq!(rec.matrices()[0].coeffs().width(), 2);
}

fn key_for<C: Circuit<Scalar>>(c: C, seed: u64) -> ProvingKey {
    baton::generate_random_parameters(c, &mut ChaCha8Rng::seed_from_u64(seed)).expect("setup")
}

fn prove_parts(pk: &ProvingKey, (mut abc, w): (Abc, Witness)) -> baton::Proof {
    prover::check_shape(pk, &abc, &w).expect("compiled synthesis fits the key");
    let h = prover::compute_h(&CpuBackend, &mut abc).expect("H");
    let g1 = prover::g1_msms(&CpuBackend, pk, &w, &h).expect("G1");
    let g2 = prover::b_g2_msm(&CpuBackend, pk, &w).expect("G2");
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    prover::assemble(
        &pk.vk,
        &g1,
        g2,
        Scalar::random(&mut rng),
        Scalar::random(&mut rng),
    )
    .expect("assemble")
}

fn check_compiled_proof<C: KnownCircuit>(make: impl Fn(u64) -> C) {
    let pk = key_for(make(0), 3);
    let (recording, abc, w) = compiled::record(make(1)).expect("record");
    recording.check_key(&pk).expect("recording fits the key");
    let mut bytes = Vec::new();
    pk.write(&mut bytes).unwrap();
    let params = bp::Parameters::<Bls12>::read(&bytes[..], false).expect("bellperson key");
    let pvk = bp::prepare_verifying_key(&params.vk);
    let first = prove_parts(&pk, (abc, w));
    let circuit = make(5);
    let inputs = circuit.public_inputs();
    let second = prove_parts(
        &pk,
        compiled::synthesize(circuit, &recording).expect("compiled"),
    );
    for (proof, inputs) in [(first, make(1).public_inputs()), (second, inputs)] {
        let bproof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
        assert!(
            bp::verify_proof(&pvk, &bproof, &inputs).unwrap(),
            "bellperson rejects"
        );
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(
            !bp::verify_proof(&pvk, &bproof, &wrong).unwrap(),
            "wrong input accepted"
        );
    }
}

#[test]
fn synthetic_compiled_proof_verifies_with_bellperson() {
    check_compiled_proof(|seed| Synthetic::new(1 << 10, seed));
}

#[test]
fn mimc_compiled_proof_verifies_with_bellperson() {
    check_compiled_proof(|seed| MimcChain::with_constraints(700, seed));
}

/// A circuit whose witness code can be told to diverge from what was recorded.
#[derive(Clone, Copy)]
enum Drift {
    None,
    ExtraConstraint,
    ExtraAux,
    /// Same counts, but the last constraint multiplies by x instead of one (and the public
    /// output follows it): satisfied in itself, not by the recorded rows.
    OtherRow,
    /// The recorded structure with a wrong value for y: satisfied by neither.
    WrongWitness,
}

#[derive(Clone, Copy)]
struct Drifting(Drift);

impl Circuit<Scalar> for Drifting {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (yv, outv) = match self.0 {
            Drift::OtherRow => (9u64, 27u64),
            Drift::WrongWitness => (10, 10),
            _ => (9, 9),
        };
        let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
        let y = cs.alloc(|| "y", || Ok(Scalar::from(yv)))?;
        let out = cs.alloc_input(|| "out", || Ok(Scalar::from(outv)))?;
        cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        match self.0 {
            Drift::OtherRow => cs.enforce(|| "out", |lc| lc + y, |lc| lc + x, |lc| lc + out),
            _ => cs.enforce(|| "out", |lc| lc + y, |lc| lc + CS::one(), |lc| lc + out),
        }
        if let Drift::ExtraConstraint = self.0 {
            cs.enforce(|| "again", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        }
        if let Drift::ExtraAux = self.0 {
            cs.alloc(|| "z", || Ok(Scalar::ONE))?;
        }
        Ok(())
    }
}

#[test]
fn a_circuit_that_diverges_from_its_recording_is_caught() {
    let (rec, _, _) = compiled::record(Drifting(Drift::None)).unwrap();
    assert!(compiled::synthesize(Drifting(Drift::None), &rec).is_ok());
    match compiled::synthesize(Drifting(Drift::ExtraConstraint), &rec) {
        Err(CompiledError::Diverged {
            what: "constraints",
            recording: 2,
            circuit: 3,
        }) => {}
        other => panic!("extra constraint: {other:?}"),
    }
    match compiled::synthesize(Drifting(Drift::ExtraAux), &rec) {
        Err(CompiledError::Diverged {
            what: "private variables",
            recording: 2,
            circuit: 3,
        }) => {}
        other => panic!("extra aux: {other:?}"),
    }
    // Same counts, other structure: the witness no longer satisfies the recorded row 1.
    match compiled::synthesize(Drifting(Drift::OtherRow), &rec) {
        Err(CompiledError::Unsatisfied { index: 1 }) => {}
        other => panic!("other row: {other:?}"),
    }
}

#[test]
fn an_unsatisfied_witness_is_refused_at_the_same_constraint_as_full_synthesis() {
    let broken = Synthetic {
        break_at: Some(300),
        ..Synthetic::new(1 << 10, 4)
    };
    let Err(baton::Error::Unsatisfied { index: want, .. }) =
        ProvingAssignment::synthesize(broken.clone())
    else {
        panic!("full synthesis must refuse the broken circuit");
    };
    assert_eq!(want, 300);
    assert!(matches!(
        compiled::record(broken),
        Err(CompiledError::Unsatisfied { index: 300 })
    ));
    let (rec, _, _) = compiled::record(Drifting(Drift::None)).unwrap();
    assert!(matches!(
        ProvingAssignment::synthesize(Drifting(Drift::WrongWitness)),
        Err(baton::Error::Unsatisfied { index: 0, .. })
    ));
    assert!(matches!(
        compiled::synthesize(Drifting(Drift::WrongWitness), &rec),
        Err(CompiledError::Unsatisfied { index: 0 })
    ));
}

#[test]
fn the_recording_is_checked_against_the_key_shape() {
    let pk = key_for(Synthetic::new(1 << 9, 0), 1);
    let (other, _, _) = compiled::record(Synthetic::new(1 << 10, 0)).unwrap();
    match other.check_key(&pk) {
        Err(CompiledError::KeyShape { key, recording, .. }) => assert_ne!(key, recording),
        r => panic!("{r:?}"),
    }
    let mimc_pk = key_for(MimcChain::with_constraints(509, 0), 1);
    let (rec, _, _) = compiled::record(MimcChain::with_constraints(509, 3)).unwrap();
    rec.check_key(&mimc_pk).expect("same shape");
    let err = rec.check_key(&pk).unwrap_err().to_string();
    assert!(
        err.contains("key has") && err.contains("recording has"),
        "{err}"
    );
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_cache_file_round_trips_atomically() {
    let dir = temp_dir("compiled-roundtrip");
    // A key's place is under baton's cache, never beside the key.
    let key_path = dir.join("mimc-599.params");
    let place = compiled::cache_path(&key_path);
    assert!(!place.starts_with(&dir), "{place:?}");
    assert!(
        place.parent().is_some_and(|d| d.ends_with("recordings")),
        "{place:?}"
    );
    let path = dir.join("mimc-599.r1cs");
    let tag = KeyTag([3; 32]);
    for rec in [
        compiled::record(Synthetic::new(1 << 10, 0)).unwrap().0,
        compiled::record(MimcChain::with_constraints(1201, 0))
            .unwrap()
            .0,
    ] {
        rec.write_file(&path, tag).expect("write");
        assert_eq!(Recording::read_file(&path).expect("read"), (rec, tag));
    }
    // The second write replaced the first; no temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("mimc-599.r1cs")]);

    // Written for a key, read back for that key only.
    let pk = key_for(MimcChain::with_constraints(1201, 0), 2);
    let (rec, _, _) = compiled::record(MimcChain::with_constraints(1201, 9)).unwrap();
    rec.write_for_key(&path, &pk).expect("fits its key");
    assert_eq!(Recording::read_for_key(&path, &pk).expect("its key"), rec);
    let same_shape_other_key = key_for(MimcChain::with_constraints(1201, 0), 8);
    match Recording::read_for_key(&path, &same_shape_other_key) {
        Err(CompiledError::OtherKey { path: p }) => assert_eq!(p, path),
        r => panic!("another key's recording: {r:?}"),
    }
    let smaller = key_for(MimcChain::with_constraints(601, 0), 2);
    assert!(matches!(
        rec.write_for_key(&path, &smaller),
        Err(CompiledError::KeyShape { .. })
    ));
}

#[test]
fn bad_cache_files_are_refused_by_name() {
    let dir = temp_dir("compiled-bad");
    let path = dir.join("k.r1cs");
    let rec = compiled::record(Synthetic::new(1 << 9, 0)).unwrap().0;
    rec.write_file(&path, KeyTag([1; 32])).unwrap();
    let good = std::fs::read(&path).unwrap();
    let read = |bytes: &[u8]| {
        std::fs::write(&path, bytes).unwrap();
        Recording::read_file(&path).map(|(r, _)| r)
    };
    // Cut anywhere: in the header, the table, a matrix, the checksum.
    for cut in [0, 5, 40, 100, 130, good.len() / 2, good.len() - 1] {
        match read(&good[..cut]) {
            Err(CompiledError::Truncated { len, .. }) => assert_eq!(len, cut as u64),
            r => panic!("cut at {cut}: {r:?}"),
        }
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(matches!(read(&longer), Err(CompiledError::Corrupt { .. })));
    let mut flipped = good.clone();
    let at = good.len() - 100;
    flipped[at] ^= 1;
    match read(&flipped) {
        Err(CompiledError::Corrupt { reason, .. }) => {
            assert!(
                reason.contains("checksum") || reason.contains("matrix"),
                "{reason}"
            )
        }
        r => panic!("flipped: {r:?}"),
    }
    let mut magic = good.clone();
    magic[0] = b'X';
    assert!(read(&magic).unwrap_err().to_string().contains("bad magic"));
    let mut version = good.clone();
    version[8] = 9;
    match read(&version) {
        Err(CompiledError::Version {
            found: 9,
            supported,
            ..
        }) => assert_eq!(supported, compiled::VERSION),
        r => panic!("version: {r:?}"),
    }
    // A header count changed: the length no longer adds up.
    let mut count = good.clone();
    count[48] ^= 1;
    assert!(matches!(
        read(&count),
        Err(CompiledError::Corrupt { .. } | CompiledError::Truncated { .. })
    ));
    // The key tag is covered by the checksum too.
    let mut tag = good.clone();
    tag[20] ^= 1;
    match read(&tag) {
        Err(CompiledError::Corrupt { reason, .. }) => assert!(reason.contains("checksum")),
        r => panic!("tag: {r:?}"),
    }
    let missing = Recording::read_file(&dir.join("absent.r1cs"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("absent.r1cs"), "{missing}");
    assert_eq!(read(&good).expect("the good file still reads"), rec);
}

/// Allocates `aux` private variables (more than one streamed chunk), then fails or panics.
#[derive(Clone, Copy)]
struct Failing {
    aux: usize,
    panic: bool,
}

impl Circuit<Scalar> for Failing {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        for i in 0..self.aux {
            let v = cs.alloc(|| "v", || Ok(Scalar::from(i as u64)))?;
            cs.enforce(|| "v", |lc| lc + v, |lc| lc + CS::one(), |lc| lc + v);
        }
        if self.panic {
            panic!("gadget bug");
        }
        cs.alloc(|| "missing", || Err(SynthesisError::AssignmentMissing))?;
        Ok(())
    }
}

#[test]
fn a_circuit_that_fails_or_panics_mid_stream_ends_cleanly() {
    // The recording: the same circuit with its last value present.
    #[derive(Clone, Copy)]
    struct Whole(usize);
    impl Circuit<Scalar> for Whole {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            for i in 0..self.0 {
                let v = cs.alloc(|| "v", || Ok(Scalar::from(i as u64)))?;
                cs.enforce(|| "v", |lc| lc + v, |lc| lc + CS::one(), |lc| lc + v);
            }
            cs.alloc(|| "last", || Ok(Scalar::ONE))?;
            Ok(())
        }
    }
    let n = 40_000;
    let (rec, _, _) = compiled::record(Whole(n)).unwrap();
    let failing = Failing {
        aux: n,
        panic: false,
    };
    assert!(matches!(
        compiled::synthesize(failing, &rec),
        Err(CompiledError::Synthesis(SynthesisError::AssignmentMissing))
    ));
    let panicking = Failing {
        aux: n,
        panic: true,
    };
    let caught = std::panic::catch_unwind(|| compiled::synthesize(panicking, &rec));
    assert!(caught.is_err(), "the circuit's panic reaches the caller");
    let again = compiled::synthesize(Whole(n), &rec).expect("the next synthesis is unaffected");
    assert_same("after a failure", &again, &full(Whole(n)));
}

#[test]
fn a_broken_synthetic_witness_fails_exactly_its_constraint_on_both_paths() {
    let n = 1 << 10;
    let (rec, _, _) = compiled::record(Synthetic::new(n, 0)).unwrap();
    // Every row kind: the chains' first rows (0..4), then bits, XOR, packing and dense rows.
    for k in (0..60).chain([100, 333, 517, 900, n - 6]) {
        let broken = Synthetic {
            break_at: Some(k),
            ..Synthetic::new(n, 11)
        };
        match ProvingAssignment::synthesize(broken.clone()) {
            Err(baton::Error::Unsatisfied { index, .. }) => assert_eq!(index, k, "full, k = {k}"),
            other => panic!(
                "full synthesis of a witness broken at {k}: {:?}",
                other.is_ok()
            ),
        }
        match compiled::synthesize(broken, &rec) {
            Err(CompiledError::Unsatisfied { index }) => assert_eq!(index, k, "compiled, k = {k}"),
            other => panic!(
                "compiled synthesis of a witness broken at {k}: {:?}",
                other.is_ok()
            ),
        }
    }
}

#[test]
fn the_footprint_comes_from_the_recording_and_leaves_a_b_c_to_the_device() {
    use baton::ledger::BufferClass;
    let pk = key_for(Synthetic::new(1 << 9, 0), 4);
    let (rec, _, w) = compiled::record(Synthetic::new(1 << 9, 1)).unwrap();
    assert_eq!(rec.footprint(false), baton::engine::footprint_of(&pk));
    let device = rec.footprint(true);
    assert_eq!(device.bytes(BufferClass::Abc), 0);
    let witness_bytes = (w.aux.len() + w.inputs.len()) as u64 * 32;
    assert!(device.total_bytes() >= witness_bytes);
    assert!(
        device.total_bytes() as f64 <= 1.2 * witness_bytes as f64,
        "host bytes per partition at most 1.2x the witness: {} vs {witness_bytes}",
        device.total_bytes()
    );
}
