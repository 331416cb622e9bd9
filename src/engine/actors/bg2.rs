//! The BG2 actor (CPU): the B_G2 MSM (unless the GPU stage already computed it) and proof
//! assembly; then the witness goes to Dealloc.

use std::time::Instant;

use actix::{Actor, Handler, SyncContext};

use super::{took, Links};
use crate::engine::messages::{FinishProof, PartitionDone};
use crate::metrics::{ActorKind, Step};
use crate::stages::pipeline::Bg2Stage;

/// One B_G2 worker.
pub struct Bg2Actor {
    /// The stage implementation.
    pub stage: Box<dyn Bg2Stage>,
    /// The Supervisor, Dealloc and metrics.
    pub links: Links,
}

impl Actor for Bg2Actor {
    type Context = SyncContext<Self>;
}

impl Handler<FinishProof> for Bg2Actor {
    type Result = ();

    fn handle(&mut self, msg: FinishProof, ctx: &mut SyncContext<Self>) {
        let links = &self.links;
        took(&links.metrics, ActorKind::Bg2);
        let FinishProof {
            part,
            pk,
            g1,
            b_g2,
            witness,
            abandoned,
            span,
            grant,
        } = msg;
        let _enter = tracing::info_span!(parent: &span, "bg2").entered();
        let t = Instant::now();
        let stage = &mut self.stage;
        let outcome = links.run(ActorKind::Bg2, ctx, &abandoned, (), |()| match b_g2 {
            // The device already computed B_G2 in the GPU stage's call: assembly only.
            Some(g2) => stage.finish_with_g2(&pk, &g1, g2),
            None => stage.finish(&pk, &witness, &g1),
        });
        let secs = t.elapsed().as_secs_f64();
        links.metrics.observe(Step::Bg2, secs);
        match outcome {
            Ok(proof) => {
                tracing::info!(seconds = secs, "B_G2 MSM and proof assembled");
                links.tell(PartitionDone { part, proof });
                links.release(grant, witness);
            }
            Err(failure) => links.fail(ActorKind::Bg2, part, grant, failure, &abandoned, witness),
        }
    }
}
