//! Groth16 proving in stages (synthesize → H → G1 MSMs → B_G2 MSM → assemble), each a plain
//! function over owned buffers so the actor engine can run them on different threads.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use bellperson::Circuit;
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use rand_core::RngCore;

use crate::groth16::backend::{Backend, Bases, CpuBackend, Query};
use crate::groth16::cs::{Density, ProvingAssignment};
use crate::groth16::domain::Domain;
use crate::groth16::error::{Error, Result};
use crate::groth16::key::{ProvingKey, VerifyingKey};
use crate::groth16::msm::Scalars;
use crate::groth16::packed::{Mix, PackedScalars};
use crate::groth16::proof::Proof;

/// The constraint evaluations of one partition: the `abc` buffer class.
#[derive(Debug, Default)]
pub struct Abc {
    /// A at each constraint.
    pub a: Vec<Scalar>,
    /// B at each constraint.
    pub b: Vec<Scalar>,
    /// C at each constraint.
    pub c: Vec<Scalar>,
}

/// The witness and densities of one partition: the `aux`, `inputs` and `density` classes.
///
/// The private variables are held plain (`aux`) or packed as bits (`packed`, with `aux` empty
/// while it waits; [`Witness::pack`]), and a stage that needs them plain expands them for its
/// own run ([`Witness::expand`], [`Witness::shrink`]). Code that reads `aux` directly must run
/// on a plain or expanded witness; [`Witness::plain_aux`] works on either.
#[derive(Debug, Default)]
pub struct Witness {
    /// Public inputs, the constant one first.
    pub inputs: Vec<Scalar>,
    /// Private variables (empty while only `packed` holds them).
    pub aux: Vec<Scalar>,
    /// The private variables packed as bits, when they are kept so.
    pub packed: Option<PackedScalars>,
    /// Private variables present in A.
    pub a_aux_density: Density,
    /// Inputs present in B.
    pub b_input_density: Density,
    /// Private variables present in B.
    pub b_aux_density: Density,
}

impl Witness {
    /// The public inputs a verifier is given (without the constant one).
    pub fn public_inputs(&self) -> &[Scalar] {
        self.inputs.get(1..).unwrap_or(&[])
    }

    /// Private variables, plain or packed.
    pub fn aux_len(&self) -> usize {
        match &self.packed {
            Some(p) => p.len(),
            None => self.aux.len(),
        }
    }

    /// Whether `aux` holds every private variable (plain, or packed and expanded).
    pub fn is_plain(&self) -> bool {
        self.aux.len() == self.aux_len()
    }

    /// The private variables as an MSM takes them, without unpacking.
    pub fn aux_scalars(&self) -> Scalars<'_> {
        match &self.packed {
            Some(p) if !self.is_plain() => Scalars::Packed(p),
            _ => Scalars::Plain(&self.aux),
        }
    }

    /// The private variables plain: borrowed, or unpacked into a new vector.
    pub fn plain_aux(&self) -> Cow<'_, [Scalar]> {
        match &self.packed {
            Some(p) if !self.is_plain() => Cow::Owned(p.unpack()),
            _ => Cow::Borrowed(&self.aux),
        }
    }

    /// Packs a plain witness's private variables when that takes at most `limit` bytes; the
    /// plain vector is dropped then. Returns whether it is packed now.
    pub fn pack(&mut self, limit: u64) -> bool {
        if self.packed.is_some() {
            return true;
        }
        let mix = Mix::of(&self.aux);
        if mix.packed_bytes() > limit {
            return false;
        }
        self.packed = Some(PackedScalars::pack(&self.aux));
        self.aux = Vec::new();
        true
    }

    /// Unpacks a packed witness's private variables into `aux` (nothing when plain or expanded
    /// already), for a stage that reads them plain.
    pub fn expand(&mut self) {
        if let Some(p) = &self.packed {
            if !self.is_plain() {
                self.aux = p.unpack();
            }
        }
    }

    /// [`Witness::expand`] into `buf`, a vector kept from an earlier expansion: its pages are
    /// written already, which makes this about twice as fast as into a new one (`cargo bench
    /// --bench packed`). A plain witness leaves `buf` alone.
    pub fn expand_into(&mut self, mut buf: Vec<Scalar>) {
        let Some(p) = &self.packed else { return };
        if self.is_plain() {
            return;
        }
        if buf.len() < p.len() {
            buf.resize(p.len(), Scalar::ZERO);
        } else {
            buf.truncate(p.len());
        }
        p.unpack_into(&mut buf);
        self.aux = buf;
    }

    /// Drops the expanded plain copy of a packed witness (nothing for a plain one).
    pub fn shrink(&mut self) {
        drop(self.take_expanded());
    }

    /// Takes the expanded plain copy of a packed witness out, for the next
    /// [`Witness::expand_into`]; empty for a plain one, which keeps its values.
    pub fn take_expanded(&mut self) -> Vec<Scalar> {
        match self.packed {
            Some(_) => std::mem::take(&mut self.aux),
            None => Vec::new(),
        }
    }

    /// Bytes the private variables take on the host as held now (plain, packed, or both).
    pub fn aux_bytes(&self) -> u64 {
        let plain = (self.aux.capacity() * std::mem::size_of::<Scalar>()) as u64;
        plain + self.packed.as_ref().map_or(0, PackedScalars::bytes)
    }
}

impl ProvingAssignment {
    /// Splits into the constraint evaluations and the witness.
    pub fn into_parts(self) -> (Abc, Witness) {
        (
            Abc {
                a: self.a,
                b: self.b,
                c: self.c,
            },
            Witness {
                inputs: self.inputs,
                aux: self.aux,
                packed: None,
                a_aux_density: self.a_aux_density,
                b_input_density: self.b_input_density,
                b_aux_density: self.b_aux_density,
            },
        )
    }
}

/// Synthesizes `circuit`, rejecting an unsatisfied one, and checks it against `pk`.
pub fn synthesize<C: Circuit<Scalar>>(circuit: C, pk: &ProvingKey) -> Result<(Abc, Witness)> {
    let (abc, w) =
        ProvingAssignment::synthesize_sized(circuit, pk.h.len() + 1, pk.vk.ic.len(), pk.l.len())?
            .into_parts();
    check_shape(pk, &abc, &w)?;
    Ok((abc, w))
}

/// Checks that a synthesized circuit has the dimensions `pk` was made for.
pub fn check_shape(pk: &ProvingKey, abc: &Abc, w: &Witness) -> Result<()> {
    // Only the size: building a Domain's twiddles here would cost memory the ledger never sees.
    let d = abc.a.len().max(2).next_power_of_two();
    let checks = [
        ("public inputs (IC query)", pk.vk.ic.len(), w.inputs.len()),
        ("H query (domain size − 1)", pk.h.len(), d - 1),
        ("private variables (L query)", pk.l.len(), w.aux_len()),
        (
            "A query (inputs + private variables in A)",
            pk.a.len(),
            w.inputs.len() + w.a_aux_density.count(),
        ),
        (
            "B_G1 query (variables in B)",
            pk.b_g1.len(),
            w.b_input_density.count() + w.b_aux_density.count(),
        ),
        (
            "B_G2 query (variables in B)",
            pk.b_g2.len(),
            w.b_input_density.count() + w.b_aux_density.count(),
        ),
    ];
    for (what, key, circuit) in checks {
        if key != circuit {
            return Err(Error::KeyMismatch { what, key, circuit });
        }
    }
    Ok(())
}

/// H's coefficients: (a·b − c)/Z through the backend's NTTs. Takes `a`'s buffer for the result
/// and leaves `b` and `c` in `abc` for the caller to free.
pub fn compute_h(backend: &dyn Backend, abc: &mut Abc) -> Result<Vec<Scalar>> {
    let domain = Domain::for_size(abc.a.len())?;
    backend.compute_h(&domain, &mut abc.a, &mut abc.b, &mut abc.c)?;
    Ok(std::mem::take(&mut abc.a))
}

/// The four G1 MSM results of one partition.
#[derive(Clone, Copy, Debug)]
pub struct G1Sums {
    /// Σ h_i·H_i.
    pub h: G1Projective,
    /// Σ aux_j·L_j.
    pub l: G1Projective,
    /// Σ over the A query.
    pub a: G1Projective,
    /// Σ over the B query in G1.
    pub b_g1: G1Projective,
}

/// The G1 MSMs: H, L, A and B_G1.
pub fn g1_msms(
    backend: &dyn Backend,
    pk: &ProvingKey,
    w: &Witness,
    h: &[Scalar],
) -> Result<G1Sums> {
    let id = pk.id();
    let ni = w.inputs.len();
    let nbi = w.b_input_density.count();
    fn bases<P>(key_id: u64, query: Query, points: &[P], offset: usize) -> Bases<'_, P> {
        Bases {
            key_id,
            query,
            offset,
            points,
        }
    }
    let a_split = pk.a.len().min(ni);
    let b_split = pk.b_g1.len().min(nbi);
    // A packed witness is unpacked once for the three (the engine's device path expands it
    // itself; this is the per-call path).
    let aux = w.plain_aux();
    let h_sum = backend.msm_g1(bases(id, Query::H, &pk.h, 0), h, None)?;
    let l = backend.msm_g1(bases(id, Query::L, &pk.l, 0), &aux, None)?;
    let a = backend.msm_g1(bases(id, Query::A, &pk.a[..a_split], 0), &w.inputs, None)?
        + backend.msm_g1(
            bases(id, Query::A, &pk.a[a_split..], a_split),
            &aux,
            Some(&w.a_aux_density),
        )?;
    let b_g1 = backend.msm_g1(
        bases(id, Query::BG1, &pk.b_g1[..b_split], 0),
        &w.inputs,
        Some(&w.b_input_density),
    )? + backend.msm_g1(
        bases(id, Query::BG1, &pk.b_g1[b_split..], b_split),
        &aux,
        Some(&w.b_aux_density),
    )?;
    Ok(G1Sums {
        h: h_sum,
        l,
        a,
        b_g1,
    })
}

/// The G2 MSM over the B query.
pub fn b_g2_msm(backend: &dyn Backend, pk: &ProvingKey, w: &Witness) -> Result<G2Projective> {
    let id = pk.id();
    let split = pk.b_g2.len().min(w.b_input_density.count());
    let inputs = Bases {
        key_id: id,
        query: Query::BG2,
        offset: 0,
        points: &pk.b_g2[..split],
    };
    let aux = Bases {
        key_id: id,
        query: Query::BG2,
        offset: split,
        points: &pk.b_g2[split..],
    };
    Ok(backend.msm_g2(inputs, &w.inputs, Some(&w.b_input_density))?
        + backend.msm_g2_of(aux, w.aux_scalars(), Some(&w.b_aux_density))?)
}

/// Assembles the proof with blinding factors r and s.
pub fn assemble(
    vk: &VerifyingKey,
    g1: &G1Sums,
    b_g2: G2Projective,
    r: Scalar,
    s: Scalar,
) -> Result<Proof> {
    if bool::from(vk.delta_g1.is_identity() | vk.delta_g2.is_identity()) {
        return Err(Error::Identity { what: "delta" });
    }
    let a = vk.alpha_g1 + g1.a + vk.delta_g1 * r;
    let b = G2Projective::from(vk.beta_g2) + b_g2 + vk.delta_g2 * s;
    let c = g1.h
        + g1.l
        + g1.a * s
        + g1.b_g1 * r
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + vk.delta_g1 * (r * s);
    Ok(Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    })
}

/// Wall time of each proving stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct StageTimes {
    /// Circuit synthesis and the satisfaction check.
    pub synthesis: Duration,
    /// The H computation (NTTs).
    pub h: Duration,
    /// The G1 MSMs.
    pub g1: Duration,
    /// The B_G2 MSM and assembly.
    pub g2: Duration,
}

/// Proves one circuit on `backend`, returning the proof and the time of each stage.
pub fn prove_timed<C: Circuit<Scalar>, R: RngCore>(
    backend: &dyn Backend,
    circuit: C,
    pk: &ProvingKey,
    rng: &mut R,
) -> Result<(Proof, StageTimes)> {
    let mut t = StageTimes::default();
    let clock = Instant::now();
    let (mut abc, w) = synthesize(circuit, pk)?;
    t.synthesis = clock.elapsed();
    let clock = Instant::now();
    let h = compute_h(backend, &mut abc)?;
    drop(abc);
    t.h = clock.elapsed();
    let clock = Instant::now();
    let g1 = g1_msms(backend, pk, &w, &h)?;
    drop(h);
    t.g1 = clock.elapsed();
    let clock = Instant::now();
    let g2 = b_g2_msm(backend, pk, &w)?;
    let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let proof = assemble(&pk.vk, &g1, g2, r, s)?;
    t.g2 = clock.elapsed();
    Ok((proof, t))
}

/// Proves one circuit on the CPU, without actors.
pub fn prove<C: Circuit<Scalar>, R: RngCore>(
    circuit: C,
    pk: &ProvingKey,
    rng: &mut R,
) -> Result<Proof> {
    prove_timed(&CpuBackend, circuit, pk, rng).map(|(p, _)| p)
}
