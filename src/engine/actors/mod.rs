//! The engine's actors (see actors.md): Supervisor, Synthesis, Gpu, BG2 and Dealloc, and the one
//! handler skeleton the three worker actors (Synthesis, Gpu, BG2) share: `Links::run` takes
//! the work (skipping an abandoned job's, catching a panic), `Links::fail` is the one failure
//! path (report, then every owned buffer to Dealloc in one message).

mod bg2;
mod dealloc;
mod gpu;
mod gpu_queue;
mod mailbox;
mod spawn;
mod supervisor;
mod synthesis;

pub use bg2::Bg2Actor;
pub use dealloc::DeallocActor;
pub use gpu::GpuActor;
pub use gpu_queue::GpuQueue;
pub use supervisor::{Supervisor, SupervisorParts};
pub use synthesis::SynthesisActor;

pub(crate) use mailbox::{post, took};
pub(crate) use spawn::spawn_actors;

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use actix::{ActorContext, Addr, Handler, Message};

use crate::engine::messages::{Abandoned, Failed, PartRef, Release};
use crate::groth16::error::Error;
use crate::ledger::Grant;
use crate::metrics::{ActorKind, Metrics, ProofResult};

/// What every worker actor holds besides its stage: where its events and dead buffers go.
#[derive(Clone)]
pub struct Links {
    /// Events go here.
    pub supervisor: Addr<Supervisor>,
    /// Dead buffers go here.
    pub dealloc: Addr<DeallocActor>,
    /// Metrics.
    pub metrics: Metrics,
}

/// Why one attempt at a partition failed, whether another attempt could pass, and the work's
/// input if the work never started (a skipped partition's buffers, still owned).
#[derive(Debug)]
pub(crate) struct Failure<I> {
    cause: String,
    retryable: bool,
    unused: Option<I>,
}

impl<I> Failure<I> {
    /// The one retry rule, for every stage: backend and I/O failures and GPU conditions that can
    /// pass (out of device memory, driver errors) may pass on another attempt; an unsatisfied
    /// circuit, a key that does not fit, bad lengths, a degenerate key, a GPU bug (a refused
    /// launch, a kernel that does not compile) or an abandoned job fail the same way every time.
    fn from_error(e: &Error, unused: Option<I>) -> Self {
        let retryable = match e {
            Error::Device(g) => g.retryable(),
            e => matches!(e, Error::Backend { .. } | Error::Io(_)),
        };
        Failure {
            cause: e.to_string(),
            retryable,
            unused,
        }
    }
}

impl Links {
    /// Sends `msg` to the Supervisor (counted in its mailbox depth).
    pub(crate) fn tell<M>(&self, msg: M)
    where
        Supervisor: Handler<M>,
        M: Message + Send + 'static,
        M::Result: Send,
    {
        post(&self.metrics, ActorKind::Supervisor, &self.supervisor, msg);
    }

    /// Hands `buffers` to Dealloc with the part of the grant that stands for them.
    pub(crate) fn release(&self, grant: Grant, buffers: impl Any + Send) {
        let buffers = Box::new(buffers);
        post(
            &self.metrics,
            ActorKind::Dealloc,
            &self.dealloc,
            Release { buffers, grant },
        );
    }

    /// The work of one handler, the same way for every worker actor: a partition whose job was
    /// abandoned is skipped (`baton_proofs_total{result="abandoned"}`); a panic inside `work` is
    /// caught, counted as a restart and stops the actor (its `SyncArbiter` builds a fresh one
    /// from the factory on the same thread), and is retryable; an error goes through the one
    /// retry rule.
    /// A skipped partition's `input` comes back in the failure, so that its buffers still go to
    /// Dealloc rather than being dropped here.
    pub(crate) fn run<C: ActorContext, I, T>(
        &self,
        actor: ActorKind,
        ctx: &mut C,
        abandoned: &Abandoned,
        input: I,
        work: impl FnOnce(I) -> crate::Result<T>,
    ) -> Result<T, Failure<I>> {
        if abandoned.is_set() {
            self.metrics.proof(ProofResult::Abandoned);
            tracing::info!(
                actor = actor.as_str(),
                "partition skipped: its job already failed"
            );
            return Err(Failure::from_error(&Error::Abandoned, Some(input)));
        }
        match catch_unwind(AssertUnwindSafe(|| work(input))) {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(Failure::from_error(&e, None)),
            Err(payload) => {
                self.metrics.restarted(actor);
                ctx.stop();
                let cause = format!(
                    "{} actor panicked: {}",
                    actor.as_str(),
                    panic_text(&*payload)
                );
                Err(Failure {
                    cause,
                    retryable: true,
                    unused: None,
                })
            }
        }
    }

    /// The one failure path: tells the Supervisor, then hands every buffer the actor still owns
    /// to Dealloc in one message, with all the bytes the grant still stands for (buffers an
    /// unwinding panic already dropped are gone; their bytes travel with the rest).
    pub(crate) fn fail<I: Any + Send>(
        &self,
        actor: ActorKind,
        part: PartRef,
        grant: Grant,
        failure: Failure<I>,
        abandoned: &Abandoned,
        buffers: impl Any + Send,
    ) {
        if !abandoned.is_set() {
            tracing::warn!(actor = actor.as_str(), cause = %failure.cause, "stage failed");
        }
        self.tell(Failed {
            part,
            grant: grant.id(),
            actor,
            cause: failure.cause,
            retryable: failure.retryable,
        });
        self.release(grant, (failure.unused, buffers));
    }
}

/// Text of a caught panic payload.
pub(crate) fn panic_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".into()
    }
}
