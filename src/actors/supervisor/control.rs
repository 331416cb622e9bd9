//! The Supervisor's handlers for the embedder's controls: cancelling a job, pinning a proving
//! key resident (its bytes set aside from the ledger's budget) and unpinning it, and the key
//! bookkeeping they share with job admission.

use actix::{Context, Handler};

use super::Supervisor;
use crate::actors::mailbox::took;
use crate::key::ProvingKey;
use crate::messages::{Cancel, PinKey, UnpinKey};
use crate::metrics::ActorKind;
use crate::scheduler::Cancelled;
use crate::status::{CancelOutcome, EngineError};

/// One proving key the ledger knows of: jobs using it, pinned or not, bytes set aside.
#[derive(Debug, Default)]
pub(super) struct KeyUse {
    bytes: u64,
    users: usize,
    pinned: bool,
    reserved: bool,
}

impl Supervisor {
    /// Counts one more job on `pk`; its bytes are set aside the first time when the budget was
    /// sized from available memory (keys loaded later must come out of it).
    pub(super) fn use_key(&mut self, pk: &ProvingKey) {
        let reserve = self.reserve_keys;
        let k = self.keys.entry(pk.id()).or_default();
        k.users += 1;
        if reserve && !k.reserved {
            k.bytes = pk.heap_bytes();
            k.reserved = true;
            self.ledger.reserve_resident(k.bytes);
        }
    }

    /// One job fewer on key `id`; its bytes come back when no job uses it and it is not pinned.
    pub(super) fn unuse_key(&mut self, id: u64) {
        if let Some(k) = self.keys.get_mut(&id) {
            k.users = k.users.saturating_sub(1);
        }
        self.settle_key(id);
    }

    /// Forgets key `id` when nothing holds it, giving its bytes back; returns them.
    fn settle_key(&mut self, id: u64) -> u64 {
        let Some(k) = self.keys.get(&id) else {
            return 0;
        };
        if k.users > 0 || k.pinned {
            return 0;
        }
        let freed = if k.reserved { k.bytes } else { 0 };
        self.ledger.release_resident(freed);
        self.keys.remove(&id);
        freed
    }
}

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
        let k = self.keys.entry(msg.pk.id()).or_default();
        k.pinned = true;
        let mut set_aside = 0;
        if !k.reserved {
            k.bytes = msg.pk.heap_bytes();
            k.reserved = true;
            set_aside = k.bytes;
            self.ledger.reserve_resident(k.bytes);
        }
        let _ = msg.reply.send(set_aside);
        self.metrics.observe_ledger(&self.ledger.snapshot());
    }
}

impl Handler<UnpinKey> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: UnpinKey, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        if let Some(k) = self.keys.get_mut(&msg.key_id) {
            k.pinned = false;
        }
        let freed = self.settle_key(msg.key_id);
        let _ = msg.reply.send(freed);
        self.metrics.observe_ledger(&self.ledger.snapshot());
        self.pump();
    }
}
