//! The Gpu actor (one per device): takes a synthesized partition, computes H, frees a/b/c early
//! through Dealloc, runs the G1 MSMs and hands the witness to the BG2 actor, so it can take the
//! next partition at once.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use actix::{Actor, Addr, Handler, SyncContext};
use blstrs::{G2Projective, Scalar};

use super::{
    post, restart_after_panic, retryable, skipped, took, Bg2Actor, DeallocActor, Supervisor,
};
use crate::key::ProvingKey;
use crate::ledger::{BufferClass, Footprint, Grant, GrantId, Stage};
use crate::messages::{
    Abandoned, Delivered, Failed, FinishProof, HandedOff, PartRef, Prove, Release,
};
use crate::metrics::Metrics;
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
            "dealloc",
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
    ) -> crate::Result<(G1Sums, Option<G2Projective>)> {
        if abandoned.is_set() {
            skipped(&self.metrics, "gpu");
            return Err(crate::Error::Abandoned);
        }
        let t = Instant::now();
        let mut abc = held.abc.take().unwrap_or_default();
        if let Some(witness) = held.witness.as_ref() {
            // The device-resident partition: a/b/c are freed as soon as they are uploaded.
            let (metrics, dealloc) = (self.metrics.clone(), self.dealloc.clone());
            let all = fp.bytes(BufferClass::Abc);
            let mut released = false;
            let mut abc_done = |taken: Abc| {
                released = true;
                let frees = vec![(BufferClass::Abc, all)];
                let buffers: Box<dyn std::any::Any + Send> = Box::new(taken);
                let msg = Release {
                    grant: id,
                    frees,
                    buffers,
                };
                post(&metrics, "dealloc", &dealloc, msg);
            };
            let whole = self
                .stage
                .prove_partition(pk, &mut abc, witness, &mut abc_done);
            if released {
                held.abc_bytes -= all;
            } else {
                held.abc = Some(std::mem::take(&mut abc));
            }
            if let Some(r) = whole {
                let sums = r?;
                let stage = &self.metrics.stage_seconds;
                stage
                    .with_label_values(&["h"])
                    .observe(sums.times.h.as_secs_f64());
                let msm_secs = sums.times.msms.as_secs_f64();
                stage.with_label_values(&["g1_msm"]).observe(msm_secs);
                tracing::info!(
                    job = part.job,
                    partition = part.index,
                    seconds = t.elapsed().as_secs_f64(),
                    h_seconds = sums.times.h.as_secs_f64(),
                    msm_seconds = msm_secs,
                    host_seconds = sums.times.host.as_secs_f64(),
                    b_g2 = sums.b_g2.is_some(),
                    "partition done on the device"
                );
                return Ok((sums.g1, sums.b_g2));
            }
            abc = held.abc.take().unwrap_or_default();
        }
        let h = self.stage.compute_h(pk, &mut abc);
        // Early free: b and c (and a's leftovers) are dead once H exists, error or not.
        let bc_bytes = fp.bytes(BufferClass::Abc) * 2 / 3;
        self.release(id, vec![(BufferClass::Abc, bc_bytes)], Box::new(abc));
        held.abc_bytes -= bc_bytes;
        let h = h?;
        held.h = Some(h);
        let h_secs = t.elapsed().as_secs_f64();
        self.metrics
            .stage_seconds
            .with_label_values(&["h"])
            .observe(h_secs);
        tracing::info!(seconds = h_secs, "H computed");
        let t = Instant::now();
        let witness = held.witness.as_ref().ok_or_else(|| crate::Error::Backend {
            backend: "gpu actor",
            reason: "partition arrived without a witness".into(),
        })?;
        let h = held.h.as_deref().unwrap_or(&[]);
        let g1 = self.stage.g1_msms(pk, witness, h)?;
        let msm_secs = t.elapsed().as_secs_f64();
        self.metrics
            .stage_seconds
            .with_label_values(&["g1_msm"])
            .observe(msm_secs);
        tracing::info!(
            job = part.job,
            partition = part.index,
            seconds = msm_secs,
            "G1 MSMs done"
        );
        Ok((g1, None))
    }
}

impl Handler<Prove> for GpuActor {
    type Result = ();

    fn handle(&mut self, msg: Prove, ctx: &mut SyncContext<Self>) {
        took(&self.metrics, "gpu");
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
            "supervisor",
            &self.supervisor,
            Delivered { part, grant: id },
        );
        self.metrics
            .stage_seconds
            .with_label_values(&["queued_gpu"])
            .observe(synthesized_at.elapsed().as_secs_f64());
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
            Ok(Ok((g1, b_g2))) => {
                if let Some(witness) = held.witness.take() {
                    post(
                        &self.metrics,
                        "supervisor",
                        &self.supervisor,
                        HandedOff {
                            part,
                            grant: id,
                            stage: Stage::Bg2,
                        },
                    );
                    post(
                        &self.metrics,
                        "bg2",
                        &self.bg2,
                        FinishProof {
                            part,
                            pk,
                            grant,
                            g1,
                            b_g2,
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
            Err(p) => restart_after_panic(&self.metrics, "gpu", ctx, p.as_ref()),
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
            "gpu",
            cause,
            retryable,
            held.witness.take(),
        );
    }
}

/// Reports a failure, then releases the witness classes (the abc class is already settled).
#[allow(clippy::too_many_arguments)]
pub(super) fn fail_and_release(
    metrics: &Metrics,
    supervisor: &Addr<Supervisor>,
    dealloc: &Addr<DeallocActor>,
    part: PartRef,
    grant: Grant,
    actor: &'static str,
    cause: String,
    retryable: bool,
    witness: Option<Witness>,
) {
    let id = grant.id();
    post(
        metrics,
        "supervisor",
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
        "dealloc",
        dealloc,
        Release {
            grant: id,
            frees,
            buffers: Box::new(witness),
        },
    );
}
