//! A synthetic R1CS family shaped like Filecoin PoRep: mostly boolean constraints over bits
//! (witness values 0 or 1), bit-packing rows with many terms, and a few dense rows (a squaring
//! chain), with several public inputs that seed the dense chains.

use bellperson::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::KnownCircuit;

/// A PoRep-like circuit with exactly `constraints` constraints once the prover adds its
/// `public_inputs + 1` input constraints.
#[derive(Clone, Debug)]
pub struct Synthetic {
    /// Total constraints, input constraints included (use a power of two for a full domain).
    pub constraints: usize,
    /// Number of public inputs.
    pub public_inputs: usize,
    /// Seed of the witness.
    pub seed: u64,
    /// When set, the witness breaks constraint number `k` (for tests): the variable that
    /// constraint introduces gets a wrong value, so full synthesis and the compiled path (which
    /// checks the witness against the recorded rows) both refuse it there.
    pub break_at: Option<usize>,
}

impl Synthetic {
    /// A circuit of `constraints` constraints with 4 public inputs.
    pub fn new(constraints: usize, seed: u64) -> Self {
        Synthetic {
            constraints,
            public_inputs: 4,
            seed,
            break_at: None,
        }
    }

    /// The fewest constraints this circuit can have: each public input needs its chain's first
    /// row and its input constraint, plus the constant's.
    pub fn min_constraints(&self) -> usize {
        2 * (self.public_inputs + 1)
    }

    fn input_values(&self) -> Vec<Scalar> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ 0x5eed);
        (0..self.public_inputs)
            .map(|_| Scalar::random(&mut rng))
            .collect()
    }
}

impl KnownCircuit for Synthetic {
    fn public_inputs(&self) -> Vec<Scalar> {
        self.input_values()
    }

    fn shape_name(&self) -> String {
        format!("synthetic-{}-{}", self.constraints, self.public_inputs)
    }
}

impl Circuit<Scalar> for Synthetic {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        // Every public input needs its chain's first row plus its input constraint: below
        // `min_constraints` the circuit cannot have the shape it promises.
        let budget = self
            .constraints
            .checked_sub(self.public_inputs + 1)
            .filter(|b| *b > self.public_inputs)
            .ok_or(SynthesisError::Unsatisfiable)?;
        // The shape depends only on the size, so one key serves every witness; values vary by seed.
        let mut shape = ChaCha8Rng::seed_from_u64(0x5ba7 ^ self.constraints as u64);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let made = std::cell::Cell::new(0usize);
        // The value of the variable the next constraint introduces, off by two when that
        // constraint is the one to break (two, so that a bit of 0 does not become a bit of 1).
        let off_if_broken = |v: Scalar| {
            if self.break_at == Some(made.get()) {
                v + Scalar::from(2u64)
            } else {
                v
            }
        };
        let enforce = |cs: &mut CS,
                       a: LinearCombination<Scalar>,
                       b: LinearCombination<Scalar>,
                       c: LinearCombination<Scalar>| {
            cs.enforce(|| "c", |_| a, |_| b, |_| c);
            made.set(made.get() + 1);
        };

        // Dense chains: one per public input, x0 = input, x_{k+1} = x_k² + k.
        let mut chains: Vec<(Variable, Scalar)> = Vec::new();
        for (i, v) in self.input_values().into_iter().enumerate() {
            if made.get() + 2 > budget {
                break;
            }
            let input = cs.alloc_input(|| format!("input {i}"), || Ok(v))?;
            let x0 = off_if_broken(v);
            let x = cs.alloc(|| "x0", || Ok(x0))?;
            enforce(
                cs,
                LinearCombination::zero() + x,
                LinearCombination::zero() + CS::one(),
                LinearCombination::zero() + input,
            );
            chains.push((x, x0));
        }

        let mut bits: Vec<(Variable, bool)> = Vec::with_capacity(16);
        let mut step = 0u64;
        while made.get() < budget {
            let roll = shape.gen_range(0..100);
            if roll < 8 && !chains.is_empty() {
                // Dense row: y = x² + step.
                let k = (step as usize) % chains.len();
                let (x, xv) = chains[k];
                let yv = off_if_broken(xv.square() + Scalar::from(step));
                let y = cs.alloc(|| "y", || Ok(yv))?;
                enforce(
                    cs,
                    LinearCombination::zero() + x,
                    LinearCombination::zero() + x,
                    LinearCombination::zero() + y - (Scalar::from(step), CS::one()),
                );
                chains[k] = (y, yv);
            } else if roll < 12 && bits.len() >= 8 {
                // Packing row: Σ 2^i·bit_i = packed (many terms, a dense value).
                let mut lc = LinearCombination::zero();
                let mut value = Scalar::ZERO;
                let mut coeff = Scalar::ONE;
                for (v, b) in bits.drain(..8) {
                    lc = lc + (coeff, v);
                    if b {
                        value += coeff;
                    }
                    coeff = coeff.double();
                }
                let packed = cs.alloc(|| "packed", || Ok(off_if_broken(value)))?;
                enforce(
                    cs,
                    lc,
                    LinearCombination::zero() + CS::one(),
                    LinearCombination::zero() + packed,
                );
            } else if roll < 40 && bits.len() >= 2 {
                // XOR row: (2a)·b = a + b − c.
                let (a, av) = bits[bits.len() - 1];
                let (b, bv) = bits[bits.len() - 2];
                let cv = av ^ bv;
                let c = cs.alloc(
                    || "xor",
                    || Ok(off_if_broken(if cv { Scalar::ONE } else { Scalar::ZERO })),
                )?;
                enforce(
                    cs,
                    LinearCombination::zero() + (Scalar::from(2u64), a),
                    LinearCombination::zero() + b,
                    LinearCombination::zero() + a + b - c,
                );
                bits.push((c, cv));
            } else {
                // Boolean row: b·(1 − b) = 0, mostly over zeros (PoRep-like sparsity).
                let bv = rng.gen_bool(0.3);
                let b = cs.alloc(
                    || "bit",
                    || Ok(off_if_broken(if bv { Scalar::ONE } else { Scalar::ZERO })),
                )?;
                enforce(
                    cs,
                    LinearCombination::zero() + b,
                    LinearCombination::zero() + CS::one() - b,
                    LinearCombination::zero(),
                );
                bits.push((b, bv));
            }
            if bits.len() > 16 {
                bits.remove(0);
            }
            step += 1;
        }
        Ok(())
    }
}
