//! A circuit whose rows have the lengths of a bit-heavy circuit's recording: most rows of 1 to 3
//! terms and, every `long_every` rows, one of 9 to 929 terms (the sums that pack bits into a
//! field element, as in SHA-256 and PoRep circuits: a 2 KiB PoRep partition's A matrix has 2,584
//! rows of ~840 terms among 2.7 M), in A on even rows and in C on odd ones, over a witness
//! mostly 0 or 1 with coefficients ±1 and a few others. The device's sparse a/b/c is checked on
//! it (kernels/NOTES.md, "Sparse a/b/c").

use bellperson::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::KnownCircuit;

/// The long rows' lengths, in turn: around a warp's 32 lanes and far above it.
const LONG: [usize; 9] = [9, 16, 31, 32, 33, 64, 200, 511, 929];

/// The seed of the structure (which variables each row reads, with which coefficients): the
/// same for every witness, so that one recording serves every seed.
const SHAPE_SEED: u64 = 0x10_4e_60_e5;

/// `rows` constraints of the lengths above; the witness's values come from `seed`.
#[derive(Clone, Debug)]
pub struct LongRows {
    /// Constraints (each allocates one private variable for its sum).
    pub rows: usize,
    /// One row in this many is long (at least 1: every row).
    pub long_every: usize,
    /// The witness's values.
    pub seed: u64,
}

impl LongRows {
    /// `rows` constraints, one in `long_every` long, witness from `seed`.
    pub fn new(rows: usize, long_every: usize, seed: u64) -> Self {
        LongRows {
            rows,
            long_every: long_every.max(1),
            seed,
        }
    }

    fn values(&self) -> (Scalar, ChaCha8Rng) {
        let mut r = ChaCha8Rng::seed_from_u64(self.seed);
        (Scalar::random(&mut r), r)
    }

    fn pool(&self) -> usize {
        (self.rows / 2).max(2048)
    }

    fn length(&self, i: usize) -> usize {
        match (i + 1) % self.long_every {
            0 => LONG[(i / self.long_every) % LONG.len()],
            _ => 1 + i % 3,
        }
    }
}

/// Mostly 0 or 1 (45 % each), else a random element.
fn bit_heavy(r: &mut ChaCha8Rng) -> Scalar {
    match r.gen_range(0..20) {
        0..=8 => Scalar::ZERO,
        9..=17 => Scalar::ONE,
        _ => Scalar::random(r),
    }
}

impl KnownCircuit for LongRows {
    fn public_inputs(&self) -> Vec<Scalar> {
        vec![self.values().0]
    }

    fn shape_name(&self) -> String {
        format!("long-rows-{}-{}", self.rows, self.long_every)
    }
}

impl Circuit<Scalar> for LongRows {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let (x, mut values) = self.values();
        let input = cs.alloc_input(|| "x", || Ok(x))?;
        let mut pool: Vec<(Variable, Scalar)> = Vec::with_capacity(self.pool());
        for i in 0..self.pool() {
            let v = bit_heavy(&mut values);
            pool.push((cs.alloc(|| format!("v{i}"), || Ok(v))?, v));
        }
        let coeffs = [
            Scalar::ONE,
            -Scalar::ONE,
            Scalar::from(2u64),
            Scalar::from(3u64),
            -Scalar::from(5u64),
            Scalar::from(0x0123_4567_89ab_cdefu64),
        ];
        let mut shape = ChaCha8Rng::seed_from_u64(SHAPE_SEED);
        for i in 0..self.rows {
            let mut lc = LinearCombination::<Scalar>::zero();
            let mut sum = Scalar::ZERO;
            for _ in 0..self.length(i) {
                let c = coeffs[shape.gen_range(0..coeffs.len())];
                let (var, val) = match shape.gen_range(0..16) {
                    0 => (CS::one(), Scalar::ONE),
                    1 => (input, x),
                    _ => pool[shape.gen_range(0..pool.len())],
                };
                lc = lc + (c, var);
                sum += c * val;
            }
            let w = cs.alloc(|| format!("row {i}"), || Ok(sum))?;
            if i % 2 == 0 {
                cs.enforce(|| format!("row {i}"), |_| lc, |z| z + CS::one(), |z| z + w);
            } else {
                cs.enforce(|| format!("row {i}"), |z| z + CS::one(), |z| z + w, |_| lc);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_holds_and_the_lengths_are_as_said() {
        let c = LongRows::new(100, 3, 7);
        let (rec, _, w) = crate::compiled::record(c.clone()).expect("record");
        // Satisfied: the host evaluation checks a·b = c on every row.
        rec.evaluate(&w.inputs, &w.aux).expect("satisfied");
        let [a, _, cm] = rec.matrices();
        let longest = |m: &crate::compiled::SparseMatrix| {
            m.row_ptr()
                .windows(2)
                .map(|p| p[1] - p[0])
                .max()
                .unwrap_or(0)
        };
        // Terms that repeat a variable may merge, so the longest rows are at most as long.
        assert!((500..=929).contains(&longest(a)), "A: {}", longest(a));
        assert!((500..=929).contains(&longest(cm)), "C: {}", longest(cm));
        assert_eq!(c.length(2), 9);
        assert_eq!(c.length(0), 1);
        // Another seed: the same structure (one recording), other values.
        let other = LongRows::new(100, 3, 8);
        let ws = crate::compiled::WitnessCs::synthesize(other.clone(), rec.shape()).expect("shape");
        rec.evaluate(&ws.inputs, &ws.aux).expect("satisfied");
        assert_ne!(ws.aux, w.aux);
        assert_eq!(ws.inputs[1], other.public_inputs()[0]);
    }
}
