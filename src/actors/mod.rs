//! The engine's actors (see actors.md): Supervisor, Synthesis, Gpu, BG2 and Dealloc.

mod bg2;
mod dealloc;
mod gpu;
mod mailbox;
mod spawn;
mod supervisor;
mod synthesis;

pub use bg2::Bg2Actor;
pub use dealloc::DeallocActor;
pub use gpu::GpuActor;
pub use supervisor::{Supervisor, SupervisorParts};
pub use synthesis::SynthesisActor;

pub(crate) use mailbox::{post, took};
pub(crate) use spawn::spawn_actors;

use std::any::Any;

use actix::Addr;

use crate::ledger::{BufferClass, Grant};
use crate::messages::{Failed, PartRef, Release};
use crate::metrics::{ActorKind, Metrics, ProofResult};
use crate::prover::Witness;

/// After a caught panic: counts the restart, stops the actor (a `SyncContext` then builds a
/// fresh one from its factory on the same thread) and returns the failure cause, retryable.
pub(crate) fn restart_after_panic<C: actix::ActorContext>(
    metrics: &Metrics,
    actor: ActorKind,
    ctx: &mut C,
    payload: &(dyn Any + Send),
) -> (String, bool) {
    metrics.restarted(actor);
    ctx.stop();
    (
        format!("{} actor panicked: {}", actor.as_str(), panic_text(payload)),
        true,
    )
}

/// Counts a partition a stage skipped because its job had already failed
/// (`baton_proofs_total{result="abandoned"}`) and says so at info level.
pub(crate) fn skipped(metrics: &Metrics, actor: ActorKind) {
    metrics.proof(ProofResult::Abandoned);
    tracing::info!(
        actor = actor.as_str(),
        "partition skipped: its job already failed"
    );
}

/// Whether another attempt at a partition could pass after this error: device and backend
/// failures may; an unsatisfied circuit, a key that does not fit, bad lengths or a degenerate
/// key fail the same way every time.
pub(crate) fn retryable(e: &crate::Error) -> bool {
    matches!(e, crate::Error::Backend { .. } | crate::Error::Io(_))
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

/// Reports a failure, then releases the witness classes (the abc class is already settled).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fail_and_release(
    metrics: &Metrics,
    supervisor: &Addr<Supervisor>,
    dealloc: &Addr<DeallocActor>,
    part: PartRef,
    grant: Grant,
    actor: ActorKind,
    cause: String,
    retryable: bool,
    witness: Option<Witness>,
) {
    let id = grant.id();
    post(
        metrics,
        ActorKind::Supervisor,
        supervisor,
        Failed {
            part,
            grant: id,
            actor,
            cause,
            retryable,
            frees_worker: false,
        },
    );
    let classes = [BufferClass::Aux, BufferClass::Inputs, BufferClass::Density];
    let frees = crate::messages::frees_of(&grant.footprint(), &classes);
    post(
        metrics,
        ActorKind::Dealloc,
        dealloc,
        Release {
            grant: id,
            frees,
            buffers: Box::new(witness),
        },
    );
}
