//! A MiMC-style hash chain: x_{i+1} = (x_i + k_i)³ with round constants, a real-world-shaped
//! circuit with a dense witness. The preimage is private; the digest is the public input.

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::KnownCircuit;

/// `rounds` rounds of MiMC-like cubing (2 constraints per round), digest public.
#[derive(Clone, Debug)]
pub struct MimcChain {
    /// Number of rounds.
    pub rounds: usize,
    /// Seed of the preimage.
    pub seed: u64,
}

impl MimcChain {
    /// The fewest constraints [`MimcChain::with_constraints`] takes: one round (two
    /// constraints), the digest's and the two the prover adds for the inputs.
    pub const MIN_CONSTRAINTS: usize = 5;

    /// A chain of about `constraints` constraints.
    pub fn with_constraints(constraints: usize, seed: u64) -> Self {
        MimcChain {
            rounds: constraints.saturating_sub(3) / 2,
            seed,
        }
    }

    fn constants(&self) -> (Scalar, Vec<Scalar>) {
        // Round constants are part of the circuit (fixed); the preimage is the witness (seeded).
        let mut consts = ChaCha8Rng::seed_from_u64(0x313c);
        let ks = (0..self.rounds)
            .map(|_| Scalar::random(&mut consts))
            .collect();
        let x0 = Scalar::random(&mut ChaCha8Rng::seed_from_u64(self.seed));
        (x0, ks)
    }

    /// The digest of the chain.
    pub fn digest(&self) -> Scalar {
        let (mut x, ks) = self.constants();
        for k in ks {
            let t = x + k;
            x = t.square() * t;
        }
        x
    }
}

impl KnownCircuit for MimcChain {
    fn public_inputs(&self) -> Vec<Scalar> {
        vec![self.digest()]
    }

    fn shape_name(&self) -> String {
        format!("mimc-{}", self.rounds)
    }
}

impl Circuit<Scalar> for MimcChain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (x0, ks) = self.constants();
        let mut xv = x0;
        let mut x = cs.alloc(|| "preimage", || Ok(xv))?;
        for (i, k) in ks.into_iter().enumerate() {
            let tv = xv + k;
            let sq = tv.square();
            let s = cs.alloc(|| format!("round {i} square"), || Ok(sq))?;
            cs.enforce(
                || format!("round {i} square"),
                |lc| lc + x + (k, CS::one()),
                |lc| lc + x + (k, CS::one()),
                |lc| lc + s,
            );
            let yv = sq * tv;
            let y = cs.alloc(|| format!("round {i} cube"), || Ok(yv))?;
            cs.enforce(
                || format!("round {i} cube"),
                |lc| lc + s,
                |lc| lc + x + (k, CS::one()),
                |lc| lc + y,
            );
            x = y;
            xv = yv;
        }
        let digest = cs.alloc_input(|| "digest", || Ok(xv))?;
        cs.enforce(
            || "digest",
            |lc| lc + x,
            |lc| lc + CS::one(),
            |lc| lc + digest,
        );
        Ok(())
    }
}
