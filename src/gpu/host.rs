//! Host-side helpers of the CUDA backend that need no device: byte views of blstrs values, the
//! groups the MSM kernels serve, root-of-unity tables and the window combination (XYZZ →
//! Jacobian, Horner). Everything here is pure and tested on the CPU.

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{Field, PrimeField};
use group::Group;

/// u64 limbs per Fr element (blst_fr, Montgomery).
pub const FR_LIMBS: usize = 4;
/// u64 limbs per affine G1 point (blst_p1_affine).
pub const AFFINE_LIMBS: usize = 12;
/// u64 limbs per XYZZ point (`g1_xyzz`: X, Y, ZZ, ZZZ).
pub const XYZZ_LIMBS: usize = 24;
/// u64 limbs per affine G2 point (blst_p2_affine).
pub const G2_AFFINE_LIMBS: usize = 24;
/// u64 limbs per XYZZ G2 point (`g2_xyzz`).
pub const G2_XYZZ_LIMBS: usize = 48;

/// The limbs of Fr elements, as the kernels read them.
pub fn scalars_as_u64(v: &[Scalar]) -> &[u64] {
    const _: () = assert!(std::mem::size_of::<Scalar>() == 8 * FR_LIMBS);
    const _: () = assert!(std::mem::align_of::<Scalar>() == std::mem::align_of::<u64>());
    // SAFETY: blstrs `Scalar` is repr(transparent) over blst_fr, a repr(C) `[u64; 4]` (size and
    // alignment asserted above), so a slice of them is a valid slice of 4·len u64.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u64>(), v.len() * FR_LIMBS) }
}

/// Mutable limbs of Fr elements (any bit pattern written must be a reduced Montgomery value).
pub fn scalars_as_u64_mut(v: &mut [Scalar]) -> &mut [u64] {
    // SAFETY: as in `scalars_as_u64`; the device only writes reduced field elements.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u64>(), v.len() * FR_LIMBS) }
}

/// The limbs of affine G1 points (infinity is all zero, as in blst and the kernels).
pub fn affine_as_u64(v: &[G1Affine]) -> &[u64] {
    const _: () = assert!(std::mem::size_of::<G1Affine>() == 8 * AFFINE_LIMBS);
    const _: () = assert!(std::mem::align_of::<G1Affine>() == std::mem::align_of::<u64>());
    // SAFETY: blstrs `G1Affine` is repr(transparent) over blst_p1_affine, a repr(C) pair of
    // `[u64; 6]` (size and alignment asserted above).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u64>(), v.len() * AFFINE_LIMBS) }
}

/// The limbs of affine G2 points (infinity is all zero, as in blst and the kernels).
pub fn g2_affine_as_u64(v: &[G2Affine]) -> &[u64] {
    const _: () = assert!(std::mem::size_of::<G2Affine>() == 8 * G2_AFFINE_LIMBS);
    const _: () = assert!(std::mem::align_of::<G2Affine>() == std::mem::align_of::<u64>());
    // SAFETY: blstrs `G2Affine` is repr(transparent) over blst_p2_affine, a repr(C) pair of
    // blst_fp2, each a repr(C) pair of `[u64; 6]` (size and alignment asserted above).
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u64>(), v.len() * G2_AFFINE_LIMBS) }
}

/// A group the MSM kernels serve: its device layouts and the host half of an MSM (XYZZ window
/// sums back to blstrs points).
pub trait GpuGroup {
    /// The affine points of the proving key.
    type Affine: Copy + Send + Sync + 'static;
    /// The projective result.
    type Proj: Group;
    /// u64 limbs per affine point.
    const AFFINE_LIMBS: usize;
    /// u64 limbs per XYZZ point.
    const XYZZ_LIMBS: usize;
    /// Its name in reports ("G1", "G2").
    const NAME: &'static str;
    /// The limbs of affine points as the kernels read them.
    fn affine_limbs(v: &[Self::Affine]) -> &[u64];
    /// One XYZZ point as a blstrs projective point.
    fn xyzz_to_projective(limbs: &[u64]) -> Self::Proj;
}

/// G1 (kernels without suffix).
pub struct G1;
/// G2 (kernels with the `_g2` suffix).
pub struct G2;

impl GpuGroup for G1 {
    type Affine = G1Affine;
    type Proj = G1Projective;
    const AFFINE_LIMBS: usize = AFFINE_LIMBS;
    const XYZZ_LIMBS: usize = XYZZ_LIMBS;
    const NAME: &'static str = "G1";
    fn affine_limbs(v: &[G1Affine]) -> &[u64] {
        affine_as_u64(v)
    }
    fn xyzz_to_projective(limbs: &[u64]) -> G1Projective {
        xyzz_to_projective(limbs)
    }
}

impl GpuGroup for G2 {
    type Affine = G2Affine;
    type Proj = G2Projective;
    const AFFINE_LIMBS: usize = G2_AFFINE_LIMBS;
    const XYZZ_LIMBS: usize = G2_XYZZ_LIMBS;
    const NAME: &'static str = "G2";
    fn affine_limbs(v: &[G2Affine]) -> &[u64] {
        g2_affine_as_u64(v)
    }
    fn xyzz_to_projective(limbs: &[u64]) -> G2Projective {
        xyzz_to_projective_g2(limbs)
    }
}

/// Fr limbs of one element.
pub fn scalar_limbs(s: &Scalar) -> [u64; FR_LIMBS] {
    let mut out = [0u64; FR_LIMBS];
    out.copy_from_slice(scalars_as_u64(std::slice::from_ref(s)));
    out
}

/// `[x, x², x⁴, …]`: the 32 repeated squares `fr_powers` reads (`sq[b] = x^(2^b)`).
pub fn square_table(x: Scalar) -> Vec<u64> {
    let mut out = Vec::with_capacity(32 * FR_LIMBS);
    let mut p = x;
    for _ in 0..32 {
        out.extend_from_slice(&scalar_limbs(&p));
        p = p.square();
    }
    out
}

/// The primitive 2^log-th root of unity.
pub fn root_of_unity(log: u32) -> Scalar {
    let mut w = Scalar::ROOT_OF_UNITY;
    for _ in log..Scalar::S {
        w = w.square();
    }
    w
}

/// An XYZZ point (x = X/ZZ, y = Y/ZZZ, ZZ = 0 is infinity) as a blstrs Jacobian point:
/// Xj = X·ZZ·ZZZ², Yj = Y·ZZ³·ZZZ², Zj = ZZ·ZZZ.
pub fn xyzz_to_projective(limbs: &[u64]) -> G1Projective {
    let fp = |k: usize| fp_at(limbs, k);
    match xyzz_to_jacobian([fp(0), fp(1), fp(2), fp(3)]) {
        Some((x, y, z)) => G1Projective::from_raw_unchecked(x, y, z),
        None => G1Projective::identity(),
    }
}

/// The G2 counterpart of [`xyzz_to_projective`] (same formulas over Fp2; blst's G2 points are
/// Jacobian too).
pub fn xyzz_to_projective_g2(limbs: &[u64]) -> G2Projective {
    let fp2 = |k: usize| Fp2::new(fp_at(limbs, 2 * k), fp_at(limbs, 2 * k + 1));
    match xyzz_to_jacobian([fp2(0), fp2(1), fp2(2), fp2(3)]) {
        Some((x, y, z)) => G2Projective::from_raw_unchecked(x, y, z),
        None => G2Projective::identity(),
    }
}

/// The k-th Fp (6 limbs) of `limbs`, zero where `limbs` is too short.
fn fp_at(limbs: &[u64], k: usize) -> Fp {
    let mut l = [0u64; 6];
    if let Some(src) = limbs.get(6 * k..6 * k + 6) {
        l.copy_from_slice(src);
    }
    Fp::from_raw_unchecked(l)
}

/// Jacobian coordinates of an XYZZ point over any coordinate field; `None` for infinity.
fn xyzz_to_jacobian<F: Field>([x, y, zz, zzz]: [F; 4]) -> Option<(F, F, F)> {
    if bool::from(zz.is_zero()) {
        return None;
    }
    let zzz2 = zzz.square();
    let zz_zzz2 = zz * zzz2;
    Some((x * zz_zzz2, y * zz.square() * zz_zzz2, zz * zzz))
}

/// `Σ_w 2^(c·w)·out[w] + out[nwin]` from the `nwin + 1` XYZZ window sums of one MSM of group `G`.
pub fn combine_windows<G: GpuGroup>(out: &[u64], c: u32) -> G::Proj {
    let points: Vec<G::Proj> = out
        .chunks_exact(G::XYZZ_LIMBS)
        .map(G::xyzz_to_projective)
        .collect();
    let Some((ones, windows)) = points.split_last() else {
        return G::Proj::identity();
    };
    let mut acc = G::Proj::identity();
    for w in windows.iter().rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += w;
    }
    acc + ones
}

#[cfg(test)]
mod tests {
    use super::*;
    use group::prime::PrimeCurveAffine;
    use group::Curve;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn fp_limbs(x: &Fp) -> [u64; 6] {
        let b: blst::blst_fp = (*x).into();
        b.l
    }

    fn to_xyzz(p: &G1Projective, z: Fp) -> Vec<u64> {
        let a = p.to_affine();
        if bool::from(a.is_identity()) {
            return vec![0; XYZZ_LIMBS];
        }
        let (zz, zzz) = (z.square(), z.square() * z);
        let mut out = Vec::new();
        for v in [a.x() * zz, a.y() * zzz, zz, zzz] {
            out.extend_from_slice(&fp_limbs(&v));
        }
        out
    }

    #[test]
    fn xyzz_roundtrip_and_horner() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let p = G1Projective::random(&mut rng);
        let z = Fp::random(&mut rng);
        assert_eq!(xyzz_to_projective(&to_xyzz(&p, z)), p);
        assert!(bool::from(
            xyzz_to_projective(&[0; XYZZ_LIMBS]).is_identity()
        ));
        // Three windows of c = 5 plus the ones sum.
        let pts: Vec<G1Projective> = (0..4).map(|_| G1Projective::random(&mut rng)).collect();
        let out: Vec<u64> = pts
            .iter()
            .flat_map(|p| to_xyzz(p, Fp::random(&mut rng)))
            .collect();
        let want = pts[0] + pts[1] * Scalar::from(32u64) + pts[2] * Scalar::from(1024u64) + pts[3];
        assert_eq!(combine_windows::<G1>(&out, 5), want);
    }

    #[test]
    fn g2_xyzz_roundtrip_and_horner() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let to_xyzz = |p: &G2Projective, z: Fp2| -> Vec<u64> {
            let a = p.to_affine();
            let (zz, zzz) = (z.square(), z.square() * z);
            let mut out = Vec::new();
            for v in [a.x() * zz, a.y() * zzz, zz, zzz] {
                out.extend_from_slice(&fp_limbs(&v.c0()));
                out.extend_from_slice(&fp_limbs(&v.c1()));
            }
            out
        };
        let p = G2Projective::random(&mut rng);
        let z = Fp2::random(&mut rng);
        assert_eq!(xyzz_to_projective_g2(&to_xyzz(&p, z)), p);
        assert!(bool::from(
            xyzz_to_projective_g2(&[0; G2_XYZZ_LIMBS]).is_identity()
        ));
        let pts: Vec<G2Projective> = (0..3).map(|_| G2Projective::random(&mut rng)).collect();
        let out: Vec<u64> = pts
            .iter()
            .flat_map(|p| to_xyzz(p, Fp2::random(&mut rng)))
            .collect();
        let want = pts[0] + pts[1] * Scalar::from(1u64 << 7) + pts[2];
        assert_eq!(combine_windows::<G2>(&out, 7), want);
        assert_eq!(
            g2_affine_as_u64(&[G2Affine::identity()]),
            &[0u64; G2_AFFINE_LIMBS]
        );
    }

    #[test]
    fn casts_see_montgomery_limbs() {
        assert_eq!(scalar_limbs(&Scalar::ZERO), [0; 4]);
        let one = scalar_limbs(&Scalar::ONE);
        assert_ne!(one, [1, 0, 0, 0], "Montgomery form of one is R mod r");
        assert_eq!(affine_as_u64(&[G1Affine::identity()]), &[0u64; 12]);
        let w = root_of_unity(5);
        assert_eq!(w.pow_vartime([32]), Scalar::ONE);
        assert_ne!(w.pow_vartime([16]), Scalar::ONE);
    }
}
