//! Compiled partitions whose a/b/c are evaluated by the GPU stage ("on the device"), with a
//! CPU stand-in for the device: synthesis hands over the witness alone, the stage evaluates
//! and checks a/b/c from the key's recording, proofs verify and a wrong input fails; a job whose
//! key's recording is ready is charged only its witness on the host; a recording the device
//! refuses is checked on the host on the retry (a stale one replaced, a bad witness failing its
//! job naming the constraint); a circuit that packs its witness as it goes is charged the
//! packing room alone; the ledger settles every time.

mod support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use baton::compiled::{self, CompiledError, Recording, RegionCs, Route, Shape};
use baton::groth16::backend::CpuBackend;
use baton::groth16::msm::Scalars;
use baton::groth16::prover::{Abc, Witness};
use baton::stages::partition::{AbcInput, PartitionProver, PartitionSums};
use baton::stages::pipeline::{CompiledSynthesis, DeviceStage, PartitionCircuit, Stages};
use baton::{Engine, EngineError, ProvingKey, Request, Result, Scalar};

/// A "device" on the CPU: evaluates a/b/c from the recording (the check included) into a
/// handle, and proves from host or handle a/b/c, counting what it saw.
#[derive(Default)]
struct CpuDevice {
    evaluated: AtomicUsize,
    from_handle: AtomicUsize,
    from_host: AtomicUsize,
    /// Witnesses that arrived with every private variable plain.
    plain: AtomicUsize,
    /// Witnesses that arrived packed (only while `reads_packed`).
    packed: AtomicUsize,
    /// Whether it takes a packed witness, as the CUDA device does (expanding it itself).
    reads_packed: AtomicBool,
    /// While set, evaluation waits (partitions pile up behind the device).
    hold: AtomicBool,
    /// While set, evaluation fails as a device short of memory does.
    short_of_memory: AtomicBool,
    /// Evaluations refused for memory.
    refused: AtomicUsize,
}

impl PartitionProver for CpuDevice {
    fn evaluate_abc(
        &self,
        rec: &Recording,
        inputs: &[Scalar],
        aux: Scalars<'_>,
    ) -> Result<Box<dyn std::any::Any + Send>> {
        while self.hold.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if self.short_of_memory.load(Ordering::Relaxed) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            let e = std::io::Error::other("out of device memory: a/b/c beside the partition");
            return Err(baton::Error::Device(
                baton::groth16::error::DeviceError::new(e, true, true),
            ));
        }
        self.evaluated.fetch_add(1, Ordering::Relaxed);
        let aux = match aux {
            Scalars::Plain(v) => {
                if v.len() == rec.shape().aux {
                    self.plain.fetch_add(1, Ordering::Relaxed);
                }
                std::borrow::Cow::Borrowed(v)
            }
            Scalars::Packed(p) => {
                assert!(self.reads_packed(), "packed only to a device that reads it");
                self.packed.fetch_add(1, Ordering::Relaxed);
                std::borrow::Cow::Owned(p.unpack())
            }
        };
        Ok(Box::new(rec.evaluate(inputs, &aux)?))
    }

    fn reads_packed(&self) -> bool {
        self.reads_packed.load(Ordering::Relaxed)
    }

    fn prove_partition(
        &self,
        pk: &ProvingKey,
        abc: AbcInput<'_>,
        w: &Witness,
        with_b_g2: bool,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Result<PartitionSums> {
        let mut abc = match abc {
            AbcInput::Host(abc) => {
                self.from_host.fetch_add(1, Ordering::Relaxed);
                std::mem::take(abc)
            }
            AbcInput::Device(handle) => {
                self.from_handle.fetch_add(1, Ordering::Relaxed);
                *handle.downcast::<Abc>().expect("this device's own handle")
            }
        };
        let sums = support::cpu_partition_sums(pk, &mut abc, w, with_b_g2);
        abc_done(Abc::default());
        sums
    }
}

fn engine(device: Arc<CpuDevice>, workers: usize) -> (Engine, Stages) {
    engine_packing(device, workers, false)
}

fn engine_packing(device: Arc<CpuDevice>, workers: usize, pack: bool) -> (Engine, Stages) {
    let mut stages = Stages::with_backend(Arc::new(|_| Arc::new(CpuBackend)));
    let recordings = stages.recordings.clone();
    let shared = recordings.clone();
    stages.synthesis = Arc::new(move |_| {
        Box::new(CompiledSynthesis {
            recordings: shared.clone(),
            abc_on_device: true,
            pack_witness: pack,
        })
    });
    stages.gpu = Arc::new(move |_| {
        Box::new(DeviceStage {
            backend: Arc::new(CpuBackend),
            partition: device.clone(),
            with_b_g2: true,
            recordings: Some(recordings.clone()),
        })
    });
    stages.abc_on_device = true;
    stages.pack_witness = pack;
    let e = Engine::start_with(support::config(64 << 20, workers, None, 3), stages.clone())
        .expect("start");
    (e, stages)
}

fn routes(stages: &Stages) -> Vec<(Route, u64)> {
    let r = stages.recordings.routes();
    Route::ALL
        .into_iter()
        .zip(r)
        .filter(|(_, n)| *n > 0)
        .collect()
}

#[test]
fn compiled_partitions_reach_the_device_as_a_witness_and_verify() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    let (engine, stages) = engine(device.clone(), 1);
    // Two requests at once: the second is admitted while the first is still in flight, when
    // the key's recording is ready, so its partitions are charged their witness alone.
    let first = support::circuits(600..605);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), first.clone()))
        .expect("first request");
    support::check_proofs(&pk, &proofs, &first);
    // The first partition recorded (host a/b/c); the rest went to the device as a witness.
    assert_eq!(
        routes(&stages),
        vec![(Route::Compiled, 4), (Route::Recorded, 1)]
    );
    assert_eq!(device.from_host.load(Ordering::Relaxed), 1);
    assert_eq!(device.evaluated.load(Ordering::Relaxed), 4);
    assert_eq!(device.from_handle.load(Ordering::Relaxed), 4);
    let settled = support::wait_settled(&engine);
    assert_eq!(settled.ledger.charged_bytes, 0);
    engine.shutdown_blocking();
}

#[test]
fn a_ready_recording_charges_the_witness_alone() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    let (engine, stages) = engine(device, 1);
    let host_full = baton::engine::footprint_of(&pk).total_bytes();
    let long = support::circuits(610..630);
    let next = support::circuits(630..632);
    std::thread::scope(|s| {
        // A long job keeps the key in use; its first partition records.
        let first = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), long.clone())));
        support::wait_for(&engine, std::time::Duration::from_secs(20), |_| {
            stages.recordings.get(&pk).is_some()
        });
        let second = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), next.clone())));
        let st = support::wait_for(&engine, std::time::Duration::from_secs(20), |st| {
            st.jobs.len() == 2
        });
        let rec = stages.recordings.get(&pk).expect("recording in use");
        let witness_only = rec.footprint(true).total_bytes();
        // The first job was admitted before the recording, at its host footprint; its later
        // partitions go witness-only too, and are charged so from then on.
        assert_eq!(
            st.jobs[0].footprint_bytes, witness_only,
            "first job, refreshed"
        );
        assert_eq!(
            st.jobs[1].footprint_bytes, witness_only,
            "admitted with it ready"
        );
        assert!(
            witness_only * 3 < host_full,
            "{witness_only} vs {host_full}"
        );
        support::check_proofs(&pk, &first.join().unwrap().expect("first"), &long);
        support::check_proofs(&pk, &second.join().unwrap().expect("second"), &next);
    });
    support::wait_settled(&engine);
    engine.shutdown_blocking();
}

#[test]
fn a_recording_the_device_refuses_is_checked_on_the_host_on_the_retry() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    let (engine, stages) = engine(device.clone(), 1);
    // Make the key's recording, then swap in a stale one (same counts and densities, other C
    // rows) the way a stale file would arrive.
    let cs = support::circuits(630..631);
    engine
        .prove_blocking(Request::new(pk.clone(), cs))
        .expect("records");
    support::wait_settled(&engine);
    let (good, _, _) = compiled::record(support::circuits(0..1).remove(0)).unwrap();
    let stale = support::stale_copy(&good);
    support::own_cache();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("device-abc-stale");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let key_path = dir.join("k.params");
    pk.write_file(&key_path).unwrap();
    let from_file = Arc::new(ProvingKey::read_with(&key_path, baton::Check::None).unwrap());
    stale
        .write_for_key(&compiled::cache_path(&key_path), &from_file)
        .unwrap();
    let before = device.evaluated.load(Ordering::Relaxed);
    let circuits = support::circuits(640..644);
    let proofs = engine
        .prove_blocking(Request::new(from_file.clone(), circuits.clone()))
        .expect("proofs despite the stale recording");
    support::check_proofs(&from_file, &proofs, &circuits);
    // The stale file loaded, the device refused it, the retry checked on the host, fell back
    // to full synthesis and dropped it; the circuit was recorded anew and used.
    assert!(device.evaluated.load(Ordering::Relaxed) > before);
    let r = stages.recordings.routes();
    assert!(r[3] >= 1, "a full synthesis: {:?}", routes(&stages));
    assert!(r[2] >= 2, "recorded again: {:?}", routes(&stages));
    support::wait_settled(&engine);

    // A witness that is wrong for the (right) recording: the job fails naming the constraint.
    let mut bad = support::circuits(650..652);
    bad[1].break_at = Some(9);
    match engine.prove_blocking(Request::new(pk.clone(), bad)) {
        Err(EngineError::PartitionFailed { index, cause, .. }) => {
            assert_eq!(index, 1);
            assert!(cause.contains("constraint 9"), "{cause}");
        }
        other => panic!("expected the job to fail, got {:?}", other.map(|p| p.len())),
    }
    let settled = support::wait_settled(&engine);
    assert_eq!(settled.ledger.charged_bytes, 0);
    engine.shutdown_blocking();
}

/// Pins `pk` on `engine` (it keeps its recording and the device's verdicts between jobs) and
/// records its circuit with a first job of one partition (`seed`), which verifies; the
/// recording.
fn pin_and_record(
    engine: &Engine,
    stages: &Stages,
    pk: &Arc<ProvingKey>,
    seed: u64,
) -> Arc<Recording> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(engine.pin_key(pk.clone())).expect("pinned");
    let first = support::circuits(seed..seed + 1);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), first.clone()))
        .expect("records");
    support::check_proofs(pk, &proofs, &first);
    support::wait_settled(engine);
    stages.recordings.get(pk).expect("recorded")
}

/// Lets the device go when dropped, so that a failed check does not hang the job behind it.
struct Release<'a>(&'a AtomicBool);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Whether the first job has `n` partitions queued for the device.
fn queued_for_device(st: &baton::EngineStatus, n: usize) -> bool {
    st.jobs.first().is_some_and(|j| {
        let queued = j.partitions.iter().filter(|p| {
            matches!(p, baton::engine::PartitionState::At(s) if *s == baton::ledger::Stage::QueuedForGpu)
        });
        queued.count() == n
    })
}

#[test]
fn packed_witnesses_wait_as_bits_and_the_device_gets_them_plain() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    let (engine, stages) = engine_packing(device.clone(), 2, true);
    let rec = pin_and_record(&engine, &stages, &pk, 700);
    let plain_each = rec.footprint(true).total_bytes();

    // The device holds the first witness; the others synthesize and wait for it, packed.
    device.hold.store(true, Ordering::Relaxed);
    // Five: the ledger's slots (one on the device, four waiting).
    let n = 5;
    let circuits = support::circuits(710..710 + n as u64);
    std::thread::scope(|s| {
        let job = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), circuits.clone())));
        let _release = Release(&device.hold);
        let st = support::wait_for(&engine, std::time::Duration::from_secs(30), |st| {
            queued_for_device(st, n - 1)
        });
        assert_eq!(
            st.jobs[0].footprint_bytes,
            rec.packed_footprint().total_bytes()
        );
        let charged = st.ledger.charged_bytes;
        assert!(
            charged * 2 < plain_each * n as u64,
            "{n} partitions charge {charged} bytes packed; plain they would charge {}",
            plain_each * n as u64
        );
        device.hold.store(false, Ordering::Relaxed);
        let proofs = job.join().unwrap().expect("proofs from packed witnesses");
        support::check_proofs(&pk, &proofs, &circuits);
    });
    // Every witness reached the device plain (the GPU actor expanded it), and the ledger
    // settles to zero: the room given back at synthesis and the rest through Dealloc.
    assert_eq!(device.plain.load(Ordering::Relaxed), n);
    let settled = support::wait_settled(&engine);
    assert_eq!(settled.ledger.charged_bytes, 0);
    engine.shutdown_blocking();
}

/// `Synthetic` packing its witness as it goes (straight into bits, never plain), as the PoRep
/// circuit does ([`PartitionCircuit::packs_as_it_goes`]).
#[derive(Clone)]
struct Streamed(baton::circuits::Synthetic);

impl PartitionCircuit for Streamed {
    fn synthesize(&self, pk: &ProvingKey) -> Result<(Abc, Witness)> {
        PartitionCircuit::synthesize(&self.0, pk)
    }

    fn record(&self) -> std::result::Result<(Recording, Abc, Witness), CompiledError> {
        self.0.record()
    }

    fn synthesize_witness(&self, r: &Recording) -> std::result::Result<Witness, CompiledError> {
        self.0.synthesize_witness(r)
    }

    fn synthesize_packed_witness(
        &self,
        r: &Recording,
    ) -> std::result::Result<Witness, CompiledError> {
        let shape = r.shape();
        let one = Shape {
            inputs: 1,
            aux: 0,
            constraints: 0,
        };
        let mut cs = RegionCs::packed(one, shape.aux);
        bellperson::Circuit::synthesize(self.0.clone(), &mut cs)?;
        let got = cs.shape();
        compiled::check_counts(
            shape,
            Shape {
                inputs: 1 + got.inputs,
                ..got
            },
        )?;
        // The constant one (the prefix holds it), then the circuit's inputs.
        let inputs = [
            std::mem::take(&mut cs.prefix.inputs),
            std::mem::take(&mut cs.inputs),
        ]
        .concat();
        let packed = cs.take_packed();
        let room = baton::groth16::packed::streamed_room(shape.aux as u64 * 32);
        assert!(
            packed.bytes() <= room,
            "a PoRep-like witness packs within its room"
        );
        Ok(r.packed_witness(inputs, packed))
    }

    fn packs_as_it_goes(&self) -> bool {
        true
    }
}

/// Partitions of a circuit that packs as it goes are charged the packing room alone while they
/// synthesize (a fraction of the plain witness the others are charged), give back what their
/// bits did not use, reach the device plain, and verify; the ledger settles.
#[test]
fn a_circuit_packing_as_it_goes_is_charged_the_room_alone() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    let (engine, stages) = engine_packing(device.clone(), 2, true);
    let rec = pin_and_record(&engine, &stages, &pk, 750);
    let (streamed, packed) = (
        rec.streamed_footprint().total_bytes(),
        rec.packed_footprint().total_bytes(),
    );
    let plain_aux = rec.shape().aux as u64 * 32;
    let rooms = baton::groth16::packed::packing_room(plain_aux)
        - baton::groth16::packed::streamed_room(plain_aux);
    assert_eq!(
        packed - streamed,
        plain_aux + rooms,
        "the plain witness is not charged, and the room is a sixth"
    );

    device.hold.store(true, Ordering::Relaxed);
    let n = 5;
    let circuits = support::circuits(760..760 + n as u64);
    let wrapped: Vec<Streamed> = circuits.iter().cloned().map(Streamed).collect();
    std::thread::scope(|s| {
        let job = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), wrapped.clone())));
        let _release = Release(&device.hold);
        let st = support::wait_for(&engine, std::time::Duration::from_secs(30), |st| {
            queued_for_device(st, n - 1)
        });
        assert_eq!(st.jobs[0].footprint_bytes, streamed);
        // Four wait packed and one is on the device: each holds its bits, far below the room.
        let charged = st.ledger.charged_bytes;
        assert!(
            charged < streamed * n as u64,
            "{n} partitions charge {charged} bytes; the room alone would be {}",
            streamed * n as u64
        );
        device.hold.store(false, Ordering::Relaxed);
        let proofs = job.join().unwrap().expect("proofs");
        support::check_proofs(&pk, &proofs, &circuits);
    });
    assert_eq!(device.plain.load(Ordering::Relaxed), n);
    let settled = support::wait_settled(&engine);
    assert_eq!(settled.ledger.charged_bytes, 0);
    engine.shutdown_blocking();
}

/// A device that expands a packed witness itself (as the CUDA device does, on the device) gets
/// every witness-only partition packed: the GPU actor never expands one on the host (no
/// `expand` step), every proof verifies and fails a wrong input, and the ledger settles.
#[test]
fn a_device_reading_packed_witnesses_gets_them_packed() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    device.reads_packed.store(true, Ordering::Relaxed);
    let (engine, stages) = engine_packing(device.clone(), 2, true);
    pin_and_record(&engine, &stages, &pk, 780);
    let n = 4;
    let circuits = support::circuits(790..790 + n as u64);
    let wrapped: Vec<Streamed> = circuits.iter().cloned().map(Streamed).collect();
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), wrapped))
        .expect("proofs");
    support::check_proofs(&pk, &proofs, &circuits);
    let plain = support::circuits(800..800 + n as u64);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), plain.clone()))
        .expect("proofs");
    support::check_proofs(&pk, &proofs, &plain);
    assert_eq!(device.packed.load(Ordering::Relaxed), 2 * n);
    assert_eq!(device.plain.load(Ordering::Relaxed), 0);
    let steps = engine.metric_handles().step_means();
    assert!(
        steps.iter().all(|(s, _)| *s != "expand"),
        "no witness expanded on the host: {steps:?}"
    );
    assert!(steps.iter().any(|(s, _)| *s == "device_abc"), "{steps:?}");
    let settled = support::wait_settled(&engine);
    assert_eq!(settled.ledger.charged_bytes, 0);
    engine.shutdown_blocking();
}

/// A device that cannot hold a key's a/b/c beside its partition (its memory, or
/// `gpu.memory_limit`) refuses once: the key's partitions carry host a/b/c from then on, charged
/// so, without the recording distrusted or a refusal per partition; every proof verifies and
/// fails a wrong input, and the ledger settles.
#[test]
fn a_device_short_of_memory_gets_host_abc_for_the_key_from_then_on() {
    let pk = support::key();
    let device = Arc::new(CpuDevice::default());
    let (engine, stages) = engine(device.clone(), 1);
    pin_and_record(&engine, &stages, &pk, 800);
    device.short_of_memory.store(true, Ordering::Relaxed);
    let from_host = device.from_host.load(Ordering::Relaxed);
    let n = 8;
    let circuits = support::circuits(801..801 + n as u64);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("proofs with host a/b/c");
    support::check_proofs(&pk, &proofs, &circuits);
    let refused = device.refused.load(Ordering::Relaxed);
    // The first refusal, and at most the partitions whose synthesis began before it, witness
    // only: the ledger's slots hold three undelivered (one worker, two ahead for the device),
    // and the first's delivery frees its slot before its refusal, so a fourth may begin then.
    // Every later one takes host a/b/c.
    assert!(
        (1..=4).contains(&refused),
        "{refused} refusals for {n} partitions: the verdict must stick"
    );
    assert_eq!(device.from_host.load(Ordering::Relaxed) - from_host, n);
    assert!(stages.recordings.abc_on_host(&pk));
    assert!(
        !stages.recordings.distrusted(&pk),
        "memory is no reason to doubt it"
    );
    // A job of the key from now on is charged its host a/b/c (the key's full shape).
    assert!(stages.recordings.get(&pk).is_some(), "recording kept");
    let host_full = baton::engine::footprint_of(&pk).total_bytes();
    device.hold.store(true, Ordering::Relaxed);
    let next = support::circuits(810..812);
    std::thread::scope(|s| {
        let job = s.spawn(|| engine.prove_blocking(Request::new(pk.clone(), next.clone())));
        let st = support::wait_for(&engine, std::time::Duration::from_secs(20), |st| {
            st.jobs.len() == 1
        });
        assert_eq!(st.jobs[0].footprint_bytes, host_full);
        device.hold.store(false, Ordering::Relaxed);
        support::check_proofs(&pk, &job.join().unwrap().expect("proved"), &next);
    });
    let settled = support::wait_settled(&engine);
    assert_eq!(settled.ledger.charged_bytes, 0);
    engine.shutdown_blocking();
}
