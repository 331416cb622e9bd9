//! The device share of one partition as one backend call: H, the four G1 MSMs and (when asked)
//! the B_G2 MSM, for backends that keep the whole partition on their device (the witness
//! uploaded once, densities applied there, H never leaving it). No actors here: the GPU stage
//! (`pipeline`) calls it; `gpu::cuda` implements it.

use std::time::Duration;

use blstrs::G2Projective;

use crate::groth16::error::Result;
use crate::groth16::key::ProvingKey;
use crate::groth16::prover::{Abc, G1Sums, Witness};

/// Where a partition's a, b, c come from.
pub enum AbcInput<'a> {
    /// Evaluated on the host (synthesis output). The backend hands them back through
    /// `abc_done` once it no longer reads them, so the caller can free them early (the CUDA
    /// partition: once they are uploaded and the witness's MSMs that ran beside the uploads
    /// are done).
    Host(&'a mut Abc),
    /// Already in the backend's device memory, as the backend's own handle (for a/b/c
    /// evaluated on the device from a recorded R1CS; the CUDA backend takes its `DeviceAbc`).
    Device(Box<dyn std::any::Any + Send>),
}

/// Wall time of each phase of one partition call.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartitionTimes {
    /// Making the key's bases and the NTT tables resident on the device, from the call's start
    /// (a key's first partition on a device uploads its bases; near zero after that).
    pub prepare: Duration,
    /// Until a, b, c and the witness were on the device and the witness's MSMs, which run
    /// beside the a/b/c uploads, were done; from the call's start.
    pub upload: Duration,
    /// The uploads of host a, b, c alone, on their own thread (zero for device a/b/c).
    pub abc_upload: Duration,
    /// H's step once a, b, c are all on the device: its transforms (host a, b, c are each
    /// transformed to the coset as they arrive, between the witness's MSMs, so for them this
    /// is the rest of H).
    pub h: Duration,
    /// The MSMs: the witness's (L, A, B_G1, and B_G2 when asked), then H's. The first span
    /// also holds the transforms of host a, b, c, queued between the MSM kernels; it starts
    /// once the witness is up, so where L's pieces run while the witness uploads (a host
    /// witness and L in pieces) their time before that is in `upload`, not here.
    pub msms: Duration,
    /// Host thread time spent on copies into pinned memory and other host work.
    pub host: Duration,
    /// a/b/c evaluated on the device from the key's recording before the call (zero when
    /// a/b/c came from the host).
    pub device_abc: Duration,
}

/// What one partition call gives back.
#[derive(Clone, Copy, Debug)]
pub struct PartitionSums {
    /// The four G1 MSM results.
    pub g1: G1Sums,
    /// The B_G2 MSM, when it was asked for.
    pub b_g2: Option<G2Projective>,
    /// Where the time went.
    pub times: PartitionTimes,
    /// Device bytes in use at the call's peak (resident key and tables included).
    pub peak_device_bytes: u64,
    /// Base sets of the key that streamed from the host during the call because they did not
    /// fit resident beside it (0: every set was resident).
    pub streamed_sets: usize,
}

/// A backend that proves the device share of a whole partition in one call.
pub trait PartitionProver: Send + Sync {
    /// a, b, c of the witness (`inputs`, `aux`) against `recording`, evaluated and checked
    /// (a·b = c on every row) on the device, as the handle [`AbcInput::Device`] takes. `aux`
    /// arrives packed only to a backend that [`PartitionProver::reads_packed`]. Backends
    /// without device evaluation refuse.
    fn evaluate_abc(
        &self,
        recording: &crate::compiled::Recording,
        inputs: &[blstrs::Scalar],
        aux: crate::groth16::msm::Scalars<'_>,
    ) -> Result<Box<dyn std::any::Any + Send>> {
        let _ = (recording, inputs, aux);
        Err(crate::compiled::CompiledError::Unsupported.into())
    }

    /// Whether a partition that arrives as a witness alone may reach [`Self::evaluate_abc`]
    /// and [`Self::prove_partition`] with its private variables packed as bits
    /// ([`Witness::aux_scalars`]), which this backend then expands where it needs them (the
    /// CUDA backend on the device). Otherwise the GPU actor expands the witness on the host
    /// first.
    fn reads_packed(&self) -> bool {
        false
    }

    /// H, the H, L, A and B_G1 MSMs and, with `with_b_g2`, the B_G2 MSM of one partition of
    /// `pk`. With [`AbcInput::Host`], `abc_done` receives a, b and c once the device no longer
    /// needs them; on an error before that they stay in the caller's buffer. An out-of-memory
    /// error ([`crate::gpu::GpuError::OutOfMemory`]) comes before anything was taken, so the
    /// caller can run the partition another way.
    fn prove_partition(
        &self,
        pk: &ProvingKey,
        abc: AbcInput<'_>,
        w: &Witness,
        with_b_g2: bool,
        abc_done: &mut dyn FnMut(Abc),
    ) -> Result<PartitionSums>;

    /// Whether a partition of `pk` can run on this device at all under its memory limit:
    /// `Err` naming the limit and the least it needs, refused before anything runs (no other
    /// path of this device could take it either). Backends without a limit pass.
    fn check_limit(&self, pk: &ProvingKey, with_b_g2: bool) -> Result<()> {
        let _ = (pk, with_b_g2);
        Ok(())
    }

    /// Readies `pk` for partitions that do not fit the device whole (the per-call path, its
    /// bases streamed from the host): the CUDA backend page-locks its queries. Backends
    /// without a device do nothing.
    fn prepare_streaming(&self, pk: &ProvingKey) {
        let _ = pk;
    }

    /// Makes `pk`'s bases (B_G2's too with `with_b_g2`) resident ahead of its partitions, so
    /// that the first one does not wait for their upload: a job's key while its partitions
    /// synthesize. Only into free device memory (nothing resident is evicted for it). Returns
    /// the bytes uploaded; 0 when there is nothing to do or no room (the first partition then
    /// uploads them as always). Backends without resident bases do nothing.
    fn warm(&self, pk: &ProvingKey, with_b_g2: bool) -> Result<u64> {
        let _ = (pk, with_b_g2);
        Ok(0)
    }
}
