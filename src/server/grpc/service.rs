//! The gRPC methods of `cuzk.v1.ProvingEngine`, each a thin mapping between the wire messages
//! and the [`Daemon`].

use std::sync::Arc;
use std::time::Duration;

use tonic::{Request, Response, Status};

use crate::engine::PartitionState;
use crate::metrics::KeyEviction;
use crate::server::jobs::daemon::{Daemon, Outcome};
use crate::server::proto::await_proof_response::Status as Ended;
use crate::server::proto::proving_engine_server::ProvingEngine;
use crate::server::proto::*;
use crate::server::requests::kinds::kind_name;

/// The service, shared by every connection.
pub struct Service {
    daemon: Arc<Daemon>,
}

impl Service {
    /// The service of `daemon`.
    pub fn new(daemon: Arc<Daemon>) -> Self {
        Service { daemon }
    }
}

/// The wire answer for job `id` after `outcome` (`None`: the wait timed out).
fn answer(id: &str, outcome: Option<Outcome>) -> AwaitProofResponse {
    let mut r = AwaitProofResponse {
        job_id: id.to_string(),
        ..AwaitProofResponse::default()
    };
    let timings = match outcome {
        None => {
            r.set_status(Ended::Timeout);
            return r;
        }
        Some(Outcome::Cancelled) => {
            r.set_status(Ended::Cancelled);
            return r;
        }
        Some(Outcome::Completed { proof, timings }) => {
            r.set_status(Ended::Completed);
            r.proof = proof;
            timings
        }
        Some(Outcome::Failed { error, timings }) => {
            r.set_status(Ended::Failed);
            r.error_message = error;
            timings
        }
    };
    r.queue_wait_ms = timings.queue_wait_ms;
    r.srs_load_ms = timings.srs_load_ms;
    r.synthesis_ms = timings.synthesis_ms;
    r.gpu_compute_ms = timings.gpu_compute_ms;
    r.total_ms = timings.total_ms;
    r
}

fn timeout_of(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}

#[tonic::async_trait]
impl ProvingEngine for Service {
    async fn submit_proof(
        &self,
        request: Request<SubmitProofRequest>,
    ) -> Result<Response<SubmitProofResponse>, Status> {
        let req = request.into_inner();
        let (job_id, position) = self.daemon.submit(req).await?;
        Ok(Response::new(SubmitProofResponse {
            job_id,
            queue_position: position,
            assigned_gpu: String::new(),
        }))
    }

    async fn await_proof(
        &self,
        request: Request<AwaitProofRequest>,
    ) -> Result<Response<AwaitProofResponse>, Status> {
        let req = request.into_inner();
        let (id, outcome) = self
            .daemon
            .wait(&req.job_id, timeout_of(req.timeout_ms))
            .await?;
        Ok(Response::new(answer(&id, outcome)))
    }

    async fn prove(
        &self,
        request: Request<ProveRequest>,
    ) -> Result<Response<ProveResponse>, Status> {
        let submit = request
            .into_inner()
            .submit
            .ok_or_else(|| Status::invalid_argument("ProveRequest.submit is missing"))?;
        let (id, _) = self.daemon.submit(submit).await?;
        let (id, outcome) = self.daemon.wait(&id, None).await?;
        Ok(Response::new(ProveResponse {
            result: Some(answer(&id, outcome)),
        }))
    }

    async fn cancel_proof(
        &self,
        request: Request<CancelProofRequest>,
    ) -> Result<Response<CancelProofResponse>, Status> {
        let id = request.into_inner().job_id;
        let was_running = self.daemon.cancel(&id).await?;
        Ok(Response::new(CancelProofResponse { was_running }))
    }

    async fn get_status(
        &self,
        _request: Request<GetStatusRequest>,
    ) -> Result<Response<GetStatusResponse>, Status> {
        let d = &self.daemon;
        let engine = d
            .engine
            .status()
            .await
            .map_err(|e| Status::internal(e.to_string()))?;
        let ledger = engine.ledger;
        // An engine job has started once any of its partitions left the queue.
        let started: std::collections::HashSet<u64> = engine
            .jobs
            .iter()
            .filter(|j| j.partitions.iter().any(|p| *p != PartitionState::Queued))
            .map(|j| j.id)
            .collect();
        let live = d.live_jobs();
        let running = |j: &crate::server::jobs::daemon::LiveView| started.contains(&j.engine_job);
        let mut kinds: Vec<i32> = live.iter().map(|j| j.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let queues = kinds
            .into_iter()
            .map(|k| QueueStatus {
                proof_kind: kind_name(k),
                pending: live.iter().filter(|j| j.kind == k && !running(j)).count() as u32,
                in_progress: live.iter().filter(|j| j.kind == k && running(j)).count() as u32,
            })
            .collect();
        let memory = d.engine.device_memory();
        let gpus = d
            .engine
            .backend_name()
            .split(',')
            .enumerate()
            .map(|(i, name)| {
                let label = crate::stages::pipeline::device_label(name, i);
                let current = engine
                    .on_gpu
                    .iter()
                    .find(|(dev, ..)| *dev == label)
                    .and_then(|(_, job, _)| live.iter().find(|j| j.engine_job == *job));
                GpuStatus {
                    ordinal: i as u32,
                    name: name.to_string(),
                    current_job_id: current.map(|j| j.id.clone()).unwrap_or_default(),
                    current_proof_kind: current.map(|j| kind_name(j.kind)).unwrap_or_default(),
                    vram_free_bytes: memory.get(i).copied().flatten().map_or(0, |m| m.0),
                    vram_total_bytes: memory.get(i).copied().flatten().map_or(0, |m| m.1),
                }
            })
            .collect();
        let loaded_srs = crate::server::keys::pins::list(&d.engine, &d.keys);
        Ok(Response::new(GetStatusResponse {
            gpus,
            loaded_srs,
            queues,
            total_proofs_completed: d.completed.load(std::sync::atomic::Ordering::Relaxed),
            total_proofs_failed: d.failed.load(std::sync::atomic::Ordering::Relaxed),
            uptime_seconds: d.started.elapsed().as_secs(),
            pinned_memory_bytes: 0,
            pinned_memory_limit_bytes: 0,
            ledger_charged_bytes: ledger.charged_bytes,
            ledger_budget_bytes: ledger.budget_bytes,
            ledger_resident_bytes: ledger.resident_bytes,
        }))
    }

    async fn get_metrics(
        &self,
        _request: Request<GetMetricsRequest>,
    ) -> Result<Response<GetMetricsResponse>, Status> {
        Ok(Response::new(GetMetricsResponse {
            prometheus_text: self.daemon.engine.metric_handles().render(),
        }))
    }

    async fn preload_srs(
        &self,
        request: Request<PreloadSrsRequest>,
    ) -> Result<Response<PreloadSrsResponse>, Status> {
        let id = request.into_inner().circuit_id;
        let r = crate::server::keys::pins::preload(&self.daemon.engine, &self.daemon.keys, &id);
        Ok(Response::new(r.await?))
    }

    async fn evict_srs(
        &self,
        request: Request<EvictSrsRequest>,
    ) -> Result<Response<EvictSrsResponse>, Status> {
        let id = request.into_inner().circuit_id;
        let r = crate::server::keys::eviction::evict(
            &self.daemon.engine,
            &self.daemon.keys,
            &id,
            KeyEviction::Request,
        )
        .await?;
        Ok(Response::new(r))
    }
}
