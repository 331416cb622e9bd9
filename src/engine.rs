//! The embedding API: start the actor system, submit requests, read status and metrics, shut
//! down gracefully. The actor system runs on its own thread; every call here is thread-safe.

use std::sync::Arc;
use std::thread::JoinHandle;

use actix::{Actor, Addr, AsyncContext, SyncArbiter};
use tokio::sync::oneshot;

use crate::actors::{
    post, Bg2Actor, DeallocActor, GpuActor, Supervisor, SupervisorParts, SynthesisActor,
};
use crate::backend::{Backend, CpuBackend};
use crate::config::{BackendChoice, Config, ConfigError};
use crate::key::ProvingKey;
use crate::ledger::{
    auto_budget_bytes, Footprint, Ledger, LedgerConfig, LedgerSnapshot, PartitionShape,
};
use crate::messages::{Shutdown, Status, Submit};
use crate::metrics::Metrics;
use crate::pipeline::{PartitionCircuit, Stages};
use crate::proof::Proof;

/// Why the engine refused or failed a request, or could not start.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    /// The request cannot be run at all (too large for the budget, empty, ...).
    #[error("request rejected: {0}")]
    Rejected(String),
    /// A partition failed for good.
    #[error("job {job}: partition {index} failed in the {actor} actor after {attempts} attempt(s): {cause}")]
    PartitionFailed {
        /// Job id.
        job: u64,
        /// Partition index in the request.
        index: usize,
        /// Attempts made.
        attempts: u32,
        /// Actor kind where the last attempt failed.
        actor: &'static str,
        /// The last cause.
        cause: String,
    },
    /// The engine no longer takes requests.
    #[error("the engine is shutting down")]
    ShuttingDown,
    /// The actor system is gone.
    #[error("the engine has stopped")]
    Stopped,
    /// Start-up failed.
    #[error("engine start failed: {0}")]
    Start(String),
}

impl From<ConfigError> for EngineError {
    fn from(e: ConfigError) -> Self {
        EngineError::Start(e.to_string())
    }
}

/// Where one partition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionState {
    /// Waiting for a grant.
    Queued,
    /// On a synthesis worker.
    Synthesizing,
    /// Synthesized, waiting for a GPU actor.
    QueuedForGpu,
    /// On a GPU actor.
    OnGpu,
    /// On the B_G2 actor.
    Bg2,
    /// Proof made.
    Done,
    /// Given up.
    Failed,
}

/// One job in [`EngineStatus`].
#[derive(Clone, Debug)]
pub struct JobStatus {
    /// Job id.
    pub id: u64,
    /// Each partition's state.
    pub partitions: Vec<PartitionState>,
    /// Whether the job has failed (its remaining buffers are being settled).
    pub failed: bool,
}

/// A snapshot of the engine.
#[derive(Clone, Debug)]
pub struct EngineStatus {
    /// Jobs in flight.
    pub jobs: Vec<JobStatus>,
    /// Partitions waiting for a grant.
    pub queued: usize,
    /// The ledger by class and stage.
    pub ledger: LedgerSnapshot,
    /// Partitions synthesized and not yet taken by a GPU actor.
    pub synthesized_alive: usize,
    /// The most of those at once since start.
    pub synthesized_alive_peak: usize,
}

/// A proving request: one key, one circuit per partition.
pub struct Request {
    pub(crate) pk: Arc<ProvingKey>,
    pub(crate) circuits: Vec<Arc<dyn PartitionCircuit>>,
    footprint: Option<Footprint>,
}

impl Request {
    /// Proofs of `circuits` (each a partition) under `pk`.
    pub fn new<C: PartitionCircuit>(pk: Arc<ProvingKey>, circuits: Vec<C>) -> Self {
        let circuits = circuits
            .into_iter()
            .map(|c| Arc::new(c) as Arc<dyn PartitionCircuit>)
            .collect();
        Request {
            pk,
            circuits,
            footprint: None,
        }
    }

    /// States the per-partition footprint instead of deriving it from the key (simulations).
    pub fn with_footprint(mut self, footprint: Footprint) -> Self {
        self.footprint = Some(footprint);
        self
    }

    /// The ledger footprint of one partition: stated, or from the key's shape.
    pub fn footprint(&self) -> Footprint {
        self.footprint.unwrap_or_else(|| footprint_of(&self.pk))
    }
}

/// A partition's footprint from its key: d = |H| + 1, inputs = |IC|, aux = |L|.
pub fn footprint_of(pk: &ProvingKey) -> Footprint {
    let d = pk.h.len() as u64 + 1;
    let inputs = pk.vk.ic.len() as u64;
    Footprint::for_shape(PartitionShape {
        constraints: d.saturating_sub(inputs),
        inputs,
        aux: pk.l.len() as u64,
    })
}

/// The running engine.
pub struct Engine {
    supervisor: Addr<Supervisor>,
    metrics: Metrics,
    backend: String,
    metrics_addr: Option<std::net::SocketAddr>,
    thread: std::sync::Mutex<Option<JoinHandle<()>>>,
    system: actix::System,
}

fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One device's backend for the engine, and its whole-partition path when it has one.
pub type PickedBackend = (
    Arc<dyn Backend>,
    Option<Arc<dyn crate::partition::PartitionProver>>,
);

/// Picks the backend for `choice` (the CUDA one with the `[gpu]` knobs `opts`), saying which
/// and why.
pub fn pick_backend(
    choice: BackendChoice,
    device: usize,
    opts: &crate::gpu::GpuOptions,
) -> Result<PickedBackend, EngineError> {
    let cpu = || -> PickedBackend { (Arc::new(CpuBackend), None) };
    match choice {
        BackendChoice::Cpu => Ok(cpu()),
        BackendChoice::Cuda => crate::gpu::cuda_backend(device, opts)
            .map(|d| (d.backend, Some(d.partition)))
            .map_err(|e| EngineError::Start(e.to_string())),
        BackendChoice::Auto => match crate::gpu::cuda_backend(device, opts) {
            Ok(d) => Ok((d.backend, Some(d.partition))),
            Err(e) => {
                tracing::info!(reason = %e, "using the CPU backend");
                Ok(cpu())
            }
        },
    }
}

impl Engine {
    /// Starts the engine with the real stages on the configured backend.
    pub fn start(cfg: Config) -> Result<Self, EngineError> {
        // Before any device is opened (a duplicate index would open one twice).
        cfg.validate()?;
        let picked: Vec<PickedBackend> = cfg
            .gpu_devices
            .iter()
            .map(|d| pick_backend(cfg.backend, *d, &cfg.gpu))
            .collect::<Result<_, _>>()?;
        let names: Vec<String> = picked.iter().map(|b| b.0.name()).collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let bg2_on_gpu = cfg.bg2_on_gpu(threads);
        let device_partition = cfg.gpu.device_partition;
        let backends: Arc<Vec<Arc<dyn Backend>>> =
            Arc::new(picked.iter().map(|b| b.0.clone()).collect());
        let picked = Arc::new(picked);
        let mut stages = Stages::with_backend(Arc::new(|_| Arc::new(CpuBackend)));
        stages.gpu = Arc::new(move |device| -> Box<dyn crate::pipeline::GpuStage> {
            match picked.get(device) {
                Some((backend, Some(partition))) if device_partition => {
                    Box::new(crate::pipeline::DeviceStage {
                        backend: backend.clone(),
                        partition: partition.clone(),
                        with_b_g2: bg2_on_gpu,
                    })
                }
                Some((backend, _)) => Box::new(crate::pipeline::BackendStage(backend.clone())),
                None => Box::new(crate::pipeline::BackendStage(Arc::new(CpuBackend))),
            }
        });
        tracing::info!(bg2_on_gpu, threads, device_partition, "B_G2 placement");
        if bg2_on_gpu {
            stages.bg2 = Arc::new(move |worker| {
                let backend = backends
                    .get(worker % backends.len().max(1))
                    .cloned()
                    .unwrap_or_else(|| Arc::new(CpuBackend) as Arc<dyn Backend>);
                Box::new(crate::pipeline::BackendBg2(backend))
            });
        }
        let mut engine = Self::start_with(cfg, stages)?;
        engine.backend = names.join(",");
        tracing::info!(backend = %engine.backend, "engine started");
        Ok(engine)
    }

    /// Starts the engine with the given stage implementations (tests, simulations, embedders).
    pub fn start_with(cfg: Config, stages: Stages) -> Result<Self, EngineError> {
        cfg.validate()?;
        let budget_bytes = match cfg.budget_bytes {
            Some(b) => b,
            None => {
                let avail = available_memory_bytes().ok_or_else(|| {
                    EngineError::Start("cannot read available memory; set memory.budget".into())
                })?;
                auto_budget_bytes(avail, cfg.margin_bytes, 0)
                    .map_err(|e| EngineError::Start(e.to_string()))?
            }
        };
        let ledger = Ledger::new(LedgerConfig {
            budget_bytes,
            slots: cfg.effective_slots(),
            policy: cfg.policy,
        })
        .map_err(|e| EngineError::Start(e.to_string()))?;
        let metrics = Metrics::new().map_err(|e| EngineError::Start(e.to_string()))?;
        let metrics_addr = match &cfg.metrics_listen {
            Some(addr) => Some(
                metrics
                    .serve(addr)
                    .map_err(|e| EngineError::Start(format!("metrics.listen {addr}: {e}")))?,
            ),
            None => None,
        };
        let parts = SupervisorParts {
            ledger,
            synthesis_workers: cfg.synthesis_workers,
            retry_attempts: cfg.retry_attempts,
            metrics: metrics.clone(),
            reserve_keys: cfg.budget_bytes.is_none(),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let m = metrics.clone();
        let thread = std::thread::Builder::new()
            .name("baton-actors".into())
            .spawn(move || {
                let sys = actix::System::new();
                sys.block_on(async move {
                    let addr = spawn_actors(&cfg, stages, parts, m);
                    let _ = tx.send((addr, actix::System::current()));
                });
                if let Err(e) = sys.run() {
                    tracing::error!(error = %e, "actor system ended with an error");
                }
            })
            .map_err(|e| EngineError::Start(e.to_string()))?;
        let (supervisor, system) = rx
            .recv()
            .map_err(|_| EngineError::Start("actor system did not start".into()))?;
        Ok(Engine {
            supervisor,
            metrics,
            backend: "custom".into(),
            metrics_addr,
            thread: std::sync::Mutex::new(Some(thread)),
            system,
        })
    }

    /// Proves every partition of `request`; the proofs come back in request order.
    pub async fn prove(&self, request: Request) -> Result<Vec<Proof>, EngineError> {
        let (reply, rx) = oneshot::channel();
        post(
            &self.metrics,
            "supervisor",
            &self.supervisor,
            Submit { request, reply },
        );
        rx.await.map_err(|_| EngineError::Stopped)?
    }

    /// [`Engine::prove`] for callers without an async runtime.
    pub fn prove_blocking(&self, request: Request) -> Result<Vec<Proof>, EngineError> {
        let (reply, rx) = oneshot::channel();
        post(
            &self.metrics,
            "supervisor",
            &self.supervisor,
            Submit { request, reply },
        );
        rx.blocking_recv().map_err(|_| EngineError::Stopped)?
    }

    /// Jobs, partitions and the ledger right now.
    pub async fn status(&self) -> Result<EngineStatus, EngineError> {
        let (reply, rx) = oneshot::channel();
        post(
            &self.metrics,
            "supervisor",
            &self.supervisor,
            Status { reply },
        );
        rx.await.map_err(|_| EngineError::Stopped)
    }

    /// [`Engine::status`] for callers without an async runtime.
    pub fn status_blocking(&self) -> Result<EngineStatus, EngineError> {
        let (reply, rx) = oneshot::channel();
        post(
            &self.metrics,
            "supervisor",
            &self.supervisor,
            Status { reply },
        );
        rx.blocking_recv().map_err(|_| EngineError::Stopped)
    }

    /// The prometheus registry with every `baton_*` metric.
    pub fn metrics(&self) -> &prometheus::Registry {
        &self.metrics.registry
    }

    /// The metric handles, for embedders that read values directly.
    pub fn metric_handles(&self) -> &Metrics {
        &self.metrics
    }

    /// Mean seconds per partition of each stage seen so far (`baton_stage_seconds`), in
    /// pipeline order: synthesis, queued_gpu, h, g1_msm, bg2, dealloc.
    pub fn stage_means(&self) -> Vec<(&'static str, f64)> {
        let h = &self.metrics.stage_seconds;
        ["synthesis", "queued_gpu", "h", "g1_msm", "bg2", "dealloc"]
            .into_iter()
            .filter_map(|s| {
                let m = h.get_metric_with_label_values(&[s]).ok()?;
                let n = m.get_sample_count();
                (n > 0).then(|| (s, m.get_sample_sum() / n as f64))
            })
            .collect()
    }

    /// Which backend(s) the GPU actors use.
    pub fn backend_name(&self) -> &str {
        &self.backend
    }

    /// Where `/metrics` is served, if `metrics.listen` was set.
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        self.metrics_addr
    }

    /// Refuses new requests, waits for every job in flight to end and every buffer to be
    /// freed, then stops the actors. Callers still waiting on `prove` get their proofs first.
    pub fn shutdown_blocking(&self) {
        let (reply, rx) = oneshot::channel();
        post(
            &self.metrics,
            "supervisor",
            &self.supervisor,
            Shutdown { reply },
        );
        let _ = rx.blocking_recv();
        self.stop_system();
    }

    /// The async form of [`Engine::shutdown_blocking`].
    pub async fn shutdown(&self) {
        let (reply, rx) = oneshot::channel();
        post(
            &self.metrics,
            "supervisor",
            &self.supervisor,
            Shutdown { reply },
        );
        let _ = rx.await;
        self.stop_system();
    }

    fn stop_system(&self) {
        self.system.stop();
        let handle = match self.thread.lock() {
            Ok(mut g) => g.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(t) = handle {
            let _ = t.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop_system();
    }
}

fn spawn_actors(
    cfg: &Config,
    stages: Stages,
    parts: SupervisorParts,
    metrics: Metrics,
) -> Addr<Supervisor> {
    let workers = cfg.synthesis_workers;
    let devices = cfg.gpu_devices.len();
    let bg2_workers = cfg.bg2_workers;
    Supervisor::create(move |ctx| {
        let sup_addr = ctx.address();
        let (m, s) = (metrics.clone(), sup_addr.clone());
        let dealloc = SyncArbiter::start(1, move || DeallocActor {
            supervisor: s.clone(),
            metrics: m.clone(),
            delay: std::time::Duration::ZERO,
        });
        let (m, s, d, f) = (
            metrics.clone(),
            sup_addr.clone(),
            dealloc.clone(),
            stages.bg2.clone(),
        );
        let bg2_counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let bg2 = SyncArbiter::start(bg2_workers, move || {
            let i = thread_index(&bg2_counter) % bg2_workers;
            Bg2Actor {
                stage: f(i),
                supervisor: s.clone(),
                dealloc: d.clone(),
                metrics: m.clone(),
            }
        });
        let (m, s, d, b, f) = (
            metrics.clone(),
            sup_addr.clone(),
            dealloc.clone(),
            bg2,
            stages.gpu.clone(),
        );
        let gpu_counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        // One thread per device, all sharing one mailbox (an idle device takes the next
        // partition). The factory runs on the actor's own thread, so a restarted actor finds its
        // device index in a thread-local.
        let gpu = SyncArbiter::start(devices, move || {
            let i = thread_index(&gpu_counter) % devices;
            let stage = f(i);
            // One label per device even when several run the same backend (e.g. "cpu:1").
            let name = stage.name();
            let device = if name.contains(':') {
                name
            } else {
                format!("{name}:{i}")
            };
            GpuActor {
                stage,
                device,
                supervisor: s.clone(),
                bg2: b.clone(),
                dealloc: d.clone(),
                metrics: m.clone(),
            }
        });
        let (m, s, d, f) = (
            metrics.clone(),
            sup_addr.clone(),
            dealloc,
            stages.synthesis.clone(),
        );
        let syn_counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let synthesis = SyncArbiter::start(workers, move || {
            let i = thread_index(&syn_counter) % workers;
            SynthesisActor {
                stage: f(i),
                supervisor: s.clone(),
                gpu: gpu.clone(),
                dealloc: d.clone(),
                metrics: m.clone(),
            }
        });
        let mut sup = Supervisor::new(parts);
        sup.attach(synthesis);
        sup
    })
}

thread_local! {
    static WORKER_INDEX: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// This thread's index within its pool: taken from `counter` on first use, kept across restarts.
fn thread_index(counter: &std::sync::atomic::AtomicUsize) -> usize {
    WORKER_INDEX.with(|c| {
        c.get().unwrap_or_else(|| {
            let i = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            c.set(Some(i));
            i
        })
    })
}
