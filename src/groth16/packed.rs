//! A witness kept as bits: most of a PoRep witness is 0 or 1 (the bits of SHA-256 and of the
//! challenged nodes' indices), so each value costs two bits (is it 1; is it neither 0 nor 1)
//! and only the values that are neither are kept whole, in order. At 2^27 that turns ~4.3 GB of
//! scalars into the dense values plus 32 MB of bits. [`PackedScalars::unpack_into`] gives the
//! plain vector back, in parallel (each 64-value word's first dense value is a prefix sum of
//! the words' counts), for the stage that needs it whole.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

/// Values per bit word.
const WORD: usize = 64;
/// Words one parallel unpacking task takes.
const WORDS_PER_TASK: usize = 1 << 12;

/// Scalars as two bitmaps and the values that are neither 0 nor 1.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedScalars {
    len: usize,
    /// Bit `i % 64` of word `i / 64`: value `i` is 1.
    ones: Vec<u64>,
    /// Bit `i % 64` of word `i / 64`: value `i` is in `dense`.
    dense_bits: Vec<u64>,
    /// The values neither 0 nor 1, in order.
    dense: Vec<Scalar>,
}

/// What a witness is made of: counts of zeros, ones and other values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mix {
    /// Values equal to 0.
    pub zeros: usize,
    /// Values equal to 1.
    pub ones: usize,
    /// Values neither 0 nor 1.
    pub dense: usize,
}

impl Mix {
    /// The mix of `values`, counted in parallel.
    pub fn of(values: &[Scalar]) -> Mix {
        values
            .par_chunks(1 << 16)
            .map(|piece| {
                let mut m = Mix::default();
                for v in piece {
                    if *v == Scalar::ONE {
                        m.ones += 1;
                    } else if bool::from(v.is_zero()) {
                        m.zeros += 1;
                    } else {
                        m.dense += 1;
                    }
                }
                m
            })
            .reduce(Mix::default, |a, b| Mix {
                zeros: a.zeros + b.zeros,
                ones: a.ones + b.ones,
                dense: a.dense + b.dense,
            })
    }

    /// All values.
    pub fn len(&self) -> usize {
        self.zeros + self.ones + self.dense
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the values take as plain scalars.
    pub fn plain_bytes(&self) -> u64 {
        self.len() as u64 * SCALAR_BYTES
    }

    /// Bytes the values take packed (two bit words per 64 values, and the dense values).
    pub fn packed_bytes(&self) -> u64 {
        packed_bytes(self.len(), self.dense)
    }
}

/// Size of one scalar.
const SCALAR_BYTES: u64 = 32;

/// The most bytes a packed witness may take beside its plain size while it is packed: a
/// quarter (a real PoRep witness packs to a 24th-48th, the synthetic circuit to an 8th).
/// Synthesis is charged the plain witness and this room; a witness that packs within it is kept
/// packed (the rest of the charge given back), any other stays plain.
pub fn packing_room(plain_bytes: u64) -> u64 {
    plain_bytes / 4
}

/// The room a witness packed as it goes (never plain) is charged instead of the plain witness
/// and [`packing_room`]: a sixth of its plain size, four times what a PoRep witness packs to at
/// its densest mix (3.3 % other values at some sector sizes, BENCHMARKS.md "CPU VM — PoRep
/// witness"). At 2^27 that is 0.69 GB where the plain witness and its room were 5.2 GB. A
/// witness that does not fit it is held plain, over its charge, and logged.
pub fn streamed_room(plain_bytes: u64) -> u64 {
    plain_bytes / 6
}

/// Bytes `len` values with `dense` of them neither 0 nor 1 take packed.
pub fn packed_bytes(len: usize, dense: usize) -> u64 {
    (len.div_ceil(WORD) as u64) * 16 + dense as u64 * SCALAR_BYTES
}

impl PackedScalars {
    /// None yet, with room for `len` values of which about `dense` are neither 0 nor 1.
    pub fn with_capacity(len: usize, dense: usize) -> Self {
        let words = len.div_ceil(WORD);
        PackedScalars {
            len: 0,
            ones: Vec::with_capacity(words),
            dense_bits: Vec::with_capacity(words),
            dense: Vec::with_capacity(dense),
        }
    }

    /// `values` packed, in parallel.
    pub fn pack(values: &[Scalar]) -> Self {
        let pieces: Vec<PackedScalars> = values
            .par_chunks(WORD * WORDS_PER_TASK)
            .map(|piece| {
                let mut p = PackedScalars::with_capacity(piece.len(), 0);
                piece.iter().for_each(|v| p.push(*v));
                p
            })
            .collect();
        let dense = pieces.iter().map(|p| p.dense.len()).sum();
        let mut all = PackedScalars::with_capacity(values.len(), dense);
        // Every piece but the last is whole words: appending them copies words unshifted.
        for p in &pieces {
            all.append(p);
        }
        all
    }

    /// Appends one value.
    pub fn push(&mut self, v: Scalar) {
        let (word, bit) = (self.len / WORD, self.len % WORD);
        if bit == 0 {
            self.ones.push(0);
            self.dense_bits.push(0);
        }
        if v == Scalar::ONE {
            self.ones[word] |= 1 << bit;
        } else if !bool::from(v.is_zero()) {
            self.dense_bits[word] |= 1 << bit;
            self.dense.push(v);
        }
        self.len += 1;
    }

    /// Appends `other`'s values after these.
    pub fn append(&mut self, other: &PackedScalars) {
        let shift = self.len % WORD;
        if shift == 0 {
            self.ones.extend_from_slice(&other.ones);
            self.dense_bits.extend_from_slice(&other.dense_bits);
        } else {
            append_shifted(&mut self.ones, &other.ones, shift, self.len + other.len);
            append_shifted(
                &mut self.dense_bits,
                &other.dense_bits,
                shift,
                self.len + other.len,
            );
        }
        self.dense.extend_from_slice(&other.dense);
        self.len += other.len;
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none are held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many are 0, 1, or neither.
    pub fn mix(&self) -> Mix {
        let ones = self.ones.iter().map(|w| w.count_ones() as usize).sum();
        let dense = self.dense.len();
        Mix {
            zeros: self.len - ones - dense,
            ones,
            dense,
        }
    }

    /// What the values are made of, as a device expands them: the bitmap of ones and the
    /// bitmap of the values kept whole (bit `i % 64` of word `i / 64`, ⌈len/64⌉ words each),
    /// and those values in order (as many as the second bitmap's set bits).
    pub fn parts(&self) -> (&[u64], &[u64], &[Scalar]) {
        (&self.ones, &self.dense_bits, &self.dense)
    }

    /// Bytes the packed values take (what the ledger charges for them).
    pub fn bytes(&self) -> u64 {
        packed_bytes(self.len, self.dense.len())
    }

    /// Value `i`, or `None` past the end. Counts the dense values before it: for tests and
    /// spot checks, not for loops.
    pub fn get(&self, i: usize) -> Option<Scalar> {
        if i >= self.len {
            return None;
        }
        let (word, bit) = (i / WORD, i % WORD);
        let mask = 1u64 << bit;
        if self.dense_bits[word] & mask != 0 {
            let before: usize = self.dense_bits[..word]
                .iter()
                .map(|w| w.count_ones() as usize)
                .sum::<usize>()
                + (self.dense_bits[word] & (mask - 1)).count_ones() as usize;
            return self.dense.get(before).copied();
        }
        Some(match self.ones[word] & mask != 0 {
            true => Scalar::ONE,
            false => Scalar::ZERO,
        })
    }

    /// Calls `f(i, value)` for every value that is not zero, in order, without unpacking.
    pub fn for_each_nonzero(&self, mut f: impl FnMut(usize, &Scalar)) {
        let mut dense = self.dense.iter();
        for (w, (&ones, &dense_bits)) in self.ones.iter().zip(&self.dense_bits).enumerate() {
            let mut set = ones | dense_bits;
            while set != 0 {
                let bit = set.trailing_zeros() as usize;
                set &= set - 1;
                let i = w * WORD + bit;
                if dense_bits >> bit & 1 == 1 {
                    if let Some(v) = dense.next() {
                        f(i, v);
                    }
                } else {
                    f(i, &Scalar::ONE);
                }
            }
        }
    }

    /// The plain values, in a new vector.
    pub fn unpack(&self) -> Vec<Scalar> {
        let mut out = Vec::with_capacity(self.len);
        out.par_extend(rayon::iter::repeat_n(Scalar::ZERO, self.len));
        self.unpack_into(&mut out);
        out
    }

    /// Writes the plain values over `out[..self.len()]`, in parallel. `out` must hold at least
    /// that many (a shorter one is filled as far as it goes).
    pub fn unpack_into(&self, out: &mut [Scalar]) {
        let n = self.len.min(out.len());
        let out = &mut out[..n];
        // The first dense value of each task's words.
        let starts: Vec<usize> = self
            .dense_bits
            .chunks(WORDS_PER_TASK)
            .scan(0usize, |seen, words| {
                let start = *seen;
                *seen += words.iter().map(|w| w.count_ones() as usize).sum::<usize>();
                Some(start)
            })
            .collect();
        out.par_chunks_mut(WORD * WORDS_PER_TASK)
            .zip(starts)
            .enumerate()
            .for_each(|(task, (values, mut next))| {
                let first_word = task * WORDS_PER_TASK;
                for (k, v) in values.iter_mut().enumerate() {
                    let (word, bit) = (first_word + k / WORD, k % WORD);
                    let mask = 1u64 << bit;
                    *v = if self.dense_bits[word] & mask != 0 {
                        next += 1;
                        self.dense.get(next - 1).copied().unwrap_or(Scalar::ZERO)
                    } else if self.ones[word] & mask != 0 {
                        Scalar::ONE
                    } else {
                        Scalar::ZERO
                    };
                }
            });
    }
}

/// Appends the bits of `src` (whole words from bit 0) to `dst`, whose last word holds `shift`
/// bits (0 < shift < 64), leaving exactly ⌈total/64⌉ words.
fn append_shifted(dst: &mut Vec<u64>, src: &[u64], shift: usize, total: usize) {
    for &w in src {
        if let Some(last) = dst.last_mut() {
            *last |= w << shift;
        }
        dst.push(w >> (WORD - shift));
    }
    dst.truncate(total.div_ceil(WORD));
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn witness(n: usize, seed: u64) -> Vec<Scalar> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..n)
            .map(|_| match rng.gen_range(0..10) {
                0..=3 => Scalar::ZERO,
                4..=7 => Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect()
    }

    #[test]
    fn packing_and_unpacking_give_the_values_back() {
        for n in [0, 1, 63, 64, 65, 1000, WORD * WORDS_PER_TASK + 77] {
            let values = witness(n, n as u64);
            let packed = PackedScalars::pack(&values);
            assert_eq!(packed.len(), n);
            assert_eq!(packed.unpack(), values, "n = {n}");
            let mix = packed.mix();
            assert_eq!(mix.len(), n);
            assert_eq!(
                mix.ones,
                values.iter().filter(|v| **v == Scalar::ONE).count()
            );
            assert_eq!(packed.bytes(), mix.packed_bytes());
            for i in [0, n / 2, n.saturating_sub(1)] {
                assert_eq!(packed.get(i), values.get(i).copied(), "n = {n}, i = {i}");
            }
            assert_eq!(packed.get(n), None);
        }
    }

    #[test]
    fn appending_at_any_offset_equals_packing_the_whole() {
        let values = witness(700, 7);
        for cut in [0, 1, 63, 64, 65, 128, 129, 699, 700] {
            let mut left = PackedScalars::pack(&values[..cut]);
            left.append(&PackedScalars::pack(&values[cut..]));
            assert_eq!(left, PackedScalars::pack(&values), "cut at {cut}");
            assert_eq!(left.unpack(), values);
        }
        let mut many = PackedScalars::default();
        for piece in values.chunks(37) {
            many.append(&PackedScalars::pack(piece));
        }
        assert_eq!(many.unpack(), values);
    }

    #[test]
    fn the_nonzero_values_come_in_order_without_unpacking() {
        let values = witness(1000, 11);
        let mut seen = Vec::new();
        PackedScalars::pack(&values).for_each_nonzero(|i, v| seen.push((i, *v)));
        let expected: Vec<(usize, Scalar)> = values
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, v)| !bool::from(v.is_zero()))
            .collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_short_output_is_filled_as_far_as_it_goes() {
        let values = witness(200, 3);
        let packed = PackedScalars::pack(&values);
        let mut out = vec![Scalar::ZERO; 150];
        packed.unpack_into(&mut out);
        assert_eq!(out[..], values[..150]);
    }
}
