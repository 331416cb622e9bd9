//! The Synthesis actor (a `SyncArbiter` pool): builds a partition's a/b/c and witness and moves
//! them to the GPU actor. A panic restarts the actor and the partition is retried.

use std::time::Instant;

use actix::{Actor, Addr, Handler, SyncContext};

use super::{post, took, GpuActor, Links};
use crate::engine::messages::{Prove, Synthesize, Synthesized, TakeNext};
use crate::ledger::BufferClass;
use crate::metrics::{ActorKind, Step};
use crate::scheduler::yield_point::Gate;
use crate::scheduler::Priority;
use crate::stages::pipeline::Synthesizer;

/// One synthesis worker.
pub struct SynthesisActor {
    /// The stage implementation (rebuilt on restart by the arbiter's factory).
    pub stage: Box<dyn Synthesizer>,
    /// Every device's actor, each told of each synthesized partition (a token: the partition
    /// waits in `queue` for the first idle device).
    pub gpu: std::sync::Arc<[Addr<GpuActor>]>,
    /// The Supervisor, Dealloc and metrics.
    pub links: Links,
    /// Synthesized partitions wait here, most urgent first.
    pub queue: std::sync::Arc<super::GpuQueue>,
    /// The thread pool ordinary synthesis runs in (its parallel parts too): the ordinary
    /// pool's, its threads niced by `synthesis.nice` and yielding to `gate`; `None`: this
    /// thread and rayon's global pool. CRITICAL partitions never run in it.
    pub threads: Option<std::sync::Arc<rayon::ThreadPool>>,
    /// Held while a CRITICAL partition synthesizes here, so that the ordinary pool's threads
    /// pause (`synthesis.yield_to_critical`; `None` when off).
    pub gate: Option<std::sync::Arc<Gate>>,
}

impl Actor for SynthesisActor {
    type Context = SyncContext<Self>;
}

impl Handler<Synthesize> for SynthesisActor {
    type Result = ();

    fn handle(&mut self, msg: Synthesize, ctx: &mut SyncContext<Self>) {
        let links = &self.links;
        took(&links.metrics, ActorKind::Synthesis);
        let Synthesize {
            part,
            circuit,
            pk,
            abandoned,
            priority,
            span,
            mut grant,
        } = msg;
        let _enter = tracing::info_span!(parent: &span, "synthesize").entered();
        let t = Instant::now();
        let (stage, threads) = (&mut self.stage, &self.threads);
        let critical = priority == Priority::Critical;
        // Dropped when synthesis ends, unwinding included.
        let hold = match critical {
            true => self.gate.as_ref().map(|g| g.hold()),
            false => None,
        };
        let outcome = links.run(ActorKind::Synthesis, ctx, &abandoned, (), |()| {
            let mut work = || stage.synthesize(circuit.as_ref(), &pk);
            match threads {
                // A CRITICAL partition on an ordinary worker (no worker kept for them, or all
                // busy) runs on this thread and the global pool: the ordinary pool's threads
                // would pause for it.
                Some(pool) if !critical => pool.install(work),
                _ => work(),
            }
        });
        drop(hold);
        let secs = t.elapsed().as_secs_f64();
        links.metrics.observe(Step::Synthesis, secs);
        match outcome {
            Ok((abc, witness)) => {
                tracing::info!(
                    seconds = secs,
                    packed = witness.packed.is_some(),
                    aux_bytes = witness.aux_bytes(),
                    "synthesized"
                );
                // A witness smaller than its charge (packed as bits) gives the rest back now:
                // those bytes were set aside for it and will never be used.
                let unused = grant
                    .held()
                    .bytes(BufferClass::Aux)
                    .saturating_sub(witness.aux_bytes());
                if unused > 0 && witness.packed.is_some() {
                    links.release(grant.split(BufferClass::Aux, unused), ());
                }
                links.tell(Synthesized {
                    part,
                    grant: grant.id(),
                });
                self.queue.push(Prove {
                    part,
                    pk,
                    abc,
                    witness,
                    synthesized_at: Instant::now(),
                    abandoned,
                    priority,
                    span,
                    grant,
                });
                for gpu in self.gpu.iter() {
                    post(&links.metrics, ActorKind::Gpu, gpu, TakeNext);
                }
            }
            // Nothing survived (an error returns no buffers; unwinding dropped them): the whole
            // charge is settled through Dealloc, the one usual way.
            Err(failure) => links.fail(ActorKind::Synthesis, part, grant, failure, &abandoned, ()),
        }
    }
}
