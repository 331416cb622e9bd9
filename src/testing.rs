//! Fakes for actor tests and embedders (feature `test-util`): pipeline stages that sleep, fail
//! or panic on cue and otherwise run the real CPU code (so proofs still verify), counters the
//! test hands in as `Arc<AtomicUsize>`, and [`Stages`](crate::stages::pipeline::Stages) factories built from them.
//!
//! ```ignore
//! let gpu = FakeGpu::new().delay(Duration::from_millis(50));
//! let stages = Stages { gpu: gpu.factory(), ..cpu_stages() };
//! let engine = Engine::start_with(cfg, stages)?;
//! ```

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use blstrs::Scalar;

pub use crate::groth16::tiled::tiled_key;

use crate::engine::request::Request;
use crate::engine::Engine;
use crate::groth16::backend::{Backend, CpuBackend};
use crate::groth16::error::{Error, Result};
use crate::groth16::key::ProvingKey;
use crate::groth16::proof::Proof;
use crate::groth16::prover::{self, Abc, G1Sums, Witness};
use crate::stages::pipeline::{
    Bg2Stage, CpuBg2, Factory, GpuStage, PartitionCircuit, RealSynthesis, Stages, Synthesizer,
};

/// The real stages on the CPU backend (what `Engine::start` runs with `gpu.backend = cpu`).
pub fn cpu_stages() -> Stages {
    Stages::with_backend(Arc::new(|_| Arc::new(CpuBackend) as Arc<dyn Backend>))
}

/// Wraps `factory` so that every instance it builds counts in `built`: the first start of each
/// actor and every restart after a panic.
pub fn counted<T: ?Sized + 'static>(factory: Factory<T>, built: Arc<AtomicUsize>) -> Factory<T> {
    Arc::new(move |index| {
        built.fetch_add(1, Ordering::SeqCst);
        factory(index)
    })
}

/// How many callers are inside a section now, and the most there were at once.
#[derive(Clone, Debug, Default)]
pub struct Gauge {
    /// Inside now.
    pub now: Arc<AtomicUsize>,
    /// Most at once since creation.
    pub max: Arc<AtomicUsize>,
}

impl Gauge {
    /// A gauge at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one caller in until the guard drops.
    pub fn enter(&self) -> GaugeGuard {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
        GaugeGuard(self.clone())
    }

    /// Inside now.
    pub fn now(&self) -> usize {
        self.now.load(Ordering::SeqCst)
    }

    /// Most at once.
    pub fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

/// Counts out of its [`Gauge`] on drop (also when a stage unwinds).
pub struct GaugeGuard(Gauge);

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a [`FakeGpu`] failure predicate is shown for each partition it takes.
#[derive(Debug)]
pub struct GpuCall<'a> {
    /// 1 for the first `g1_msms` call across every instance sharing the counter, restarts
    /// included.
    pub number: usize,
    /// The partition's public inputs (without the constant one).
    pub public_inputs: &'a [Scalar],
}

/// Decides whether a [`FakeGpu`] call fails.
pub type GpuPredicate = Arc<dyn Fn(&GpuCall<'_>) -> bool + Send + Sync>;

/// A GPU stage that runs the real CPU backend, optionally after a sleep (a slow device) and
/// optionally failing, retryably, on the partitions a predicate picks. Clones share counters.
#[derive(Clone)]
pub struct FakeGpu {
    delay: Duration,
    in_flight: Gauge,
    calls: Arc<AtomicUsize>,
    failures: Arc<AtomicUsize>,
    fail_when: Option<GpuPredicate>,
    kill_on_call: Option<usize>,
}

impl Default for FakeGpu {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeGpu {
    /// No delay, no failures, fresh counters.
    pub fn new() -> Self {
        FakeGpu {
            delay: Duration::ZERO,
            in_flight: Gauge::new(),
            calls: Arc::new(AtomicUsize::new(0)),
            failures: Arc::new(AtomicUsize::new(0)),
            fail_when: None,
            kill_on_call: None,
        }
    }

    /// Sleeps `delay` at the start of each H computation, while the whole footprint is charged.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Counts partitions inside the H computation (sleep included) in `gauge`.
    pub fn in_flight(mut self, gauge: Gauge) -> Self {
        self.in_flight = gauge;
        self
    }

    /// Counts `g1_msms` calls in `calls` (also numbers them for the predicate).
    pub fn calls(mut self, calls: Arc<AtomicUsize>) -> Self {
        self.calls = calls;
        self
    }

    /// Counts injected failures in `failures`.
    pub fn failures(mut self, failures: Arc<AtomicUsize>) -> Self {
        self.failures = failures;
        self
    }

    /// Fails `g1_msms` with a retryable backend error whenever `when` says so.
    pub fn fail_when(
        mut self,
        when: impl Fn(&GpuCall<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.fail_when = Some(Arc::new(when));
        self
    }

    /// Fails every partition whose public input `index` equals `value`.
    pub fn fail_on_public_input(self, index: usize, value: Scalar) -> Self {
        self.fail_when(move |c| c.public_inputs.get(index) == Some(&value))
    }

    /// Fails the `k`-th call only (1-based).
    pub fn fail_on_call(self, k: usize) -> Self {
        self.fail_when(move |c| c.number == k)
    }

    /// Kills the GPU actor's thread during the `k`-th `g1_msms` call (1-based), with the
    /// partition it holds: a stand-in for any fault that takes an actor down past its
    /// `catch_unwind` (the panic's payload panics again when the actor drops it). The grant of
    /// that partition is dropped unsettled.
    pub fn kill_thread_on_call(mut self, k: usize) -> Self {
        self.kill_on_call = Some(k);
        self
    }

    /// A factory of clones of this stage, one per device (and again on each restart).
    pub fn factory(&self) -> Factory<dyn GpuStage> {
        let me = self.clone();
        Arc::new(move |_| Box::new(me.clone()) as Box<dyn GpuStage>)
    }
}

impl GpuStage for FakeGpu {
    fn name(&self) -> String {
        "fake-gpu".into()
    }

    fn compute_h(&mut self, _pk: &ProvingKey, abc: &mut Abc) -> Result<Vec<Scalar>> {
        let _inside = self.in_flight.enter();
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        prover::compute_h(&CpuBackend, abc)
    }

    fn g1_msms(&mut self, pk: &ProvingKey, w: &Witness, h: &[Scalar]) -> Result<G1Sums> {
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let call = GpuCall {
            number,
            public_inputs: w.public_inputs(),
        };
        if self.kill_on_call == Some(number) {
            std::panic::panic_any(ThreadKiller);
        }
        if self.fail_when.as_ref().is_some_and(|when| when(&call)) {
            self.failures.fetch_add(1, Ordering::SeqCst);
            return Err(Error::Backend {
                backend: "fake-gpu",
                reason: format!("injected failure on GPU call {number}"),
            });
        }
        prover::g1_msms(&CpuBackend, pk, w, h)
    }
}

/// A panic payload whose drop panics: the actor catches the first panic, drops the payload, and
/// the second panic unwinds its thread out of the handler.
struct ThreadKiller;

impl Drop for ThreadKiller {
    fn drop(&mut self) {
        // A fake: dying here, outside the actor's catch_unwind, is its whole purpose.
        panic!("fake GPU: the actor's thread dies with its partition");
    }
}

/// Real synthesis that panics on one call, counted across every instance sharing `calls`
/// (so across restarts, which rebuild the stage from its factory).
#[derive(Clone, Debug)]
pub struct PanickingSynthesis {
    /// The call that panics, 1-based.
    pub panic_on_call: usize,
    /// Calls so far.
    pub calls: Arc<AtomicUsize>,
}

impl PanickingSynthesis {
    /// Panics on call `k` (1-based), counting calls in `calls`.
    pub fn new(k: usize, calls: Arc<AtomicUsize>) -> Self {
        PanickingSynthesis {
            panic_on_call: k,
            calls,
        }
    }

    /// A factory of clones, one per worker and restart.
    pub fn factory(&self) -> Factory<dyn Synthesizer> {
        let me = self.clone();
        Arc::new(move |_| Box::new(me.clone()) as Box<dyn Synthesizer>)
    }
}

impl Synthesizer for PanickingSynthesis {
    fn synthesize(
        &mut self,
        circuit: &dyn PartitionCircuit,
        pk: &ProvingKey,
    ) -> Result<(Abc, Witness)> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.panic_on_call {
            // A fake: panicking on cue is its whole purpose.
            panic!("injected panic on synthesis call {n}");
        }
        RealSynthesis.synthesize(circuit, pk)
    }
}

/// One proof a [`RecordingBg2`] made, with the public inputs of its witness.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// Public inputs (without the constant one).
    pub public_inputs: Vec<Scalar>,
    /// The proof.
    pub proof: Proof,
}

/// The real B_G2 stage that also keeps a copy of every proof it makes, so a test can check
/// work whose reply it cannot read.
#[derive(Clone, Debug, Default)]
pub struct RecordingBg2 {
    /// Every proof made so far, in completion order.
    pub proofs: Arc<Mutex<Vec<Recorded>>>,
}

impl RecordingBg2 {
    /// An empty record.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the proofs made so far.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.proofs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A factory of clones sharing the record.
    pub fn factory(&self) -> Factory<dyn Bg2Stage> {
        let me = self.clone();
        Arc::new(move |_| Box::new(me.clone()) as Box<dyn Bg2Stage>)
    }
}

impl Bg2Stage for RecordingBg2 {
    fn finish(&mut self, pk: &ProvingKey, w: &Witness, g1: &G1Sums) -> Result<Proof> {
        let proof = CpuBg2.finish(pk, w, g1)?;
        self.proofs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Recorded {
                public_inputs: w.public_inputs().to_vec(),
                proof,
            });
        Ok(proof)
    }
}

struct NoopWake;

impl Wake for NoopWake {
    fn wake(self: Arc<Self>) {}
}

/// Submits `request` without waiting for its reply (the reply is dropped; the job still runs
/// to the end). Lets a test hand the engine to `shutdown_blocking` while that job is in flight;
/// read its proofs through a [`RecordingBg2`].
pub fn submit_detached(engine: &Engine, request: Request) {
    let waker = Waker::from(Arc::new(NoopWake));
    let mut cx = Context::from_waker(&waker);
    let mut fut = Box::pin(engine.prove(request));
    // The first poll posts the Submit message; the reply cannot be ready before the actors run.
    if let Poll::Ready(r) = fut.as_mut().poll(&mut cx) {
        tracing::debug!(ready = r.is_ok(), "detached submit answered at once");
    }
}

/// A circuit whose synthesis first sleeps for a while: sets the pace of daemon tests (the
/// built-in kinds' `synth_delay_ms`), so that queues fill and cancels land mid-job.
#[derive(Clone, Debug)]
pub struct Paced<C> {
    inner: C,
    delay: Duration,
    fail_while: Option<std::path::PathBuf>,
}

impl<C> Paced<C> {
    /// `inner`, synthesized after `delay_ms` milliseconds of sleep.
    pub fn new(inner: C, delay_ms: u64) -> Self {
        Paced {
            inner,
            delay: Duration::from_millis(delay_ms),
            fail_while: None,
        }
    }

    /// Makes its synthesis fail (after the delay) while the file `path` exists: a job that
    /// fails for a cause outside its request, as a device fault would, for retry tests.
    pub fn fail_while(mut self, path: std::path::PathBuf) -> Self {
        self.fail_while = Some(path);
        self
    }
}

impl<C: bellperson::Circuit<Scalar>> bellperson::Circuit<Scalar> for Paced<C> {
    fn synthesize<CS: bellperson::ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), bellperson::SynthesisError> {
        std::thread::sleep(self.delay);
        if self.fail_while.as_ref().is_some_and(|p| p.exists()) {
            return Err(bellperson::SynthesisError::AssignmentMissing);
        }
        self.inner.synthesize(cs)
    }
}
