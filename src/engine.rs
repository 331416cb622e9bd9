//! The embedding API: start the actor system, submit requests, read status and metrics, shut
//! down gracefully. The actor system runs on its own thread; every call here is thread-safe.

use std::thread::JoinHandle;

use actix::Addr;
use tokio::sync::oneshot;

use crate::actors::{post, spawn_actors, Supervisor, SupervisorParts};
use crate::backend_pick::real_stages;
use crate::config::Config;
use crate::ledger::{self, Ledger, LedgerConfig};
use crate::messages::{Shutdown, Status, Submit};
use crate::metrics::{ActorKind, Metrics};
use crate::pipeline::Stages;
use crate::proof::Proof;

pub use crate::backend_pick::pick_backend;
pub use crate::request::{footprint_of, Request};
pub use crate::status::{EngineError, EngineStatus, JobStatus, PartitionState};

/// The running engine.
pub struct Engine {
    supervisor: Addr<Supervisor>,
    metrics: Metrics,
    backend: String,
    metrics_addr: Option<std::net::SocketAddr>,
    thread: std::sync::Mutex<Option<JoinHandle<()>>>,
    system: actix::System,
}

impl Engine {
    /// Starts the engine with the real stages on the configured backend.
    pub fn start(cfg: Config) -> Result<Self, EngineError> {
        // Before any device is opened (a duplicate index would open one twice).
        cfg.validate()?;
        let (stages, names) = real_stages(&cfg)?;
        let mut engine = Self::start_with(cfg, stages)?;
        engine.backend = names;
        tracing::info!(backend = %engine.backend, "engine started");
        Ok(engine)
    }

    /// Starts the engine with the given stage implementations (tests, simulations, embedders).
    pub fn start_with(cfg: Config, stages: Stages) -> Result<Self, EngineError> {
        cfg.validate()?;
        let plan = ledger::plan_budget(
            cfg.budget_bytes,
            cfg.margin_bytes,
            cfg.overcommit,
            ledger::available_memory_bytes(),
        )
        .map_err(|e| EngineError::Start(e.to_string()))?;
        let ledger = Ledger::new(LedgerConfig {
            budget_bytes: plan.budget_bytes,
            slots: cfg.effective_slots(),
            policy: cfg.policy,
        })
        .map_err(|e| EngineError::Start(e.to_string()))?
        .with_key_budget(plan.keys);
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
            recordings: stages.recordings.clone(),
            abc_on_device: stages.abc_on_device,
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
        self.tell(Submit { request, reply });
        rx.await.map_err(|_| EngineError::Stopped)?
    }

    /// [`Engine::prove`] for callers without an async runtime.
    pub fn prove_blocking(&self, request: Request) -> Result<Vec<Proof>, EngineError> {
        let (reply, rx) = oneshot::channel();
        self.tell(Submit { request, reply });
        rx.blocking_recv().map_err(|_| EngineError::Stopped)?
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
    /// pipeline order: synthesis, queued_gpu, h, g1_msm, bg2, dealloc.
    pub fn stage_means(&self) -> Vec<(&'static str, f64)> {
        self.metrics.step_means()
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
