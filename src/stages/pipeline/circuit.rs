//! The circuit side of the pipeline: a request's circuit as the engine sees it (type-erased,
//! re-synthesizable, recordable), and the synthesis stage's trait.

use bellperson::Circuit;
use blstrs::Scalar;

use crate::compiled::{self, CompiledError, Recording};
use crate::groth16::error::{Error, Result};
use crate::groth16::key::ProvingKey;
use crate::groth16::packed::packing_room;
use crate::groth16::prover::{self, Abc, Witness};

/// A circuit of a request, type-erased and re-synthesizable (a retry synthesizes it again).
pub trait PartitionCircuit: Send + Sync + 'static {
    /// Synthesizes a fresh copy, rejecting an unsatisfied circuit or one that does not fit `pk`.
    fn synthesize(&self, pk: &ProvingKey) -> Result<(Abc, Witness)>;

    /// Synthesizes a fresh copy while recording its R1CS (the first synthesis of its kind).
    /// Circuits that cannot be recorded keep the default, and are always synthesized in full.
    fn record(&self) -> Result<(Recording, Abc, Witness), CompiledError> {
        Err(CompiledError::Unsupported)
    }

    /// Witness-only synthesis of a fresh copy against `recording`.
    fn synthesize_compiled(&self, _recording: &Recording) -> Result<(Abc, Witness), CompiledError> {
        Err(CompiledError::Unsupported)
    }

    /// The witness alone, against `recording` (its counts checked; a/b/c and the satisfaction
    /// check are left to a device that evaluates them from the recording).
    fn synthesize_witness(&self, _recording: &Recording) -> Result<Witness, CompiledError> {
        Err(CompiledError::Unsupported)
    }

    /// [`PartitionCircuit::synthesize_witness`] with the private variables packed as bits
    /// where that fits the room the ledger charged for it ([`packing_room`]; else plain). By
    /// default the plain witness is made and then packed; a circuit that can pack as it goes
    /// (`filecoin::PorepPartition`) never holds it plain.
    fn synthesize_packed_witness(&self, recording: &Recording) -> Result<Witness, CompiledError> {
        let mut w = self.synthesize_witness(recording)?;
        let plain = (w.aux.len() * std::mem::size_of::<Scalar>()) as u64;
        w.pack(packing_room(plain));
        Ok(w)
    }

    /// Whether [`PartitionCircuit::synthesize_packed_witness`] packs as it goes, never holding
    /// the witness plain, and keeps it packed only within
    /// [`crate::groth16::packed::streamed_room`]: its partitions are then charged that room
    /// alone on that route ([`Recording::streamed_footprint`]) instead of the plain witness and
    /// [`packing_room`].
    fn packs_as_it_goes(&self) -> bool {
        false
    }
}

impl<C: Circuit<Scalar> + Clone + Send + Sync + 'static> PartitionCircuit for C {
    fn record(&self) -> Result<(Recording, Abc, Witness), CompiledError> {
        compiled::record(self.clone())
    }

    fn synthesize_compiled(&self, recording: &Recording) -> Result<(Abc, Witness), CompiledError> {
        compiled::synthesize(self.clone(), recording)
    }

    fn synthesize_witness(&self, recording: &Recording) -> Result<Witness, CompiledError> {
        let cs = compiled::WitnessCs::synthesize(self.clone(), recording.shape())?;
        Ok(recording.witness(cs.inputs, cs.aux))
    }

    fn synthesize(&self, pk: &ProvingKey) -> Result<(Abc, Witness)> {
        match prover::synthesize(self.clone(), pk) {
            // Failures are rare and the circuit is at hand: name the constraint by its path.
            Err(Error::Unsatisfied { index, name }) => {
                // The path finder runs no witness code; a gadget that needs values outside its
                // closures may panic there, which must not turn this error into a retried panic.
                let copy = self.clone();
                let path = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    crate::groth16::cs::constraint_path(copy, index)
                }));
                let name = path.ok().flatten().unwrap_or(name);
                Err(Error::Unsatisfied { index, name })
            }
            other => other,
        }
    }
}

/// Builds the a/b/c evaluations and the witness of one partition.
pub trait Synthesizer: Send {
    /// Synthesizes `circuit` for `pk`.
    fn synthesize(
        &mut self,
        circuit: &dyn PartitionCircuit,
        pk: &ProvingKey,
    ) -> Result<(Abc, Witness)>;
}
