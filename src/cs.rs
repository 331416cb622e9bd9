//! The proving constraint system: evaluates a, b, c per constraint, records the witness and the
//! density of the A and B queries, and catches the first unsatisfied constraint.
//!
//! Conventions match bellperson exactly, so keys and proofs cross over: input 0 is the constant
//! ONE, allocated before synthesis; after synthesis every public input i gets the constraint
//! `input_i · 0 = 0`, which makes the A query dense over inputs and pins the IC query.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use crate::error::{Error, Result};

/// A growable bitmap of which variables occur (with a nonzero coefficient) in a query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    /// Appends one variable, absent until `mark` is called.
    pub fn push(&mut self) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        self.len += 1;
    }

    /// Marks variable `i` present.
    pub fn mark(&mut self, i: usize) {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if let Some(word) = self.words.get_mut(w) {
            if *word & b == 0 {
                *word |= b;
                self.ones += 1;
            }
        }
    }

    /// Whether variable `i` is present.
    pub fn get(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// Number of variables tracked.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no variable is tracked.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of variables present.
    pub fn count(&self) -> usize {
        self.ones
    }

    /// Bytes held by the bitmap.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Keeps the entries of `values` whose variable is present, in order.
    pub fn filter<T: Copy>(&self, values: &[T]) -> Vec<T> {
        let mut out = Vec::with_capacity(self.ones);
        out.extend(
            values
                .iter()
                .enumerate()
                .filter(|(i, _)| self.get(*i))
                .map(|(_, v)| *v),
        );
        out
    }
}

/// The witness and query evaluations of one synthesized circuit.
#[derive(Debug, Default)]
pub struct ProvingAssignment {
    /// A(x) evaluated at each constraint.
    pub a: Vec<Scalar>,
    /// B(x) evaluated at each constraint.
    pub b: Vec<Scalar>,
    /// C(x) evaluated at each constraint.
    pub c: Vec<Scalar>,
    /// Public inputs, the constant ONE first.
    pub inputs: Vec<Scalar>,
    /// Private (auxiliary) variables.
    pub aux: Vec<Scalar>,
    /// Which aux variables occur in A (inputs always do).
    pub a_aux_density: Density,
    /// Which inputs occur in B.
    pub b_input_density: Density,
    /// Which aux variables occur in B.
    pub b_aux_density: Density,
    /// The first constraint with a·b ≠ c, if any.
    unsatisfied: Option<(usize, String)>,
}

impl ProvingAssignment {
    /// Synthesizes `circuit` the way bellperson does and checks that every constraint holds.
    pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<Self> {
        let mut cs = ProvingAssignment::default();
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        circuit.synthesize(&mut cs)?;
        for i in 0..cs.inputs.len() {
            cs.enforce(
                || "input constraint",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
        if let Some((index, name)) = cs.unsatisfied.take() {
            return Err(Error::Unsatisfied { index, name });
        }
        Ok(cs)
    }

    /// Number of constraints, input constraints included.
    pub fn num_constraints(&self) -> usize {
        self.a.len()
    }
}

/// Evaluates `lc`, marking the variables with a nonzero coefficient in the given trackers.
fn eval(
    lc: &LinearCombination<Scalar>,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
    inputs: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::ZERO;
    let terms = lc
        .iter_inputs()
        .map(|(i, c)| (*i, c, true))
        .chain(lc.iter_aux().map(|(i, c)| (*i, c, false)));
    for (index, coeff, is_input) in terms {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        let (values, density) = if is_input {
            (inputs, input_density.as_deref_mut())
        } else {
            (aux, aux_density.as_deref_mut())
        };
        // An index past the assignment means the circuit used a variable it never allocated;
        // treat its value as zero so synthesis finishes and the key check reports the mismatch.
        let value = values.get(index).copied().unwrap_or(Scalar::ZERO);
        if *coeff == Scalar::ONE {
            acc += value;
        } else {
            acc += value * coeff;
        }
        if let Some(d) = density {
            d.mark(index);
        }
    }
    acc
}

impl ConstraintSystem<Scalar> for ProvingAssignment {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.a_aux_density.push();
        self.b_aux_density.push();
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        self.b_input_density.push();
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, name: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let (a, b, c) = (
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        );
        // Inputs are dense in A by construction (the input constraints), so only aux is tracked.
        let a = eval(
            &a,
            None,
            Some(&mut self.a_aux_density),
            &self.inputs,
            &self.aux,
        );
        let b = eval(
            &b,
            Some(&mut self.b_input_density),
            Some(&mut self.b_aux_density),
            &self.inputs,
            &self.aux,
        );
        let c = eval(&c, None, None, &self.inputs, &self.aux);
        if self.unsatisfied.is_none() && a * b != c {
            self.unsatisfied = Some((self.a.len(), name().into()));
        }
        self.a.push(a);
        self.b.push(b);
        self.c.push(c);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_marks_and_filters() {
        let mut d = Density::default();
        for _ in 0..130 {
            d.push();
        }
        d.mark(3);
        d.mark(3);
        d.mark(129);
        assert_eq!(d.count(), 2);
        assert!(d.get(3) && d.get(129) && !d.get(4));
        let v: Vec<usize> = (0..130).collect();
        assert_eq!(d.filter(&v), vec![3, 129]);
    }
}
