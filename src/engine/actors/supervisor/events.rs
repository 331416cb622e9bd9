//! The Supervisor's handlers for the actors' events: a partition moving down the pipeline, bytes
//! freed, a proof made, a failure (retried or final) and a grant dropped unsettled.

use std::time::Instant;

use actix::{Context, Handler};

use super::Supervisor;
use crate::engine::actors::mailbox::took;
use crate::engine::messages::{
    Delivered, Failed, Freed, GrantDropped, HandedOff, PartRef, PartitionDone, Synthesized,
};
use crate::engine::status::{EngineError, JobReport, PartitionState};
use crate::ledger::{BufferClass, GrantId, LostGrant, Stage};
use crate::metrics::{ActorKind, ProofResult};
use crate::scheduler::Failure;

impl Supervisor {
    /// Credits bytes Dealloc (or a dropped grant) confirmed gone; a grant that ends lets its
    /// partition's job finish.
    fn credit(&mut self, grant: GrantId, frees: &[(BufferClass, u64)]) {
        for &(class, bytes) in frees {
            match self.ledger.freed(grant, class, bytes) {
                Ok(true) => {
                    // The grant ended: its partition no longer holds memory.
                    if let Some(part) = self.grants.remove(&grant) {
                        if let Some(job) = self.jobs.get_mut(&part.job) {
                            job.in_flight = job.in_flight.saturating_sub(1);
                        }
                        self.finish_if_done(part.job);
                    }
                }
                Ok(false) => {}
                Err(e) => tracing::error!(error = %e, "ledger refused a free"),
            }
        }
    }

    /// One attempt at a partition failed: cancel its grant, then retry it (bounded) or fail
    /// its job.
    fn on_failed(&mut self, msg: Failed) {
        let part = msg.part;
        if msg.actor == ActorKind::Synthesis {
            self.worker_free(msg.grant);
        }
        if self.state(part) == Some(PartitionState::At(Stage::QueuedForGpu)) {
            // Lost before a GPU actor took it.
            self.alive_now = self.alive_now.saturating_sub(1);
        }
        let r = self.ledger.cancel(msg.grant);
        self.ledger_op("cancel", r);
        self.on_gpu.remove(&(part.job, part.index));
        match self.admission.failed(part, msg.retryable) {
            Failure::Retry(next) => {
                if let Some(job) = self.jobs.get_mut(&part.job) {
                    job.attempts[part.index] = next.attempt;
                    job.states[part.index] = PartitionState::Queued;
                }
                tracing::warn!(job = part.job, partition = part.index, attempt = next.attempt, cause = %msg.cause, "retrying partition");
                self.metrics.proof(ProofResult::Retried);
            }
            Failure::JobFailed { attempts, .. } => {
                self.set_state(part, PartitionState::Failed);
                let err = EngineError::PartitionFailed {
                    job: part.job,
                    index: part.index,
                    attempts,
                    actor: msg.actor.as_str(),
                    cause: msg.cause,
                };
                self.fail_job(part.job, err);
            }
            // Its job was already failed or cancelled: the attempt was abandoned.
            Failure::Ignored => {}
        }
    }

    /// Adds the time since `part` entered its current step to its job's `total` and restarts
    /// the clock.
    fn lap(&mut self, part: PartRef, gpu: bool) {
        let Some(job) = self.jobs.get_mut(&part.job) else {
            return;
        };
        let now = Instant::now();
        if let Some(t) = job.since.get_mut(part.index) {
            if let Some(start) = t.replace(now) {
                let d = now.saturating_duration_since(start);
                let times = job.times.get_mut(part.index);
                if gpu {
                    job.gpu += d;
                    if let Some(t) = times {
                        t.gpu = d;
                    }
                } else {
                    job.synthesis += d;
                    if let Some(t) = times {
                        t.synthesis = d;
                    }
                }
            }
        }
    }
}

impl Handler<Synthesized> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Synthesized, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.worker_free(msg.grant);
        self.alive_now += 1;
        self.alive_peak = self.alive_peak.max(self.alive_now);
        let r = self.ledger.synthesized(msg.grant);
        self.ledger_op("synthesized", r);
        self.lap(msg.part, false);
        self.set_state(msg.part, PartitionState::At(Stage::QueuedForGpu));
        self.pump();
    }
}

impl Handler<Delivered> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Delivered, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.alive_now = self.alive_now.saturating_sub(1);
        let r = self.ledger.delivered(msg.grant);
        self.ledger_op("delivered", r);
        self.on_gpu
            .insert((msg.part.job, msg.part.index), msg.device);
        // The GPU clock starts when a GPU actor takes the partition.
        if let Some(t) = self
            .jobs
            .get_mut(&msg.part.job)
            .and_then(|j| j.since.get_mut(msg.part.index))
        {
            *t = Some(Instant::now());
        }
        self.set_state(msg.part, PartitionState::At(Stage::OnGpu));
        self.pump();
    }
}

impl Handler<HandedOff> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: HandedOff, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let r = self.ledger.advance(msg.grant, msg.stage);
        self.ledger_op("advance", r);
        if msg.stage == Stage::Bg2 {
            self.set_state(msg.part, PartitionState::At(Stage::Bg2));
            self.lap(msg.part, true);
            self.on_gpu.remove(&(msg.part.job, msg.part.index));
        }
        self.metrics.observe_ledger(&self.ledger.snapshot());
    }
}

impl Handler<Freed> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Freed, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.credit(msg.grant, &msg.frees);
        self.pump();
        self.maybe_close();
    }
}

impl Handler<PartitionDone> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: PartitionDone, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let part = msg.part;
        self.admission.finished(part);
        if let Some(job) = self.jobs.get_mut(&part.job) {
            if !job.failed {
                job.proofs[part.index] = Some(msg.proof);
                job.states[part.index] = PartitionState::Done;
                self.metrics.proof(ProofResult::Ok);
                if job.proofs.iter().all(Option::is_some) {
                    // Answer now; the entry stays until Dealloc has settled every charge.
                    if let Some(reply) = job.reply.take() {
                        let first = job.first_grant.unwrap_or(job.submitted);
                        let _ = reply.send(Ok(JobReport {
                            proofs: job.proofs.iter().flatten().copied().collect(),
                            queue_wait: first.saturating_duration_since(job.submitted),
                            synthesis: job.synthesis,
                            gpu: job.gpu,
                        }));
                    }
                }
            }
        }
        // Every charge may already be settled (a stated footprint with no witness bytes).
        self.finish_if_done(part.job);
    }
}

impl Handler<Failed> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Failed, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        self.on_failed(msg);
        self.pump();
    }
}

impl Handler<GrantDropped> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: GrantDropped, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let LostGrant {
            id,
            held,
            partition,
        } = msg.lost;
        self.metrics.grants_lost_total.inc();
        let part = self.grants.get(&id).copied();
        tracing::error!(
            grant = %id,
            bytes = held.total_bytes(),
            job = part.map(|p| p.job),
            partition = part.map(|p| p.index),
            "a grant was dropped unsettled (a lost message or a dead actor); reconciling the ledger"
        );
        // The partition's own token: if its outcome never came, this attempt failed here. Any
        // `Failed` or `PartitionDone` sent before the loss is already handled (same mailbox).
        if let Some(part) = part.filter(|p| partition && self.in_pipeline(*p)) {
            let actor = match self.state(part) {
                Some(PartitionState::At(Stage::Synthesizing)) => ActorKind::Synthesis,
                Some(PartitionState::At(Stage::Bg2)) => ActorKind::Bg2,
                _ => ActorKind::Gpu,
            };
            self.on_failed(Failed {
                part,
                grant: id,
                actor,
                cause: format!(
                    "the partition was lost in the {} stage (its message was dropped or the actor's thread died)",
                    actor.as_str()
                ),
                retryable: true,
            });
        }
        // The buffers went down with the grant: what it held is gone.
        self.credit(id, &held.frees(&BufferClass::ALL));
        self.pump();
        self.maybe_close();
    }
}
