//! A witness packed as bits proves exactly what the plain one does: the same G1 sums, the same
//! B_G2 sum, and with the same blinding the byte-identical proof, which verifies while a wrong
//! public input fails. The MSMs over packed scalars match the plain ones with and without a
//! density, on PoRep-like values (mostly 0 and 1) and on random ones.

use baton::circuits::{KnownCircuit, Synthetic};
use baton::groth16::backend::CpuBackend;
use baton::groth16::cs::Density;
use baton::groth16::msm::{msm_g1, msm_g1_of, msm_g2, msm_g2_of, Scalars};
use baton::groth16::packed::{packing_room, PackedScalars};
use baton::groth16::prover::{self, Witness};
use baton::{PreparedVerifyingKey, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const CONSTRAINTS: usize = 1 << 12;

fn packed_copy(w: &Witness) -> Witness {
    let mut p = Witness {
        inputs: w.inputs.clone(),
        aux: w.aux.clone(),
        packed: None,
        a_aux_density: w.a_aux_density.clone(),
        b_input_density: w.b_input_density.clone(),
        b_aux_density: w.b_aux_density.clone(),
    };
    let plain = (w.aux.len() * 32) as u64;
    let mix = baton::groth16::packed::Mix::of(&w.aux);
    assert!(
        mix.packed_bytes() <= packing_room(plain),
        "{mix:?}: {} bytes packed, room {}",
        mix.packed_bytes(),
        packing_room(plain)
    );
    assert!(p.pack(packing_room(plain)), "a PoRep-like witness packs");
    assert!(p.aux.is_empty() && !p.is_plain());
    assert!(p.aux_bytes() * 4 <= plain, "{} of {plain}", p.aux_bytes());
    p
}

#[test]
fn a_packed_witness_gives_the_byte_identical_proof() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let pk =
        baton::generate_random_parameters(Synthetic::new(CONSTRAINTS, 0), &mut rng).expect("setup");
    let pvk = PreparedVerifyingKey::new(&pk.vk);
    for seed in 1..3 {
        let circuit = Synthetic::new(CONSTRAINTS, seed);
        let (mut abc, plain) = prover::synthesize(circuit.clone(), &pk).expect("synthesize");
        let packed = packed_copy(&plain);
        let h = prover::compute_h(&CpuBackend, &mut abc).expect("h");
        let g1 = prover::g1_msms(&CpuBackend, &pk, &plain, &h).expect("plain g1");
        let g1p = prover::g1_msms(&CpuBackend, &pk, &packed, &h).expect("packed g1");
        assert_eq!((g1.h, g1.l, g1.a, g1.b_g1), (g1p.h, g1p.l, g1p.a, g1p.b_g1));
        let b = prover::b_g2_msm(&CpuBackend, &pk, &plain).expect("plain b_g2");
        let bp = prover::b_g2_msm(&CpuBackend, &pk, &packed).expect("packed b_g2");
        assert_eq!(b, bp);
        let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
        let proof = prover::assemble(&pk.vk, &g1, b, r, s).expect("plain proof");
        let proof_p = prover::assemble(&pk.vk, &g1p, bp, r, s).expect("packed proof");
        assert_eq!(proof.to_bytes(), proof_p.to_bytes(), "seed {seed}");
        let inputs = circuit.public_inputs();
        baton::verify(&pvk, &proof_p, &inputs).expect("the packed witness's proof verifies");
        let mut wrong = inputs.clone();
        wrong[0] += Scalar::ONE;
        assert!(baton::verify(&pvk, &proof_p, &wrong).is_err());
        // Expanding gives the plain values back, and shrinking drops them again.
        let mut expanded = packed;
        expanded.expand();
        assert!(expanded.is_plain());
        assert_eq!(expanded.aux, plain.aux);
        expanded.shrink();
        assert!(expanded.aux.is_empty() && expanded.aux_len() == plain.aux.len());
        // Into a kept vector, longer or shorter than the witness: the same values.
        for len in [3, plain.aux.len() + 100] {
            expanded.expand_into(vec![Scalar::ONE; len]);
            assert_eq!(expanded.aux, plain.aux, "kept vector of {len}");
            let kept = expanded.take_expanded();
            assert_eq!(kept.len(), plain.aux.len());
            assert!(!expanded.is_plain());
        }
    }
}

#[test]
fn a_witness_that_does_not_pack_small_stays_plain() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let aux: Vec<Scalar> = (0..1000).map(|_| Scalar::random(&mut rng)).collect();
    let mut w = Witness {
        aux: aux.clone(),
        ..Witness::default()
    };
    assert!(!w.pack(packing_room(32_000)));
    assert!(w.packed.is_none() && w.aux == aux);
}

fn values(n: usize, dense_pct: u32, rng: &mut ChaCha8Rng) -> Vec<Scalar> {
    (0..n)
        .map(|_| match rng.gen_range(0..100) {
            x if x < dense_pct => Scalar::random(&mut *rng),
            x if x % 2 == 0 => Scalar::ONE,
            _ => Scalar::ZERO,
        })
        .collect()
}

fn density(n: usize, rng: &mut ChaCha8Rng) -> Density {
    let mut d = Density::default();
    for i in 0..n {
        d.push();
        if rng.gen_bool(0.6) {
            d.mark(i);
        }
    }
    d
}

#[test]
fn msms_over_packed_scalars_equal_the_plain_ones() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let n = 3000;
    let g1: Vec<_> = (0..n)
        .map(|_| blstrs::G1Projective::random(&mut rng).to_affine())
        .collect();
    let g2: Vec<_> = (0..n)
        .map(|_| blstrs::G2Projective::random(&mut rng).to_affine())
        .collect();
    for dense_pct in [0, 3, 50, 100] {
        let s = values(n, dense_pct, &mut rng);
        let p = PackedScalars::pack(&s);
        let d = density(n, &mut rng);
        for den in [None, Some(&d)] {
            assert_eq!(
                msm_g1(&g1, &s, den).unwrap(),
                msm_g1_of(&g1, Scalars::Packed(&p), den).unwrap(),
                "G1, {dense_pct}% dense, density {}",
                den.is_some()
            );
            assert_eq!(
                msm_g2(&g2, &s, den).unwrap(),
                msm_g2_of(&g2, Scalars::Packed(&p), den).unwrap(),
                "G2, {dense_pct}% dense, density {}",
                den.is_some()
            );
        }
    }
    // A density of another length is refused, packed as plain.
    let p = PackedScalars::pack(&values(10, 5, &mut rng));
    let short = density(9, &mut rng);
    assert!(msm_g1_of(&g1, Scalars::Packed(&p), Some(&short)).is_err());
}
