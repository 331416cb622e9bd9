//! Compiled circuits: a circuit shape's R1CS recorded once as sparse matrices, then every later
//! partition of that shape synthesized witness-only (no linear combination built) and its
//! a/b/c evaluated as A·w, B·w, C·w in parallel.
//!
//! ```ignore
//! let (recording, abc, witness) = compiled::record(circuit.clone())?;   // first synthesis
//! recording.write_for_key(&compiled::cache_path(key_path), &pk)?; // under baton's cache
//! let recording = Recording::read_for_key(&compiled::cache_path(key_path), &pk)?; // next start
//! let (abc, witness) = compiled::synthesize(next_circuit, &recording)?; // every later one
//! ```
//!
//! A later synthesis that allocates or enforces a different number of variables or constraints
//! than the recording ([`CompiledError::Diverged`]), or whose witness does not satisfy the
//! recorded rows ([`CompiledError::Unsatisfied`]), is refused, so a compiled proof is never a
//! wrong one: the caller falls back to full synthesis.

/// `enforce` for the witness-only systems: it counts in `self.$count` and drops the
/// linear-combination closures uncalled (the recording already holds the rows).
macro_rules! count_constraints {
    ($count:ident) => {
        fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
        where
            A: FnOnce() -> AR,
            AR: Into<String>,
            LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
            LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
            LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        {
            self.$count += 1;
        }
    };
}

mod cache;
mod coeffs;
mod error;
mod file;
mod matrix;
mod record;
mod recording;
mod region;
mod stream;
mod values;
mod witness;

pub use cache::{Recordings, Route};
pub use coeffs::CoeffIndices;
pub use error::CompiledError;
pub use file::{cache_path, KeyTag, VERSION};
pub use matrix::{Columns, SparseMatrix};
pub use record::RecordingCs;
pub use recording::{Densities, Recording, Shape};
pub use region::RegionCs;
pub use values::ValuesOnly;
pub use witness::{check_counts, WitnessCs};

use bellperson::Circuit;
use blstrs::Scalar;

use crate::groth16::prover::{Abc, Witness};

/// Records `circuit`'s R1CS and returns it with this synthesis's a/b/c and witness (checked
/// against the recorded rows, as every compiled synthesis is).
pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<(Recording, Abc, Witness), CompiledError> {
    let mut cs = RecordingCs::new();
    circuit.synthesize(&mut cs)?;
    let (recording, inputs, aux) = cs.finish()?;
    let (abc, witness) = evaluate(&recording, inputs, aux)?;
    Ok((recording, abc, witness))
}

/// Witness-only synthesis of `circuit` against `recording`, with the sparse evaluation and the
/// satisfaction check running beside it on a second thread (then in parallel for what is left).
pub fn synthesize<C: Circuit<Scalar>>(
    circuit: C,
    recording: &Recording,
) -> Result<(Abc, Witness), CompiledError> {
    stream::synthesize(circuit, recording)
}

/// a/b/c from a witness, checked row by row, and the witness with the recording's densities.
pub fn evaluate(
    recording: &Recording,
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
) -> Result<(Abc, Witness), CompiledError> {
    let abc = recording.evaluate(&inputs, &aux)?;
    Ok((abc, recording.witness(inputs, aux)))
}
