//! A random ("toxic waste known to this process") Groth16 setup for any circuit: for tests,
//! examples and benchmarks. The output is a bellperson-compatible key.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::{BatchInvert, Field};
use group::{prime::PrimeCurveAffine, Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::groth16::domain::{powers, Domain};
use crate::groth16::error::{Error, Result};
use crate::groth16::key::{ProvingKey, VerifyingKey};

/// Per-variable lists of (coefficient, constraint index) for A, B and C.
#[derive(Default)]
struct Assembly {
    inputs: Vec<[Vec<(Scalar, usize)>; 3]>,
    aux: Vec<[Vec<(Scalar, usize)>; 3]>,
    constraints: usize,
}

impl ConstraintSystem<Scalar> for Assembly {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(Default::default());
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(Default::default());
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let j = self.constraints;
        let lcs = [
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ];
        for (q, lc) in lcs.iter().enumerate() {
            for (i, coeff) in lc.iter_inputs() {
                if let Some(v) = self.inputs.get_mut(*i) {
                    v[q].push((*coeff, j));
                }
            }
            for (i, coeff) in lc.iter_aux() {
                if let Some(v) = self.aux.get_mut(*i) {
                    v[q].push((*coeff, j));
                }
            }
        }
        self.constraints += 1;
    }

    ignore_namespaces!();
}

/// Fixed-base scalar multiplication with a table of `2^WINDOW` affine multiples per window.
struct FixedBase<A> {
    table: Vec<A>,
}

const WINDOW: usize = 10;
const WINDOWS: usize = 255usize.div_ceil(WINDOW);

impl<A: PrimeCurveAffine + Send + Sync> FixedBase<A>
where
    A::Curve: Curve<AffineRepr = A> + Send + Sync,
{
    fn new(base: A::Curve) -> Self {
        let size = 1usize << WINDOW;
        let mut proj = vec![A::Curve::identity(); WINDOWS * size];
        let mut b = base;
        for w in 0..WINDOWS {
            let row = &mut proj[w * size..(w + 1) * size];
            for j in 1..size {
                row[j] = row[j - 1] + b;
            }
            for _ in 0..WINDOW {
                b = b.double();
            }
        }
        let mut table = vec![A::identity(); proj.len()];
        A::Curve::batch_normalize(&proj, &mut table);
        FixedBase { table }
    }

    fn mul(&self, s: &Scalar) -> A::Curve {
        let bytes = s.to_bytes_le();
        let mut acc = A::Curve::identity();
        for w in 0..WINDOWS {
            let bit = w * WINDOW;
            let mut digit = 0usize;
            for k in 0..WINDOW {
                let i = bit + k;
                if i < 256 && (bytes[i / 8] >> (i % 8)) & 1 == 1 {
                    digit |= 1 << k;
                }
            }
            if digit != 0 {
                acc += &self.table[(w << WINDOW) + digit];
            }
        }
        acc
    }

    fn batch(&self, scalars: &[Scalar]) -> Vec<A> {
        let proj: Vec<A::Curve> = scalars.par_iter().map(|s| self.mul(s)).collect();
        let mut out = vec![A::identity(); proj.len()];
        proj.par_chunks(1 << 12)
            .zip(out.par_chunks_mut(1 << 12))
            .for_each(|(p, o)| A::Curve::batch_normalize(p, o));
        out
    }
}

/// Creates a proving key for `circuit` from fresh random trapdoors.
pub fn generate_random_parameters<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    rng: &mut R,
) -> Result<ProvingKey> {
    let mut cs = Assembly::default();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.inputs.len() {
        cs.enforce(
            || "",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    let domain = Domain::for_size(cs.constraints)?;
    let d = domain.size();
    let [tau, alpha, beta, gamma, delta] = [(); 5].map(|_| Scalar::random(&mut *rng));
    let omega = Domain::for_size(d)?.root_of_unity();

    // Lagrange basis at τ: L_i(τ) = (τ^d − 1)/d · ω^i / (τ − ω^i).
    let z_tau = tau.pow_vartime([d as u64]) - Scalar::ONE;
    let d_inv: Scalar = Option::from(Scalar::from(d as u64).invert()).unwrap_or(Scalar::ZERO);
    let omegas = powers(omega, Scalar::ONE, d);
    let mut denom: Vec<Scalar> = omegas.par_iter().map(|w| tau - w).collect();
    denom.par_chunks_mut(1 << 12).for_each(|c| {
        c.iter_mut().batch_invert();
    });
    let lagrange: Vec<Scalar> = omegas
        .par_iter()
        .zip(&denom)
        .map(|(w, inv)| z_tau * d_inv * w * inv)
        .collect();

    let eval = |terms: &[(Scalar, usize)]| {
        terms
            .iter()
            .fold(Scalar::ZERO, |acc, (c, j)| acc + lagrange[*j] * c)
    };
    let evals = |vars: &[[Vec<(Scalar, usize)>; 3]]| -> Vec<[Scalar; 3]> {
        vars.par_iter()
            .map(|v| [eval(&v[0]), eval(&v[1]), eval(&v[2])])
            .collect()
    };
    let inputs = evals(&cs.inputs);
    let aux = evals(&cs.aux);

    let g1 = FixedBase::<G1Affine>::new(G1Projective::generator());
    let g2 = FixedBase::<G2Affine>::new(G2Projective::generator());
    let inv = |x: Scalar| -> Result<Scalar> {
        Option::from(x.invert()).ok_or(Error::Identity { what: "trapdoor" })
    };
    let (gamma_inv, delta_inv) = (inv(gamma)?, inv(delta)?);

    let h_scalars = powers(tau, z_tau * delta_inv, d - 1);
    let h = g1.batch(&h_scalars);
    let combine = |e: &[Scalar; 3], k: Scalar| (beta * e[0] + alpha * e[1] + e[2]) * k;
    let ic = g1.batch(
        &inputs
            .par_iter()
            .map(|e| combine(e, gamma_inv))
            .collect::<Vec<_>>(),
    );
    let l = g1.batch(
        &aux.par_iter()
            .map(|e| combine(e, delta_inv))
            .collect::<Vec<_>>(),
    );
    if l.iter().any(|p| bool::from(p.is_identity())) {
        return Err(Error::Synthesis(SynthesisError::UnconstrainedVariable));
    }
    let all: Vec<[Scalar; 3]> = inputs.into_iter().chain(aux).collect();
    let nonzero = |k: usize| -> Vec<Scalar> {
        all.iter()
            .map(|e| e[k])
            .filter(|s| !bool::from(s.is_zero()))
            .collect()
    };
    let (a_s, b_s) = (nonzero(0), nonzero(1));
    let a = g1.batch(&a_s);
    let b_g1 = g1.batch(&b_s);
    let b_g2 = g2.batch(&b_s);

    let vk = VerifyingKey {
        alpha_g1: (G1Projective::generator() * alpha).to_affine(),
        beta_g1: (G1Projective::generator() * beta).to_affine(),
        beta_g2: (G2Projective::generator() * beta).to_affine(),
        gamma_g2: (G2Projective::generator() * gamma).to_affine(),
        delta_g1: (G1Projective::generator() * delta).to_affine(),
        delta_g2: (G2Projective::generator() * delta).to_affine(),
        ic,
    };
    Ok(ProvingKey::from_parts(vk, h, l, a, b_g1, b_g2))
}
