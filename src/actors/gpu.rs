//! The Gpu actor (one per device): takes a synthesized partition, computes H, frees a/b/c early
//! through Dealloc, runs the G1 MSMs and hands the witness to the BG2 actor, so it can take the
//! next partition at once.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use actix::{Actor, Addr, Handler, SyncContext};
use blstrs::Scalar;

use super::{
    fail_and_release, post, restart_after_panic, retryable, skipped, took, Bg2Actor, DeallocActor,
    Supervisor,
};
use crate::key::ProvingKey;
use crate::ledger::{BufferClass, Footprint, GrantId, Stage};
use crate::messages::{Abandoned, Delivered, FinishProof, HandedOff, PartRef, Prove, Release};
use crate::metrics::{ActorKind, Metrics, Step};
use crate::pipeline::GpuStage;
use crate::prover::{Abc, G1Sums, Witness};

/// One device's actor.
pub struct GpuActor {
    /// The stage implementation for this device.
    pub stage: Box<dyn GpuStage>,
    /// Device label for metrics.
    pub device: String,
    /// Events go here.
    pub supervisor: Addr<Supervisor>,
    /// Finished G1 work goes here.
    pub bg2: Addr<Bg2Actor>,
    /// Dead buffers go here.
    pub dealloc: Addr<DeallocActor>,
    /// Metrics.
    pub metrics: Metrics,
}

impl Actor for GpuActor {
    type Context = SyncContext<Self>;
}

/// The buffers this actor owns while it works; whatever is left after a failure goes to Dealloc.
struct Held {
    abc: Option<Abc>,
    h: Option<Vec<Scalar>>,
    witness: Option<Witness>,
    /// Ledger bytes of the abc class not yet released.
    abc_bytes: u64,
}

impl GpuActor {
    fn release(
        &self,
        grant: GrantId,
        frees: Vec<(BufferClass, u64)>,
        buffers: Box<dyn std::any::Any + Send>,
    ) {
        post(
            &self.metrics,
            ActorKind::Dealloc,
            &self.dealloc,
            Release {
                grant,
                frees,
                buffers,
            },
        );
    }

    fn run(
        &mut self,
        part: PartRef,
        pk: &Arc<ProvingKey>,
        fp: &Footprint,
        id: GrantId,
        held: &mut Held,
        abandoned: &Abandoned,
    ) -> crate::Result<G1Sums> {
        if abandoned.is_set() {
            skipped(&self.metrics, ActorKind::Gpu);
            return Err(crate::Error::Abandoned);
        }
        let t = Instant::now();
        let mut abc = held.abc.take().unwrap_or_default();
        let h = self.stage.compute_h(pk, &mut abc);
        // Early free: b and c (and a's leftovers) are dead once H exists, error or not.
        let bc_bytes = fp.bytes(BufferClass::Abc) * 2 / 3;
        self.release(id, vec![(BufferClass::Abc, bc_bytes)], Box::new(abc));
        held.abc_bytes -= bc_bytes;
        let h = h?;
        held.h = Some(h);
        let h_secs = t.elapsed().as_secs_f64();
        self.metrics.observe(Step::H, h_secs);
        tracing::info!(seconds = h_secs, "H computed");
        let t = Instant::now();
        let witness = held.witness.as_ref().ok_or_else(|| crate::Error::Backend {
            backend: "gpu actor",
            reason: "partition arrived without a witness".into(),
        })?;
        let h = held.h.as_deref().unwrap_or(&[]);
        let g1 = self.stage.g1_msms(pk, witness, h)?;
        let msm_secs = t.elapsed().as_secs_f64();
        self.metrics.observe(Step::G1Msm, msm_secs);
        tracing::info!(
            job = part.job,
            partition = part.index,
            seconds = msm_secs,
            "G1 MSMs done"
        );
        Ok(g1)
    }
}

impl Handler<Prove> for GpuActor {
    type Result = ();

    fn handle(&mut self, msg: Prove, ctx: &mut SyncContext<Self>) {
        took(&self.metrics, ActorKind::Gpu);
        let Prove {
            part,
            pk,
            grant,
            abc,
            witness,
            synthesized_at,
            abandoned,
            span,
        } = msg;
        let id = grant.id();
        let fp = grant.footprint();
        post(
            &self.metrics,
            ActorKind::Supervisor,
            &self.supervisor,
            Delivered { part, grant: id },
        );
        self.metrics
            .observe(Step::QueuedGpu, synthesized_at.elapsed().as_secs_f64());
        let stage_span = tracing::info_span!(parent: &span, "gpu", device = %self.device);
        let _enter = stage_span.enter();
        let busy = Instant::now();
        let mut held = Held {
            abc: Some(abc),
            h: None,
            witness: Some(witness),
            abc_bytes: fp.bytes(BufferClass::Abc),
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.run(part, &pk, &fp, id, &mut held, &abandoned)
        }));
        self.metrics
            .gpu_busy_seconds
            .with_label_values(&[&self.device])
            .inc_by(busy.elapsed().as_secs_f64());
        // H's buffer (a's old storage) is the rest of the abc charge.
        let rest = held.abc_bytes;
        let leftovers = (held.abc.take(), held.h.take());
        self.release(id, vec![(BufferClass::Abc, rest)], Box::new(leftovers));
        let (cause, retryable) = match outcome {
            Ok(Ok(g1)) => {
                if let Some(witness) = held.witness.take() {
                    post(
                        &self.metrics,
                        ActorKind::Supervisor,
                        &self.supervisor,
                        HandedOff {
                            part,
                            grant: id,
                            stage: Stage::Bg2,
                        },
                    );
                    post(
                        &self.metrics,
                        ActorKind::Bg2,
                        &self.bg2,
                        FinishProof {
                            part,
                            pk,
                            grant,
                            g1,
                            witness,
                            abandoned,
                            span,
                        },
                    );
                    return;
                }
                ("witness lost inside the GPU actor".to_string(), true)
            }
            Ok(Err(e)) => (e.to_string(), retryable(&e)),
            Err(p) => restart_after_panic(&self.metrics, ActorKind::Gpu, ctx, p.as_ref()),
        };
        if !abandoned.is_set() {
            tracing::warn!(%cause, "GPU stage failed");
        }
        fail_and_release(
            &self.metrics,
            &self.supervisor,
            &self.dealloc,
            part,
            grant,
            ActorKind::Gpu,
            cause,
            retryable,
            held.witness.take(),
        );
    }
}
