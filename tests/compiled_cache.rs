//! The per-key recording cache: the first synthesis records and writes the file (under baton's
//! cache for a key file, never beside it), later ones run witness-only, a new cache loads the
//! file, a worker that finds the key busy synthesizes in full, a failed recording is tried
//! again, a bad file is replaced, and a circuit that diverges from its recording is caught and
//! proved correctly by full synthesis.

mod support;

use std::path::PathBuf;

use baton::circuits::{KnownCircuit, Synthetic};
use baton::compiled::{self, Recordings, Route};
use baton::groth16::prover::{self, Abc, Witness};
use baton::{CpuBackend, PreparedVerifyingKey, ProvingKey, Scalar};
use bellperson::groth16 as bp;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Bls12;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn temp_dir(name: &str) -> PathBuf {
    support::own_cache();
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn key_for<C: Circuit<Scalar>>(c: C, seed: u64) -> ProvingKey {
    baton::generate_random_parameters(c, &mut ChaCha8Rng::seed_from_u64(seed)).expect("setup")
}

/// One synthesis through the cache, as the engine's synthesizer runs it.
fn through<C: Circuit<Scalar> + Clone>(
    recs: &Recordings,
    pk: &ProvingKey,
    c: &C,
) -> baton::Result<((Abc, Witness), Route)> {
    recs.synthesize(
        pk,
        || compiled::record(c.clone()),
        |r| compiled::synthesize(c.clone(), r),
        || prover::synthesize(c.clone(), pk),
    )
}

fn same(x: &(Abc, Witness), y: &(Abc, Witness)) -> bool {
    x.0.a == y.0.a
        && x.0.b == y.0.b
        && x.0.c == y.0.c
        && x.1.aux == y.1.aux
        && x.1.inputs == y.1.inputs
        && x.1.b_aux_density == y.1.b_aux_density
}

#[test]
fn record_once_then_compiled_then_loaded_from_the_file() {
    let dir = temp_dir("cache-flow");
    let pk = key_for(Synthetic::new(1 << 9, 0), 1);
    let recs = Recordings::new(Some(dir.clone()));
    let c1 = Synthetic::new(1 << 9, 1);
    let (got, route) = through(&recs, &pk, &c1).unwrap();
    assert_eq!(route, Route::Recorded);
    assert!(same(&got, &prover::synthesize(c1, &pk).unwrap()));
    let file = recs.file_for(&pk).expect("a file in the folder");
    assert!(file.starts_with(&dir) && file.exists());
    assert!(recs.heap_bytes() > 0);

    let c2 = Synthetic::new(1 << 9, 2);
    let (got, route) = through(&recs, &pk, &c2).unwrap();
    assert_eq!(route, Route::Compiled);
    assert!(same(&got, &prover::synthesize(c2.clone(), &pk).unwrap()));

    let fresh = Recordings::new(Some(dir));
    let (got, route) = through(&fresh, &pk, &c2).unwrap();
    assert_eq!(route, Route::Loaded);
    assert!(same(&got, &prover::synthesize(c2, &pk).unwrap()));
}

#[test]
fn a_key_with_a_known_path_keeps_its_recording_under_the_cache() {
    let dir = temp_dir("cache-beside");
    let pk = key_for(Synthetic::new(1 << 8, 0), 2);
    let key_path = dir.join("synthetic-256-4.params");
    pk.write_file(&key_path).unwrap();
    let from_file = ProvingKey::read_with(&key_path, baton::Check::None).unwrap();
    assert_eq!(from_file.path(), Some(key_path.as_path()));
    let recs = Recordings::new(None);
    assert_eq!(recs.expected_bytes(&from_file), 0, "nothing known yet");
    through(&recs, &from_file, &Synthetic::new(1 << 8, 3)).unwrap();
    let file = compiled::cache_path(&key_path);
    assert_eq!(recs.file_for(&from_file), Some(file.clone()));
    assert!(
        file.starts_with(support::own_cache()) && file.exists(),
        "{file:?}"
    );
    let beside: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(beside.len(), 1, "only the key in its directory: {beside:?}");
    let in_memory = recs.expected_bytes(&from_file);
    assert!(in_memory > 0);
    // Forgotten when its key's last job ends: the file's size is the estimate, and the next
    // use loads it.
    recs.forget(from_file.id());
    assert!(recs.get(&from_file).is_none());
    assert_eq!(
        recs.expected_bytes(&from_file),
        std::fs::metadata(&file).unwrap().len()
    );
    let (_, route) = through(&recs, &from_file, &Synthetic::new(1 << 8, 4)).unwrap();
    assert_eq!(route, Route::Loaded);
    // Without a folder or a key path the recording lives in memory only.
    let memory = Recordings::new(None);
    assert_eq!(memory.file_for(&pk), None);
    let (_, route) = through(&memory, &pk, &Synthetic::new(1 << 8, 3)).unwrap();
    assert_eq!(route, Route::Recorded);
    assert!(memory.get(&pk).is_some());
}

#[test]
fn a_worker_that_finds_the_key_busy_synthesizes_in_full() {
    let pk = key_for(Synthetic::new(1 << 8, 0), 3);
    let recs = Recordings::new(None);
    let c = Synthetic::new(1 << 8, 4);
    let mut inner = None;
    let (_, route) = recs
        .synthesize(
            &pk,
            || {
                // Another worker arrives while this one records.
                inner = Some(through(&recs, &pk, &c).map(|(_, r)| r));
                compiled::record(c.clone())
            },
            |r| compiled::synthesize(c.clone(), r),
            || prover::synthesize(c.clone(), &pk),
        )
        .unwrap();
    assert_eq!(route, Route::Recorded);
    assert_eq!(inner.unwrap().unwrap(), Route::Full);
}

#[test]
fn workers_wait_for_a_recording_being_read_rather_than_synthesize_in_full() {
    let dir = temp_dir("cache-wait");
    let pk = key_for(Synthetic::new(1 << 10, 0), 9);
    through(
        &Recordings::new(Some(dir.clone())),
        &pk,
        &Synthetic::new(1 << 10, 1),
    )
    .unwrap();
    for _ in 0..5 {
        let recs = Recordings::new(Some(dir.clone()));
        std::thread::scope(|s| {
            for seed in 0..4 {
                let (recs, pk) = (&recs, &pk);
                s.spawn(move || through(recs, pk, &Synthetic::new(1 << 10, 10 + seed)).unwrap());
            }
        });
        // One read the file, the others waited for it and ran compiled.
        assert_eq!(recs.routes(), [3, 1, 0, 0]);
    }
}

#[test]
fn a_failed_recording_is_tried_again_and_a_bad_file_is_replaced() {
    let dir = temp_dir("cache-retry");
    let pk = key_for(Synthetic::new(1 << 9, 0), 4);
    let recs = Recordings::new(Some(dir.clone()));
    let broken = Synthetic {
        break_at: Some(17),
        ..Synthetic::new(1 << 9, 5)
    };
    match through(&recs, &pk, &broken) {
        Err(baton::Error::Unsatisfied { index: 17, .. }) => {}
        r => panic!("broken circuit: {:?}", r.map(|(_, route)| route)),
    }
    assert!(
        recs.get(&pk).is_none(),
        "nothing kept from the failed recording"
    );
    std::fs::write(recs.file_for(&pk).unwrap(), b"BATONR1C garbage").unwrap();
    let (_, route) = through(&recs, &pk, &Synthetic::new(1 << 9, 6)).unwrap();
    assert_eq!(route, Route::Recorded, "the bad file is recorded over");
    let (_, route) = through(&Recordings::new(Some(dir)), &pk, &Synthetic::new(1 << 9, 7)).unwrap();
    assert_eq!(route, Route::Loaded);
}

/// x·x = y, then y·1 = out, or (the stale variant) y·1 = out + x: the same dimensions and
/// densities, so both fit one key, but other C rows.
#[derive(Clone, Copy)]
struct Shifted {
    stale: bool,
    /// The witness of y (9 satisfies x·x = y).
    y: u64,
}

impl Shifted {
    fn out(&self) -> Scalar {
        Scalar::from(if self.stale { 6u64 } else { 9 })
    }
}

impl Circuit<Scalar> for Shifted {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::from(3u64)))?;
        let y = cs.alloc(|| "y", || Ok(Scalar::from(self.y)))?;
        let out = cs.alloc_input(|| "out", || Ok(self.out()))?;
        cs.enforce(|| "square", |lc| lc + x, |lc| lc + x, |lc| lc + y);
        if self.stale {
            cs.enforce(
                || "out",
                |lc| lc + y,
                |lc| lc + CS::one(),
                |lc| lc + out + x,
            );
        } else {
            cs.enforce(|| "out", |lc| lc + y, |lc| lc + CS::one(), |lc| lc + out);
        }
        Ok(())
    }
}

#[test]
fn a_circuit_that_diverges_from_its_recording_is_proved_by_full_synthesis() {
    let dir = temp_dir("cache-diverge");
    let circuit = Shifted { stale: false, y: 9 };
    let pk = key_for(circuit, 5);
    let recs = Recordings::new(Some(dir));
    // A recording of the other variant passes the key's shape check and carries its tag.
    let (stale, _, _) = compiled::record(Shifted { stale: true, y: 9 }).unwrap();
    stale
        .write_for_key(&recs.file_for(&pk).unwrap(), &pk)
        .expect("same dimensions as the key");

    let (parts, route) = through(&recs, &pk, &circuit).unwrap();
    assert_eq!(
        route,
        Route::Full,
        "the recorded rows are refused, full synthesis runs"
    );
    assert!(same(&parts, &prover::synthesize(circuit, &pk).unwrap()));
    let (mut abc, w) = parts;
    let h = prover::compute_h(&CpuBackend, &mut abc).unwrap();
    let g1 = prover::g1_msms(&CpuBackend, &pk, &w, &h).unwrap();
    let g2 = prover::b_g2_msm(&CpuBackend, &pk, &w).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let proof = prover::assemble(
        &pk.vk,
        &g1,
        g2,
        Scalar::random(&mut rng),
        Scalar::random(&mut rng),
    )
    .unwrap();
    let inputs = vec![circuit.out()];
    baton::verify(&PreparedVerifyingKey::new(&pk.vk), &proof, &inputs).expect("verifies");
    let mut bytes = Vec::new();
    pk.write(&mut bytes).unwrap();
    let params = bp::Parameters::<Bls12>::read(&bytes[..], false).unwrap();
    let pvk = bp::prepare_verifying_key(&params.vk);
    let bproof = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
    assert!(bp::verify_proof(&pvk, &bproof, &inputs).unwrap());
    assert!(!bp::verify_proof(&pvk, &bproof, &[inputs[0] + Scalar::ONE]).unwrap());
    // Full synthesis succeeded where the recording refused: the recording is not this
    // circuit's, so it is made again (and its file replaced), then used.
    assert!(recs.get(&pk).is_none(), "the stale recording is dropped");
    assert_eq!(through(&recs, &pk, &circuit).unwrap().1, Route::Recorded);
    assert_eq!(through(&recs, &pk, &circuit).unwrap().1, Route::Compiled);
    let fresh = Recordings::new(recs.file_for(&pk).and_then(|f| f.parent().map(Into::into)));
    assert_eq!(
        through(&fresh, &pk, &circuit).unwrap().1,
        Route::Loaded,
        "file replaced"
    );
    // A witness that full synthesis refuses too is the circuit's fault: the recording stays.
    let broken = Shifted {
        stale: false,
        y: 10,
    };
    assert!(matches!(
        through(&fresh, &pk, &broken),
        Err(baton::Error::Unsatisfied { index: 0, .. })
    ));
    assert!(fresh.get(&pk).is_some(), "kept: the recording was right");
}

#[test]
fn the_synthetic_circuit_reports_its_public_inputs_through_the_cache() {
    // Guards the helper above: the compiled witness carries the circuit's public inputs.
    let pk = key_for(Synthetic::new(1 << 8, 0), 7);
    let recs = Recordings::new(None);
    let c = Synthetic::new(1 << 8, 8);
    through(&recs, &pk, &c).unwrap();
    let ((_, w), route) = through(&recs, &pk, &c).unwrap();
    assert_eq!(route, Route::Compiled);
    assert_eq!(w.public_inputs(), &c.public_inputs()[..]);
}
