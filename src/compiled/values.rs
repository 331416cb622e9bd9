//! Systems that keep values only ([`WitnessCs`], [`RegionCs`]) as a trait, so that a gadget may
//! be replaced there by code that computes the same assignments without building the linear
//! combinations the original builds eagerly (outside `enforce`'s closures, where a witness-only
//! system cannot skip them). Such code allocates exactly what the original allocates, in the
//! same order, and counts the constraints it would enforce; the counts are checked against the
//! recording as for any witness-only synthesis, and a/b/c's evaluation checks the values.

use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;

use super::region::RegionCs;
use super::witness::WitnessCs;

/// A constraint system that keeps assignments and counts constraints, and nothing else.
///
/// Only the witness-only systems implement it: a constraint system that records constraints
/// must never be handed code that merely counts them.
pub trait ValuesOnly: ConstraintSystem<Scalar> {
    /// Allocates one private bit (0 or 1), as `AllocatedBit::alloc` would.
    fn alloc_bit(&mut self, value: bool) -> Result<(), SynthesisError> {
        self.alloc(|| "", || Ok(if value { Scalar::ONE } else { Scalar::ZERO }))
            .map(drop)
    }

    /// Counts `n` constraints enforced.
    fn count(&mut self, n: usize);
}

impl ValuesOnly for WitnessCs {
    fn count(&mut self, n: usize) {
        self.constraints += n;
    }
}

impl ValuesOnly for RegionCs<'_> {
    fn count(&mut self, n: usize) {
        self.count_constraints(n);
    }
}
