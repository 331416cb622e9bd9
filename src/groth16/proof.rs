//! The Groth16 proof (A, B, C) and its 192-byte compressed encoding, identical to bellperson's.

use std::io::{Read, Write};

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use crate::groth16::error::{Error, Result};

/// Bytes of a compressed proof: A (48) ‖ B (96) ‖ C (48).
pub const PROOF_BYTES: usize = 192;

/// A Groth16 proof over BLS12-381.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// π_A in G1.
    pub a: G1Affine,
    /// π_B in G2.
    pub b: G2Affine,
    /// π_C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// The 192-byte compressed encoding.
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Writes the compressed encoding.
    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        w.write_all(&self.to_bytes())?;
        Ok(())
    }

    /// Decodes a compressed proof, checking every point is on the curve and in the subgroup.
    pub fn from_bytes(bytes: &[u8; PROOF_BYTES]) -> Result<Self> {
        let bad = |offset: u64, what: &str| Error::Malformed {
            what: "proof",
            offset,
            reason: format!("{what} is not a valid compressed point in the prime-order subgroup"),
        };
        let mut a = [0u8; 48];
        a.copy_from_slice(&bytes[..48]);
        let mut b = [0u8; 96];
        b.copy_from_slice(&bytes[48..144]);
        let mut c = [0u8; 48];
        c.copy_from_slice(&bytes[144..]);
        let a = Option::from(G1Affine::from_compressed(&a)).ok_or_else(|| bad(0, "A"))?;
        let b = Option::from(G2Affine::from_compressed(&b)).ok_or_else(|| bad(48, "B"))?;
        let c = Option::from(G1Affine::from_compressed(&c)).ok_or_else(|| bad(144, "C"))?;
        Ok(Proof { a, b, c })
    }

    /// Reads a compressed proof.
    pub fn read<R: Read>(mut r: R) -> Result<Self> {
        let mut bytes = [0u8; PROOF_BYTES];
        r.read_exact(&mut bytes).map_err(|e| Error::Malformed {
            what: "proof",
            offset: 0,
            reason: format!("needs {PROOF_BYTES} bytes: {e}"),
        })?;
        Self::from_bytes(&bytes)
    }

    /// True when no element is the identity (a proof from an honest prover never has one).
    pub fn is_well_formed(&self) -> bool {
        !bool::from(self.a.is_identity() | self.b.is_identity() | self.c.is_identity())
    }
}
