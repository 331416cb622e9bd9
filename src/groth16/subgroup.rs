//! Batched prime-order subgroup checks for many curve points at once.
//!
//! Checking one point (`is_torsion_free`) costs about as much as a 128-bit scalar multiplication;
//! a proving key holds millions. Here the points are spread over `B` random buckets with random
//! signs (a keyed hash decides both), each bucket is summed with one mixed addition per point,
//! and only the `B` sums are checked. A point outside the subgroup has a torsion component of
//! order at least 3 (both cofactors of BLS12-381 are odd); alone in its bucket it always shows,
//! and a bucket holding several such points cancels with probability at most 1/2 over the signs.
//! So a pass misses only when every bad point shares its bucket with another bad point and all
//! those buckets cancel: at most about 1/(2B). Passes with fresh keys are repeated until the miss
//! probability is below 2^-[`SECURITY_BITS`](crate::groth16::subgroup::SECURITY_BITS). When a bucket fails, its points are checked one by
//! one so the error names the bad point.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective};
use group::{Curve, Group};
use rayon::prelude::*;

/// The probability that a set holding a point outside the subgroup passes is below 2^-this.
pub const SECURITY_BITS: u32 = 64;
/// Below this many points each point is checked on its own.
const MIN_BATCH: usize = 1 << 14;
/// Points per bucket on average: balances the sums (one addition per point) against the checks
/// of the bucket sums (each costs a few hundred additions).
const POINTS_PER_BUCKET: usize = 256;
/// Points summed by one task before its buckets are merged.
const TASK_POINTS: usize = 1 << 16;

/// A curve whose affine points can be checked one by one and summed into buckets.
pub trait Subgroup: Copy + Send + Sync {
    /// The projective form used for sums.
    type Sum: Group + Curve<AffineRepr = Self> + Send + Sync + for<'a> std::ops::AddAssign<&'a Self>;
    /// Whether this one point is in the prime-order subgroup.
    fn in_subgroup(&self) -> bool;
    /// The point's negation.
    fn negated(&self) -> Self;
}

impl Subgroup for G1Affine {
    type Sum = G1Projective;
    fn in_subgroup(&self) -> bool {
        bool::from(self.is_torsion_free())
    }
    fn negated(&self) -> Self {
        -*self
    }
}

impl Subgroup for G2Affine {
    type Sum = G2Projective;
    fn in_subgroup(&self) -> bool {
        bool::from(self.is_torsion_free())
    }
    fn negated(&self) -> Self {
        -*self
    }
}

/// The index of a point outside the prime-order subgroup, if the batched test finds one (see the
/// module docs for the miss probability). Points must already be on the curve.
pub fn first_outside<P: Subgroup>(points: &[P]) -> Option<usize> {
    if points.len() < MIN_BATCH {
        return first_outside_each(points, |_| true);
    }
    let buckets = (points.len() / POINTS_PER_BUCKET).max(2);
    // Each pass misses with probability at most 1/(2·buckets).
    let bits_per_pass = (2.0 * buckets as f64).log2().floor().max(1.0) as u32;
    let passes = SECURITY_BITS.div_ceil(bits_per_pass);
    for _ in 0..passes {
        let key = RandomState::new();
        if let Some(bucket) = failing_bucket(points, buckets, &key) {
            // Name the culprit: check the bucket's points one by one (then all, which cannot be
            // needed: a sum outside the subgroup has a summand outside it).
            return first_outside_each(points, |i| slot(&key, i, buckets).0 == bucket)
                .or_else(|| first_outside_each(points, |_| true));
        }
    }
    None
}

/// The first point (among those `select` keeps) outside the subgroup, checked one by one.
fn first_outside_each<P: Subgroup>(
    points: &[P],
    select: impl Fn(usize) -> bool + Sync,
) -> Option<usize> {
    points
        .par_iter()
        .enumerate()
        .filter(|(i, _)| select(*i))
        .find_first(|(_, p)| !p.in_subgroup())
        .map(|(i, _)| i)
}

/// Bucket and sign of point `i` under `key`.
fn slot(key: &RandomState, i: usize, buckets: usize) -> (usize, bool) {
    let h = key.hash_one(i as u64);
    ((h >> 1) as usize % buckets, h & 1 == 1)
}

/// One pass: a bucket whose signed sum is outside the subgroup, if any.
fn failing_bucket<P: Subgroup>(points: &[P], buckets: usize, key: &RandomState) -> Option<usize> {
    let sums = points
        .par_chunks(TASK_POINTS)
        .enumerate()
        .map(|(c, chunk)| {
            let mut acc = vec![P::Sum::identity(); buckets];
            for (j, p) in chunk.iter().enumerate() {
                let (b, negate) = slot(key, c * TASK_POINTS + j, buckets);
                if negate {
                    acc[b] += &p.negated();
                } else {
                    acc[b] += p;
                }
            }
            acc
        })
        .reduce_with(|mut a, b| {
            for (x, y) in a.iter_mut().zip(&b) {
                *x += *y;
            }
            a
        })?;
    sums.par_iter()
        .position_first(|s| !s.to_affine().in_subgroup())
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar;
    use ff::Field;
    use rand::SeedableRng;

    fn g1_points(n: usize) -> Vec<G1Affine> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let g = G1Projective::generator() * Scalar::random(&mut rng);
        let proj: Vec<G1Projective> = (0..n).map(|i| g * Scalar::from(i as u64 + 1)).collect();
        let mut out = vec![G1Affine::default(); n];
        G1Projective::batch_normalize(&proj, &mut out);
        out
    }

    /// A point on E(Fp) outside G1: x = 4 gives y² = 68, a square mod p with y from the
    /// uncompressed encoding of the point found by trying small x.
    fn g1_outside() -> G1Affine {
        for x in 1u64.. {
            let mut bytes = [0u8; 48];
            bytes[40..].copy_from_slice(&x.to_be_bytes());
            bytes[0] |= 0x80; // compressed flag
            let mut enc = bytes;
            // Try both signs of y; from_compressed_unchecked skips the subgroup check.
            for sign in [0u8, 0x20] {
                enc[0] = bytes[0] | sign;
                let p: Option<G1Affine> = G1Affine::from_compressed_unchecked(&enc).into();
                if let Some(p) = p {
                    if bool::from(p.is_on_curve()) && !p.in_subgroup() {
                        return p;
                    }
                }
            }
        }
        unreachable!("some small x gives a point off the subgroup")
    }

    #[test]
    fn good_points_pass() {
        assert_eq!(first_outside(&g1_points(MIN_BATCH * 2)), None);
        assert_eq!(first_outside(&g1_points(100)), None);
    }

    #[test]
    fn one_bad_point_is_found_and_named() {
        let mut pts = g1_points(MIN_BATCH * 2 + 5);
        let bad = g1_outside();
        assert!(bool::from(bad.is_on_curve()));
        pts[12_345] = bad;
        assert_eq!(first_outside(&pts), Some(12_345));
    }

    #[test]
    fn a_cancelling_pair_is_found() {
        // P + T and P − T sum to 2P: a plain unsigned sum would miss them.
        let mut pts = g1_points(MIN_BATCH * 2);
        let bad = g1_outside();
        let t = G1Projective::from(bad);
        pts[10] = (G1Projective::from(pts[10]) + t).to_affine();
        pts[11] = (G1Projective::from(pts[11]) - t).to_affine();
        let found = first_outside(&pts);
        assert!(matches!(found, Some(10) | Some(11)), "found {found:?}");
    }

    #[test]
    fn small_sets_are_checked_point_by_point() {
        let mut pts = g1_points(50);
        pts[49] = g1_outside();
        assert_eq!(first_outside(&pts), Some(49));
    }
}
