//! The daemon's job table: the [`Daemon`] itself and the `impl` block of its bookkeeping,
//! accepting a job (journal first), answering waiters, cancelling, and ending each job exactly
//! once (journal first, then the waiters), so that an answer given is never contradicted after a
//! restart. Running a job on the engine is the other `impl` block, in `runner`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prost::Message;
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use super::journal::{JobRecord, JobState, Journal, Timings};
use super::live::{live_with, Failure, Failures, Live};
pub use super::live::{now_ms, LiveView, Outcome};
use crate::engine::{CancelOutcome, Engine};
use crate::server::error::CallError;
use crate::server::keys::held::Keys;
use crate::server::proto::SubmitProofRequest;
use crate::server::requests::kinds::{self, JobSpec};

/// The daemon's shared state.
pub struct Daemon {
    pub(in crate::server) engine: Arc<Engine>,
    pub(in crate::server) journal: Arc<Journal>,
    pub(in crate::server) keys: Arc<Keys>,
    jobs: Mutex<HashMap<String, Live>>,
    seq: AtomicU64,
    pub(in crate::server) started: Instant,
    pub(in crate::server) completed: AtomicU64,
    pub(in crate::server) failed: AtomicU64,
    /// The last jobs that failed, with their reason (for `/status`).
    pub(in crate::server) failures: Failures,
    draining: AtomicBool,
    idle: Notify,
}

/// An accepted job on its way to the engine.
pub(super) struct Accepted {
    /// Job id.
    pub id: String,
    /// Acceptance order: the engine admits a level's jobs in this order.
    pub seq: u64,
    /// Its work.
    pub spec: JobSpec,
    /// Where its engine id goes.
    pub engine_job: Arc<AtomicU64>,
    /// When it was (re)started here.
    pub since: Instant,
}

/// The longest request id accepted.
pub const MAX_REQUEST_ID: usize = 256;

/// The id of the `seq`-th job accepted, sent under `request_id`: unique, and still readable as
/// the request it came from.
fn job_id(request_id: &str, seq: u64) -> String {
    match request_id.is_empty() {
        true => format!("baton-{seq}"),
        false => format!("{request_id}#{seq}"),
    }
}

impl Daemon {
    /// A daemon around a started engine and an open journal (jobs are resumed separately).
    pub fn new(
        engine: Arc<Engine>,
        journal: Arc<Journal>,
        keys: Arc<Keys>,
        last_seq: u64,
    ) -> Arc<Self> {
        Arc::new(Daemon {
            engine,
            journal,
            keys,
            jobs: Mutex::new(HashMap::new()),
            seq: AtomicU64::new(last_seq),
            started: Instant::now(),
            completed: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            failures: Failures::default(),
            draining: AtomicBool::new(false),
            idle: Notify::new(),
        })
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Live>> {
        // Entries stay consistent under a panic (each update is a single insert or flag).
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Accepts a job: checks it, records it in the journal, starts it. Returns its id and how
    /// many jobs wait ahead of it.
    ///
    /// A job's identity is its request's bytes, not its request id (Curio sends different
    /// WindowPoSt partitions under one id at once, and a reorged PoRep again under its old id
    /// with a new seed): a request byte-identical to a live job attaches to that job, one
    /// byte-identical to a completed job is answered with its proof, and anything else, a
    /// retry of a failed or cancelled request included, is a new job with an id of its own.
    pub async fn submit(
        self: &Arc<Self>,
        req: SubmitProofRequest,
    ) -> Result<(String, u32), CallError> {
        if req.request_id.len() > MAX_REQUEST_ID || req.request_id.chars().any(char::is_control) {
            return Err(CallError::Invalid(format!(
                "request_id must be at most {MAX_REQUEST_ID} printable characters"
            )));
        }
        // Off the executor: a C1 output is tens of MB of JSON, and its checks hash.
        let (req, parsed) = tokio::task::spawn_blocking(move || {
            let parsed = kinds::parse(&req);
            (req, parsed)
        })
        .await
        .map_err(|e| CallError::Internal(format!("the request check stopped: {e}")))?;
        let spec = parsed?;
        if self.draining.load(Ordering::SeqCst) {
            return Err(CallError::Draining);
        }
        let bytes = req.encode_to_vec();
        let digest = hex::encode(Sha256::digest(&bytes));
        if let Some(same) = live_with(&self.table(), &digest) {
            return Ok((same, 0));
        }
        let (journal, d) = (self.journal.clone(), digest.clone());
        let done = tokio::task::spawn_blocking(move || journal.completed_with(&d))
            .await
            .map_err(|e| CallError::Internal(e.to_string()))??;
        if let Some(done) = done {
            return Ok((done, 0));
        }
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let id = job_id(&req.request_id, seq);
        let record = JobRecord {
            request_id: req.request_id.clone(),
            seq,
            kind: req.proof_kind,
            priority: spec.priority as u8,
            digest,
            accepted_ms: now_ms(),
            state: JobState::Accepted,
            finished_ms: None,
            error: None,
            timings: Timings::default(),
        };
        let ahead = {
            let mut table = self.table();
            // Accepted by a concurrent identical call since the first look.
            if let Some(same) = live_with(&table, &record.digest) {
                return Ok((same, 0));
            }
            let ahead = table.len();
            table.insert(id.clone(), Live::new(record.clone()));
            ahead as u32
        };
        let (journal, jid, rec) = (self.journal.clone(), id.clone(), record.clone());
        let written = tokio::task::spawn_blocking(move || journal.accept(&jid, &rec, &bytes)).await;
        match written {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(self.unaccept(&id, e.to_string())),
            Err(e) => return Err(self.unaccept(&id, e.to_string())),
        }
        self.start(id.clone(), spec, record);
        Ok((id, ahead))
    }

    fn unaccept(&self, id: &str, why: String) -> CallError {
        self.table().remove(id);
        self.idle.notify_waiters();
        CallError::Internal(format!("the journal refused the job: {why}"))
    }

    /// The job a client names by `name`: a job id, else, for a request id, the oldest live job
    /// sent under it, else the newest journaled one. `live_only`: only a job not yet ended.
    async fn resolve(&self, name: &str, live_only: bool) -> Result<Option<String>, CallError> {
        if name.is_empty() {
            return Ok(None);
        }
        {
            let table = self.table();
            if table.contains_key(name) {
                return Ok(Some(name.to_string()));
            }
            let oldest = table
                .iter()
                .filter(|(_, l)| l.record.request_id == name)
                .min_by_key(|(_, l)| l.record.seq)
                .map(|(id, _)| id.clone());
            if oldest.is_some() || live_only {
                return Ok(oldest);
            }
        }
        let (journal, n) = (self.journal.clone(), name.to_string());
        tokio::task::spawn_blocking(move || {
            if journal.get(&n)?.is_some() {
                return Ok(Some(n));
            }
            journal.newest_of(&n)
        })
        .await
        .map_err(|e| CallError::Internal(e.to_string()))?
        .map_err(CallError::from)
    }

    /// Puts a journaled job in the table and starts it (acceptance and resume after restart):
    /// a task of its own makes it ready (key, inputs) and hands it to the engine, whose
    /// scheduler is the one queue (priority, then acceptance order).
    pub(super) fn start(self: &Arc<Self>, id: String, spec: JobSpec, record: JobRecord) {
        let seq = record.seq;
        let engine_job = {
            let mut table = self.table();
            let live = table.entry(id.clone()).or_insert_with(|| Live::new(record));
            live.engine_job.clone()
        };
        let job = Accepted {
            id,
            seq,
            spec,
            engine_job,
            since: Instant::now(),
        };
        let me = self.clone();
        tokio::spawn(async move { me.run(job).await });
    }

    /// Waits for the job `name` names (a job id, or a request id: see [`Daemon::resolve`]) to
    /// end, at most `timeout` (`None`: forever). Returns the job's id and its outcome
    /// (`None`: timed out).
    pub async fn wait(
        &self,
        name: &str,
        timeout: Option<Duration>,
    ) -> Result<(String, Option<Outcome>), CallError> {
        let Some(id) = self.resolve(name, false).await? else {
            return Err(CallError::NotFound(format!(
                "no job {name:?} (never accepted, or pruned after its retention)"
            )));
        };
        let outcome = self.wait_job(&id, timeout).await?;
        Ok((id, outcome))
    }

    async fn wait_job(
        &self,
        id: &str,
        timeout: Option<Duration>,
    ) -> Result<Option<Outcome>, CallError> {
        let rx = self.table().get(id).map(|l| l.done.subscribe());
        let Some(mut rx) = rx else {
            return self.ended(id).await.map(Some);
        };
        let ended = async {
            match rx.wait_for(Option::is_some).await {
                Ok(o) => Ok(o.clone()),
                // The sender only goes with the entry, after the outcome was sent.
                Err(_) => Err(()),
            }
        };
        let got = match timeout {
            Some(t) => match tokio::time::timeout(t, ended).await {
                Ok(r) => r,
                Err(_) => return Ok(None),
            },
            None => ended.await,
        };
        match got {
            Ok(Some(o)) => Ok(Some(o)),
            _ => self.ended(id).await.map(Some),
        }
    }

    /// How a job no longer in the table ended, from the journal.
    async fn ended(&self, id: &str) -> Result<Outcome, CallError> {
        let (journal, jid) = (self.journal.clone(), id.to_string());
        let found = tokio::task::spawn_blocking(move || journal.get(&jid))
            .await
            .map_err(|e| CallError::Internal(e.to_string()))??;
        let not_found = || {
            CallError::NotFound(format!(
                "no job {id:?} (never accepted, or pruned after its retention)"
            ))
        };
        let (r, proof) = found.ok_or_else(not_found)?;
        Ok(match r.state {
            JobState::Completed => Outcome::Completed {
                proof: proof.unwrap_or_default(),
                timings: r.timings,
            },
            JobState::Failed => Outcome::Failed {
                error: r.error.unwrap_or_default(),
                timings: r.timings,
            },
            JobState::Cancelled => Outcome::Cancelled,
            JobState::Accepted => return Err(not_found()),
        })
    }

    /// Ends job `id` with `outcome`: journal first, then waiters. Only the first call for a job
    /// does anything; returns whether it was that call.
    pub(super) async fn finish(&self, id: &str, outcome: Outcome) -> bool {
        let record = {
            let mut table = self.table();
            let Some(live) = table.get_mut(id) else {
                return false;
            };
            if live.ending {
                return false;
            }
            live.ending = true;
            let mut r = live.record.clone();
            r.finished_ms = Some(now_ms());
            match &outcome {
                Outcome::Completed { timings, .. } => {
                    r.state = JobState::Completed;
                    r.timings = *timings;
                }
                Outcome::Failed { error, timings } => {
                    self.failures.push(Failure {
                        id: id.to_string(),
                        kind: r.kind,
                        error: error.clone(),
                        at_ms: now_ms(),
                    });
                    r.state = JobState::Failed;
                    r.error = Some(error.clone());
                    r.timings = *timings;
                }
                Outcome::Cancelled => r.state = JobState::Cancelled,
            }
            r
        };
        let proof = match &outcome {
            Outcome::Completed { proof, .. } => Some(proof.clone()),
            _ => None,
        };
        let (journal, jid) = (self.journal.clone(), id.to_string());
        let written =
            tokio::task::spawn_blocking(move || journal.finish(&jid, &record, proof.as_deref()))
                .await;
        if !matches!(written, Ok(Ok(()))) {
            // The waiters still get their answer; after a restart the job would run again.
            tracing::error!(job = id, "the journal did not record the end of the job");
        }
        match &outcome {
            Outcome::Completed { .. } => self.completed.fetch_add(1, Ordering::Relaxed),
            Outcome::Failed { .. } => self.failed.fetch_add(1, Ordering::Relaxed),
            Outcome::Cancelled => 0,
        };
        let live = self.table().remove(id);
        if let Some(l) = live {
            l.done.send_replace(Some(outcome));
        }
        self.idle.notify_waiters();
        true
    }

    /// Cancels the live job `name` names (a job id, or a request id: its oldest live job).
    /// Returns whether some of its work had started; NOT_FOUND when it is not live (unknown,
    /// or already ended).
    pub async fn cancel(&self, name: &str) -> Result<bool, CallError> {
        let Some(id) = self.resolve(name, true).await? else {
            return Err(CallError::NotFound(format!(
                "no job {name:?} is queued or running"
            )));
        };
        let id = id.as_str();
        let engine_job = match self.table().get(id) {
            Some(l) if !l.ending => l.engine_job.load(Ordering::SeqCst),
            _ => {
                return Err(CallError::NotFound(format!(
                    "no job {id:?} is queued or running"
                )))
            }
        };
        // Ended here first, so that the runner's outcome (cancelled, or a proof that raced the
        // cancel) cannot answer differently.
        if !self.finish(id, Outcome::Cancelled).await {
            return Err(CallError::NotFound(format!("job {id:?} has just ended")));
        }
        if engine_job == 0 {
            return Ok(false);
        }
        match self.engine.cancel(engine_job).await {
            Ok(CancelOutcome::Cancelled { was_running }) => Ok(was_running),
            // Its proofs were already made: it had run.
            Ok(CancelOutcome::NotFound) => Ok(true),
            Err(e) => Err(CallError::Internal(e.to_string())),
        }
    }

    /// Whether job `id` is still live (not ended).
    pub fn is_live(&self, id: &str) -> bool {
        self.table().get(id).is_some_and(|l| !l.ending)
    }

    /// The jobs not yet ended.
    pub fn live_jobs(&self) -> Vec<LiveView> {
        self.table()
            .iter()
            .map(|(id, l)| LiveView {
                id: id.clone(),
                request_id: l.record.request_id.clone(),
                kind: l.record.kind,
                engine_job: l.engine_job.load(Ordering::SeqCst),
                accepted_ms: l.record.accepted_ms,
                priority: crate::scheduler::Priority::from_index(l.record.priority.into())
                    .unwrap_or_default(),
            })
            .collect()
    }

    /// Stops taking jobs and waits until every live job has ended.
    pub async fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
        loop {
            let idle = self.idle.notified();
            if self.table().is_empty() {
                return;
            }
            idle.await;
        }
    }

    /// Whether [`drain`](Self::drain) was called.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }
}
