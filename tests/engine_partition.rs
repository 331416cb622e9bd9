//! The GPU actor's whole-partition path on the CPU: a `PartitionProver` computed with the CPU
//! stages stands in for the device. Proofs verify and a wrong input fails; B_G2 computed by the
//! GPU stage reaches the BG2 actor (which then only assembles); a partition the "device"
//! refuses for memory takes the per-call path with a/b/c intact; the ledger reads zero after.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use baton::backend::CpuBackend;
use baton::gpu::GpuError;
use baton::partition::{AbcInput, PartitionProver, PartitionSums};
use baton::pipeline::{Bg2Stage, CpuBg2, DeviceStage, Stages};
use baton::prover::{Abc, G1Sums, Witness};
use baton::{Engine, Proof, ProvingKey, Request, Result};
use blstrs::G2Projective;

/// The CPU stages behind the whole-partition interface; refuses every call for memory when
/// `oom` (before touching a/b/c, as the device does), or fails it as a bug would when `bug`.
#[derive(Default)]
struct CpuWhole {
    oom: bool,
    bug: bool,
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
        if self.bug {
            return Err(GpuError::BadLaunch {
                kernel: "test",
                reason: "refused before the upload".into(),
            }
            .into());
        }
        let AbcInput::Host(abc) = abc else {
            panic!("the actor hands host a/b/c");
        };
        let mut mine = std::mem::take(abc);
        let sums = support::cpu_partition_sums(pk, &mut mine, w, with_b_g2);
        abc_done(mine);
        sums
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

fn engine_with(whole: Arc<CpuWhole>, with_b_g2: bool) -> (Engine, Counters) {
    let (full, assembled) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut stages = Stages::with_backend(Arc::new(|_| Arc::new(CpuBackend)));
    stages.gpu = Arc::new(move |_| {
        Box::new(DeviceStage {
            backend: Arc::new(CpuBackend),
            partition: whole.clone(),
            with_b_g2,
            recordings: None,
        })
    });
    let (f, a) = (full.clone(), assembled.clone());
    stages.bg2 = Arc::new(move |_| {
        Box::new(Counting {
            full: f.clone(),
            assembled: a.clone(),
        })
    });
    let engine = Engine::start_with(support::config(64 << 20, 2, None, 3), stages).expect("start");
    (engine, (full, assembled))
}

type Counters = (Arc<AtomicUsize>, Arc<AtomicUsize>);

fn run(oom: bool, with_b_g2: bool) -> (usize, usize, usize) {
    let pk = support::key();
    let whole = Arc::new(CpuWhole {
        oom,
        ..CpuWhole::default()
    });
    let (engine, (full, assembled)) = engine_with(whole.clone(), with_b_g2);
    let circuits = support::circuits(500..504);
    let proofs = engine
        .prove_blocking(Request::new(pk.clone(), circuits.clone()))
        .expect("prove");
    support::check_proofs(&pk, &proofs, &circuits);
    support::wait_settled(&engine);
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

#[test]
fn a_device_bug_fails_the_job_once_and_frees_everything() {
    let whole = Arc::new(CpuWhole {
        bug: true,
        ..CpuWhole::default()
    });
    let (engine, _) = engine_with(whole.clone(), true);
    let err = engine
        .prove_blocking(Request::new(support::key(), support::circuits(600..602)))
        .expect_err("a refused launch fails the job");
    assert!(
        err.to_string().contains("refused before the upload"),
        "{err}"
    );
    support::wait_settled(&engine);
    assert!(
        whole.calls.load(Ordering::Relaxed) <= 2,
        "a bug is not retried"
    );
    engine.shutdown_blocking();
}
