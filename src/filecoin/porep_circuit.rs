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
//! appear only in linear combinations, which witness-only synthesis never builds). The circuit
//! type of one challenge is private upstream, so each parallel task runs the public
//! `StackedCircuit::synthesize` with that one challenge into its own [`WitnessCs`]: the prelude
//! again (a few hundred variables, checked equal to the first run's), then the challenge. The
//! task for challenge 0 runs into the partition's own system; every other task's system is
//! appended after its prelude, in challenge order, which is the order sequential synthesis
//! allocates in. The counts are then checked against the recording as for any circuit.

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::{DefaultPieceDomain, VanillaSealProof};
use filecoin_proofs_api::{Hasher, MerkleTreeTrait};
use rayon::prelude::*;
use storage_proofs_porep::stacked::StackedCircuit;

use crate::compiled::{self, CompiledError, Recording, Shape, WitnessCs};
use crate::error::Result;
use crate::key::ProvingKey;
use crate::pipeline::PartitionCircuit;
use crate::prover::{Abc, Witness};

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

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

    /// The witness with the challenges' witness code run in parallel on the global rayon pool
    /// (see the module docs), checked against `shape`.
    pub fn parallel_witness(&self, shape: Shape) -> std::result::Result<WitnessCs, CompiledError> {
        let mut prelude = WitnessCs::with_room(Shape {
            inputs: 1,
            aux: 0,
            constraints: 0,
        });
        self.run(&mut prelude, &[])?;
        let skip = prelude.shape();
        let Some((first, rest)) = self.challenges.split_first() else {
            prelude.check(shape)?;
            return Ok(prelude);
        };
        // Every challenge has the same shape, so each task's share of the recording is known.
        let n = self.challenges.len();
        let each = Shape {
            inputs: skip.inputs + shape.inputs.saturating_sub(skip.inputs) / n,
            aux: skip.aux + shape.aux.saturating_sub(skip.aux) / n,
            constraints: 0,
        };
        let task = |challenge: &VanillaSealProof<Tree>, room: Shape| {
            let mut cs = WitnessCs::with_room(room);
            self.run(&mut cs, std::slice::from_ref(challenge))?;
            let same = cs.inputs.get(..skip.inputs) == Some(&prelude.inputs[..])
                && cs.aux.get(..skip.aux) == Some(&prelude.aux[..]);
            match same {
                true => Ok(cs),
                false => Err(CompiledError::Internal {
                    reason: "a challenge's task synthesized a different PoRep prelude".into(),
                }),
            }
        };
        let (whole, others) = rayon::join(
            || task(first, shape),
            || {
                rest.par_iter()
                    .map(|c| task(c, each))
                    .collect::<std::result::Result<Vec<_>, _>>()
            },
        );
        let mut whole = whole?;
        for cs in others? {
            whole.append(&cs, skip)?;
        }
        whole.check(shape)?;
        Ok(whole)
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

    fn record(&self) -> std::result::Result<(Recording, Abc, Witness), CompiledError> {
        self.circuit.record()
    }

    fn synthesize_compiled(
        &self,
        recording: &Recording,
    ) -> std::result::Result<(Abc, Witness), CompiledError> {
        let cs = self.circuit.parallel_witness(recording.shape())?;
        compiled::evaluate(recording, cs.inputs, cs.aux)
    }

    fn synthesize_witness(
        &self,
        recording: &Recording,
    ) -> std::result::Result<Witness, CompiledError> {
        let cs = self.circuit.parallel_witness(recording.shape())?;
        Ok(recording.witness(cs.inputs, cs.aux))
    }
}
