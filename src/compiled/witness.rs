//! Witness-only synthesis: a constraint system that runs a circuit's witness code and keeps the
//! input and aux assignments, but never calls the linear-combination closures of `enforce`, so
//! no linear combination is built. It counts constraints and variables, which is how a circuit
//! that no longer matches its recording is caught.

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
        let mut cs = WitnessCs {
            inputs: Vec::with_capacity(shape.inputs),
            aux: Vec::with_capacity(shape.aux),
            constraints: 0,
        };
        cs.inputs.push(Scalar::ONE);
        circuit.synthesize(&mut cs)?;
        cs.check(shape)?;
        Ok(cs)
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
}
