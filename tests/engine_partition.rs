//! The GPU actor's whole-partition path on the CPU: a `PartitionProver` computed with the CPU
//! stages stands in for the device. Proofs verify and a wrong input fails; B_G2 computed by the
//! GPU stage reaches the BG2 actor (which then only assembles); a partition the "device"
//! refuses for memory takes the per-call path with a/b/c intact (B_G2 still on the stage that
//! computes it); the ledger reads zero after.
//! A job's key is made ready on the device before its first partition arrives there, and a
//! warm-up that fails or panics costs nothing else.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use baton::gpu::GpuError;
use baton::groth16::backend::CpuBackend;
use baton::groth16::prover::{Abc, G1Sums, Witness};
use baton::stages::partition::{AbcInput, PartitionProver, PartitionSums};
use baton::stages::pipeline::{Bg2Stage, CpuBg2, DeviceStage, Stages};
use baton::{Engine, Proof, ProvingKey, Request, Result};
use blstrs::G2Projective;

/// How [`CpuWhole`]'s warm-up ends.
#[derive(Clone, Copy, Default, PartialEq)]
enum WarmEnd {
    #[default]
    Uploads,
    Fails,
    Panics,
}

/// What the "device" saw, in order: a warm-up (key id, with B_G2) or a partition (key id).
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    Warm(u64, bool),
    Partition(u64),
}

/// The CPU stages behind the whole-partition interface; refuses every call for memory when
/// `oom` (before touching a/b/c, as the device does), or fails it as a bug would when `bug`.
/// Logs its warm-ups and partitions; a warm-up ends as `warm` says.
#[derive(Default)]
struct CpuWhole {
    oom: bool,
    bug: bool,
    warm: WarmEnd,
    calls: AtomicUsize,
    seen: Mutex<Vec<Seen>>,
}

impl CpuWhole {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("log").clone()
    }
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
        self.seen
            .lock()
            .expect("log")
            .push(Seen::Partition(pk.id()));
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

    fn warm(&self, pk: &ProvingKey, with_b_g2: bool) -> Result<u64> {
        self.seen
            .lock()
            .expect("log")
            .push(Seen::Warm(pk.id(), with_b_g2));
        match self.warm {
            WarmEnd::Uploads => Ok(pk.heap_bytes()),
            WarmEnd::Fails => Err(GpuError::Internal("warm-up refused by the test".into()).into()),
            WarmEnd::Panics => panic!("warm-up panics in the test"),
        }
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

/// Refused for memory, a partition takes the per-call path; a stage that computes B_G2 does it
/// there too (the BG2 actor only assembles), one that does not leaves it to the BG2 actor.
#[test]
fn a_partition_refused_for_memory_takes_the_per_call_path() {
    assert_eq!(run(true, true), (4, 0, 4));
    assert_eq!(run(true, false), (4, 4, 0));
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

/// `baton_warmups_total{result}` summed over devices.
fn warmups(engine: &baton::Engine, result: &str) -> u64 {
    let label = format!("result=\"{result}\"");
    engine
        .metric_handles()
        .render()
        .lines()
        .filter(|l| l.starts_with("baton_warmups_total{") && l.contains(&label))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// Two jobs of one key on one device: each job's admission asks the device to make the key
/// ready (with B_G2 as the stage computes it), and that reaches the device before the job's
/// first partition does.
#[test]
fn each_job_warms_its_key_on_the_device_before_its_first_partition() {
    for with_b_g2 in [true, false] {
        let pk = support::key();
        let whole = Arc::new(CpuWhole::default());
        let (engine, _) = engine_with(whole.clone(), with_b_g2);
        for range in [700..703, 710..712] {
            let circuits = support::circuits(range);
            let proofs = engine
                .prove_blocking(Request::new(pk.clone(), circuits.clone()))
                .expect("prove");
            support::check_proofs(&pk, &proofs, &circuits);
        }
        support::wait_settled(&engine);
        let seen = whole.seen();
        let warm = Seen::Warm(pk.id(), with_b_g2);
        let part = Seen::Partition(pk.id());
        // The second job starts after the first has answered: warm, 3 partitions, warm, 2.
        let expected = [
            vec![warm.clone()],
            vec![part.clone(); 3],
            vec![warm],
            vec![part; 2],
        ];
        assert_eq!(seen, expected.concat(), "with_b_g2 = {with_b_g2}");
        assert!(
            support::metric(&engine, "baton_mailbox_depth{actor=\"gpu\"} 0"),
            "warm-ups leave the GPU mailbox count where it was"
        );
        assert_eq!(warmups(&engine, "uploaded"), 2, "one upload per job");
        assert_eq!(warmups(&engine, "failed") + warmups(&engine, "panicked"), 0);
        engine.shutdown_blocking();
    }
}

/// A warm-up that fails, or panics (the GPU actor restarts), loses only its head start: every
/// proof of the job verifies and the ledger settles.
#[test]
fn a_failing_or_panicking_warm_up_costs_nothing_else() {
    for end in [WarmEnd::Fails, WarmEnd::Panics] {
        let pk = support::key();
        let whole = Arc::new(CpuWhole {
            warm: end,
            ..CpuWhole::default()
        });
        let (engine, _) = engine_with(whole.clone(), true);
        let circuits = support::circuits(720..723);
        let proofs = engine
            .prove_blocking(Request::new(pk.clone(), circuits.clone()))
            .expect("prove");
        support::check_proofs(&pk, &proofs, &circuits);
        support::wait_settled(&engine);
        assert_eq!(
            whole.calls.load(Ordering::Relaxed),
            3,
            "no partition retried"
        );
        let restarts = "baton_restarts_total{actor=\"gpu\"} 1";
        assert_eq!(
            support::metric(&engine, restarts),
            end == WarmEnd::Panics,
            "a panicking warm-up restarts the GPU actor, a failing one does not"
        );
        let (ended, other) = match end {
            WarmEnd::Fails => ("failed", "panicked"),
            _ => ("panicked", "failed"),
        };
        assert_eq!(warmups(&engine, ended), 1, "{ended} counted");
        assert_eq!(warmups(&engine, other), 0, "{other} not counted");
        assert_eq!(warmups(&engine, "uploaded"), 0);
        engine.shutdown_blocking();
    }
}
