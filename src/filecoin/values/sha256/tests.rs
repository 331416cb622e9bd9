use bellperson::gadgets::boolean::AllocatedBit;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::Digest;

use super::*;
use crate::compiled::WitnessCs;

/// How the input's bits enter the hash.
#[derive(Clone, Copy)]
enum Kinds {
    Constants,
    Variables,
    /// Constants, variables and negated variables mixed at random.
    Mixed,
}

/// The same input built twice, into a system for the gadget and one for [`sha256`].
fn input(seed: u64, bytes: usize, kinds: Kinds) -> [(WitnessCs, Vec<Boolean>); 2] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let plan: Vec<(bool, u8)> = (0..bytes * 8)
        .map(|_| {
            let kind = match kinds {
                Kinds::Constants => 0,
                Kinds::Variables => 1,
                Kinds::Mixed => rng.gen_range(0..3),
            };
            (rng.gen(), kind)
        })
        .collect();
    std::array::from_fn(|_| {
        let mut cs = WitnessCs::default();
        let bits = plan
            .iter()
            .map(|&(v, kind)| match kind {
                0 => Ok(Boolean::Constant(v)),
                k => AllocatedBit::alloc(&mut cs, Some(v)).map(|b| match k {
                    1 => Boolean::Is(b),
                    _ => Boolean::Not(b),
                }),
            })
            .collect::<Result<Vec<_>, _>>()
            .expect("input bits");
        (cs, bits)
    })
}

/// Runs the gadget and the by-value hash on the same input; both systems must end equal.
fn same_as_gadget(seed: u64, bytes: usize, kinds: Kinds) -> Vec<Bit> {
    let [(mut gadget_cs, gadget_in), (mut cs, in_bits)] = input(seed, bytes, kinds);
    let expected = bellperson::gadgets::sha256::sha256(&mut gadget_cs, &gadget_in).expect("gadget");
    let bits: Vec<Bit> = in_bits
        .iter()
        .map(Bit::of)
        .collect::<Result<_, _>>()
        .expect("bits");
    let got = sha256(&mut cs, &bits).expect("by value");
    let expected: Vec<Bit> = expected
        .iter()
        .map(Bit::of)
        .collect::<Result<_, _>>()
        .expect("bits");
    assert_eq!(got, expected, "digest bits ({bytes} bytes)");
    assert_eq!(
        cs.constraints, gadget_cs.constraints,
        "constraints ({bytes} bytes)"
    );
    assert_eq!(
        cs.aux.len(),
        gadget_cs.aux.len(),
        "aux count ({bytes} bytes)"
    );
    assert!(cs.aux == gadget_cs.aux, "aux values ({bytes} bytes)");
    got
}

#[test]
fn assigns_what_the_gadget_assigns_for_variable_input() {
    for (seed, bytes) in [(1, 0), (2, 32), (3, 55), (4, 64), (5, 200)] {
        same_as_gadget(seed, bytes, Kinds::Variables);
    }
}

#[test]
fn assigns_what_the_gadget_assigns_for_mixed_and_negated_input() {
    for seed in 10..16 {
        same_as_gadget(seed, 64 + seed as usize, Kinds::Mixed);
    }
}

#[test]
fn a_constant_input_allocates_nothing_and_hashes_as_sha256() {
    let bytes = 96;
    let digest = same_as_gadget(7, bytes, Kinds::Constants);
    assert!(digest.iter().all(|b| matches!(b, Bit::Const(_))));
    // The input again, as bytes, through a plain SHA-256.
    let [(_, bits), _] = input(7, bytes, Kinds::Constants);
    let message: Vec<u8> = bits
        .chunks(8)
        .map(|byte| {
            byte.iter()
                .fold(0u8, |v, b| (v << 1) | u8::from(b.get_value() == Some(true)))
        })
        .collect();
    let want: Vec<bool> = sha2::Sha256::digest(&message)
        .iter()
        .flat_map(|byte| (0..8).rev().map(move |i| (byte >> i) & 1 == 1))
        .collect();
    let got: Vec<bool> = digest.iter().map(|b| b.value()).collect();
    assert_eq!(got, want);
}

#[test]
fn a_label_sized_input_matches_the_gadget() {
    // 39 words of 32 bytes: the PoRep label's input.
    same_as_gadget(21, 39 * 32, Kinds::Mixed);
}

#[test]
fn a_partial_byte_is_refused() {
    let mut cs = WitnessCs::default();
    assert!(sha256(&mut cs, &[Bit::Const(true); 7]).is_err());
}

#[test]
fn packs_the_first_254_bits_little_endian() {
    let mut bits = vec![Bit::Const(false); 256];
    bits[0] = Bit::Is(true);
    bits[3] = Bit::Not(false);
    bits[255] = Bit::Const(true); // beyond the capacity: dropped
    assert_eq!(pack(&bits), Fr::from(9u64));
    let reversed = reverse_bit_numbering(vec![Bit::Const(true)]);
    assert_eq!(reversed.len(), 8);
    assert_eq!(reversed[7], Bit::Const(true));
}
