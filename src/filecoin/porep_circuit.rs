//! The PoRep partition as the engine holds it: the stacked-DRG circuit's commitments and its
//! per-challenge vanilla proofs, with the challenges' witness code run in parallel.
//!
//! [`PorepCircuit`] is filecoin-proofs' circuit exactly: its `synthesize` is
//! `StackedCircuit::synthesize` over the values `StackedCompound::circuit` would give it, so
//! full synthesis and the recording are theirs. [`PorepPartition`] wraps it for the engine.
//!
//! Witness-only synthesis splits the circuit: a prelude (replica id, comm_d and comm_r as inputs,
//! the replica id's bits, comm_r = H(comm_c, comm_r_last)) and one independent sub-circuit per
//! challenge, which reads the prelude's numbers and bits only for their values (their variables
//! appear only in linear combinations, which witness-only synthesis never builds). Each parallel
//! task (one per challenge, on the global rayon pool) runs the prelude again (a few hundred
//! variables), then its challenge, through [`super::values`]: the circuit's own allocations in its
//! order, with the SHA-256 hashes computed by value rather than through bellperson's gadget, which
//! builds linear combinations eagerly (BENCHMARKS.md, "CPU VM — PoRep witness"; the tests compare
//! every assignment with the circuit's at each sector size). Every challenge has the same shape, so
//! the recording's aux count gives each task its region of one aux buffer, which it fills directly
//! ([`RegionCs`]); challenge 0's task writes the prelude there too, the others keep their rerun of
//! it apart and it is checked equal to the first. Regions in challenge order are the order
//! sequential synthesis allocates in, and so are the inputs, appended task by task. The counts are
//! checked against the recording as for any circuit; a recording that does not split so is run in
//! one sequence (its counts then name any divergence).
//!
//! Peak memory is the witness plus one prelude per challenge: nothing is copied to join them.

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{DefaultPieceDomain, VanillaSealProof};
use filecoin_proofs_api::{Hasher, MerkleTreeTrait};
use rayon::prelude::*;
use storage_proofs_porep::stacked::StackedCircuit;

use super::values;
use crate::compiled::{self, CompiledError, Recording, RegionCs, Shape, ValuesOnly, WitnessCs};
use crate::groth16::error::Result;
use crate::groth16::key::ProvingKey;
use crate::groth16::packed::PackedScalars;
use crate::groth16::prover::{Abc, Witness};
use crate::stages::pipeline::PartitionCircuit;

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// The counts a part starts from: the constant one, as a witness system holds it.
const PRELUDE_ONE: Shape = Shape {
    inputs: 1,
    aux: 0,
    constraints: 0,
};

/// One PoRep partition's circuit: filecoin-proofs' `StackedCircuit` with these values.
pub struct PorepCircuit<Tree: 'static + MerkleTreeTrait> {
    replica_id: Domain<Tree>,
    comm_d: DefaultPieceDomain,
    comm_r: Domain<Tree>,
    comm_r_last: Domain<Tree>,
    comm_c: Domain<Tree>,
    /// One per challenge, in challenge order.
    challenges: Vec<VanillaSealProof<Tree>>,
}

// By hand: a derive would ask `Tree: Clone`, which tree types are not.
impl<Tree: 'static + MerkleTreeTrait> Clone for PorepCircuit<Tree> {
    fn clone(&self) -> Self {
        PorepCircuit {
            challenges: self.challenges.clone(),
            ..*self
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait> PorepCircuit<Tree> {
    /// The circuit of one partition, as `StackedCompound::circuit` builds it from the sector's
    /// public inputs and the partition's vanilla proofs. `None` when there are no vanilla
    /// proofs or they disagree on comm_r_last or comm_c.
    pub fn new(
        replica_id: Domain<Tree>,
        comm_d: DefaultPieceDomain,
        comm_r: Domain<Tree>,
        vanilla: &[VanillaSealProof<Tree>],
    ) -> Option<Self> {
        let first = vanilla.first()?;
        let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
        let agree =
            |p: &VanillaSealProof<Tree>| p.comm_r_last() == comm_r_last && p.comm_c() == comm_c;
        vanilla.iter().all(agree).then(|| PorepCircuit {
            replica_id,
            comm_d,
            comm_r,
            comm_r_last,
            comm_c,
            challenges: vanilla.to_vec(),
        })
    }

    /// The challenges of this partition.
    pub fn challenges(&self) -> usize {
        self.challenges.len()
    }

    /// The same circuit over the challenges in `range` only (none: the prelude alone).
    pub(crate) fn only(&self, range: std::ops::Range<usize>) -> Self {
        PorepCircuit {
            challenges: self.challenges[range].to_vec(),
            ..*self
        }
    }

    /// filecoin-proofs' circuit over `challenges` (all of them: the circuit itself; none: the
    /// prelude alone; one: the prelude and that challenge).
    fn run<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        challenges: &[VanillaSealProof<Tree>],
    ) -> std::result::Result<(), SynthesisError> {
        StackedCircuit::<Tree, DefaultPieceHasher>::synthesize(
            cs,
            Some(self.replica_id),
            Some(self.comm_d),
            Some(self.comm_r),
            Some(self.comm_r_last),
            Some(self.comm_c),
            challenges.iter().cloned().map(Into::into).collect(),
        )
    }

    /// The prelude and one challenge into a witness-only system, the labels' SHA-256 by value
    /// ([`super::values`]): the same assignments as [`PorepCircuit::run`] over that challenge.
    fn run_values<C: ValuesOnly>(
        &self,
        cs: &mut C,
        challenge: &VanillaSealProof<Tree>,
    ) -> std::result::Result<(), SynthesisError> {
        let publics = values::Commitments {
            replica_id: self.replica_id.into(),
            comm_d: self.comm_d.into(),
            comm_r: self.comm_r.into(),
            comm_r_last: self.comm_r_last.into(),
            comm_c: self.comm_c.into(),
        };
        values::challenge(cs, publics, challenge)
    }

    /// The aux values of the prelude and challenge `i`, synthesized witness-only as the engine
    /// does ([`PorepCircuit::run_values`]).
    pub(crate) fn challenge_aux(&self, i: usize) -> std::result::Result<Vec<Fr>, SynthesisError> {
        let challenge = self
            .challenges
            .get(i)
            .ok_or(SynthesisError::AssignmentMissing)?;
        let mut cs = WitnessCs::with_room(PRELUDE_ONE);
        self.run_values(&mut cs, challenge)?;
        Ok(cs.aux)
    }

    /// The witness with the challenges' witness code run in parallel on the global rayon pool
    /// (see the module docs), checked against `shape`: the inputs and the aux.
    pub fn parallel_witness(
        &self,
        shape: Shape,
    ) -> std::result::Result<(Vec<Fr>, Vec<Fr>), CompiledError> {
        let Some((prelude, skip, per)) = self.split(shape)? else {
            return self.sequential_witness(shape);
        };
        let mut aux = Vec::with_capacity(shape.aux);
        // The buffer is faulted in by the pool, as the tasks would have done.
        aux.par_extend(rayon::iter::repeat_n(Fr::ZERO, shape.aux));
        let (first, rest) = aux.split_at_mut(skip.aux + per);
        let mut regions = vec![first];
        regions.extend(rest.chunks_mut(per));
        // Challenge 0's task runs the prelude into its region; the others keep theirs apart.
        let parts = self
            .challenges
            .par_iter()
            .zip(regions)
            .enumerate()
            .map(|(i, (challenge, region))| {
                let mut cs = RegionCs::new(if i == 0 { PRELUDE_ONE } else { skip }, region);
                self.run_values(&mut cs, challenge)?;
                Ok(cs)
            })
            .collect::<std::result::Result<Vec<_>, CompiledError>>()?;
        match self.join(shape, &prelude, &parts)? {
            Some(inputs) => Ok((inputs, aux)),
            None => self.sequential_witness(shape),
        }
    }

    /// [`PorepCircuit::parallel_witness`] with each challenge's values packed as bits by its own
    /// task ([`RegionCs::packed`]) and the parts appended in order: the witness never exists
    /// plain (a 32 GiB partition's is 81 MiB packed against 3.88 GiB plain).
    pub fn parallel_packed_witness(
        &self,
        shape: Shape,
    ) -> std::result::Result<(Vec<Fr>, PackedScalars), CompiledError> {
        // Not this circuit's regions: the witness is made plain, then packed, over the packing
        // room its partition was charged (`PartitionCircuit::packs_as_it_goes`).
        let sequential = || {
            tracing::warn!(
                aux = shape.aux,
                "PoRep challenges not in equal regions: the witness is made plain, over its charge"
            );
            self.sequential_witness(shape)
                .map(|(inputs, aux)| (inputs, PackedScalars::pack(&aux)))
        };
        let Some((prelude, skip, per)) = self.split(shape)? else {
            return sequential();
        };
        let mut parts = self
            .challenges
            .par_iter()
            .enumerate()
            .map(|(i, challenge)| {
                let mut cs = match i {
                    0 => RegionCs::packed(PRELUDE_ONE, skip.aux + per),
                    _ => RegionCs::packed(skip, per),
                };
                self.run_values(&mut cs, challenge)?;
                Ok(cs)
            })
            .collect::<std::result::Result<Vec<_>, CompiledError>>()?;
        let Some(inputs) = self.join(shape, &prelude, &parts)? else {
            return sequential();
        };
        let chunks: Vec<PackedScalars> = parts.iter_mut().map(RegionCs::take_packed).collect();
        let dense = chunks.iter().map(|c| c.mix().dense).sum();
        let mut packed = PackedScalars::with_capacity(shape.aux, dense);
        for c in &chunks {
            packed.append(c);
        }
        Ok((inputs, packed))
    }

    /// The prelude's witness, its counts, and each challenge's aux count past it; `None` when
    /// the recording's aux do not split into the prelude and equal challenges.
    fn split(
        &self,
        shape: Shape,
    ) -> std::result::Result<Option<(WitnessCs, Shape, usize)>, CompiledError> {
        let mut prelude = WitnessCs::with_room(PRELUDE_ONE);
        self.run(&mut prelude, &[])?;
        let skip = prelude.shape();
        let n = self.challenges.len();
        // Every challenge has the same shape, so each one's region of the aux is known.
        Ok(match shape.aux.checked_sub(skip.aux) {
            Some(rest) if n > 0 && rest > 0 && rest % n == 0 => Some((prelude, skip, rest / n)),
            _ => None,
        })
    }

    /// The inputs of the challenges' parts in order, after checking that every rerun of the
    /// prelude matched the first and that the counts are the recording's; `None` when the parts
    /// did not fill their regions exactly (challenges of unequal shapes, their total the
    /// recording's: not this circuit's regions, yet it may be the circuit recorded).
    fn join(
        &self,
        shape: Shape,
        prelude: &WitnessCs,
        parts: &[RegionCs<'_>],
    ) -> std::result::Result<Option<Vec<Fr>>, CompiledError> {
        let mut inputs = Vec::with_capacity(shape.inputs);
        inputs.push(Fr::ONE);
        let mut counted = PRELUDE_ONE;
        // Challenge 0's task wrote its prelude into its region; every other rerun must match.
        let same_prelude = |cs: &RegionCs<'_>| {
            cs.prefix.inputs == prelude.inputs[..cs.prefix.inputs.len()]
                && cs.prefix.aux == prelude.aux[..cs.prefix.aux.len()]
        };
        for (i, cs) in parts.iter().enumerate() {
            if i > 0 && !same_prelude(cs) {
                return Err(CompiledError::Internal {
                    reason: format!("challenge {i}'s task synthesized another PoRep prelude"),
                });
            }
            inputs.extend_from_slice(&cs.inputs);
            let got = cs.shape();
            counted.inputs += got.inputs;
            counted.aux += got.aux;
            counted.constraints += got.constraints;
        }
        compiled::check_counts(shape, counted)?;
        Ok(parts.iter().all(RegionCs::filled).then_some(inputs))
    }

    /// The witness in one sequence, for a recording whose aux do not split into the prelude
    /// and equal challenges: the counts' check names any divergence.
    fn sequential_witness(
        &self,
        shape: Shape,
    ) -> std::result::Result<(Vec<Fr>, Vec<Fr>), CompiledError> {
        tracing::debug!(
            ?shape,
            "PoRep witness in one sequence: the recording does not split by challenge"
        );
        let cs = WitnessCs::synthesize(self.clone(), shape)?;
        Ok((cs.inputs, cs.aux))
    }
}

impl<Tree: 'static + MerkleTreeTrait> Circuit<Fr> for PorepCircuit<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), SynthesisError> {
        self.run(cs, &self.challenges)
    }
}

/// A PoRep partition for the engine: full synthesis and the recording run [`PorepCircuit`] as
/// any circuit; witness-only synthesis runs its challenges in parallel.
pub struct PorepPartition<Tree: 'static + MerkleTreeTrait> {
    circuit: PorepCircuit<Tree>,
}

impl<Tree: 'static + MerkleTreeTrait> PorepPartition<Tree> {
    /// The partition of `circuit`.
    pub fn new(circuit: PorepCircuit<Tree>) -> Self {
        PorepPartition { circuit }
    }

    /// Its circuit, filecoin-proofs' own.
    pub fn circuit(&self) -> &PorepCircuit<Tree> {
        &self.circuit
    }
}

impl<Tree: 'static + MerkleTreeTrait> PartitionCircuit for PorepPartition<Tree> {
    fn synthesize(&self, pk: &ProvingKey) -> Result<(Abc, Witness)> {
        PartitionCircuit::synthesize(&self.circuit, pk)
    }

    fn packs_as_it_goes(&self) -> bool {
        true
    }

    fn record(&self) -> std::result::Result<(Recording, Abc, Witness), CompiledError> {
        self.circuit.record()
    }

    fn synthesize_compiled(
        &self,
        recording: &Recording,
    ) -> std::result::Result<(Abc, Witness), CompiledError> {
        let (inputs, aux) = self.circuit.parallel_witness(recording.shape())?;
        compiled::evaluate(recording, inputs, aux)
    }

    fn synthesize_witness(
        &self,
        recording: &Recording,
    ) -> std::result::Result<Witness, CompiledError> {
        let (inputs, aux) = self.circuit.parallel_witness(recording.shape())?;
        Ok(recording.witness(inputs, aux))
    }

    fn synthesize_packed_witness(
        &self,
        recording: &Recording,
    ) -> std::result::Result<Witness, CompiledError> {
        let shape = recording.shape();
        let (inputs, packed) = self.circuit.parallel_packed_witness(shape)?;
        let plain = (shape.aux * std::mem::size_of::<Fr>()) as u64;
        // The room a partition of a circuit that packs as it goes is charged.
        let room = crate::groth16::packed::streamed_room(plain);
        Ok(match packed.bytes() <= room {
            true => recording.packed_witness(inputs, packed),
            // Not this circuit's usual mix (a PoRep witness packs to ~1/24 of its plain
            // bytes): plain, over the packing room this partition was charged.
            false => {
                tracing::warn!(
                    packed_bytes = packed.bytes(),
                    room_bytes = room,
                    plain_bytes = plain,
                    "a PoRep witness did not pack within its room; held plain, over its charge"
                );
                recording.witness(inputs, packed.unpack())
            }
        })
    }
}

#[cfg(test)]
mod tests;
