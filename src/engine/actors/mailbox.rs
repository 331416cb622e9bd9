//! Mailbox accounting: every send is counted in `baton_mailbox_depth{actor}` until its handler
//! starts.

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, Message, Recipient};

use crate::metrics::{ActorKind, Metrics};

/// Sends `msg` to `addr`, counting it in `baton_mailbox_depth{actor}` until its handler starts.
/// Unbounded on purpose: every large message is already bounded by ledger slots and grants.
pub(crate) fn post<A, M>(metrics: &Metrics, actor: ActorKind, addr: &Addr<A>, msg: M)
where
    A: Actor + Handler<M>,
    A::Context: ToEnvelope<A, M>,
    M: Message + Send + 'static,
    M::Result: Send,
{
    metrics.mailbox(actor).inc();
    addr.do_send(msg);
}

/// [`post`] through a type-erased recipient (the Supervisor's link to the synthesis pool, so
/// that neither names the other's type).
pub(crate) fn post_to<M>(metrics: &Metrics, actor: ActorKind, to: &Recipient<M>, msg: M)
where
    M: Message + Send + 'static,
    M::Result: Send,
{
    metrics.mailbox(actor).inc();
    to.do_send(msg);
}

/// Marks one message of `actor` as taken from its mailbox.
pub(crate) fn took(metrics: &Metrics, actor: ActorKind) {
    metrics.mailbox(actor).dec();
}
