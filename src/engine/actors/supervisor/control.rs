//! The Supervisor's handlers for the embedder's controls: cancelling a job, and pinning a
//! proving key resident and unpinning it. A pinned key counts as one more use of the key in the
//! ledger (`Ledger::use_key`): set aside from an auto budget, or checked to fit beside a stated
//! one, exactly as a job's key is; it comes back with the last use. A pinned key keeps its
//! circuit's recording in memory between jobs.

use actix::{Context, Handler};

use super::Supervisor;
use crate::engine::actors::mailbox::took;
use crate::engine::messages::{Cancel, PinKey, UnpinKey};
use crate::engine::status::{CancelOutcome, EngineError};
use crate::metrics::ActorKind;
use crate::scheduler::Cancelled;

impl Handler<Cancel> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Cancel, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let outcome = match self.admission.cancel(msg.job) {
            Cancelled::Done { was_running, .. } => {
                if let Some(job) = self.jobs.get_mut(&msg.job) {
                    job.failed = true;
                    // Started partitions skip their next stage; their buffers go to Dealloc.
                    job.abandoned.set();
                    if let Some(reply) = job.reply.take() {
                        let _ = reply.send(Err(EngineError::Cancelled { job: msg.job }));
                    }
                }
                tracing::info!(job = msg.job, was_running, "job cancelled");
                self.finish_if_done(msg.job);
                CancelOutcome::Cancelled { was_running }
            }
            Cancelled::Unknown | Cancelled::AlreadyAbandoned => CancelOutcome::NotFound,
        };
        let _ = msg.reply.send(outcome);
        self.pump();
    }
}

impl Handler<PinKey> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: PinKey, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        // With its circuit's recording as far as its size is known, as a job's key is counted.
        let bytes = self.key_bytes(&msg.pk);
        let id = msg.pk.id();
        let before = self.ledger.resident_bytes();
        let available = &self.available;
        let r = if self.pinned.insert(id) {
            self.ledger
                .use_key(id, bytes, || available())
                .inspect_err(|_| {
                    self.pinned.remove(&id);
                })
        } else {
            Ok(())
        };
        let set_aside = self.ledger.resident_bytes().saturating_sub(before);
        if r.is_ok() {
            // Held ready on the devices too, where they have room.
            self.warm(&msg.pk);
        }
        let _ = msg
            .reply
            .send(r.map(|()| set_aside).map_err(|e| self.refusal(id, e)));
        self.metrics.observe_ledger(&self.ledger.snapshot());
    }
}

impl Handler<UnpinKey> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: UnpinKey, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let before = self.ledger.resident_bytes();
        if self.pinned.remove(&msg.key_id) {
            self.ledger.unuse_key(msg.key_id);
            self.forget_recording_if_unused(msg.key_id);
        }
        let freed = before.saturating_sub(self.ledger.resident_bytes());
        let _ = msg.reply.send(freed);
        self.metrics.observe_ledger(&self.ledger.snapshot());
        self.pump();
    }
}
