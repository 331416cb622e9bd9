//! The PoRep circuit's witness by value against the circuit's own, at every sector size.

use super::*;
use crate::filecoin::shape::with_tree;
use crate::filecoin::shape_circuit;
use filecoin_proofs::constants::{
    SECTOR_SIZE_2_KIB, SECTOR_SIZE_32_GIB, SECTOR_SIZE_512_MIB, SECTOR_SIZE_64_GIB,
    SECTOR_SIZE_8_MIB,
};

/// The circuit's own witness and the by-value one of a challenge, as (inputs, aux, shape).
fn both<Tree: 'static + MerkleTreeTrait>(
    circuit: &PorepCircuit<Tree>,
    i: usize,
) -> [(Vec<Fr>, Vec<Fr>, Shape); 2] {
    let mut upstream = WitnessCs::with_room(PRELUDE_ONE);
    circuit
        .run(&mut upstream, &circuit.challenges[i..=i])
        .expect("the circuit's synthesis");
    let mut ours = WitnessCs::with_room(PRELUDE_ONE);
    circuit
        .run_values(&mut ours, &circuit.challenges[i])
        .expect("by-value synthesis");
    [upstream, ours].map(|cs| {
        let shape = cs.shape();
        (cs.inputs, cs.aux, shape)
    })
}

/// The first and last challenges of partition 0 of a generated C1 at `size`.
fn same_challenges<Tree: 'static + MerkleTreeTrait>(size: u64) -> crate::filecoin::Result<()> {
    let circuit = shape_circuit::<Tree>(size)?;
    for i in [0, circuit.challenges() - 1] {
        let [(up_in, up_aux, up_shape), (in_, aux, shape)] = both(&circuit, i);
        assert_eq!(shape, up_shape, "{size}: challenge {i}'s counts");
        assert!(in_ == up_in, "{size}: challenge {i}'s inputs");
        let first = aux.iter().zip(&up_aux).position(|(a, b)| a != b);
        assert_eq!(
            first, None,
            "{size}: challenge {i}'s first differing aux value"
        );
    }
    Ok(())
}

#[test]
fn by_value_hashes_assign_what_the_circuit_assigns_at_small_sizes() {
    for size in [SECTOR_SIZE_2_KIB, SECTOR_SIZE_8_MIB, SECTOR_SIZE_512_MIB] {
        with_tree!(size, same_challenges, size).expect("challenges");
    }
}

/// Eleven layers, and the 32 and 64 GiB trees (sub- and top-tree arities).
#[test]
fn by_value_hashes_assign_what_the_circuit_assigns_at_32_and_64_gib() {
    for size in [SECTOR_SIZE_32_GIB, SECTOR_SIZE_64_GIB] {
        with_tree!(size, same_challenges, size).expect("challenges");
    }
}

/// The whole partition: parallel by value, plain and packed (within the room it is
/// charged), against one sequential run of the circuit.
#[test]
fn the_parallel_witness_is_the_sequential_one() {
    fn check<Tree: 'static + MerkleTreeTrait>(size: u64) -> crate::filecoin::Result<()> {
        let circuit = shape_circuit::<Tree>(size)?;
        let mut cs = WitnessCs::with_room(PRELUDE_ONE);
        Circuit::synthesize(circuit.clone(), &mut cs).expect("sequential");
        let shape = cs.shape();
        let (inputs, aux) = circuit.parallel_witness(shape).expect("parallel");
        assert!(inputs == cs.inputs, "{size}: inputs");
        assert!(aux == cs.aux, "{size}: aux");
        let (inputs, packed) = circuit.parallel_packed_witness(shape).expect("packed");
        assert!(inputs == cs.inputs, "{size}: packed inputs");
        assert!(packed.unpack() == cs.aux, "{size}: packed aux");
        // Within the room its partitions are charged (`packs_as_it_goes`).
        let room = crate::groth16::packed::streamed_room(std::mem::size_of_val(&cs.aux[..]) as u64);
        assert!(
            packed.bytes() <= room,
            "{size}: {} packed, room {room}",
            packed.bytes()
        );
        Ok(())
    }
    for size in [SECTOR_SIZE_2_KIB, SECTOR_SIZE_8_MIB] {
        with_tree!(size, check, size).expect("partition");
    }
}
