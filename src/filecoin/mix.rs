//! What a PoRep partition's witness is made of: how many of its values are 0, 1, or neither,
//! and so what it takes packed ([`crate::groth16::packed`]) against plain scalars. Partition 0
//! of the shape key's generated C1 output ([`super::shape_circuit`]) is synthesized witness-only
//! as the engine synthesizes it (SHA-256 by value), its challenges in parallel (each after its
//! own run of the prelude, counted once), with no key and no recording, so it runs at 32 and
//! 64 GiB on a small host.

use std::time::{Duration, Instant};

use blstrs::Scalar as Fr;
use filecoin_proofs_api::MerkleTreeTrait;
use rayon::prelude::*;

use crate::compiled::{Shape, WitnessCs};
use crate::groth16::packed::{Mix, PackedScalars};

use super::error::{FilecoinError, Result};
use super::porep_circuit::PorepCircuit;
use super::shape::{guard, with_tree};

/// Partition 0's witness mix, from some or all of its challenges.
#[derive(Clone, Copy, Debug)]
pub struct WitnessMix {
    /// The aux values of the prelude and the challenges synthesized.
    pub mix: Mix,
    /// Challenges synthesized.
    pub challenges: usize,
    /// Challenges in the partition.
    pub of: usize,
    /// Aux values of the prelude alone.
    pub prelude: usize,
    /// The synthesis's wall time (the C1 output's generation not included).
    pub time: Duration,
    /// Generating the C1 output the circuit comes from.
    pub generation: Duration,
}

impl WitnessMix {
    /// The whole partition's mix, scaled from the challenges synthesized (every challenge has
    /// the same shape; their values differ).
    pub fn partition(&self) -> Mix {
        let (n, of) = (self.challenges.max(1), self.of);
        let scale = |x: usize| x * of / n;
        Mix {
            zeros: scale(self.mix.zeros),
            ones: scale(self.mix.ones),
            dense: scale(self.mix.dense),
        }
    }
}

/// How the challenges' SHA-256 is synthesized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sha256Route {
    /// By value, as the engine does (`filecoin::values`).
    ByValue,
    /// Through the circuit's own gadget: the reference the by-value route is timed against.
    Gadget,
}

/// The mix of partition 0's witness at `sector_size` from its first `challenges` challenges
/// (all of them when `None` or more than it has), synthesized as the engine does.
pub fn witness_mix(sector_size: u64, challenges: Option<usize>) -> Result<WitnessMix> {
    witness_mix_by(sector_size, challenges, Sha256Route::ByValue)
}

/// [`witness_mix`] with the challenges' SHA-256 synthesized by `route`.
pub fn witness_mix_by(
    sector_size: u64,
    challenges: Option<usize>,
    route: Sha256Route,
) -> Result<WitnessMix> {
    with_tree!(sector_size, mix_of, sector_size, challenges, route)
}

fn mix_of<Tree: 'static + MerkleTreeTrait>(
    sector_size: u64,
    challenges: Option<usize>,
    route: Sha256Route,
) -> Result<WitnessMix> {
    let t = Instant::now();
    let circuit = super::shape_circuit::<Tree>(sector_size)?;
    let generation = t.elapsed();
    let t = Instant::now();
    let of = circuit.challenges();
    let n = challenges.unwrap_or(of).min(of);
    guard("synthesizing partition 0's witness", || {
        let prelude = aux_of(circuit.only(0..0))?;
        let skip = prelude.len();
        let mixes = (0..n)
            .into_par_iter()
            .map(|i| {
                let aux = match route {
                    Sha256Route::ByValue => circuit.challenge_aux(i).map_err(|e| {
                        FilecoinError::upstream("synthesizing partition 0's witness", e)
                    })?,
                    Sha256Route::Gadget => aux_of(circuit.only(i..i + 1))?,
                };
                Ok(PackedScalars::pack(aux.get(skip..).unwrap_or(&[])).mix())
            })
            .collect::<Result<Vec<Mix>>>()?;
        let mut mix = PackedScalars::pack(&prelude).mix();
        for m in mixes {
            mix.zeros += m.zeros;
            mix.ones += m.ones;
            mix.dense += m.dense;
        }
        Ok(WitnessMix {
            mix,
            challenges: n,
            of,
            prelude: skip,
            time: t.elapsed(),
            generation,
        })
    })
}

/// The aux values of `circuit`, synthesized witness-only.
fn aux_of<Tree: 'static + MerkleTreeTrait>(circuit: PorepCircuit<Tree>) -> Result<Vec<Fr>> {
    let mut cs = WitnessCs::with_room(Shape {
        inputs: 1,
        aux: 0,
        constraints: 0,
    });
    bellperson::Circuit::synthesize(circuit, &mut cs)
        .map_err(|e| FilecoinError::upstream("synthesizing partition 0's witness", e))?;
    Ok(cs.aux)
}
