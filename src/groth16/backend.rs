//! The proving primitives behind a trait, so the CPU and CUDA implementations are swappable.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};

use crate::groth16::cs::Density;
use crate::groth16::domain::Domain;
use crate::groth16::error::Result;
use crate::groth16::msm::Scalars;

/// Which query of a proving key a set of bases is (backends that keep bases resident use it
/// with the key id as a cache key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Query {
    /// The H query.
    H,
    /// The L query.
    L,
    /// The A query.
    A,
    /// The B query in G1.
    BG1,
    /// The B query in G2.
    BG2,
    /// Anything else (verifying-key IC, tests).
    Other,
}

/// A slice of bases together with where it comes from.
#[derive(Clone, Copy, Debug)]
pub struct Bases<'a, P> {
    /// [`crate::ProvingKey::id`] of the key the bases belong to (0 for none).
    pub key_id: u64,
    /// Which query.
    pub query: Query,
    /// Offset of `points` inside that query (the A and B queries are split into inputs and aux).
    pub offset: usize,
    /// The points.
    pub points: &'a [P],
}

impl<'a, P> Bases<'a, P> {
    /// Bases not tied to any key.
    pub fn loose(points: &'a [P]) -> Self {
        Bases {
            key_id: 0,
            query: Query::Other,
            offset: 0,
            points,
        }
    }
}

/// The proving primitives. Implementations must give results identical to [`CpuBackend`].
pub trait Backend: Send + Sync {
    /// A short name for logs and metrics ("cpu", "cuda:0").
    fn name(&self) -> String;

    /// H's n − 1 coefficients from a, b, c (each at most `domain.size()` long), left in `a`;
    /// `b` and `c` may be used as scratch. The caller owns all three buffers throughout, so it
    /// decides where they are freed.
    fn compute_h(
        &self,
        domain: &Domain,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()>;

    /// Σ sᵢ·Pᵢ over the scalars present in `density` (all when `None`).
    fn msm_g1(
        &self,
        bases: Bases<'_, G1Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G1Projective>;

    /// The G2 counterpart of `msm_g1`.
    fn msm_g2(
        &self,
        bases: Bases<'_, G2Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G2Projective>;

    /// [`Backend::msm_g2`] over plain or packed scalars. By default packed ones are unpacked
    /// for the call; the CPU sums them as they are.
    fn msm_g2_of(
        &self,
        bases: Bases<'_, G2Affine>,
        scalars: Scalars<'_>,
        density: Option<&Density>,
    ) -> Result<G2Projective> {
        match scalars {
            Scalars::Plain(s) => self.msm_g2(bases, s, density),
            Scalars::Packed(p) => self.msm_g2(bases, &p.unpack(), density),
        }
    }

    /// Device bytes held for key `key_id`'s bases between calls (0 for backends without
    /// device memory).
    fn resident_key_bytes(&self, _key_id: u64) -> u64 {
        0
    }

    /// Drops key `key_id`'s bases kept between calls; returns the device bytes freed.
    fn evict_key(&self, _key_id: u64) -> u64 {
        0
    }

    /// Device bytes in the backend's buffers now, for backends with a device.
    fn device_bytes(&self) -> Option<u64> {
        None
    }

    /// The device's free and total memory in bytes, for backends with a device.
    fn device_memory(&self) -> Option<(u64, u64)> {
        None
    }
}

/// The reference backend: rayon NTTs and blst's Pippenger. The embedded default.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> String {
        "cpu".into()
    }

    fn compute_h(
        &self,
        domain: &Domain,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        domain.compute_h(a, b, c)
    }

    fn msm_g1(
        &self,
        bases: Bases<'_, G1Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G1Projective> {
        crate::groth16::msm::msm_g1(bases.points, scalars, density)
    }

    fn msm_g2(
        &self,
        bases: Bases<'_, G2Affine>,
        scalars: &[Scalar],
        density: Option<&Density>,
    ) -> Result<G2Projective> {
        crate::groth16::msm::msm_g2(bases.points, scalars, density)
    }

    fn msm_g2_of(
        &self,
        bases: Bases<'_, G2Affine>,
        scalars: Scalars<'_>,
        density: Option<&Density>,
    ) -> Result<G2Projective> {
        crate::groth16::msm::msm_g2_of(bases.points, scalars, density)
    }
}
