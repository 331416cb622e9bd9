//! The BG2 actor (CPU): the B_G2 MSM and proof assembly; then the witness goes to Dealloc.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use actix::{Actor, Addr, Handler, SyncContext};

use super::gpu::fail_and_release;
use super::{post, restart_after_panic, retryable, skipped, took, DeallocActor, Supervisor};
use crate::ledger::BufferClass;
use crate::messages::{frees_of, FinishProof, PartitionDone, Release};
use crate::metrics::Metrics;
use crate::pipeline::Bg2Stage;

/// One B_G2 worker.
pub struct Bg2Actor {
    /// The stage implementation.
    pub stage: Box<dyn Bg2Stage>,
    /// Results go here.
    pub supervisor: Addr<Supervisor>,
    /// The witness goes here afterwards.
    pub dealloc: Addr<DeallocActor>,
    /// Metrics.
    pub metrics: Metrics,
}

impl Actor for Bg2Actor {
    type Context = SyncContext<Self>;
}

impl Handler<FinishProof> for Bg2Actor {
    type Result = ();

    fn handle(&mut self, msg: FinishProof, ctx: &mut SyncContext<Self>) {
        took(&self.metrics, "bg2");
        let FinishProof {
            part,
            pk,
            grant,
            g1,
            b_g2,
            witness,
            abandoned,
            span,
        } = msg;
        let stage_span = tracing::info_span!(parent: &span, "bg2");
        let _enter = stage_span.enter();
        let t = Instant::now();
        let stage = &mut self.stage;
        let outcome = if abandoned.is_set() {
            skipped(&self.metrics, "bg2");
            Ok(Err(crate::Error::Abandoned))
        } else {
            catch_unwind(AssertUnwindSafe(|| match b_g2 {
                Some(g2) => stage.finish_with_g2(&pk, &g1, g2),
                None => stage.finish(&pk, &witness, &g1),
            }))
        };
        self.metrics
            .stage_seconds
            .with_label_values(&["bg2"])
            .observe(t.elapsed().as_secs_f64());
        let (cause, retryable) = match outcome {
            Ok(Ok(proof)) => {
                tracing::info!(
                    seconds = t.elapsed().as_secs_f64(),
                    "B_G2 MSM and proof assembled"
                );
                post(
                    &self.metrics,
                    "supervisor",
                    &self.supervisor,
                    PartitionDone { part, proof },
                );
                let classes = [BufferClass::Aux, BufferClass::Inputs, BufferClass::Density];
                let frees = frees_of(&grant.footprint(), &classes);
                post(
                    &self.metrics,
                    "dealloc",
                    &self.dealloc,
                    Release {
                        grant: grant.id(),
                        frees,
                        buffers: Box::new(witness),
                    },
                );
                return;
            }
            Ok(Err(e)) => (e.to_string(), retryable(&e)),
            Err(p) => restart_after_panic(&self.metrics, "bg2", ctx, p.as_ref()),
        };
        if !abandoned.is_set() {
            tracing::warn!(%cause, "B_G2 stage failed");
        }
        fail_and_release(
            &self.metrics,
            &self.supervisor,
            &self.dealloc,
            part,
            grant,
            "bg2",
            cause,
            retryable,
            Some(witness),
        );
    }
}
