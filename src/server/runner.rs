//! Running one job on the engine (key, partitions, proof bytes) and resuming the journal's
//! unfinished jobs after a restart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use prost::Message;

use super::daemon::{now_ms, Daemon, Outcome};
use super::journal::{JournalError, Timings};
use super::kinds::{self, JobSpec};
use super::proto::SubmitProofRequest;
use crate::engine::Request;

impl Daemon {
    /// Proves job `id` and ends it (unless a cancel ended it first).
    pub(super) async fn run(self: Arc<Self>, id: String, spec: JobSpec, engine_job: Arc<AtomicU64>) {
        let accepted = Instant::now();
        let lease = match self.keys.acquire(&spec.key).await {
            Ok(l) => l,
            Err(e) => {
                let timings = Timings {
                    total_ms: accepted.elapsed().as_millis() as u64,
                    ..Timings::default()
                };
                self.finish(
                    &id,
                    Outcome::Failed {
                        error: e.to_string(),
                        timings,
                    },
                )
                .await;
                return;
            }
        };
        if !self.is_live(&id) {
            return;
        }
        let request = Request::shared(lease.key.clone(), spec.circuits.clone())
            .with_priority(spec.priority);
        let ticket = self.engine.submit(request);
        engine_job.store(ticket.id, Ordering::SeqCst);
        if !self.is_live(&id) {
            // Cancelled while it was being submitted.
            let _ = self.engine.cancel(ticket.id).await;
        }
        let result = ticket.outcome().await;
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        let mut timings = Timings {
            srs_load_ms: lease.load_ms,
            total_ms: ms(accepted.elapsed()),
            ..Timings::default()
        };
        drop(lease);
        let outcome = match result {
            Ok(report) => {
                timings.queue_wait_ms = ms(report.queue_wait);
                timings.synthesis_ms = ms(report.synthesis);
                timings.gpu_compute_ms = ms(report.gpu);
                match spec.proof_bytes(&report.proofs) {
                    Ok(proof) => Outcome::Completed { proof, timings },
                    Err(error) => Outcome::Failed { error, timings },
                }
            }
            Err(crate::EngineError::Cancelled { .. }) => Outcome::Cancelled,
            Err(e) => Outcome::Failed {
                error: e.to_string(),
                timings,
            },
        };
        self.finish(&id, outcome).await;
    }

    /// Queues again every job the journal holds unfinished, in acceptance order. A job whose
    /// request no longer parses ends as failed, saying why. Returns how many were resumed.
    pub fn resume(self: &Arc<Self>) -> Result<usize, JournalError> {
        let unfinished = self.journal.unfinished()?;
        let n = unfinished.len();
        for u in unfinished {
            let parsed = SubmitProofRequest::decode(u.request.as_slice())
                .map_err(|e| e.to_string())
                .and_then(|req| kinds::parse(&req).map_err(|e| e.to_string()));
            match parsed {
                Ok(spec) => self.start(u.id, spec, u.record),
                Err(why) => {
                    let mut r = u.record;
                    r.state = super::journal::JobState::Failed;
                    r.error = Some(format!(
                        "after a restart the request no longer parses: {why}"
                    ));
                    r.finished_ms = Some(now_ms());
                    self.journal.finish(&u.id, &r, None)?;
                }
            }
        }
        if n > 0 {
            tracing::info!(jobs = n, "resumed unfinished jobs from the journal");
        }
        Ok(n)
    }
}
