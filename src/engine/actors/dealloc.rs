//! The Dealloc actor: drops large buffers off every hot path and reports the bytes as freed.

use std::time::{Duration, Instant};

use actix::{Actor, Addr, Handler, SyncContext};

use super::{post, took, Supervisor};
use crate::engine::messages::{Freed, Release};
use crate::metrics::{ActorKind, Metrics, Step};

/// Drops what it is sent, then tells the supervisor.
pub struct DeallocActor {
    /// Where `Freed` goes.
    pub supervisor: Addr<Supervisor>,
    /// Metrics.
    pub metrics: Metrics,
    /// Extra time per drop (tests and simulations of a slow allocator).
    pub delay: Duration,
}

impl Actor for DeallocActor {
    type Context = SyncContext<Self>;
}

impl Handler<Release> for DeallocActor {
    type Result = ();

    fn handle(&mut self, msg: Release, _: &mut SyncContext<Self>) {
        took(&self.metrics, ActorKind::Dealloc);
        let t = Instant::now();
        let Release { buffers, grant } = msg;
        drop(buffers);
        if !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.metrics
            .observe(Step::Dealloc, t.elapsed().as_secs_f64());
        let (grant, frees) = grant.settle();
        post(
            &self.metrics,
            ActorKind::Supervisor,
            &self.supervisor,
            Freed { grant, frees },
        );
    }
}
