//! The Supervisor actor: owns the ledger and the job table, grants synthesis work against the
//! budget (admission, in `supervisor/admission.rs`), retries failed partitions a bounded number
//! of times, reconciles grants dropped unsettled, and answers each request. The actors' events
//! are handled in `supervisor/events.rs`.

mod admission;
mod control;
mod events;
mod submit;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Actor, AsyncContext, Context, Handler, Recipient, WeakAddr};
use tokio::sync::oneshot;

use self::admission::{Admission, Next, Pool};
use super::mailbox::{post, post_to, took};
use crate::compiled::Recordings;
use crate::engine::messages::{
    Abandoned, GrantDropped, PartRef, Shutdown, Status, Synthesize, Warm,
};
use crate::engine::status::{
    EngineError, EngineStatus, JobReport, JobStatus, PartitionState, PartitionTimes,
};
use crate::groth16::key::ProvingKey;
use crate::groth16::proof::Proof;
use crate::ledger::{
    AvailableMemory, Footprint, GrantId, GrantWatch, Ledger, LedgerError, LostGrant, Stage,
};
use crate::metrics::{ActorKind, Metrics, ProofResult};
use crate::scheduler::Priority;
use crate::stages::pipeline::PartitionCircuit;

/// What the supervisor is started with.
pub struct SupervisorParts {
    /// The ledger (budget, slots, policy).
    pub ledger: Ledger,
    /// Ordinary synthesis workers (concurrent synthesize calls).
    pub synthesis_workers: usize,
    /// Synthesis workers of a pool of their own (and ledger slots) kept for CRITICAL
    /// partitions.
    pub critical_workers: usize,
    /// Attempts per partition for retryable failures.
    pub retry_attempts: u32,
    /// Metrics.
    pub metrics: Metrics,
    /// The synthesis workers' recordings: counted with their keys, forgotten with them.
    pub recordings: Arc<Recordings>,
    /// Whether the GPU stages evaluate compiled partitions' a/b/c on their devices.
    pub abc_on_device: bool,
    /// Whether those partitions' witnesses wait packed as bits.
    pub pack_witness: bool,
    /// The host's available memory, read when a key is first used under a stated budget.
    pub available: AvailableMemory,
}

struct Job {
    pk: Arc<ProvingKey>,
    circuits: Vec<Arc<dyn PartitionCircuit>>,
    /// Its partitions' footprint by the route their synthesis takes now, refreshed before
    /// every grant ([`submit::route_footprint`]).
    footprint: Footprint,
    /// The footprint the request stated, if any (then never refreshed).
    stated: Option<Footprint>,
    proofs: Vec<Option<Proof>>,
    states: Vec<PartitionState>,
    attempts: Vec<u32>,
    in_flight: usize,
    reply: Option<oneshot::Sender<Result<JobReport, EngineError>>>,
    failed: bool,
    priority: Priority,
    submitted: Instant,
    /// When its first partition was granted.
    first_grant: Option<Instant>,
    /// When each partition entered its current timed step (synthesis, GPU).
    since: Vec<Option<Instant>>,
    /// Synthesis and GPU time, summed over partitions.
    synthesis: Duration,
    gpu: Duration,
    /// Each partition's synthesis and GPU time so far (its last attempt's).
    times: Vec<PartitionTimes>,
    /// Set with `failed`: tells the stages to skip this job's partitions still in flight.
    abandoned: Abandoned,
    span: tracing::Span,
}

/// The supervisor.
pub struct Supervisor {
    ledger: Ledger,
    jobs: HashMap<u64, Job>,
    admission: Admission,
    grants: HashMap<GrantId, PartRef>,
    synthesis: Option<Recipient<Synthesize>>,
    /// The pool kept for CRITICAL partitions, if any.
    critical: Option<Recipient<Synthesize>>,
    /// Grants synthesizing in the critical pool (their worker returns to it).
    in_critical: std::collections::HashSet<GrantId>,
    /// Each GPU actor (one per device).
    gpu: Vec<Recipient<Warm>>,
    metrics: Metrics,
    recordings: Arc<Recordings>,
    abc_on_device: bool,
    pack_witness: bool,
    available: AvailableMemory,
    closing: Vec<oneshot::Sender<()>>,
    refuse_new: bool,
    /// Partitions synthesized and not yet accepted by a GPU actor, now and at most.
    alive_now: usize,
    alive_peak: usize,
    /// Keys pinned resident (each counts as one use of its key in the ledger).
    pinned: std::collections::HashSet<u64>,
    /// Partitions on a GPU actor now (job, index) → device label.
    on_gpu: HashMap<(u64, usize), String>,
}

/// Tells the Supervisor of every grant dropped unsettled (the ledger's [`GrantWatch`]). Weak:
/// the ledger lives inside the Supervisor, which must not keep itself alive through it.
struct DroppedGrants {
    supervisor: WeakAddr<Supervisor>,
    metrics: Metrics,
}

impl std::fmt::Debug for DroppedGrants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DroppedGrants")
    }
}

impl GrantWatch for DroppedGrants {
    fn dropped(&self, lost: LostGrant) {
        // Gone at shutdown: nothing is left to reconcile then.
        if let Some(supervisor) = self.supervisor.upgrade() {
            post(
                &self.metrics,
                ActorKind::Supervisor,
                &supervisor,
                GrantDropped { lost },
            );
        }
    }
}

impl Actor for Supervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.ledger.watch_grants(Arc::new(DroppedGrants {
            supervisor: ctx.address().downgrade(),
            metrics: self.metrics.clone(),
        }));
    }
}

impl Supervisor {
    /// A supervisor with no workers attached yet (see [`Supervisor::attach`]).
    pub fn new(parts: SupervisorParts) -> Self {
        parts
            .metrics
            .budget_bytes
            .set(parts.ledger.budget_bytes() as i64);
        Supervisor {
            ledger: parts.ledger,
            jobs: HashMap::new(),
            admission: Admission::new(
                parts.synthesis_workers,
                parts.critical_workers,
                parts.retry_attempts,
            ),
            grants: HashMap::new(),
            synthesis: None,
            critical: None,
            in_critical: std::collections::HashSet::new(),
            gpu: Vec::new(),
            metrics: parts.metrics,
            recordings: parts.recordings,
            abc_on_device: parts.abc_on_device,
            pack_witness: parts.pack_witness,
            available: parts.available,
            closing: Vec::new(),
            refuse_new: false,
            alive_now: 0,
            alive_peak: 0,
            pinned: std::collections::HashSet::new(),
            on_gpu: HashMap::new(),
        }
    }

    /// Connects the synthesis pools (the ordinary one and the one kept for CRITICAL
    /// partitions, if any) and the GPU actors (one per device), created after the supervisor,
    /// since they need its address.
    pub fn attach(
        &mut self,
        synthesis: Recipient<Synthesize>,
        critical: Option<Recipient<Synthesize>>,
        gpu: Vec<Recipient<Warm>>,
    ) {
        self.synthesis = Some(synthesis);
        self.critical = critical;
        self.gpu = gpu;
    }

    /// The synthesis worker `grant` ran on is idle again.
    fn worker_free(&mut self, grant: GrantId) {
        let pool = if self.in_critical.remove(&grant) {
            Pool::Critical
        } else {
            Pool::Ordinary
        };
        self.admission.worker_free(pool);
    }

    /// Asks every device to make `pk` ready ahead of its partitions (one [`Warm`] each; a
    /// device that holds the key already does nothing).
    fn warm(&self, pk: &Arc<ProvingKey>) {
        for gpu in &self.gpu {
            let msg = Warm { pk: pk.clone() };
            post_to(&self.metrics, ActorKind::Gpu, gpu, msg);
        }
    }

    /// Starts as many queued partitions as workers, slots and budget allow (admission decides
    /// which; this only carries its decisions out).
    fn pump(&mut self) {
        // A route may have changed since a job's footprint was set (the key's recording made,
        // distrusted, or its a/b/c found too large for a device): grants charge the route that
        // synthesis will take.
        for job in self.jobs.values_mut().filter(|j| !j.failed) {
            job.footprint = submit::route_footprint(
                &self.recordings,
                submit::RouteFlags {
                    abc_on_device: self.abc_on_device,
                    pack_witness: self.pack_witness,
                    streams: submit::packs_as_they_go(&job.circuits),
                },
                &job.pk,
                job.stated,
            );
        }
        loop {
            let jobs = &self.jobs;
            let next = self.admission.next(&mut self.ledger, |id| {
                jobs.get(&id).filter(|j| !j.failed).map(|j| j.footprint)
            });
            match next {
                Next::Wait => break,
                Next::Refused(part, e) => {
                    let key = self.jobs.get(&part.job).map_or(0, |j| j.pk.id());
                    self.fail_job(part.job, self.refusal(key, e))
                }
                Next::Start(part, grant, pool) => {
                    let Some(job) = self.jobs.get_mut(&part.job) else {
                        continue;
                    };
                    job.in_flight += 1;
                    job.states[part.index] = PartitionState::At(Stage::Synthesizing);
                    let now = Instant::now();
                    job.first_grant.get_or_insert(now);
                    job.since[part.index] = Some(now);
                    self.grants.insert(grant.id(), part);
                    let span = tracing::info_span!(parent: &job.span, "partition", index = part.index, attempt = part.attempt);
                    let msg = Synthesize {
                        part,
                        circuit: job.circuits[part.index].clone(),
                        pk: job.pk.clone(),
                        abandoned: job.abandoned.clone(),
                        priority: job.priority,
                        span,
                        grant,
                    };
                    let to = match pool {
                        Pool::Critical => {
                            self.in_critical.insert(msg.grant.id());
                            self.critical.as_ref()
                        }
                        Pool::Ordinary => self.synthesis.as_ref(),
                    };
                    if let Some(s) = to {
                        post_to(&self.metrics, ActorKind::Synthesis, s, msg);
                    }
                }
            }
        }
        self.metrics
            .grants_waiting
            .set(self.admission.waiting() as i64);
        self.metrics.observe_ledger(&self.ledger.snapshot());
        self.metrics.synthesized_alive.set(self.alive_now as i64);
    }

    fn state(&self, part: PartRef) -> Option<PartitionState> {
        self.jobs
            .get(&part.job)
            .and_then(|j| j.states.get(part.index))
            .copied()
    }

    fn set_state(&mut self, part: PartRef, state: PartitionState) {
        if let Some(s) = self
            .jobs
            .get_mut(&part.job)
            .and_then(|j| j.states.get_mut(part.index))
        {
            *s = state;
        }
    }

    /// Whether `part` is the live attempt of a live job and still in the pipeline.
    fn in_pipeline(&self, part: PartRef) -> bool {
        self.jobs.get(&part.job).is_some_and(|j| {
            !j.failed
                && j.attempts.get(part.index) == Some(&part.attempt)
                && matches!(j.states.get(part.index), Some(PartitionState::At(_)))
        })
    }

    fn ledger_op(&mut self, what: &str, r: Result<impl Sized, LedgerError>) {
        if let Err(e) = r {
            // A ledger refusal here is a bookkeeping bug; keep going and make it visible.
            tracing::error!(error = %e, "ledger refused {what}");
        }
    }

    fn fail_job(&mut self, job_id: u64, err: EngineError) {
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        if job.failed {
            return;
        }
        job.failed = true;
        job.abandoned.set();
        tracing::warn!(job = job_id, error = %err, "job failed");
        // One per partition that failed for good (its siblings are abandoned, not counted).
        self.metrics.proof(ProofResult::Failed);
        if let Some(reply) = job.reply.take() {
            let _ = reply.send(Err(err));
        }
        // Its waiting partitions leave the queue (a no-op when the scheduler failed it).
        self.admission.cancel(job_id);
        self.finish_if_done(job_id);
    }

    fn finish_if_done(&mut self, job_id: u64) {
        let done = match self.jobs.get(&job_id) {
            Some(j) => j.in_flight == 0 && (j.failed || j.proofs.iter().all(Option::is_some)),
            None => false,
        };
        if done {
            if let Some(job) = self.jobs.remove(&job_id) {
                self.admission.forget(job_id);
                self.on_gpu.retain(|(j, _), _| *j != job_id);
                let key = job.pk.id();
                self.ledger.unuse_key(key);
                self.forget_recording_if_unused(key);
            }
        }
        self.maybe_close();
    }

    /// Drops key `key`'s recording from memory once no job uses the key and it is not pinned
    /// (a pinned key keeps its recording, so its next job runs witness-only without reading
    /// the file again).
    fn forget_recording_if_unused(&self, key: u64) {
        if !self.pinned.contains(&key) && !self.jobs.values().any(|j| j.pk.id() == key) {
            self.recordings.forget(key);
        }
    }

    fn maybe_close(&mut self) {
        if self.refuse_new && self.jobs.is_empty() && self.ledger.outstanding_grants() == 0 {
            for tx in self.closing.drain(..) {
                let _ = tx.send(());
            }
        }
    }
}

impl Handler<Status> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Status, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let mut jobs: Vec<JobStatus> = self
            .jobs
            .iter()
            .map(|(id, j)| JobStatus {
                id: *id,
                partitions: j.states.clone(),
                failed: j.failed,
                footprint_bytes: j.footprint.total_bytes(),
                priority: j.priority,
                times: j.times.clone(),
            })
            .collect();
        jobs.sort_by_key(|j| j.id);
        let _ = msg.reply.send(EngineStatus {
            jobs,
            queued: self.admission.waiting(),
            queued_by_priority: self.admission.waiting_by_level(),
            on_gpu: self
                .on_gpu
                .iter()
                .map(|((job, index), device)| (device.clone(), *job, *index))
                .collect(),
            ledger: self.ledger.snapshot(),
            synthesized_alive: self.alive_now,
            synthesized_alive_peak: self.alive_peak,
            synthesis_routes: self.recordings.routes(),
        });
    }
}

impl Handler<Shutdown> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Shutdown, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.refuse_new = true;
        self.closing.push(msg.reply);
        self.maybe_close();
    }
}
