//! The GPU actor's whole-partition path on the CPU: a `PartitionProver` computed with the CPU
//! stages stands in for the device. Proofs verify and a wrong input fails; B_G2 computed by the
//! GPU stage reaches the BG2 actor (which then only assembles); a partition the "device"
//! refuses for memory takes the per-call path with a/b/c intact; the ledger reads zero after.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use baton::backend::CpuBackend;
use baton::circuits::{KnownCircuit, Synthetic};
use baton::config::BackendChoice;
use baton::gpu::GpuError;
use baton::partition::{AbcInput, PartitionProver, PartitionSums};
use baton::pipeline::{Bg2Stage, CpuBg2, DeviceStage, Stages};
use baton::prover::{self, Abc, G1Sums, Witness};
use baton::{Config, Engine, PreparedVerifyingKey, Proof, ProvingKey, Request, Result, Scalar};
use blstrs::G2Projective;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The CPU stages behind the whole-partition interface; refuses every call for memory when
/// `oom` (before touching a/b/c, as the device does).
#[derive(Default)]
struct CpuWhole {
    oom: bool,
    calls: AtomicUsize,
}

impl PartitionProver for CpuWhole {
    fn prove_partition(
        &self,
        pk: &ProvingKey,
        abc: AbcInput<'_>,
        w: &Witness,
        with_b_g2: bool,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Result<PartitionSums> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if self.oom {
            return Err(GpuError::OutOfMemory {
                what: "test",
                need_bytes: 2,
                free_bytes: 1,
            }
            .into());
        }
        let AbcInput::Host(abc) = abc else {
            panic!("the actor hands host a/b/c");
        };
        let mut mine = std::mem::take(abc);
        let h = prover::compute_h(&CpuBackend, &mut mine)?;
        abc_done(mine);
        let g1 = prover::g1_msms(&CpuBackend, pk, w, &h)?;
        let b_g2 = match with_b_g2 {
            true => Some(prover::b_g2_msm(&CpuBackend, pk, w)?),
            false => None,
        };
        Ok(PartitionSums {
            g1,
            b_g2,
            times: Default::default(),
            peak_device_bytes: 0,
        })
    }
}

/// The CPU B_G2 stage, counting which of its two entries ran.
struct Counting {
    full: Arc<AtomicUsize>,
    assembled: Arc<AtomicUsize>,
}

impl Bg2Stage for Counting {
    fn finish(&mut self, pk: &ProvingKey, w: &Witness, g1: &G1Sums) -> Result<Proof> {
        self.full.fetch_add(1, Ordering::Relaxed);
        CpuBg2.finish(pk, w, g1)
    }

    fn finish_with_g2(
        &mut self,
        pk: &ProvingKey,
        g1: &G1Sums,
        b_g2: G2Projective,
    ) -> Result<Proof> {
        self.assembled.fetch_add(1, Ordering::Relaxed);
        CpuBg2.finish_with_g2(pk, g1, b_g2)
    }
}

fn run(oom: bool, with_b_g2: bool) -> (usize, usize, usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let size = 1 << 9;
    let pk = Arc::new(
        baton::generate_random_parameters(Synthetic::new(size, 0), &mut rng).expect("setup"),
    );
    let whole = Arc::new(CpuWhole {
        oom,
        ..CpuWhole::default()
    });
    let (full, assembled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut stages = Stages::with_backend(Arc::new(|_| Arc::new(CpuBackend)));
    let w = whole.clone();
    stages.gpu = Arc::new(move |_| {
        Box::new(DeviceStage {
            backend: Arc::new(CpuBackend),
            partition: w.clone(),
            with_b_g2,
        })
    });
    let (f, a) = (full.clone(), assembled.clone());
    stages.bg2 = Arc::new(move |_| {
        Box::new(Counting {
            full: f.clone(),
            assembled: a.clone(),
        })
    });
    let cfg = Config {
        budget_bytes: Some(64 << 20),
        synthesis_workers: 2,
        backend: BackendChoice::Cpu,
        ..Config::default()
    };
    let engine = Engine::start_with(cfg, stages).expect("start");
    let circuits: Vec<Synthetic> = (0..4).map(|s| Synthetic::new(size, 500 + s)).collect();
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("prove");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for (p, c) in proofs.iter().zip(&circuits) {
        let inputs = c.public_inputs();
        baton::verify(&pvk, p, &inputs).expect("verifies");
        let mut wrong = inputs.clone();
        wrong[2] += Scalar::ONE;
        assert!(
            baton::verify(&pvk, p, &wrong).is_err(),
            "a wrong input fails"
        );
    }
    let mut status = engine.status_blocking().expect("status");
    for _ in 0..200 {
        if status.ledger.charged_bytes == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        status = engine.status_blocking().expect("status");
    }
    assert_eq!(status.ledger.charged_bytes, 0, "ledger settles: {status:?}");
    engine.shutdown_blocking();
    (
        whole.calls.load(Ordering::Relaxed),
        full.load(Ordering::Relaxed),
        assembled.load(Ordering::Relaxed),
    )
}

#[test]
fn whole_partitions_with_b_g2_on_the_device_only_assemble_in_bg2() {
    assert_eq!(run(false, true), (4, 0, 4));
}

#[test]
fn whole_partitions_without_b_g2_leave_it_to_bg2() {
    assert_eq!(run(false, false), (4, 4, 0));
}

#[test]
fn a_partition_refused_for_memory_takes_the_per_call_path() {
    assert_eq!(run(true, true), (4, 4, 0));
}
