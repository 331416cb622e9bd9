//! Multi-scalar multiplication on the CPU over affine bases, through blst's Pippenger.
//!
//! Groth16 witnesses are mostly 0 and 1: zero scalars are dropped, the bases of one scalars are
//! summed with blst's batched affine addition, and only the rest go through Pippenger. Bases are
//! copied into blst's layout once per call; nothing is converted from projective form.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rayon::prelude::*;

use crate::groth16::cs::Density;
use crate::groth16::error::{Error, Result};
use crate::groth16::packed::PackedScalars;

/// Scalars split by value: bases of ones (summed) and of the rest (multiplied).
struct Split<P> {
    ones: Vec<P>,
    rest: Vec<P>,
    rest_scalars: Vec<u8>,
}

/// The scalars of an MSM: plain, or packed as bits ([`PackedScalars`]).
#[derive(Clone, Copy, Debug)]
pub enum Scalars<'a> {
    /// One scalar per variable.
    Plain(&'a [Scalar]),
    /// The same, packed.
    Packed(&'a PackedScalars),
}

impl Scalars<'_> {
    /// Values held.
    pub fn len(&self) -> usize {
        match self {
            Scalars::Plain(s) => s.len(),
            Scalars::Packed(p) => p.len(),
        }
    }

    /// Whether none are held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f(i, value)` for every value that is not zero, in order.
    fn for_each_nonzero(&self, mut f: impl FnMut(usize, &Scalar)) {
        match self {
            Scalars::Plain(s) => s
                .iter()
                .enumerate()
                .filter(|(_, v)| !bool::from(v.is_zero()))
                .for_each(|(i, v)| f(i, v)),
            Scalars::Packed(p) => p.for_each_nonzero(f),
        }
    }
}

fn split<B: Copy + Send + Sync, P: Copy + Send>(
    bases: &[B],
    scalars: Scalars<'_>,
    density: Option<&Density>,
    raw: impl Fn(&B) -> P + Sync,
) -> Result<Split<P>> {
    let expected = density.map_or(scalars.len(), Density::count);
    if let Some(d) = density {
        if d.len() != scalars.len() {
            return Err(Error::LengthMismatch {
                what: "density vs scalars",
                left: d.len(),
                right: scalars.len(),
            });
        }
    }
    if bases.len() < expected {
        return Err(Error::LengthMismatch {
            what: "MSM bases vs used scalars",
            left: bases.len(),
            right: expected,
        });
    }
    // The base of variable i is the next one when i is present in the density: the present
    // variables before i are counted as the (sorted) nonzero values go by.
    let mut ones = Vec::new();
    let mut rest = Vec::new();
    let mut rest_values = Vec::new();
    let mut take = |base: usize, s: &Scalar| {
        if *s == Scalar::ONE {
            ones.push(raw(&bases[base]));
        } else {
            rest.push(raw(&bases[base]));
            rest_values.push(*s);
        }
    };
    match density {
        None => scalars.for_each_nonzero(|i, s| take(i, s)),
        Some(d) => {
            let (mut seen, mut present) = (0usize, 0usize);
            scalars.for_each_nonzero(|i, s| {
                present += (seen..i).filter(|j| d.get(*j)).count();
                seen = i + 1;
                if d.get(i) {
                    take(present, s);
                    present += 1;
                }
            });
        }
    }
    let rest_scalars: Vec<u8> = rest_values
        .par_iter()
        .flat_map_iter(|s| s.to_bytes_le())
        .collect();
    Ok(Split {
        ones,
        rest,
        rest_scalars,
    })
}

fn to_g1(p: blst_p1) -> G1Projective {
    G1Projective::from_raw_unchecked(p.x.into(), p.y.into(), p.z.into())
}

fn to_g2(p: blst_p2) -> G2Projective {
    G2Projective::from_raw_unchecked(p.x.into(), p.y.into(), p.z.into())
}

/// `Σ scalars[i]·bases[j(i)]` over the scalars whose variable is present in `density` (all when
/// `None`); `bases` holds one point per present variable, in order.
pub fn msm_g1(
    bases: &[G1Affine],
    scalars: &[Scalar],
    density: Option<&Density>,
) -> Result<G1Projective> {
    msm_g1_of(bases, Scalars::Plain(scalars), density)
}

/// [`msm_g1`] over plain or packed scalars.
pub fn msm_g1_of(
    bases: &[G1Affine],
    scalars: Scalars<'_>,
    density: Option<&Density>,
) -> Result<G1Projective> {
    let s = split(bases, scalars, density, |b: &G1Affine| -> blst_p1_affine {
        *b.as_ref()
    })?;
    let mut acc = G1Projective::identity();
    if !s.ones.is_empty() {
        acc += to_g1(s.ones.as_slice().add());
    }
    if !s.rest.is_empty() {
        acc += to_g1(s.rest.as_slice().mult(&s.rest_scalars, 255));
    }
    Ok(acc)
}

/// The G2 counterpart of [`msm_g1`].
pub fn msm_g2(
    bases: &[G2Affine],
    scalars: &[Scalar],
    density: Option<&Density>,
) -> Result<G2Projective> {
    msm_g2_of(bases, Scalars::Plain(scalars), density)
}

/// [`msm_g2`] over plain or packed scalars.
pub fn msm_g2_of(
    bases: &[G2Affine],
    scalars: Scalars<'_>,
    density: Option<&Density>,
) -> Result<G2Projective> {
    let s = split(bases, scalars, density, |b: &G2Affine| -> blst_p2_affine {
        *b.as_ref()
    })?;
    let mut acc = G2Projective::identity();
    if !s.ones.is_empty() {
        acc += to_g2(s.ones.as_slice().add());
    }
    if !s.rest.is_empty() {
        acc += to_g2(s.rest.as_slice().mult(&s.rest_scalars, 255));
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::Curve;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn naive(bases: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
        bases.iter().zip(scalars).map(|(b, s)| *b * s).sum()
    }

    #[test]
    fn g1_matches_naive_on_mixed_scalars_with_density() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 300;
        let all: Vec<G1Affine> = (0..n)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        let scalars: Vec<Scalar> = (0..n)
            .map(|i| match i % 5 {
                0 => Scalar::ZERO,
                1 | 2 => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect();
        assert_eq!(msm_g1(&all, &scalars, None).unwrap(), naive(&all, &scalars));

        let mut d = Density::default();
        for i in 0..n {
            d.push();
            if rng.gen_bool(0.5) {
                d.mark(i);
            }
        }
        let bases: Vec<G1Affine> = all[..d.count()].to_vec();
        let used = d.filter(&scalars);
        assert_eq!(
            msm_g1(&bases, &scalars, Some(&d)).unwrap(),
            naive(&bases, &used)
        );
    }

    #[test]
    fn g2_matches_naive() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let bases: Vec<G2Affine> = (0..40)
            .map(|_| G2Projective::random(&mut rng).to_affine())
            .collect();
        let scalars: Vec<Scalar> = (0..40)
            .map(|i| {
                if i % 3 == 0 {
                    Scalar::ONE
                } else {
                    Scalar::random(&mut rng)
                }
            })
            .collect();
        let want: G2Projective = bases.iter().zip(&scalars).map(|(b, s)| *b * s).sum();
        assert_eq!(msm_g2(&bases, &scalars, None).unwrap(), want);
    }

    #[test]
    fn short_bases_are_an_error() {
        let bases = vec![G1Projective::generator().to_affine(); 2];
        let scalars = vec![Scalar::ONE; 3];
        assert!(matches!(
            msm_g1(&bases, &scalars, None),
            Err(Error::LengthMismatch { .. })
        ));
    }
}
