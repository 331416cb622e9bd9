//! Seeded sample inputs for the GPU conformance tests and benchmarks (feature `test-util`):
//! cheap distinct or tiled G1 bases, dense and PoRep-like scalars (mostly 0 and 1), and whole
//! sample partitions (a/b/c, a witness with densities, a key of their exact shape).

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

const CHUNK: usize = 1 << 14;

fn random_points(n: usize, seed: u64) -> Vec<G1Projective> {
    (0..n)
        .into_par_iter()
        .map(|i| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20) ^ 0xba5e);
            G1Projective::random(&mut rng)
        })
        .collect()
}

fn normalize(proj: &[G1Projective]) -> Vec<G1Affine> {
    let mut out = vec![G1Affine::default(); proj.len()];
    proj.par_chunks(CHUNK)
        .zip(out.par_chunks_mut(CHUNK))
        .for_each(|(p, o)| G1Projective::batch_normalize(p, o));
    out
}

/// n distinct points `A[i mod 1024] + B[i / 1024]` for random A and B: cheap to make at 2^26,
/// and any MSM over them reduces to one over A and B ([`DistinctBases::msm_check`]).
pub struct DistinctBases {
    /// The 1024 points A.
    pub a: Vec<G1Affine>,
    /// The ⌈n/1024⌉ points B.
    pub b: Vec<G1Affine>,
    /// The n points.
    pub points: Vec<G1Affine>,
}

impl DistinctBases {
    /// n points from `seed`.
    pub fn new(n: usize, seed: u64) -> Self {
        let a = normalize(&random_points(1024, seed));
        let b = normalize(&random_points(n.div_ceil(1024).max(1), seed ^ 0xb));
        let proj: Vec<G1Projective> = (0..n)
            .into_par_iter()
            .map(|i| G1Projective::from(b[i / 1024]) + a[i % 1024])
            .collect();
        DistinctBases {
            points: normalize(&proj),
            a,
            b,
        }
    }

    /// `Σ sᵢ·points[i]` computed on the CPU through A and B (1024 + n/1024 points).
    pub fn msm_check(&self, scalars: &[Scalar]) -> crate::Result<G1Projective> {
        let sa = fold_tiled(scalars, 1024);
        let sb: Vec<Scalar> = scalars.par_chunks(1024).map(|c| c.iter().sum()).collect();
        Ok(crate::groth16::msm::msm_g1(&self.a, &sa, None)?
            + crate::groth16::msm::msm_g1(&self.b, &sb, None)?)
    }
}

/// n distinct random-looking points (see [`DistinctBases`]).
pub fn distinct_bases(n: usize, seed: u64) -> Vec<G1Affine> {
    DistinctBases::new(n, seed).points
}

/// n points repeating `period` random ones (`bases[i] = P[i mod period]`).
pub fn tiled_bases(n: usize, period: usize, seed: u64) -> Vec<G1Affine> {
    let p = distinct_bases(period.max(1), seed);
    (0..n).into_par_iter().map(|i| p[i % p.len()]).collect()
}

/// The scalars an MSM over [`tiled_bases`] reduces to: `Σ_{i ≡ j mod period} s_i` for each j.
pub fn fold_tiled(scalars: &[Scalar], period: usize) -> Vec<Scalar> {
    let period = period.max(1);
    scalars
        .par_chunks(period)
        .fold(
            || vec![Scalar::ZERO; period],
            |mut acc, chunk| {
                for (a, s) in acc.iter_mut().zip(chunk) {
                    *a += s;
                }
                acc
            },
        )
        .reduce(
            || vec![Scalar::ZERO; period],
            |mut x, y| {
                for (a, b) in x.iter_mut().zip(&y) {
                    *a += b;
                }
                x
            },
        )
}

fn scalars_with(n: usize, seed: u64, f: impl Fn(&mut ChaCha8Rng) -> Scalar + Sync) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(k, c)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((k as u64) << 24) ^ 0x5ca1);
        for s in c.iter_mut() {
            *s = f(&mut rng);
        }
    });
    out
}

/// n uniformly random scalars.
pub fn dense_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    scalars_with(n, seed, |r| Scalar::random(r))
}

/// n PoRep-like scalars: 45% zero, 45% one, 10% random.
pub fn porep_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    scalars_with(n, seed, |r| match r.gen_range(0..100) {
        0..=44 => Scalar::ZERO,
        45..=89 => Scalar::ONE,
        _ => Scalar::random(r),
    })
}

/// n scalars of which 70 % are one random value (seeded) and the rest PoRep-like: in every
/// window the bucket of that value's digit holds most of the entries, a bucket that crosses
/// thousands of accumulation segments (the long buckets `msm_chains` sums in a tree).
pub fn repeated_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    let x = Scalar::random(ChaCha8Rng::seed_from_u64(seed ^ 0x7e9));
    scalars_with(n, seed, move |r| match r.gen_range(0..100) {
        0..=69 => x,
        70..=79 => Scalar::random(r),
        80..=89 => Scalar::ONE,
        _ => Scalar::ZERO,
    })
}

/// `count` random G2 points (for tiling: G2 points are costly to make one by one).
pub fn g2_points(count: usize, seed: u64) -> Vec<G2Affine> {
    let proj: Vec<G2Projective> = (0..count)
        .into_par_iter()
        .map(|i| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 20) ^ 0x92);
            G2Projective::random(&mut rng)
        })
        .collect();
    let mut out = vec![G2Affine::default(); count];
    G2Projective::batch_normalize(&proj, &mut out);
    out
}

/// a, b, c of `len` PoRep-like values each (c = a·b, as a satisfied circuit gives).
pub fn sample_abc(len: usize, seed: u64) -> crate::groth16::prover::Abc {
    let a = porep_scalars(len, seed);
    let b = porep_scalars(len, seed ^ 0xb);
    let c = a.par_iter().zip(&b).map(|(x, y)| x * y).collect();
    crate::groth16::prover::Abc { a, b, c }
}

/// A density over n variables marking each with probability p (seeded).
pub fn random_density(n: usize, p: f64, seed: u64) -> crate::groth16::cs::Density {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut d = crate::groth16::cs::Density::default();
    for i in 0..n {
        d.push();
        if rng.gen_bool(p) {
            d.mark(i);
        }
    }
    d
}

/// A witness of `inputs` public inputs (the first is the constant one) and `aux` PoRep-like
/// private values, each aux kept by the A and by the B density with probability `p` (inputs
/// by B with probability `p` too).
pub fn sample_witness(
    inputs: usize,
    aux: usize,
    p: f64,
    seed: u64,
) -> crate::groth16::prover::Witness {
    let s = seed ^ 0xde45;
    let (a_aux_density, b_aux_density, b_input_density) = (
        random_density(aux, p, s),
        random_density(aux, p, s ^ 0xb),
        random_density(inputs, p, s ^ 0x1),
    );
    let mut ins = dense_scalars(inputs, seed ^ 0x1);
    if let Some(one) = ins.first_mut() {
        *one = Scalar::ONE;
    }
    crate::groth16::prover::Witness {
        inputs: ins,
        aux: porep_scalars(aux, seed ^ 0x2),
        packed: None,
        a_aux_density,
        b_input_density,
        b_aux_density,
    }
}

/// A key of the exact shape of a partition of domain `n` with witness `w`, its points `g1`
/// and `g2` tiled (at least one each). The MSM work is a real proof's; the proofs do not
/// verify (no setup made these points).
pub fn shaped_key(
    n: usize,
    w: &crate::groth16::prover::Witness,
    g1: &[G1Affine],
    g2: &[G2Affine],
) -> crate::groth16::key::ProvingKey {
    let b = w.b_input_density.count() + w.b_aux_density.count();
    let lens = [
        n - 1,
        w.aux_len(),
        w.inputs.len() + w.a_aux_density.count(),
        b,
    ];
    let tile = |k: usize| -> Vec<G1Affine> {
        (0..lens[k])
            .into_par_iter()
            .map(|i| g1[i % g1.len()])
            .collect()
    };
    let b_g2 = (0..b).into_par_iter().map(|i| g2[i % g2.len()]).collect();
    let p = g1[0];
    let vk = crate::groth16::key::VerifyingKey {
        alpha_g1: p,
        beta_g1: p,
        beta_g2: g2[0],
        gamma_g2: g2[0],
        delta_g1: p,
        delta_g2: g2[0],
        ic: vec![p; w.inputs.len()],
    };
    crate::groth16::key::ProvingKey::from_parts(vk, tile(0), tile(1), tile(2), tile(3), b_g2)
}

/// Affine form of a projective result (for readable assertion messages).
pub fn affine(p: &G1Projective) -> G1Affine {
    p.to_affine()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msm_check_matches_direct_msm() {
        let d = DistinctBases::new(3000, 1);
        let mut s = porep_scalars(3000, 2);
        s[10] = Scalar::from(5u64);
        let direct = crate::groth16::msm::msm_g1(&d.points, &s, None).unwrap();
        assert_eq!(d.msm_check(&s).unwrap(), direct);
        let t = tiled_bases(3000, 7, 3);
        let folded = fold_tiled(&s, 7);
        assert_eq!(
            crate::groth16::msm::msm_g1(&t[..7], &folded, None).unwrap(),
            crate::groth16::msm::msm_g1(&t, &s, None).unwrap()
        );
    }
}
