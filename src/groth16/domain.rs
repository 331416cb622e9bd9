//! Radix-2 evaluation domain over Fr and the H computation `(a·b − c)/Z` on a coset, with rayon.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use crate::groth16::error::{Error, Result};

/// Elements per block that the early NTT stages finish in cache before moving on.
const BLOCK_LOG: u32 = 12;

/// A multiplicative subgroup of size `n = 2^log_n` with its twiddle table.
#[derive(Clone, Debug)]
pub struct Domain {
    log_n: u32,
    n_inv: Scalar,
    omega: Scalar,
    /// ω^0 .. ω^(n/2 − 1), built on the first CPU transform (n/2 scalars: 1 GiB at 2^26, so
    /// callers that only need the size or ω never pay for it).
    twiddles: std::sync::OnceLock<Vec<Scalar>>,
}

impl Domain {
    /// The smallest domain with at least `size` elements.
    pub fn for_size(size: usize) -> Result<Self> {
        let n = size.max(2).next_power_of_two();
        let log_n = n.trailing_zeros();
        if log_n > Scalar::S {
            return Err(Error::DomainTooLarge {
                size,
                max_log: Scalar::S,
            });
        }
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_n..Scalar::S {
            omega = omega.square();
        }
        let n_inv = Option::from(Scalar::from(n as u64).invert()).unwrap_or(Scalar::ZERO);
        Ok(Domain {
            log_n,
            n_inv,
            omega,
            twiddles: std::sync::OnceLock::new(),
        })
    }

    fn twiddles(&self) -> &[Scalar] {
        self.twiddles
            .get_or_init(|| powers(self.omega, Scalar::ONE, self.size() / 2))
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        1 << self.log_n
    }

    /// The primitive n-th root of unity ω.
    pub fn root_of_unity(&self) -> Scalar {
        self.omega
    }

    /// log2 of the size.
    pub fn log_size(&self) -> u32 {
        self.log_n
    }

    /// The coset shift g used for the quotient (Fr's multiplicative generator, as bellperson).
    pub fn coset_shift() -> Scalar {
        Scalar::MULTIPLICATIVE_GENERATOR
    }

    /// Z(g·ω^i) = g^n − 1, the same for every point of the coset.
    pub fn z_on_coset(&self) -> Scalar {
        Self::coset_shift().pow_vartime([self.size() as u64]) - Scalar::ONE
    }

    /// Evaluations of the coefficient vector `v` at ω^0 .. ω^(n−1), in place.
    pub fn ntt(&self, v: &mut Vec<Scalar>) -> Result<()> {
        self.check_len(v)?;
        bit_reverse(v);
        let n = v.len();
        let block = (1usize << BLOCK_LOG).min(n);
        // The table is built here, before any parallel region: built inside one (it is itself
        // built in parallel), a worker waiting for its pieces could steal another block's job,
        // reach the same `OnceLock` again and wait on itself forever.
        let tw = self.twiddles();
        // Early stages: each block of `block` elements is independent.
        v.par_chunks_mut(block)
            .for_each(|chunk| self.stages(tw, chunk, 1, block / 2));
        // Late stages: one streaming pass per stage, split over butterflies.
        let mut half = block;
        while half < n {
            let stride = n / (2 * half);
            v.par_chunks_mut(2 * half).for_each(|pair| {
                let (lo, hi) = pair.split_at_mut(half);
                lo.par_chunks_mut(block)
                    .zip(hi.par_chunks_mut(block))
                    .enumerate()
                    .for_each(|(k, (l, h))| {
                        for (j, (x, y)) in l.iter_mut().zip(h.iter_mut()).enumerate() {
                            butterfly(x, y, &tw[(k * block + j) * stride]);
                        }
                    });
            });
            half *= 2;
        }
        Ok(())
    }

    /// Runs stages with half-sizes `from..=to` on a slice whose length is a power of two, with
    /// the domain's twiddle table `tw`.
    fn stages(&self, tw: &[Scalar], v: &mut [Scalar], from: usize, to: usize) {
        let n_total = self.size();
        let mut half = from;
        while half <= to {
            let stride = n_total / (2 * half);
            for pair in v.chunks_mut(2 * half) {
                let (lo, hi) = pair.split_at_mut(half);
                for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    butterfly(x, y, &tw[j * stride]);
                }
            }
            half *= 2;
        }
    }

    /// Coefficients of the polynomial whose evaluations on the domain are `v`, in place.
    pub fn intt(&self, v: &mut Vec<Scalar>) -> Result<()> {
        // NTT with ω⁻¹ equals the NTT with ω followed by reversing entries 1..n.
        self.ntt(v)?;
        v[1..].reverse();
        let n_inv = self.n_inv;
        v.par_iter_mut().for_each(|x| *x *= n_inv);
        Ok(())
    }

    /// Evaluations of coefficients `v` on the coset g·ω^i.
    pub fn coset_ntt(&self, v: &mut Vec<Scalar>) -> Result<()> {
        scale_by_powers(v, Self::coset_shift());
        self.ntt(v)
    }

    /// Coefficients from evaluations on the coset g·ω^i.
    pub fn coset_intt(&self, v: &mut Vec<Scalar>) -> Result<()> {
        self.intt(v)?;
        let g_inv = Option::from(Self::coset_shift().invert()).unwrap_or(Scalar::ZERO);
        scale_by_powers(v, g_inv);
        Ok(())
    }

    fn check_len(&self, v: &[Scalar]) -> Result<()> {
        if v.len() != self.size() {
            return Err(Error::LengthMismatch {
                what: "NTT input vs domain",
                left: v.len(),
                right: self.size(),
            });
        }
        Ok(())
    }

    /// H's coefficients from the constraint evaluations a, b, c (each padded here to the domain
    /// size): iNTT, coset NTT, (a·b − c)/Z, coset iNTT. The result replaces `a` and has n − 1
    /// coefficients (the last one is zero for a satisfied circuit, and the key's H query has
    /// n − 1 points); `b` and `c` are left holding scratch values.
    pub fn compute_h(
        &self,
        a: &mut Vec<Scalar>,
        b: &mut Vec<Scalar>,
        c: &mut Vec<Scalar>,
    ) -> Result<()> {
        let n = self.size();
        for v in [&mut *a, &mut *b, &mut *c] {
            if v.len() > n {
                return Err(Error::LengthMismatch {
                    what: "constraint evaluations vs domain",
                    left: v.len(),
                    right: n,
                });
            }
            v.resize(n, Scalar::ZERO);
        }
        let to_coset = |v: &mut Vec<Scalar>| -> Result<()> {
            self.intt(v)?;
            self.coset_ntt(v)
        };
        let (ra, (rb, rc)) = rayon::join(
            || to_coset(a),
            || rayon::join(|| to_coset(b), || to_coset(c)),
        );
        ra?;
        rb?;
        rc?;
        let z_inv = Option::from(self.z_on_coset().invert()).unwrap_or(Scalar::ZERO);
        a.par_iter_mut()
            .zip(b.par_iter())
            .zip(c.par_iter())
            .for_each(|((x, y), z)| *x = (*x * y - z) * z_inv);
        self.coset_intt(a)?;
        a.truncate(n - 1);
        Ok(())
    }
}

#[inline(always)]
fn butterfly(x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
    let t = *y * w;
    *y = *x - t;
    *x += t;
}

/// [start, start·x, start·x², ...] of length `len`, computed in parallel chunks.
pub fn powers(x: Scalar, start: Scalar, len: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; len];
    scale_chunks(&mut out, x, start, true);
    out
}

/// `v[i] *= x^i`.
pub fn scale_by_powers(v: &mut [Scalar], x: Scalar) {
    scale_chunks(v, x, Scalar::ONE, false);
}

fn scale_chunks(v: &mut [Scalar], x: Scalar, start: Scalar, assign: bool) {
    const CHUNK: usize = 1 << 14;
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(k, chunk)| {
        let mut p = start * x.pow_vartime([(k * CHUNK) as u64]);
        for e in chunk.iter_mut() {
            if assign {
                *e = p;
            } else {
                *e *= p;
            }
            p *= x;
        }
    });
}

/// Permutes `v` (length a power of two) into bit-reversed order.
fn bit_reverse(v: &mut Vec<Scalar>) {
    let n = v.len();
    if n <= 2 {
        return;
    }
    let shift = usize::BITS - n.trailing_zeros();
    let src: &[Scalar] = v;
    let out: Vec<Scalar> = (0..n)
        .into_par_iter()
        .map(|i| src[i.reverse_bits() >> shift])
        .collect();
    *v = out;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn naive_eval(coeffs: &[Scalar], x: Scalar) -> Scalar {
        coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
    }

    #[test]
    fn ntt_matches_naive_evaluation_and_inverts() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for log in [1u32, 3, 7, 13, 14] {
            let d = Domain::for_size(1 << log).unwrap();
            let coeffs: Vec<Scalar> = (0..d.size()).map(|_| Scalar::random(&mut rng)).collect();
            let mut v = coeffs.clone();
            d.ntt(&mut v).unwrap();
            let omega = d.root_of_unity();
            for i in [0usize, 1, d.size() / 2, d.size() - 1] {
                assert_eq!(
                    v[i],
                    naive_eval(&coeffs, omega.pow_vartime([i as u64])),
                    "log {log} i {i}"
                );
            }
            d.intt(&mut v).unwrap();
            assert_eq!(v, coeffs);
            let mut w = coeffs.clone();
            d.coset_ntt(&mut w).unwrap();
            let g = Domain::coset_shift();
            assert_eq!(w[1], naive_eval(&coeffs, g * omega));
            d.coset_intt(&mut w).unwrap();
            assert_eq!(w, coeffs);
        }
    }

    /// The first transform of a fresh domain builds its twiddle table. Built lazily inside the
    /// parallel block stages, a worker building it (itself in parallel) could steal another block's
    /// job while it waited, reach the same `OnceLock` again and wait on itself forever: the stall
    /// that `cuda_conformance` kept hitting on the H200 host's 16 cores
    /// (docs/bench-log/2026-12-03.md, "The first-run stall, found"). The hang needs more idle
    /// workers than the outer split keeps busy, hence a pool of 64 threads; 2^16 is the first size
    /// whose table is built in parallel. Without the fix this hangs on the 2-core dev machine (test
    /// profile, tried); now 200 fresh domains must finish well within the limit, and transform
    /// correctly.
    #[test]
    fn first_transform_of_fresh_domains_does_not_hang() {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(64)
                .build()
                .expect("a rayon pool");
            let result = pool.install(|| {
                let coeffs: Vec<Scalar> = (0..1u64 << 16).map(Scalar::from).collect();
                let omega = Domain::for_size(coeffs.len())
                    .expect("a domain")
                    .root_of_unity();
                let want = naive_eval(&coeffs, omega.pow_vartime([3u64]));
                (0..200).all(|_| {
                    let d = Domain::for_size(coeffs.len()).expect("a domain");
                    let mut v = coeffs.clone();
                    d.ntt(&mut v).expect("ntt");
                    v[3] == want
                })
            });
            let _ = tx.send(result);
        });
        match rx.recv_timeout(std::time::Duration::from_secs(120)) {
            Ok(ok) => assert!(ok, "a transform of a fresh domain was wrong"),
            Err(_) => panic!("the first transforms of fresh domains did not finish in 120 s"),
        }
    }

    #[test]
    fn wrong_length_is_an_error() {
        let d = Domain::for_size(8).unwrap();
        let mut v = vec![Scalar::ONE; 7];
        assert!(matches!(
            d.ntt(&mut v),
            Err(Error::LengthMismatch {
                left: 7,
                right: 8,
                ..
            })
        ));
    }
}
