//! Running jobs on the engine, the `impl Daemon` block of a job's run (the table it reports to
//! is `daemon`'s): a task per job makes it ready (its key loaded; a Filecoin job built on a
//! blocking thread; idle keys evicted first where the key is read now and would not fit beside
//! them), makes room for it (evicting idle keys if the engine says keys stand in its way, see
//! `keys::eviction`; a key the store keeps after the job pinned in the engine, see
//! `keys::pins`), hands it to the engine, whose scheduler is the one queue
//! (priority, then acceptance order, so that a WinningPoSt never waits behind another job's
//! key load or build), and turns the engine's outcome into proof bytes (a Filecoin proof
//! verified first), a failure into a [`JobError`]; and resuming the journal's unfinished jobs
//! after a restart (their request bytes parsed again).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use prost::Message;

use super::daemon::{now_ms, Accepted, Daemon, Outcome};
use super::job_error::JobError;
use super::journal::{JournalError, Timings};
use crate::engine::{JobTicket, Request};
use crate::groth16::proof::Proof;
use crate::keys::store::KeyLease;
use crate::server::keys::{eviction, pins};
use crate::server::proto::SubmitProofRequest;
use crate::server::requests::kinds::{self, Work};

/// How a job's partition proofs become the client's bytes.
enum Finish {
    /// A built-in circuit: the proofs concatenated.
    Concat,
    /// A Filecoin proof: filecoin-proofs' bytes, once its verifier accepted them.
    #[cfg(feature = "filecoin")]
    Filecoin(Box<crate::filecoin::Finisher>),
}

/// A job ready for the engine.
struct Ready {
    request: Request,
    finish: Finish,
    /// Milliseconds spent loading its key.
    load_ms: u64,
    /// The job's use of its key, held until the job ends.
    lease: Option<KeyLease>,
}

impl Daemon {
    /// Runs one accepted job to its end: makes it ready (key loaded, Filecoin inputs checked
    /// and built, off the executor), submits it to the engine at its acceptance place, waits
    /// for the outcome and ends the job (unless a cancel ended it first).
    pub(super) async fn run(self: Arc<Self>, job: Accepted) {
        let ready = match self.ready(&job).await {
            Ok(r) => r,
            Err(e) => {
                let timings = Timings {
                    total_ms: job.since.elapsed().as_millis() as u64,
                    ..Timings::default()
                };
                self.finish(&job.id, Outcome::failed(&e, timings)).await;
                return;
            }
        };
        if !self.is_live(&job.id) {
            return;
        }
        let Ready {
            request,
            finish,
            load_ms,
            lease,
        } = ready;
        let request = request
            .with_priority(job.spec.priority)
            .with_arrival(job.seq);
        let turn =
            eviction::make_room(&self.engine, &self.keys, &request, &job.spec.circuit_id()).await;
        if !self.is_live(&job.id) {
            // Cancelled while it waited for its turn.
            return;
        }
        let key_id = request.key().id();
        // A key that stays in the store after this job is counted as resident meanwhile.
        pins::pin_kept(&self.engine, &self.keys, request.key()).await;
        let ticket = self.engine.submit(request);
        drop(turn);
        job.engine_job.store(ticket.id, Ordering::SeqCst);
        self.proved(job, ticket, finish, load_ms, lease).await;
        // The job has left its key: used now.
        self.keys.store().touch(key_id);
    }

    /// The engine request of `job` and how to finish it.
    async fn ready(&self, job: &Accepted) -> Result<Ready, JobError> {
        // Idle keys make way before a key of tens of GB is read, not after.
        let circuit = job.spec.circuit_id();
        if let Some(bytes) = self.keys.bytes_to_load(&circuit) {
            eviction::room_to_load(&self.engine, &self.keys, &circuit, bytes).await;
        }
        match &job.spec.work {
            Work::Builtin { key, circuits } => {
                let lease = self.keys.lease(key).await?;
                Ok(Ready {
                    request: Request::shared(lease.key.clone(), circuits.clone()),
                    finish: Finish::Concat,
                    load_ms: lease.load_ms(),
                    lease: Some(lease),
                })
            }
            #[cfg(feature = "filecoin")]
            Work::Filecoin(work) => {
                let (work, store) = (work.clone(), self.keys.store().clone());
                let kind = job.spec.kind.as_str_name();
                // Leased at once, counted as a built-in job's key is.
                let build = move || {
                    let (built, load_ms) = work.build(store.clone())?;
                    let lease = store.lease_key(built.request.key());
                    Ok((built, load_ms, lease))
                };
                let (built, load_ms, lease) = tokio::task::spawn_blocking(build)
                    .await
                    .map_err(|e| JobError::Stopped {
                        kind,
                        task: "job builder",
                        reason: e.to_string(),
                    })?
                    .map_err(|source| JobError::Filecoin { kind, source })?;
                Ok(Ready {
                    request: built.request,
                    finish: Finish::Filecoin(Box::new(built.finisher)),
                    load_ms,
                    lease,
                })
            }
        }
    }

    /// Waits for job `job`'s engine outcome and ends it (unless a cancel ended it first).
    async fn proved(
        &self,
        job: Accepted,
        ticket: JobTicket,
        finish: Finish,
        load_ms: u64,
        lease: Option<KeyLease>,
    ) {
        if !self.is_live(&job.id) {
            // Cancelled while it was being submitted.
            let _ = self.engine.cancel(ticket.id).await;
        }
        let result = ticket.outcome().await;
        drop(lease);
        let ms = |d: std::time::Duration| d.as_millis() as u64;
        let mut timings = Timings {
            srs_load_ms: load_ms,
            ..Timings::default()
        };
        let outcome = match result {
            Ok(report) => {
                timings.queue_wait_ms = ms(report.queue_wait);
                timings.synthesis_ms = ms(report.synthesis);
                timings.gpu_compute_ms = ms(report.gpu);
                let bytes = finished(finish, report.proofs).await;
                timings.total_ms = ms(job.since.elapsed());
                match bytes {
                    Ok(proof) => Outcome::Completed { proof, timings },
                    Err(e) => Outcome::failed(&e, timings),
                }
            }
            Err(crate::EngineError::Cancelled { .. }) => Outcome::Cancelled,
            Err(e) => {
                timings.total_ms = ms(job.since.elapsed());
                Outcome::failed(&JobError::Engine(e), timings)
            }
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
                .map_err(JobError::from)
                .and_then(|req| kinds::parse(&req).map_err(JobError::from));
            let mut record = u.record;
            // Journaled before ids and request ids were told apart: the id was the request id.
            if record.request_id.is_empty() {
                record.request_id = u.id.clone();
            }
            match parsed {
                Ok(spec) => self.start(u.id, spec, record),
                Err(why) => {
                    let mut r = record;
                    r.state = super::journal::JobState::Failed;
                    r.error = Some(why.to_string());
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

/// The client's bytes for a job's proofs (a Filecoin proof is verified first, off the executor).
async fn finished(finish: Finish, proofs: Vec<Proof>) -> Result<Vec<u8>, JobError> {
    match finish {
        Finish::Concat => kinds::concat_proofs(&proofs).map_err(JobError::Proofs),
        #[cfg(feature = "filecoin")]
        Finish::Filecoin(f) => {
            let kind = f.kind().name();
            tokio::task::spawn_blocking(move || f.finish(&proofs))
                .await
                .map_err(|e| JobError::Stopped {
                    kind,
                    task: "verifier",
                    reason: e.to_string(),
                })?
                .map_err(|source| JobError::Filecoin { kind, source })
        }
    }
}
