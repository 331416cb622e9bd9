//! Running jobs on the engine: one lane per circuit id submits its jobs in acceptance order
//! (key first), a task per job turns the engine's outcome into proof bytes; and resuming the
//! journal's unfinished jobs after a restart.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use prost::Message;
use tokio::sync::mpsc;

use super::daemon::{now_ms, Accepted, Daemon, Outcome};
use super::journal::{JournalError, Timings};
use super::keys::KeyLease;
use super::kinds;
use super::proto::SubmitProofRequest;
use crate::engine::{JobTicket, Request};

impl Daemon {
    /// Takes one circuit's accepted jobs in order: loads the key once, submits each job to the
    /// engine, and leaves its outcome to a task of its own.
    pub(super) async fn lane(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Accepted>) {
        while let Some(job) = rx.recv().await {
            let lease = match self.keys.acquire(&job.spec.key).await {
                Ok(l) => l,
                Err(e) => {
                    let timings = Timings {
                        total_ms: job.since.elapsed().as_millis() as u64,
                        ..Timings::default()
                    };
                    let failed = Outcome::Failed {
                        error: e.to_string(),
                        timings,
                    };
                    self.finish(&job.id, failed).await;
                    continue;
                }
            };
            if !self.is_live(&job.id) {
                continue;
            }
            let request = Request::shared(lease.key.clone(), job.spec.circuits.clone())
                .with_priority(job.spec.priority);
            let ticket = self.engine.submit(request);
            job.engine_job.store(ticket.id, Ordering::SeqCst);
            let me = self.clone();
            tokio::spawn(async move { me.run(job, ticket, lease).await });
        }
    }

    /// Waits for job `job`'s engine outcome and ends it (unless a cancel ended it first).
    async fn run(self: Arc<Self>, job: Accepted, ticket: JobTicket, lease: KeyLease) {
        if !self.is_live(&job.id) {
            // Cancelled while it was being submitted.
            let _ = self.engine.cancel(ticket.id).await;
        }
        let result = ticket.outcome().await;
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        let mut timings = Timings {
            srs_load_ms: lease.load_ms,
            total_ms: ms(job.since.elapsed()),
            ..Timings::default()
        };
        drop(lease);
        let outcome = match result {
            Ok(report) => {
                timings.queue_wait_ms = ms(report.queue_wait);
                timings.synthesis_ms = ms(report.synthesis);
                timings.gpu_compute_ms = ms(report.gpu);
                match job.spec.proof_bytes(&report.proofs) {
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
        self.finish(&job.id, outcome).await;
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
