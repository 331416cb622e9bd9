//! The stages' side of compiled circuits: the synthesizer that goes through the engine's
//! recordings, and the device stage's handling of a partition that arrives as a witness alone
//! (its a/b/c evaluated on the device from the key's recording). No actors here.

use std::sync::Arc;

use super::circuit::{PartitionCircuit, Synthesizer};
use crate::compiled::Recordings;
use crate::groth16::error::{Error, Result};
use crate::groth16::key::ProvingKey;
use crate::groth16::prover::{Abc, Witness};
use crate::stages::partition::{AbcInput, PartitionProver, PartitionSums};

/// Synthesis through the key's recording (witness-only, a/b/c from the matrices), recording it
/// on the first synthesis of the key's circuit, and full synthesis whenever the compiled path
/// refuses (see [`Recordings::synthesize`]). With `abc_on_device`, a partition whose key has a
/// recording leaves as its witness alone, for the device to evaluate a/b/c; after the device
/// refused a key's recording, that key's next partitions are evaluated and checked on the host
/// again (falling back to full synthesis, and making the recording anew if it was wrong).
pub struct CompiledSynthesis {
    /// Shared by every worker of the engine.
    pub recordings: Arc<Recordings>,
    /// Whether the GPU stages evaluate a/b/c (see [`super::Stages::abc_on_device`]).
    pub abc_on_device: bool,
    /// Whether a witness leaving alone is packed as bits (where that fits the room charged for
    /// it: [`crate::groth16::packed::packing_room`]).
    pub pack_witness: bool,
}

impl Synthesizer for CompiledSynthesis {
    fn synthesize(
        &mut self,
        circuit: &dyn PartitionCircuit,
        pk: &ProvingKey,
    ) -> Result<(Abc, Witness)> {
        let witness_only = self.abc_on_device && !self.recordings.abc_on_host(pk);
        let (parts, route) = self.recordings.synthesize(
            pk,
            || circuit.record(),
            |r| match witness_only {
                true => match self.pack_witness {
                    true => circuit.synthesize_packed_witness(r),
                    false => circuit.synthesize_witness(r),
                }
                .map(|w| (Abc::default(), w)),
                false => circuit.synthesize_compiled(r),
            },
            || circuit.synthesize(pk),
        )?;
        if !witness_only {
            // The host checked this partition against the recording (or replaced it).
            self.recordings.trust(pk);
        }
        tracing::debug!(?route, witness_only, "synthesized");
        Ok(parts)
    }
}

/// The device share of a partition that arrived as a witness alone: a/b/c from the key's
/// recording on the device, then the device-resident partition. A refusal fails this attempt
/// retryably, so that the retry synthesizes with host a/b/c: where the device lacked the memory
/// (under `gpu.memory_limit`, a/b/c beside the partition's own buffers), the key's partitions
/// carry host a/b/c from then on ([`Recordings::keep_abc_on_host`], and the ledger charges
/// them so); any other refusal (the device's a·b = c check, a recording no longer known) marks
/// the recording distrusted, and the retry's host synthesis either proves it right (the witness
/// was wrong: the job fails naming the constraint) or replaces it.
pub(super) fn witness_only_partition(
    device: &dyn PartitionProver,
    recordings: Option<&Recordings>,
    with_b_g2: bool,
    pk: &ProvingKey,
    w: &Witness,
) -> Result<PartitionSums> {
    let refused = |e: Error| -> Error {
        let out_of_memory = e.is_out_of_memory();
        if let Some(r) = recordings {
            match out_of_memory {
                true => r.keep_abc_on_host(pk),
                false => r.distrust(pk),
            }
        }
        tracing::warn!(reason = %e, out_of_memory, "device a/b/c refused; the retry evaluates a/b/c on the host");
        Error::Backend {
            backend: "device a/b/c",
            reason: format!("{e}; retried with host evaluation"),
        }
    };
    if !w.is_plain() && !device.reads_packed() {
        return Err(Error::Backend {
            backend: "device a/b/c",
            reason: "the witness reached the device packed; the GPU actor expands it first".into(),
        });
    }
    let Some(rec) = recordings.and_then(|r| r.get(pk)) else {
        return Err(refused(Error::Backend {
            backend: "device a/b/c",
            reason: "the key's recording is no longer known".into(),
        }));
    };
    let t = std::time::Instant::now();
    let device_abc = device
        .evaluate_abc(&rec, &w.inputs, w.aux_scalars())
        .map_err(refused)?;
    let evaluated = t.elapsed();
    let mut nothing = |_: Abc| {};
    match device.prove_partition(pk, AbcInput::Device(device_abc), w, with_b_g2, &mut nothing) {
        Err(e) if e.is_out_of_memory() => Err(refused(e)),
        Ok(mut sums) => {
            sums.times.device_abc = evaluated;
            Ok(sums)
        }
        other => other,
    }
}
