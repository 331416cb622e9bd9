//! The Gpu actor (one per device): takes a synthesized partition, runs its device share (as one
//! device call when the stage has one: a/b/c freed as soon as they are uploaded, B_G2 computed
//! there too when asked; else H, with b and c freed early, then the G1 MSMs) and hands the witness
//! to the BG2 actor, so it can take the next partition at once.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use actix::{Actor, ActorContext, Addr, Handler, SyncContext};
use blstrs::{G2Projective, Scalar};

use super::{panic_text, post, took, Bg2Actor, Links};
use crate::engine::messages::{Delivered, FinishProof, HandedOff, Prove, TakeNext, Warm};
use crate::groth16::key::ProvingKey;
use crate::groth16::prover::{Abc, G1Sums, Witness};
use crate::ledger::{BufferClass, Grant, Stage};
use crate::metrics::{ActorKind, Step, WarmResult};
use crate::stages::pipeline::GpuStage;

/// One device's actor.
pub struct GpuActor {
    /// The stage implementation for this device.
    pub stage: Box<dyn GpuStage>,
    /// Device label for metrics.
    pub device: String,
    /// Finished G1 work goes here.
    pub bg2: Addr<Bg2Actor>,
    /// The Supervisor, Dealloc and metrics.
    pub links: Links,
    /// The synthesized partitions waiting for a device.
    pub queue: std::sync::Arc<super::GpuQueue>,
    /// The last expanded witness's vector and its key, reused by the next partition of that key
    /// (its pages written already). Kept only while partitions wait, so that it never outlives
    /// the key's use, which counts the room for it (`Supervisor::key_bytes`).
    pub expanded: Option<(u64, Vec<Scalar>)>,
}

impl Actor for GpuActor {
    type Context = SyncContext<Self>;
}

/// The device share of one partition: the stage's whole-partition call when it has one, else H
/// and the G1 MSMs. a/b/c are released as soon as they are dead, each part with the bytes the
/// ledger charged for it; what an unwinding panic drops stays in `grant`.
fn device_share(
    stage: &mut dyn GpuStage,
    links: &Links,
    pk: &ProvingKey,
    mut abc: Abc,
    witness: &Witness,
    grant: &mut Grant,
) -> crate::Result<(G1Sums, Option<G2Projective>)> {
    let t = Instant::now();
    // a/b/c go to Dealloc the moment the backend hands them back (before H is computed).
    let mut released = false;
    let mut abc_done = |uploaded: Abc| {
        released = true;
        links.release(grant.split_classes(&[BufferClass::Abc]), uploaded);
    };
    if let Some(whole) = stage.prove_partition(pk, &mut abc, witness, &mut abc_done) {
        if !released {
            // Failed before the upload: a/b/c are dead all the same.
            links.release(grant.split_classes(&[BufferClass::Abc]), abc);
        }
        let sums = whole?;
        // A key's first partition uploads its bases first: that one-time cost is its own
        // step, so that `h` and `g1_msm` mean the same in every partition (and in the bench).
        let times = &sums.times;
        let resident_secs = times.prepare.as_secs_f64();
        let h_secs = times.h.as_secs_f64();
        let msm_secs = times.msms.as_secs_f64();
        links
            .metrics
            .observe(Step::PartitionCall, t.elapsed().as_secs_f64());
        if !times.device_abc.is_zero() {
            links
                .metrics
                .observe(Step::DeviceAbc, times.device_abc.as_secs_f64());
        }
        links.metrics.observe(Step::Resident, resident_secs);
        links.metrics.observe(Step::H, h_secs);
        links.metrics.observe(Step::G1Msm, msm_secs);
        tracing::info!(
            seconds = t.elapsed().as_secs_f64(),
            resident_seconds = resident_secs,
            h_seconds = h_secs,
            msm_seconds = msm_secs,
            host_seconds = sums.times.host.as_secs_f64(),
            b_g2 = sums.b_g2.is_some(),
            "partition done on the device"
        );
        return Ok((sums.g1, sums.b_g2));
    }
    let g1 = h_and_g1(stage, links, pk, abc, witness, grant)?;
    // A stage that computes B_G2 does so on this path too (streamed where the key does not
    // fit), rather than leaving a G2 MSM sized for the device to the CPU.
    let b_g2 = stage.b_g2(pk, witness).transpose()?;
    Ok((g1, b_g2))
}

/// H and the G1 MSMs of one partition, one backend call each.
fn h_and_g1(
    stage: &mut dyn GpuStage,
    links: &Links,
    pk: &ProvingKey,
    mut abc: Abc,
    witness: &Witness,
    grant: &mut Grant,
) -> crate::Result<G1Sums> {
    let t = Instant::now();
    let h = stage.compute_h(pk, &mut abc);
    // Early free: b and c (and a's leftovers) are dead once H exists, error or not.
    let bc_bytes = grant.footprint().bc_bytes();
    links.release(grant.split(BufferClass::Abc, bc_bytes), abc);
    let h = h?;
    let h_secs = t.elapsed().as_secs_f64();
    links.metrics.observe(Step::H, h_secs);
    tracing::info!(seconds = h_secs, "H computed");
    let t = Instant::now();
    let g1 = stage.g1_msms(pk, witness, &h);
    // H's buffer (a's old storage) is the rest of the abc charge.
    links.release(grant.split_classes(&[BufferClass::Abc]), h);
    let g1 = g1?;
    let msm_secs = t.elapsed().as_secs_f64();
    links.metrics.observe(Step::G1Msm, msm_secs);
    tracing::info!(seconds = msm_secs, "G1 MSMs done");
    Ok(g1)
}

impl Handler<TakeNext> for GpuActor {
    type Result = ();

    fn handle(&mut self, _: TakeNext, ctx: &mut SyncContext<Self>) {
        took(&self.links.metrics, ActorKind::Gpu);
        // Every device gets a token per queued partition: another device may have taken it.
        if let Some(prove) = self.queue.pop() {
            self.prove(prove, ctx);
        }
    }
}

impl GpuActor {
    /// `baton_device_bytes{device}` from the stage, where it has a device.
    fn note_device_bytes(&self) {
        if let Some(bytes) = self.stage.device_bytes() {
            self.links
                .metrics
                .device_bytes
                .with_label_values(&[&self.device])
                .set(bytes.min(i64::MAX as u64) as i64);
        }
    }

    /// Runs the device share of a synthesized partition.
    fn prove(&mut self, msg: Prove, ctx: &mut SyncContext<Self>) {
        let links = &self.links;
        let Prove {
            part,
            pk,
            abc,
            mut witness,
            synthesized_at,
            abandoned,
            priority: _,
            span,
            mut grant,
        } = msg;
        links.tell(Delivered {
            part,
            grant: grant.id(),
            device: self.device.clone(),
        });
        let queued_secs = synthesized_at.elapsed().as_secs_f64();
        links.metrics.observe(Step::QueuedGpu, queued_secs);
        let _enter = tracing::info_span!(parent: &span, "gpu", device = %self.device).entered();
        let busy = Instant::now();
        let stage = self.stage.as_mut();
        let (expanded, queue) = (&mut self.expanded, &self.queue);
        let outcome = links.run(ActorKind::Gpu, ctx, &abandoned, abc, |abc| {
            // A packed witness is expanded for this run only (the room for it is counted with
            // the key, one per device: `Supervisor::key_bytes`), and waits packed again after;
            // a stage that expands it on the device gets it packed.
            if !witness.is_plain() && !stage.reads_packed(&abc) {
                let t = Instant::now();
                let buf = match expanded.take() {
                    Some((key, buf)) if key == pk.id() => buf,
                    _ => Vec::new(),
                };
                witness.expand_into(buf);
                let secs = t.elapsed().as_secs_f64();
                links.metrics.observe(Step::Expand, secs);
                tracing::debug!(seconds = secs, "witness expanded");
            }
            let share = device_share(stage, links, &pk, abc, &witness, &mut grant);
            let buf = witness.take_expanded();
            if buf.capacity() > 0 && !queue.is_empty() {
                *expanded = Some((pk.id(), buf));
            }
            share
        });
        links
            .metrics
            .gpu_busy_seconds
            .with_label_values(&[&self.device])
            .inc_by(busy.elapsed().as_secs_f64());
        self.note_device_bytes();
        match outcome {
            Ok((g1, b_g2)) => {
                links.tell(HandedOff {
                    part,
                    grant: grant.id(),
                    stage: Stage::Bg2,
                });
                let finish = FinishProof {
                    part,
                    pk,
                    g1,
                    b_g2,
                    witness,
                    abandoned,
                    span,
                    grant,
                };
                post(&links.metrics, ActorKind::Bg2, &self.bg2, finish);
            }
            Err(failure) => links.fail(ActorKind::Gpu, part, grant, failure, &abandoned, witness),
        }
    }
}

impl Handler<Warm> for GpuActor {
    type Result = ();

    /// Makes a job's key ready on this device ahead of its partitions. Best effort: an error
    /// or a panic here loses only the head start (the first partition uploads the key as
    /// always); a panic restarts the actor as one in a partition does.
    fn handle(&mut self, msg: Warm, ctx: &mut SyncContext<Self>) {
        let links = &self.links;
        took(&links.metrics, ActorKind::Gpu);
        let key = msg.pk.id();
        let t = Instant::now();
        let stage = self.stage.as_mut();
        let outcome = catch_unwind(AssertUnwindSafe(|| stage.warm(&msg.pk)));
        let secs = t.elapsed().as_secs_f64();
        links
            .metrics
            .gpu_busy_seconds
            .with_label_values(&[&self.device])
            .inc_by(secs);
        self.note_device_bytes();
        let result = match outcome {
            Ok(Ok(0)) => WarmResult::Skipped,
            Ok(Ok(bytes)) => {
                links.metrics.observe(Step::Resident, secs);
                tracing::info!(
                    device = %self.device,
                    key,
                    bytes,
                    seconds = secs,
                    "key made resident ahead of its partitions"
                );
                WarmResult::Uploaded
            }
            Ok(Err(e)) => {
                tracing::warn!(
                    device = %self.device,
                    key,
                    error = %e,
                    "key not made resident ahead: its first partition uploads it"
                );
                WarmResult::Failed
            }
            Err(payload) => {
                links.metrics.restarted(ActorKind::Gpu);
                tracing::warn!(
                    device = %self.device,
                    key,
                    cause = %panic_text(&*payload),
                    "GPU actor panicked making a key resident; restarting it"
                );
                ctx.stop();
                WarmResult::Panicked
            }
        };
        links.metrics.warmed(&self.device, result);
    }
}
