//! The proving constraint system: evaluates a, b, c per constraint, records the witness and the
//! density of the A and B queries, and catches the first unsatisfied constraint.
//!
//! Conventions match bellperson exactly, so keys and proofs cross over: input 0 is the constant
//! ONE, allocated before synthesis; after synthesis every public input i gets the constraint
//! `input_i · 0 = 0`, which makes the A query dense over inputs and pins the IC query.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use crate::groth16::error::{Error, Result};

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
        if self.len.is_multiple_of(64) {
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

    /// The bitmap: bit `i % 64` of word `i / 64` is variable `i` (the GPU filters by it).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Bytes held by the bitmap.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Keeps the entries of `values` whose variable is present, in order. Runs in parallel over
    /// blocks of words: each block's output offset is the popcount of the blocks before it.
    pub fn filter<T: Copy + Send + Sync>(&self, values: &[T]) -> Vec<T> {
        const WORDS: usize = 1 << 12;
        let n = values.len().min(self.len);
        let words = &self.words[..n.div_ceil(64)];
        let counts: Vec<usize> = words
            .par_chunks(WORDS)
            .map(|c| c.iter().map(|w| w.count_ones() as usize).sum())
            .collect();
        let total: usize = counts.iter().sum();
        let Some(&fill) = values.first() else {
            return Vec::new();
        };
        let mut out = vec![fill; total];
        let mut pieces = Vec::with_capacity(counts.len());
        let mut rest: &mut [T] = &mut out;
        for c in &counts {
            let (head, tail) = rest.split_at_mut(*c);
            pieces.push(head);
            rest = tail;
        }
        words
            .par_chunks(WORDS)
            .zip(pieces.into_par_iter())
            .enumerate()
            .for_each(|(block, (ws, dst))| {
                let mut k = 0;
                for (j, w) in ws.iter().enumerate() {
                    let base = (block * WORDS + j) * 64;
                    let mut bits = *w;
                    while bits != 0 {
                        let i = base + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        if i < n {
                            dst[k] = values[i];
                            k += 1;
                        }
                    }
                }
            });
        // Bits at or past `n` in the last word were counted but not copied: they are the tail.
        let excess = match (n % 64, words.last()) {
            (r, Some(w)) if r != 0 => (w >> r).count_ones() as usize,
            _ => 0,
        };
        out.truncate(total - excess);
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
        Self::synthesize_sized(circuit, 0, 0, 0)
    }

    /// [`ProvingAssignment::synthesize`] with the vectors sized up front (constraint evaluations
    /// to the domain size, witness to its known lengths), so the buffers hold what the ledger
    /// charges for them instead of up to twice that after growing by doubling.
    pub fn synthesize_sized<C: Circuit<Scalar>>(
        circuit: C,
        domain: usize,
        inputs: usize,
        aux: usize,
    ) -> Result<Self> {
        let mut cs = ProvingAssignment {
            a: Vec::with_capacity(domain),
            b: Vec::with_capacity(domain),
            c: Vec::with_capacity(domain),
            inputs: Vec::with_capacity(inputs),
            aux: Vec::with_capacity(aux),
            ..ProvingAssignment::default()
        };
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
        crate::scheduler::yield_point::checkpoint();
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
        crate::scheduler::yield_point::checkpoint();
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

    ignore_namespaces!();
}

/// Counts constraints and tracks the namespace stack, to name one constraint by its full path.
#[derive(Default)]
struct PathFinder {
    target: usize,
    seen: usize,
    stack: Vec<String>,
    found: Option<String>,
}

impl ConstraintSystem<Scalar> for PathFinder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Ok(Variable::new_unchecked(Index::Aux(0)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        Ok(Variable::new_unchecked(Index::Input(0)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, name: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        if self.seen == self.target {
            let mut path = self.stack.clone();
            path.push(name().into());
            self.found = Some(path.join("/"));
        }
        self.seen += 1;
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        // Only names are built here; this runs once, after a failure, never on the hot path.
        self.stack.push(name().into());
    }

    fn pop_namespace(&mut self) {
        self.stack.pop();
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// The namespace path of constraint `index` (synthesis order, as in [`Error::Unsatisfied`]),
/// found by synthesizing `circuit` again with a namespace-tracking system. Witness closures are
/// not evaluated. `None` when the circuit has fewer constraints or fails to synthesize.
pub fn constraint_path<C: Circuit<Scalar>>(circuit: C, index: usize) -> Option<String> {
    let mut cs = PathFinder {
        target: index,
        ..PathFinder::default()
    };
    circuit.synthesize(&mut cs).ok()?;
    cs.found
}

#[cfg(test)]
mod tests;
