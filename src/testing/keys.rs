//! Keys of a circuit's exact shape made in seconds, for benches at sizes whose real setup takes
//! hours: every query has the length and density a real key would, but its points are a few
//! thousand random points tiled over it, so the work per partition is a real proof's while the
//! proofs cannot verify. Nothing may take such a key for a real one.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::{Curve, Group};
use rayon::prelude::*;

use crate::groth16::cs::ProvingAssignment;
use crate::groth16::error::Result;
use crate::groth16::key::{ProvingKey, VerifyingKey};
use crate::Scalar;

fn tiled<P: Copy + Send + Sync>(pool: &[P], n: usize) -> Vec<P> {
    (0..n)
        .into_par_iter()
        .map(|i| pool[(i * 7919) % pool.len()])
        .collect()
}

/// A key of `circuit`'s exact shape whose points are tiled random points (see the module
/// doc: its proofs cannot verify).
pub fn tiled_key<C: bellperson::Circuit<Scalar> + Clone>(circuit: &C) -> Result<ProvingKey> {
    let cs = ProvingAssignment::synthesize(circuit.clone())?;
    let d = cs.num_constraints().next_power_of_two();
    let mut rng = rand::rngs::OsRng;
    let g1: Vec<G1Affine> = (0..4096)
        .map(|_| G1Projective::random(&mut rng).to_affine())
        .collect();
    let g2: Vec<G2Affine> = (0..1024)
        .map(|_| G2Projective::random(&mut rng).to_affine())
        .collect();
    let ni = cs.inputs.len();
    let nb = cs.b_input_density.count() + cs.b_aux_density.count();
    let vk = VerifyingKey {
        alpha_g1: g1[0],
        beta_g1: g1[1],
        beta_g2: g2[0],
        gamma_g2: g2[1],
        delta_g1: g1[2],
        delta_g2: g2[2],
        ic: g1[..ni].to_vec(),
    };
    Ok(ProvingKey::from_parts(
        vk,
        tiled(&g1, d - 1),
        tiled(&g1, cs.aux.len()),
        tiled(&g1, ni + cs.a_aux_density.count()),
        tiled(&g1, nb),
        tiled(&g2, nb),
    ))
}
