//! The engine: the embedding API (start the actor system, submit requests, read status and
//! metrics, shut down gracefully; every call is thread-safe, the actor system runs on its own
//! thread), with what it is made of: a request and its partitions' footprint (`request`), errors
//! and status snapshots (`status`), the messages between the actors (`messages`) and the actors
//! themselves (`actors`), and which backend each GPU actor runs (`backends`). The only folder
//! that imports actix.

pub mod actors;
pub mod backends;
pub mod messages;
pub mod request;
pub mod status;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use actix::Addr;
use tokio::sync::oneshot;

use self::actors::{post, spawn_actors, Supervisor, SupervisorParts};
use self::backends::real_stages;
use self::messages::{Cancel, CheckRoom, PinKey, RoomKey, Shutdown, Status, Submit, UnpinKey};
use crate::config::{BackendChoice, Config};
use crate::groth16::backend::Backend;
use crate::groth16::key::ProvingKey;
use crate::groth16::proof::Proof;
use crate::ledger::{self, AvailableMemory, Ledger, LedgerConfig};
use crate::metrics::{ActorKind, Metrics};
use crate::stages::pipeline::Stages;

pub use self::backends::pick_backend;
pub use self::request::{footprint_of, Request};
pub use self::status::{
    CancelOutcome, EngineError, EngineStatus, JobReport, JobStatus, PartitionState, PartitionTimes,
    Rejection, StartError,
};

/// A submitted job: its id and, later, its outcome.
pub struct JobTicket {
    /// The job id ([`Engine::cancel`] takes it).
    pub id: u64,
    outcome: oneshot::Receiver<Result<JobReport, EngineError>>,
}

impl JobTicket {
    /// Waits for the job's proofs and timings.
    pub async fn outcome(self) -> Result<JobReport, EngineError> {
        self.outcome.await.map_err(|_| EngineError::Stopped)?
    }

    /// [`JobTicket::outcome`] for callers without an async runtime.
    pub fn blocking_outcome(self) -> Result<JobReport, EngineError> {
        self.outcome
            .blocking_recv()
            .map_err(|_| EngineError::Stopped)?
    }
}

/// The running engine.
pub struct Engine {
    supervisor: Addr<Supervisor>,
    metrics: Metrics,
    backend: String,
    metrics_addr: Option<std::net::SocketAddr>,
    thread: std::sync::Mutex<Option<JoinHandle<()>>>,
    system: actix::System,
    next_job: AtomicU64,
    /// The backends of the real stages (empty for custom stages), for key eviction.
    backends: Vec<Arc<dyn Backend>>,
    /// The device index of each GPU actor, in order.
    devices: Vec<usize>,
}

impl Engine {
    /// Starts the engine with the real stages on the configured backend: one GPU actor per
    /// entry of `gpu.devices`, every visible GPU when it is empty.
    pub fn start(mut cfg: Config) -> Result<Self, EngineError> {
        // Before any device is opened (a duplicate index would open one twice).
        cfg.validate()?;
        let visible = match cfg.backend {
            BackendChoice::Cpu => 0,
            _ => crate::gpu::visible_devices(),
        };
        cfg.gpu_devices = cfg.resolved_devices(visible);
        tracing::info!(devices = ?cfg.gpu_devices, visible, "GPU actors");
        let (stages, names, backends) = real_stages(&cfg)?;
        let mut engine = Self::launch(cfg, stages, Arc::new(ledger::available_memory_bytes))?;
        engine.backend = names;
        engine.backends = backends;
        tracing::info!(backend = %engine.backend, "engine started");
        Ok(engine)
    }

    /// Starts the engine with the given stage implementations (tests, simulations, embedders);
    /// an empty `gpu.devices` runs one GPU actor.
    pub fn start_with(cfg: Config, stages: Stages) -> Result<Self, EngineError> {
        Self::start_with_memory(cfg, stages, Arc::new(ledger::available_memory_bytes))
    }

    /// [`Engine::start_with`], reading the host's available memory from `available` (at start
    /// for an `auto` budget, and at each key's first use under a stated one) instead of
    /// `/proc/meminfo`: for embedders that know their share (a cgroup), and for tests.
    pub fn start_with_memory(
        mut cfg: Config,
        stages: Stages,
        available: AvailableMemory,
    ) -> Result<Self, EngineError> {
        cfg.validate()?;
        cfg.gpu_devices = cfg.resolved_devices(0);
        Self::launch(cfg, stages, available)
    }

    /// Starts the actors for `cfg`, already validated, its devices resolved.
    fn launch(
        cfg: Config,
        stages: Stages,
        available: AvailableMemory,
    ) -> Result<Self, EngineError> {
        let plan = ledger::plan_budget(
            cfg.budget_bytes,
            cfg.margin_bytes,
            cfg.overcommit,
            available(),
        )
        .map_err(StartError::Ledger)?;
        let ledger = Ledger::new(LedgerConfig {
            budget_bytes: plan.budget_bytes,
            slots: cfg.effective_slots(),
            policy: cfg.policy,
        })
        .map_err(StartError::Ledger)?
        .with_key_budget(plan.keys);
        let metrics = Metrics::new().map_err(StartError::Metrics)?;
        let devices = cfg.gpu_devices.clone();
        let metrics_addr = match &cfg.metrics_listen {
            Some(addr) => {
                Some(
                    metrics
                        .serve(addr)
                        .map_err(|source| StartError::MetricsListen {
                            addr: addr.clone(),
                            source,
                        })?,
                )
            }
            None => None,
        };
        let parts = SupervisorParts {
            ledger,
            synthesis_workers: cfg.synthesis_workers,
            critical_workers: cfg.critical_workers,
            retry_attempts: cfg.retry_attempts,
            metrics: metrics.clone(),
            recordings: stages.recordings.clone(),
            abc_on_device: stages.abc_on_device,
            pack_witness: stages.abc_on_device && stages.pack_witness,
            available,
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
            .map_err(StartError::Thread)?;
        let (supervisor, system) = rx.recv().map_err(|_| StartError::NoActorSystem)?;
        Ok(Engine {
            supervisor,
            metrics,
            backend: "custom".into(),
            metrics_addr,
            thread: std::sync::Mutex::new(Some(thread)),
            system,
            next_job: AtomicU64::new(1),
            backends: Vec::new(),
            devices,
        })
    }

    /// Queues `request` and returns at once with its job id (for [`Engine::cancel`]) and a
    /// handle on its outcome.
    pub fn submit(&self, request: Request) -> JobTicket {
        let id = self.next_job.fetch_add(1, Ordering::Relaxed);
        let (reply, outcome) = oneshot::channel();
        self.tell(Submit { id, request, reply });
        JobTicket { id, outcome }
    }

    /// Proves every partition of `request`; the proofs come back in request order.
    pub async fn prove(&self, request: Request) -> Result<Vec<Proof>, EngineError> {
        self.submit(request).outcome().await.map(|r| r.proofs)
    }

    /// [`Engine::prove`] for callers without an async runtime.
    pub fn prove_blocking(&self, request: Request) -> Result<Vec<Proof>, EngineError> {
        self.submit(request).blocking_outcome().map(|r| r.proofs)
    }

    /// Whether `request` would be admitted now: a dry run of [`Engine::submit`]'s checks on the
    /// live ledger that counts nothing, stricter in one way: every job in flight whose
    /// partitions still wait must fit beside its key too. [`EngineError::NoRoom`] says how many
    /// bytes of proving keys in use stand in the way (and how many pinned keys no job uses
    /// hold): an embedder can [`unpin`](Engine::unpin_key) idle keys and ask again.
    pub async fn room_for(&self, request: &Request) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(CheckRoom {
            key: RoomKey::Loaded(request.pk.clone()),
            footprint: request.stated_footprint(),
            reply,
        });
        rx.await.map_err(|_| EngineError::Stopped)?
    }

    /// Whether a key of about `bytes` could be loaded now beside the keys in use and the jobs
    /// in flight (each of whose waiting partitions must still fit): the dry run of
    /// [`Engine::room_for`] for a key before it is read, so that idle keys can be unpinned
    /// before tens of GB arrive rather than after.
    pub async fn room_for_key(&self, bytes: u64) -> Result<(), EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(CheckRoom {
            key: RoomKey::Unloaded { bytes },
            footprint: None,
            reply,
        });
        rx.await.map_err(|_| EngineError::Stopped)?
    }

    /// Cancels job `job`: its waiting partitions leave the queue, its started ones are
    /// abandoned (each frees its buffers through Dealloc at its next stage), and its outcome is
    /// [`EngineError::Cancelled`].
    pub async fn cancel(&self, job: u64) -> Result<CancelOutcome, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(Cancel { job, reply });
        rx.await.map_err(|_| EngineError::Stopped)
    }

    /// Keeps `pk` resident until [`Engine::unpin_key`]: it counts as one more use of the key in
    /// the ledger (set aside from an auto budget, or checked to fit beside a stated one).
    /// Returns the bytes set aside now (0 when already held or the budget is stated).
    pub async fn pin_key(&self, pk: Arc<ProvingKey>) -> Result<u64, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(PinKey { pk, reply });
        rx.await.map_err(|_| EngineError::Stopped)?
    }

    /// Stops keeping key `key_id` resident; drops its device-resident bases on every backend.
    /// Returns the ledger bytes given back (0 while jobs still use it: they come back with the
    /// last one).
    pub async fn unpin_key(&self, key_id: u64) -> Result<u64, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(UnpinKey { key_id, reply });
        let freed = rx.await.map_err(|_| EngineError::Stopped)?;
        for b in self.backends.iter() {
            b.evict_key(key_id);
        }
        Ok(freed)
    }

    /// Free and total device memory of each backend, in `gpu.devices` order (`None` for the
    /// CPU backend and for custom stages).
    pub fn device_memory(&self) -> Vec<Option<(u64, u64)>> {
        self.backends.iter().map(|b| b.device_memory()).collect()
    }

    /// Device bytes the backends hold for key `key_id` (0 on the CPU backend).
    pub fn device_key_bytes(&self, key_id: u64) -> u64 {
        self.backends
            .iter()
            .map(|b| b.resident_key_bytes(key_id))
            .sum()
    }

    /// Jobs, partitions and the ledger right now.
    pub async fn status(&self) -> Result<EngineStatus, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(Status { reply });
        rx.await.map_err(|_| EngineError::Stopped)
    }

    /// [`Engine::status`] for callers without an async runtime.
    pub fn status_blocking(&self) -> Result<EngineStatus, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(Status { reply });
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
    /// pipeline order: synthesis, queued_gpu, expand, partition_call, resident, device_abc, h,
    /// g1_msm, bg2, dealloc.
    pub fn stage_means(&self) -> Vec<(&'static str, f64)> {
        self.metrics.step_means()
    }

    /// The device index each GPU actor runs on (`gpu.devices`, resolved at start).
    pub fn gpu_devices(&self) -> &[usize] {
        &self.devices
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
        self.tell(Shutdown { reply });
        let _ = rx.blocking_recv();
        self.stop_system();
    }

    /// The async form of [`Engine::shutdown_blocking`].
    pub async fn shutdown(&self) {
        let (reply, rx) = oneshot::channel();
        self.tell(Shutdown { reply });
        let _ = rx.await;
        self.stop_system();
    }

    /// Sends `msg` to the Supervisor (counted in its mailbox depth).
    fn tell<M>(&self, msg: M)
    where
        Supervisor: actix::Handler<M>,
        M: actix::Message + Send + 'static,
        M::Result: Send,
    {
        post(&self.metrics, ActorKind::Supervisor, &self.supervisor, msg);
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
