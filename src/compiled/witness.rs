//! Witness-only synthesis: a constraint system that runs a circuit's witness code and keeps the
//! input and aux assignments, but never calls the linear-combination closures of `enforce`, so
//! no linear combination is built. It counts constraints and variables, which is how a circuit
//! that no longer matches its recording is caught.
//!
//! It is extensible (bellpepper's `is_extensible`/`extend`): a circuit made of independent
//! sub-circuits (storage-proofs-post's fallback PoSt checks for it) may run each into its own
//! fresh system in parallel and append them in order. That is sound here because a witness-only
//! system's variables are never read: they appear only in linear combinations, and `enforce`
//! drops those uncalled, so a sub-system's variable numbering does not matter, only the order in
//! which the values are appended.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::error::CompiledError;
use super::recording::{first_difference, Shape};

/// The witness of one synthesis and what it counted.
#[derive(Debug, Default)]
pub struct WitnessCs {
    /// Public inputs, the constant one first.
    pub inputs: Vec<Scalar>,
    /// Private variables.
    pub aux: Vec<Scalar>,
    /// Constraints the circuit enforced.
    pub constraints: usize,
}

impl WitnessCs {
    /// Runs `circuit`'s witness code with the vectors sized for `shape`, and checks that it
    /// allocated and enforced exactly what `shape` says.
    pub fn synthesize<C: Circuit<Scalar>>(circuit: C, shape: Shape) -> Result<Self, CompiledError> {
        let mut cs = Self::with_room(shape);
        circuit.synthesize(&mut cs)?;
        cs.check(shape)?;
        Ok(cs)
    }

    /// A system holding the constant one, with room for the assignments of `shape`.
    pub fn with_room(shape: Shape) -> Self {
        let mut inputs = Vec::with_capacity(shape.inputs.max(1));
        inputs.push(Scalar::ONE);
        WitnessCs {
            inputs,
            aux: Vec::with_capacity(shape.aux),
            constraints: 0,
        }
    }

    /// The counts of this synthesis.
    pub fn shape(&self) -> Shape {
        Shape {
            inputs: self.inputs.len(),
            aux: self.aux.len(),
            constraints: self.constraints,
        }
    }

    /// Compares the counts with a recorded shape.
    pub fn check(&self, recorded: Shape) -> Result<(), CompiledError> {
        check_counts(recorded, self.shape())
    }
}

/// The counts of a synthesis against those recorded: the first that differs is named.
pub fn check_counts(recorded: Shape, got: Shape) -> Result<(), CompiledError> {
    let counts = [
        ("constraints", recorded.constraints, got.constraints),
        ("public inputs", recorded.inputs, got.inputs),
        ("private variables", recorded.aux, got.aux),
    ];
    match first_difference(counts) {
        Some((what, recording, circuit)) => Err(CompiledError::Diverged {
            what,
            recording,
            circuit,
        }),
        None => Ok(()),
    }
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        crate::scheduler::yield_point::checkpoint();
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    count_constraints!(constraints);

    ignore_namespaces!();

    /// Empty: an extending circuit allocates each sub-system's constant one itself.
    fn new() -> Self {
        Self::default()
    }

    fn is_extensible() -> bool {
        true
    }

    /// `other`'s assignments after its constant one, and its constraints, appended.
    fn extend(&mut self, other: &Self) {
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or_default());
        self.aux.extend_from_slice(&other.aux);
        self.constraints += other.constraints;
    }
}
