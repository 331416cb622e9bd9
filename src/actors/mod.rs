//! The engine's actors (see actors.md): Supervisor, Synthesis, Gpu, BG2 and Dealloc.

mod bg2;
mod dealloc;
mod gpu;
mod supervisor;
mod synthesis;

pub use bg2::Bg2Actor;
pub use dealloc::DeallocActor;
pub use gpu::GpuActor;
pub use supervisor::{Supervisor, SupervisorParts};
pub use synthesis::SynthesisActor;

use std::any::Any;

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, Message};

use crate::metrics::Metrics;

/// Sends `msg` to `addr`, counting it in `baton_mailbox_depth{actor}` until its handler starts.
/// Unbounded on purpose: every large message is already bounded by ledger slots and grants.
pub(crate) fn post<A, M>(metrics: &Metrics, actor: &str, addr: &Addr<A>, msg: M)
where
    A: Actor + Handler<M>,
    A::Context: ToEnvelope<A, M>,
    M: Message + Send + 'static,
    M::Result: Send,
{
    metrics.mailbox_depth.with_label_values(&[actor]).inc();
    addr.do_send(msg);
}

/// Marks one message of `actor` as taken from its mailbox.
pub(crate) fn took(metrics: &Metrics, actor: &str) {
    metrics.mailbox_depth.with_label_values(&[actor]).dec();
}

/// After a caught panic: counts the restart, stops the actor (a `SyncContext` then builds a
/// fresh one from its factory on the same thread) and returns the failure cause, retryable.
pub(crate) fn restart_after_panic<C: actix::ActorContext>(
    metrics: &Metrics,
    actor: &str,
    ctx: &mut C,
    payload: &(dyn Any + Send),
) -> (String, bool) {
    metrics.restarts_total.with_label_values(&[actor]).inc();
    ctx.stop();
    (
        format!("{actor} actor panicked: {}", panic_text(payload)),
        true,
    )
}

/// Counts a partition a stage skipped because its job had already failed
/// (`baton_proofs_total{result="abandoned"}`) and says so at info level.
pub(crate) fn skipped(metrics: &Metrics, actor: &'static str) {
    metrics.proofs_total.with_label_values(&["abandoned"]).inc();
    tracing::info!(actor, "partition skipped: its job already failed");
}

/// Whether another attempt at a partition could pass after this error: backend failures, I/O,
/// and GPU conditions that can pass (out of device memory, driver errors) may; an unsatisfied
/// circuit, a key that does not fit, bad lengths, a degenerate key or a GPU bug (a refused
/// launch, a kernel that does not compile) fail the same way every time.
pub(crate) fn retryable(e: &crate::Error) -> bool {
    match e {
        crate::Error::Gpu(g) => g.retryable(),
        e => matches!(e, crate::Error::Backend { .. } | crate::Error::Io(_)),
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
