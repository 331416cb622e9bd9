//! Circuits shipped with the crate for examples, tests and benchmarks.

mod long_rows;
mod mimc;
mod synthetic;

pub use long_rows::LongRows;
pub use mimc::MimcChain;
pub use synthetic::Synthetic;

use bellperson::Circuit;
use blstrs::Scalar;

/// A circuit that knows the public inputs its witness produces.
pub trait KnownCircuit: Circuit<Scalar> + Clone + Send + 'static {
    /// The public inputs (without the constant one) a verifier checks the proof against.
    fn public_inputs(&self) -> Vec<Scalar>;
    /// A short name for keys and logs, unique per circuit shape.
    fn shape_name(&self) -> String;
}
