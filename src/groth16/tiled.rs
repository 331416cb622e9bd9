//! Keys of a circuit's exact shape made in seconds, for benches at sizes whose real setup takes
//! hours (or whose parameters cannot be had here): every query has the length and density a
//! real key would, but its points are a few thousand random points tiled over it, so the work
//! per partition is a real proof's while the proofs cannot verify. Nothing may take such a key
//! for a real one: callers label it (the Filecoin `ShapeKey` does).

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

use super::cs::ProvingAssignment;
use super::error::Result;
use super::key::{ProvingKey, VerifyingKey};
use crate::Scalar;

/// Distinct random G1 points tiled over the G1 queries.
const G1_POOL: usize = 4096;
/// Distinct random G2 points tiled over the B_G2 query.
const G2_POOL: usize = 1024;

/// A circuit's shape as its key sees it: the lengths of every query and the densities behind
/// them (counts of variables present out of those allocated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyShape {
    /// Public inputs, the constant ONE included (the vk's IC length).
    pub inputs: usize,
    /// Private variables (the L query's length).
    pub aux: usize,
    /// Constraints, the input constraints included.
    pub constraints: usize,
    /// The evaluation domain (constraints rounded up to a power of two); H has `domain - 1`.
    pub domain: usize,
    /// Private variables present in A.
    pub a_aux: usize,
    /// Inputs present in B.
    pub b_inputs: usize,
    /// Private variables present in B.
    pub b_aux: usize,
}

impl KeyShape {
    /// Synthesizes `circuit` (the full synthesis, a witness included) and reads its shape.
    pub fn of<C: bellperson::Circuit<Scalar>>(circuit: C) -> Result<Self> {
        let cs = ProvingAssignment::synthesize(circuit)?;
        let constraints = cs.num_constraints();
        Ok(KeyShape {
            inputs: cs.inputs.len(),
            aux: cs.aux.len(),
            constraints,
            domain: constraints.next_power_of_two(),
            a_aux: cs.a_aux_density.count(),
            b_inputs: cs.b_input_density.count(),
            b_aux: cs.b_aux_density.count(),
        })
    }

    /// The H query's length.
    pub fn h_len(&self) -> usize {
        self.domain - 1
    }

    /// The A query's length (every input, then the private variables present in A).
    pub fn a_len(&self) -> usize {
        self.inputs + self.a_aux
    }

    /// The B queries' length (G1 and G2 alike).
    pub fn b_len(&self) -> usize {
        self.b_inputs + self.b_aux
    }

    /// Bytes of points a key of this shape holds in memory.
    pub fn key_bytes(&self) -> u64 {
        let g1 = self.h_len() + self.aux + self.a_len() + self.b_len() + self.inputs;
        (g1 * std::mem::size_of::<G1Affine>() + self.b_len() * std::mem::size_of::<G2Affine>())
            as u64
    }
}

fn tiled<P: Copy + Send + Sync>(pool: &[P], n: usize) -> Vec<P> {
    (0..n)
        .into_par_iter()
        .map(|i| pool[(i * 7919) % pool.len()])
        .collect()
}

/// `n` random points of a prime-order group, drawn and normalized in parallel.
fn random_points<P: Group + Curve + Send>(n: usize) -> Vec<P::AffineRepr>
where
    P::AffineRepr: Send + PrimeCurveAffine,
{
    let proj: Vec<P> = (0..n)
        .into_par_iter()
        .map(|_| P::random(&mut rand::rngs::OsRng))
        .collect();
    let mut out = vec![P::AffineRepr::identity(); n];
    P::batch_normalize(&proj, &mut out);
    out
}

/// A key of `shape` whose points are tiled random points (see the module doc: its proofs
/// cannot verify).
pub fn tiled_key_of(shape: &KeyShape) -> ProvingKey {
    let g1 = random_points::<G1Projective>(G1_POOL);
    let g2 = random_points::<G2Projective>(G2_POOL);
    let vk = VerifyingKey {
        alpha_g1: g1[0],
        beta_g1: g1[1],
        beta_g2: g2[0],
        gamma_g2: g2[1],
        delta_g1: g1[2],
        delta_g2: g2[2],
        ic: tiled(&g1, shape.inputs),
    };
    ProvingKey::from_parts(
        vk,
        tiled(&g1, shape.h_len()),
        tiled(&g1, shape.aux),
        tiled(&g1, shape.a_len()),
        tiled(&g1, shape.b_len()),
        tiled(&g2, shape.b_len()),
    )
}

/// A key of `circuit`'s exact shape whose points are tiled random points (see the module doc:
/// its proofs cannot verify).
pub fn tiled_key<C: bellperson::Circuit<Scalar> + Clone>(circuit: &C) -> Result<ProvingKey> {
    Ok(tiled_key_of(&KeyShape::of(circuit.clone())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::Synthetic;

    #[test]
    fn a_tiled_key_has_the_real_keys_lengths() {
        let c = Synthetic::new(300, 0);
        let real =
            crate::generate_random_parameters(c.clone(), &mut rand::rngs::OsRng).expect("setup");
        let shape = KeyShape::of(c.clone()).expect("shape");
        let tiled = tiled_key(&c).expect("tiled");
        let lens = |k: &ProvingKey| {
            [
                k.h.len(),
                k.l.len(),
                k.a.len(),
                k.b_g1.len(),
                k.b_g2.len(),
                k.vk.ic.len(),
            ]
        };
        assert_eq!(lens(&tiled), lens(&real));
        assert_eq!(tiled.heap_bytes(), shape.key_bytes());
    }
}
