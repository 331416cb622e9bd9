//! The stages a partition goes through, as swappable traits with production implementations.
//! No actor framework here: the actors in `actors/` drive these; tests and embedders replace
//! them (a GPU that sleeps, a synthesis that fails on call k, ...).

use std::sync::Arc;

use blstrs::{G2Projective, Scalar};
use ff::Field;

use crate::groth16::backend::Backend;
mod circuit;
mod compiled_stage;

pub use circuit::{PartitionCircuit, Synthesizer};
pub use compiled_stage::CompiledSynthesis;

use crate::compiled::Recordings;
use crate::groth16::error::Result;
use crate::groth16::key::ProvingKey;
use crate::groth16::proof::Proof;
use crate::groth16::prover::{self, Abc, G1Sums, Witness};
use crate::stages::partition::{AbcInput, PartitionProver, PartitionSums};

/// The GPU's share of a proof: H and the G1 MSMs.
pub trait GpuStage: Send {
    /// The device's name for logs and metrics.
    fn name(&self) -> String;
    /// H's coefficients; takes `a`'s buffer for the result and leaves `b`, `c` in `abc`.
    fn compute_h(&mut self, pk: &ProvingKey, abc: &mut Abc) -> Result<Vec<Scalar>>;
    /// The H, L, A and B_G1 MSMs.
    fn g1_msms(&mut self, pk: &ProvingKey, w: &Witness, h: &[Scalar]) -> Result<G1Sums>;
    /// The whole device share of a partition in one call (a device-resident partition: H, the
    /// G1 MSMs and, when the stage does it, B_G2), handing a, b, c to `abc_done` once the
    /// device no longer needs them. `None`: the stage has no such path, or it could not run
    /// this partition with `abc` untouched (device memory); the actor then calls
    /// [`GpuStage::compute_h`] and [`GpuStage::g1_msms`].
    fn prove_partition(
        &mut self,
        pk: &ProvingKey,
        abc: &mut Abc,
        w: &Witness,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Option<Result<PartitionSums>> {
        let _ = (pk, abc, w, abc_done);
        None
    }

    /// Whether [`GpuStage::prove_partition`] takes this partition's witness packed as bits
    /// (`abc` empty: it arrived as a witness alone, for a/b/c on a device that expands a packed
    /// witness itself); otherwise the GPU actor expands a packed witness first.
    fn reads_packed(&self, abc: &Abc) -> bool {
        let _ = abc;
        false
    }

    /// Makes `pk` ready on the device ahead of its partitions (its bases resident), where the
    /// stage keeps anything there; returns the bytes uploaded. The GPU actor calls it when a
    /// job is admitted, while the job's partitions synthesize; a failure here costs nothing
    /// but the head start.
    fn warm(&mut self, pk: &ProvingKey) -> Result<u64> {
        let _ = pk;
        Ok(0)
    }

    /// Device bytes in the stage's buffers now (`baton_device_bytes`); `None` without a device.
    fn device_bytes(&self) -> Option<u64> {
        None
    }

    /// The B_G2 MSM on the device, for a partition that took the per-call path on a stage
    /// that computes B_G2 itself (`bg2.device` resolved to the GPU); `None`: the B_G2 actor
    /// computes it.
    fn b_g2(&mut self, pk: &ProvingKey, w: &Witness) -> Option<Result<G2Projective>> {
        let _ = (pk, w);
        None
    }
}

/// The CPU's share: the B_G2 MSM and proof assembly.
pub trait Bg2Stage: Send {
    /// Finishes the proof.
    fn finish(&mut self, pk: &ProvingKey, w: &Witness, g1: &G1Sums) -> Result<Proof>;
    /// Finishes the proof when the GPU stage already computed the B_G2 MSM: assembly only.
    fn finish_with_g2(
        &mut self,
        pk: &ProvingKey,
        g1: &G1Sums,
        b_g2: G2Projective,
    ) -> Result<Proof> {
        assemble_fresh(pk, g1, b_g2)
    }
}

/// Makes one stage instance per actor (and again on each restart).
pub type Factory<T> = Arc<dyn Fn(usize) -> Box<T> + Send + Sync>;

/// The stage implementations an engine runs. [`Stages::with_backend`] gives the real ones.
#[derive(Clone)]
pub struct Stages {
    /// One per synthesis worker; the argument is the worker index.
    pub synthesis: Factory<dyn Synthesizer>,
    /// The recordings the synthesis workers share (the Supervisor counts them with their keys
    /// and forgets a key's when its last job ends).
    pub recordings: Arc<Recordings>,
    /// Whether every GPU stage evaluates a compiled partition's a/b/c on its device: synthesis
    /// then hands over the witness alone, and the ledger charges such partitions only their
    /// witness on the host.
    pub abc_on_device: bool,
    /// Whether synthesis packs such a witness as bits ([`Witness::pack`]): the ledger then
    /// charges it packed while it waits, and each device the room to expand one.
    pub pack_witness: bool,
    /// One per device; the argument is the device index.
    pub gpu: Factory<dyn GpuStage>,
    /// One per B_G2 worker.
    pub bg2: Factory<dyn Bg2Stage>,
}

impl Stages {
    /// Real synthesis, and `backend(device)` for H and the MSMs.
    pub fn with_backend(backend: Arc<dyn Fn(usize) -> Arc<dyn Backend> + Send + Sync>) -> Self {
        let recordings = Arc::new(Recordings::default());
        let shared = recordings.clone();
        Stages {
            synthesis: Arc::new(move |_| {
                Box::new(CompiledSynthesis {
                    recordings: shared.clone(),
                    abc_on_device: false,
                    pack_witness: false,
                })
            }),
            recordings,
            abc_on_device: false,
            pack_witness: false,
            gpu: Arc::new(move |device| Box::new(BackendStage(backend(device)))),
            bg2: Arc::new(|_| Box::new(CpuBg2)),
        }
    }
}

/// Synthesis through bellperson's traits.
pub struct RealSynthesis;

impl Synthesizer for RealSynthesis {
    fn synthesize(
        &mut self,
        circuit: &dyn PartitionCircuit,
        pk: &ProvingKey,
    ) -> Result<(Abc, Witness)> {
        circuit.synthesize(pk)
    }
}

/// H and the G1 MSMs on a [`Backend`].
pub struct BackendStage(pub Arc<dyn Backend>);

impl GpuStage for BackendStage {
    fn name(&self) -> String {
        self.0.name()
    }

    fn compute_h(&mut self, _pk: &ProvingKey, abc: &mut Abc) -> Result<Vec<Scalar>> {
        prover::compute_h(self.0.as_ref(), abc)
    }

    fn g1_msms(&mut self, pk: &ProvingKey, w: &Witness, h: &[Scalar]) -> Result<G1Sums> {
        prover::g1_msms(self.0.as_ref(), pk, w, h)
    }

    fn device_bytes(&self) -> Option<u64> {
        self.0.device_bytes()
    }
}

/// H and every MSM of a partition in one device call ([`PartitionProver`]), with the B_G2 MSM
/// too when `with_b_g2`; the per-call path of its backend when the device memory does not fit
/// a partition whole.
pub struct DeviceStage {
    /// The per-call primitives (the fallback).
    pub backend: Arc<dyn Backend>,
    /// The whole-partition path of the same device.
    pub partition: Arc<dyn PartitionProver>,
    /// Whether the device computes B_G2 too (`bg2.device` resolved to the GPU).
    pub with_b_g2: bool,
    /// The engine's recordings, when compiled partitions reach this stage as a witness alone
    /// (their a/b/c are evaluated here, on the device).
    pub recordings: Option<Arc<Recordings>>,
}

impl GpuStage for DeviceStage {
    fn name(&self) -> String {
        self.backend.name()
    }

    fn compute_h(&mut self, _pk: &ProvingKey, abc: &mut Abc) -> Result<Vec<Scalar>> {
        prover::compute_h(self.backend.as_ref(), abc)
    }

    fn g1_msms(&mut self, pk: &ProvingKey, w: &Witness, h: &[Scalar]) -> Result<G1Sums> {
        prover::g1_msms(self.backend.as_ref(), pk, w, h)
    }

    fn prove_partition(
        &mut self,
        pk: &ProvingKey,
        abc: &mut Abc,
        w: &Witness,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Option<Result<PartitionSums>> {
        if let Err(e) = self.partition.check_limit(pk, self.with_b_g2) {
            return Some(Err(e));
        }
        if witness_alone(abc) {
            // A witness alone: never the per-call path, which needs host a/b/c.
            let recordings = self.recordings.as_deref();
            let device = self.partition.as_ref();
            return Some(compiled_stage::witness_only_partition(
                device,
                recordings,
                self.with_b_g2,
                pk,
                w,
            ));
        }
        let input = AbcInput::Host(abc);
        match self
            .partition
            .prove_partition(pk, input, w, self.with_b_g2, abc_done)
        {
            Err(e) if e.is_out_of_memory() => {
                tracing::warn!(reason = %e, "partition does not fit the device whole: per-call path");
                self.partition.prepare_streaming(pk);
                None
            }
            other => Some(other),
        }
    }

    fn reads_packed(&self, abc: &Abc) -> bool {
        witness_alone(abc) && self.partition.reads_packed()
    }

    fn warm(&mut self, pk: &ProvingKey) -> Result<u64> {
        self.partition.warm(pk, self.with_b_g2)
    }

    fn device_bytes(&self) -> Option<u64> {
        self.backend.device_bytes()
    }

    fn b_g2(&mut self, pk: &ProvingKey, w: &Witness) -> Option<Result<G2Projective>> {
        self.with_b_g2
            .then(|| prover::b_g2_msm(self.backend.as_ref(), pk, w))
    }
}

/// Whether a partition arrived as its witness alone (no host a/b/c).
fn witness_alone(abc: &Abc) -> bool {
    abc.a.is_empty() && abc.b.is_empty() && abc.c.is_empty()
}

/// The B_G2 MSM (blst on the CPU) and assembly with fresh r, s.
pub struct CpuBg2;

impl Bg2Stage for CpuBg2 {
    fn finish(&mut self, pk: &ProvingKey, w: &Witness, g1: &G1Sums) -> Result<Proof> {
        finish_on(&crate::groth16::backend::CpuBackend, pk, w, g1)
    }
}

/// The B_G2 MSM on a [`Backend`] (`bg2.device = "gpu"`) and assembly with fresh r, s.
pub struct BackendBg2(pub Arc<dyn Backend>);

impl Bg2Stage for BackendBg2 {
    fn finish(&mut self, pk: &ProvingKey, w: &Witness, g1: &G1Sums) -> Result<Proof> {
        finish_on(self.0.as_ref(), pk, w, g1)
    }
}

fn finish_on(backend: &dyn Backend, pk: &ProvingKey, w: &Witness, g1: &G1Sums) -> Result<Proof> {
    let g2 = prover::b_g2_msm(backend, pk, w)?;
    assemble_fresh(pk, g1, g2)
}

/// Assembly with fresh blinding factors r, s.
fn assemble_fresh(pk: &ProvingKey, g1: &G1Sums, b_g2: G2Projective) -> Result<Proof> {
    let mut rng = rand::rngs::OsRng;
    prover::assemble(
        &pk.vk,
        g1,
        b_g2,
        Scalar::random(&mut rng),
        Scalar::random(&mut rng),
    )
}

/// The label of the GPU actor on device `index` whose stage is named `name`: the name itself
/// when it carries its device (`cuda:1`), else `name:index` (`cpu:0`). Metrics, status and the
/// daemon's answers all name devices this way.
pub fn device_label(name: &str, index: usize) -> String {
    match name.contains(':') {
        true => name.to_string(),
        false => format!("{name}:{index}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{KnownCircuit, Synthetic};
    use crate::groth16::backend::{Bases, CpuBackend};
    use crate::groth16::cs::Density;
    use crate::groth16::domain::Domain;
    use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
    use rand::SeedableRng;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The CPU backend, counting G2 MSMs.
    #[derive(Default)]
    struct CountingG2(AtomicUsize);

    impl Backend for CountingG2 {
        fn name(&self) -> String {
            "counting".into()
        }
        fn compute_h(
            &self,
            d: &Domain,
            a: &mut Vec<Scalar>,
            b: &mut Vec<Scalar>,
            c: &mut Vec<Scalar>,
        ) -> Result<()> {
            CpuBackend.compute_h(d, a, b, c)
        }
        fn msm_g1(
            &self,
            b: Bases<'_, G1Affine>,
            s: &[Scalar],
            d: Option<&Density>,
        ) -> Result<G1Projective> {
            CpuBackend.msm_g1(b, s, d)
        }
        fn msm_g2(
            &self,
            b: Bases<'_, G2Affine>,
            s: &[Scalar],
            d: Option<&Density>,
        ) -> Result<G2Projective> {
            self.0.fetch_add(1, Ordering::Relaxed);
            CpuBackend.msm_g2(b, s, d)
        }
    }

    #[test]
    fn backend_bg2_runs_the_g2_msm_on_its_backend() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let pk = crate::generate_random_parameters(Synthetic::new(1 << 8, 0), &mut rng).unwrap();
        let circuit = Synthetic::new(1 << 8, 9);
        let inputs = circuit.public_inputs();
        let (mut abc, w) = prover::synthesize(circuit, &pk).unwrap();
        let h = prover::compute_h(&CpuBackend, &mut abc).unwrap();
        let g1 = prover::g1_msms(&CpuBackend, &pk, &w, &h).unwrap();
        let counting = Arc::new(CountingG2::default());
        let proof = BackendBg2(counting.clone()).finish(&pk, &w, &g1).unwrap();
        assert_eq!(counting.0.load(Ordering::Relaxed), 2, "inputs and aux");
        let pvk = crate::PreparedVerifyingKey::new(&pk.vk);
        crate::verify(&pvk, &proof, &inputs).expect("verifies");
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(crate::verify(&pvk, &proof, &wrong).is_err());
    }
}
