//! The Synthesis actor (a `SyncArbiter` pool): builds a partition's a/b/c and witness and moves
//! them to the GPU actor. A panic restarts the actor and the partition is retried.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use actix::{Actor, Addr, Handler, SyncContext};

use super::{post, restart_after_panic, skipped, took, DeallocActor, GpuActor, Supervisor};
use crate::ledger::BufferClass;
use crate::messages::{frees_of, Failed, Prove, Release, Synthesize, Synthesized};
use crate::metrics::{ActorKind, Metrics, Step};
use crate::pipeline::Synthesizer;

/// One synthesis worker.
pub struct SynthesisActor {
    /// The stage implementation (rebuilt on restart by the arbiter's factory).
    pub stage: Box<dyn Synthesizer>,
    /// Events go here.
    pub supervisor: Addr<Supervisor>,
    /// Synthesized partitions go here.
    pub gpu: Addr<GpuActor>,
    /// Failed partitions' charges are settled through here.
    pub dealloc: Addr<DeallocActor>,
    /// Metrics.
    pub metrics: Metrics,
}

impl Actor for SynthesisActor {
    type Context = SyncContext<Self>;
}

impl Handler<Synthesize> for SynthesisActor {
    type Result = ();

    fn handle(&mut self, msg: Synthesize, ctx: &mut SyncContext<Self>) {
        took(&self.metrics, ActorKind::Synthesis);
        let Synthesize {
            part,
            circuit,
            pk,
            grant,
            abandoned,
            span,
        } = msg;
        let stage_span = tracing::info_span!(parent: &span, "synthesize");
        let _enter = stage_span.enter();
        let t = Instant::now();
        let stage = &mut self.stage;
        let outcome = if abandoned.is_set() {
            skipped(&self.metrics, ActorKind::Synthesis);
            Ok(Err(crate::Error::Abandoned))
        } else {
            catch_unwind(AssertUnwindSafe(|| stage.synthesize(circuit.as_ref(), &pk)))
        };
        let secs = t.elapsed().as_secs_f64();
        self.metrics.observe(Step::Synthesis, secs);
        let (cause, retryable) = match outcome {
            Ok(Ok((abc, witness))) => {
                tracing::info!(seconds = secs, "synthesized");
                post(
                    &self.metrics,
                    ActorKind::Supervisor,
                    &self.supervisor,
                    Synthesized {
                        part,
                        grant: grant.id(),
                    },
                );
                let prove = Prove {
                    part,
                    pk,
                    grant,
                    abc,
                    witness,
                    synthesized_at: Instant::now(),
                    abandoned,
                    span,
                };
                post(&self.metrics, ActorKind::Gpu, &self.gpu, prove);
                return;
            }
            Ok(Err(e)) => (e.to_string(), false),
            Err(p) => restart_after_panic(&self.metrics, ActorKind::Synthesis, ctx, p.as_ref()),
        };
        if !abandoned.is_set() {
            tracing::warn!(%cause, "synthesis failed");
        }
        let id = grant.id();
        post(
            &self.metrics,
            ActorKind::Supervisor,
            &self.supervisor,
            Failed {
                part,
                grant: id,
                actor: ActorKind::Synthesis,
                cause,
                retryable,
                frees_worker: true,
            },
        );
        // Nothing survived (an error returns no buffers; unwinding dropped them): settle the
        // whole charge through Dealloc so the ledger hears of it the one usual way.
        let frees = frees_of(&grant.footprint(), &BufferClass::ALL);
        post(
            &self.metrics,
            ActorKind::Dealloc,
            &self.dealloc,
            Release {
                grant: id,
                frees,
                buffers: Box::new(()),
            },
        );
    }
}
