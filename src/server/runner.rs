//! Running one job on the engine (key, partitions, proof bytes) and resuming the journal's
//! unfinished jobs after a restart.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use prost::Message;

use super::daemon::{now_ms, Daemon, Outcome};
use super::journal::{JournalError, Timings};
use super::kinds::{self, JobSpec};
use super::proto::SubmitProofRequest;
use crate::engine::Request;
use crate::key::ProvingKey;
use crate::pipeline::PartitionCircuit;
use crate::prover::{Abc, Witness};

/// A shared partition circuit handed to [`Request::new`].
struct Shared(Arc<dyn PartitionCircuit>);

impl PartitionCircuit for Shared {
    fn synthesize(&self, pk: &ProvingKey) -> crate::Result<(Abc, Witness)> {
        self.0.synthesize(pk)
    }
}

impl Daemon {
    /// Proves job `id` and ends it (unless a cancel ended it first).
    pub(super) async fn run(self: Arc<Self>, id: String, spec: JobSpec, running: Arc<AtomicBool>) {
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
        running.store(true, Ordering::SeqCst);
        let circuits: Vec<Shared> = spec.circuits.iter().cloned().map(Shared).collect();
        let result = self
            .engine
            .prove(Request::new(lease.key.clone(), circuits))
            .await;
        let timings = Timings {
            srs_load_ms: lease.load_ms,
            total_ms: accepted.elapsed().as_millis() as u64,
            ..Timings::default()
        };
        drop(lease);
        let outcome = match result
            .map_err(|e| e.to_string())
            .and_then(|p| spec.proof_bytes(&p))
        {
            Ok(proof) => Outcome::Completed { proof, timings },
            Err(error) => Outcome::Failed { error, timings },
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
