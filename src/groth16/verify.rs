//! Groth16 verification with a prepared verifying key.

use blstrs::{Bls12, G1Affine, G1Projective, G2Prepared, Gt, Scalar};
use group::{prime::PrimeCurveAffine, Curve};
use pairing::{MillerLoopResult, MultiMillerLoop};

use crate::groth16::error::{Error, Result};
use crate::groth16::key::VerifyingKey;
use crate::groth16::msm::msm_g1;
use crate::groth16::proof::Proof;

/// A verifying key with its pairing work done once.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    alpha_g1_beta_g2: Gt,
    neg_gamma_g2: G2Prepared,
    neg_delta_g2: G2Prepared,
    ic: Vec<G1Affine>,
}

impl PreparedVerifyingKey {
    /// Prepares `vk` for repeated verification.
    pub fn new(vk: &VerifyingKey) -> Self {
        PreparedVerifyingKey {
            alpha_g1_beta_g2: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
            neg_gamma_g2: G2Prepared::from((-vk.gamma_g2.to_curve()).to_affine()),
            neg_delta_g2: G2Prepared::from((-vk.delta_g2.to_curve()).to_affine()),
            ic: vk.ic.clone(),
        }
    }

    /// Number of public inputs (the constant one not counted).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }
}

/// Checks `proof` against the public inputs (without the constant one). `Ok(())` means valid;
/// a proof that fails the pairing check is `Err(Error::VerificationFailed)`.
pub fn verify(pvk: &PreparedVerifyingKey, proof: &Proof, public_inputs: &[Scalar]) -> Result<()> {
    if public_inputs.len() + 1 != pvk.ic.len() {
        return Err(Error::PublicInputCount {
            expected: pvk.num_public_inputs(),
            got: public_inputs.len(),
        });
    }
    let acc: G1Projective = pvk.ic[0].to_curve() + msm_g1(&pvk.ic[1..], public_inputs, None)?;
    let acc = acc.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma_g2),
        (&proof.c, &pvk.neg_delta_g2),
    ]);
    if ml.final_exponentiation() == pvk.alpha_g1_beta_g2 {
        Ok(())
    } else {
        Err(Error::VerificationFailed)
    }
}
