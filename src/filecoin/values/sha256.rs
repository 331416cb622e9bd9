//! SHA-256 over circuit bits, values only: the assignments bellperson's `sha256` gadget makes,
//! in its order, and the count of the constraints it enforces, with none of its linear
//! combinations. The gadget builds those eagerly (every addition's operand sum, and each
//! compression's packed equalities with their powers of two), so a witness-only system pays
//! for them anyway: at 32 GiB they were most of a PoRep partition's witness time.
//!
//! What is allocated depends on which bits are constants, variables or negated variables, so
//! a [`Bit`] keeps that distinction, as the gadget's `Boolean` does; each operation takes the
//! same branch the gadget takes for the same kinds of operands.

use bellperson::gadgets::boolean::Boolean;
use bellperson::SynthesisError;
use blstrs::Scalar as Fr;
use ff::PrimeField;

use crate::compiled::ValuesOnly;

/// A circuit bit by value: a constant, or a variable's value used as is or negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bit {
    /// A constant: nothing allocated.
    Const(bool),
    /// An allocated variable holding this value.
    Is(bool),
    /// The negation of an allocated variable holding this value.
    Not(bool),
}

impl Bit {
    /// The bit's value.
    pub fn value(self) -> bool {
        match self {
            Bit::Const(v) | Bit::Is(v) => v,
            Bit::Not(v) => !v,
        }
    }

    fn not(self) -> Bit {
        match self {
            Bit::Const(v) => Bit::Const(!v),
            Bit::Is(v) => Bit::Not(v),
            Bit::Not(v) => Bit::Is(v),
        }
    }

    /// A gadget's bit; a variable without a value is `AssignmentMissing`.
    pub fn of(b: &Boolean) -> Result<Bit, SynthesisError> {
        let var = |v: Option<bool>| v.ok_or(SynthesisError::AssignmentMissing);
        Ok(match b {
            Boolean::Constant(v) => Bit::Const(*v),
            Boolean::Is(a) => Bit::Is(var(a.get_value())?),
            Boolean::Not(a) => Bit::Not(var(a.get_value())?),
        })
    }
}

/// Allocates a bit whose single constraint is counted (a boolean check, or the one equation
/// of an xor / and / and-not / nor result): every allocation of this gadget but `maj`'s.
fn fresh<C: ValuesOnly>(cs: &mut C, v: bool) -> Result<bool, SynthesisError> {
    cs.alloc_bit(v)?;
    cs.count(1);
    Ok(v)
}

fn xor<C: ValuesOnly>(cs: &mut C, a: Bit, b: Bit) -> Result<Bit, SynthesisError> {
    Ok(match (a, b) {
        (Bit::Const(false), x) | (x, Bit::Const(false)) => x,
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x.not(),
        // The gadget xors the two variables and negates the result.
        (Bit::Is(p), Bit::Not(q)) | (Bit::Not(q), Bit::Is(p)) => Bit::Not(fresh(cs, p ^ q)?),
        (Bit::Is(p), Bit::Is(q)) | (Bit::Not(p), Bit::Not(q)) => Bit::Is(fresh(cs, p ^ q)?),
    })
}

fn and<C: ValuesOnly>(cs: &mut C, a: Bit, b: Bit) -> Result<Bit, SynthesisError> {
    Ok(match (a, b) {
        (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::Const(false),
        (Bit::Const(true), x) | (x, Bit::Const(true)) => x,
        (Bit::Is(p), Bit::Not(q)) | (Bit::Not(q), Bit::Is(p)) => Bit::Is(fresh(cs, p & !q)?),
        (Bit::Not(p), Bit::Not(q)) => Bit::Is(fresh(cs, !p & !q)?),
        (Bit::Is(p), Bit::Is(q)) => Bit::Is(fresh(cs, p & q)?),
    })
}

/// (a and b) xor ((not a) and c), with the gadget's shortcuts for constant operands.
fn ch<C: ValuesOnly>(cs: &mut C, a: Bit, b: Bit, c: Bit) -> Result<Bit, SynthesisError> {
    let v = (a.value() & b.value()) ^ (!a.value() & c.value());
    Ok(match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(v),
        (Bit::Const(false), _, c) => c,
        (a, Bit::Const(false), c) => and(cs, a.not(), c)?,
        (a, b, Bit::Const(false)) => and(cs, a, b)?,
        (a, b, Bit::Const(true)) => and(cs, a, b.not())?.not(),
        (a, Bit::Const(true), c) => and(cs, a.not(), c.not())?.not(),
        // A constant true `a` and all-variable operands: one allocation and one equation.
        _ => Bit::Is(fresh(cs, v)?),
    })
}

/// (a and b) xor (a and c) xor (b and c), with the gadget's shortcuts for constant operands.
fn maj<C: ValuesOnly>(cs: &mut C, a: Bit, b: Bit, c: Bit) -> Result<Bit, SynthesisError> {
    let (x, y, z) = (a.value(), b.value(), c.value());
    let v = (x & y) ^ (x & z) ^ (y & z);
    Ok(match (a, b, c) {
        (Bit::Const(_), Bit::Const(_), Bit::Const(_)) => Bit::Const(v),
        (Bit::Const(false), b, c) => and(cs, b, c)?,
        (a, Bit::Const(false), c) => and(cs, a, c)?,
        (a, b, Bit::Const(false)) => and(cs, a, b)?,
        (a, b, Bit::Const(true)) => and(cs, a.not(), b.not())?.not(),
        (a, Bit::Const(true), c) => and(cs, a.not(), c.not())?.not(),
        (Bit::Const(true), b, c) => and(cs, b.not(), c.not())?.not(),
        // maj itself, then b and c, then the equation tying them: two of each.
        _ => {
            cs.alloc_bit(v)?;
            and(cs, b, c)?;
            cs.count(1);
            Bit::Is(v)
        }
    })
}

/// The gadget's packing of additions' equalities into few constraints: only how many it
/// enforces matters here.
#[derive(Default)]
struct MultiEq {
    bits_used: usize,
}

impl MultiEq {
    fn enforce_equal<C: ValuesOnly>(&mut self, cs: &mut C, num_bits: usize) {
        if Fr::CAPACITY as usize <= self.bits_used + num_bits {
            cs.count(1);
            self.bits_used = 0;
        }
        self.bits_used += num_bits;
    }

    fn finish<C: ValuesOnly>(self, cs: &mut C) {
        if self.bits_used > 0 {
            cs.count(1);
        }
    }
}

/// A 32-bit word: its bits least significant first, and its value.
#[derive(Clone, Debug)]
struct Word {
    bits: [Bit; 32],
    value: u32,
}

impl Word {
    fn constant(value: u32) -> Word {
        Word {
            bits: std::array::from_fn(|i| Bit::Const((value >> i) & 1 == 1)),
            value,
        }
    }

    /// A word from 32 bits, most significant first.
    fn from_bits_be(bits: &[Bit]) -> Word {
        let value = bits.iter().fold(0u32, |v, b| (v << 1) | b.value() as u32);
        Word {
            bits: std::array::from_fn(|i| bits[31 - i]),
            value,
        }
    }

    fn bits_be(&self) -> impl Iterator<Item = Bit> + '_ {
        self.bits.iter().rev().copied()
    }

    fn rotr(&self, by: usize) -> Word {
        Word {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32]),
            value: self.value.rotate_right(by as u32),
        }
    }

    fn shr(&self, by: usize) -> Word {
        Word {
            bits: std::array::from_fn(|i| {
                self.bits.get(i + by).copied().unwrap_or(Bit::Const(false))
            }),
            value: self.value >> by,
        }
    }

    /// The word rotated right by each of `by`, xored in that order (a round's Σ).
    fn rotations<C: ValuesOnly>(&self, cs: &mut C, by: [usize; 3]) -> Result<Word, SynthesisError> {
        self.rotr(by[0])
            .xor(cs, &self.rotr(by[1]))?
            .xor(cs, &self.rotr(by[2]))
    }

    fn xor<C: ValuesOnly>(&self, cs: &mut C, other: &Word) -> Result<Word, SynthesisError> {
        let mut bits = [Bit::Const(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = xor(cs, self.bits[i], other.bits[i])?;
        }
        Ok(Word {
            bits,
            value: self.value ^ other.value,
        })
    }

    fn triop<C: ValuesOnly>(
        cs: &mut C,
        [a, b, c]: [&Word; 3],
        op: fn(&mut C, Bit, Bit, Bit) -> Result<Bit, SynthesisError>,
    ) -> Result<Word, SynthesisError> {
        let mut bits = [Bit::Const(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = op(cs, a.bits[i], b.bits[i], c.bits[i])?;
        }
        let value = (0..32).fold(0u32, |v, i| v | (bits[i].value() as u32) << i);
        Ok(Word { bits, value })
    }

    /// The sum mod 2^32 of 2 to 10 words: every bit of the full sum allocated (as many as the
    /// largest possible sum has), one packed equality.
    fn addmany<C: ValuesOnly>(
        cs: &mut C,
        eq: &mut MultiEq,
        operands: &[Word],
    ) -> Result<Word, SynthesisError> {
        let sum: u64 = operands.iter().map(|w| u64::from(w.value)).sum();
        let constant = operands
            .iter()
            .all(|w| w.bits.iter().all(|b| matches!(b, Bit::Const(_))));
        if constant {
            return Ok(Word::constant(sum as u32));
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let width = (u64::BITS - max.leading_zeros()) as usize;
        for i in 0..width {
            fresh(cs, (sum >> i) & 1 == 1)?;
        }
        eq.enforce_equal(cs, width);
        Ok(Word {
            bits: std::array::from_fn(|i| Bit::Is((sum >> i) & 1 == 1)),
            value: sum as u32,
        })
    }
}

/// A word the compression has not added up yet: its operands, summed when it is first used.
enum Lazy {
    Done(Word),
    Sum(Vec<Word>),
}

impl Lazy {
    fn get<C: ValuesOnly>(
        self,
        cs: &mut C,
        eq: &mut MultiEq,
        more: &[Word],
    ) -> Result<Word, SynthesisError> {
        match self {
            Lazy::Done(w) => Ok(w),
            Lazy::Sum(mut operands) => {
                operands.extend_from_slice(more);
                Word::addmany(cs, eq, &operands)
            }
        }
    }
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// One compression of a 512-bit block into the state `h`, in the gadget's order.
fn compress<C: ValuesOnly>(
    cs: &mut C,
    block: &[Bit],
    h: &[Word; 8],
) -> Result<[Word; 8], SynthesisError> {
    let mut w: Vec<Word> = block.chunks(32).map(Word::from_bits_be).collect();
    let mut eq = MultiEq::default();
    for i in 16..64 {
        let x = &w[i - 15];
        let s0 = x.rotr(7).xor(cs, &x.rotr(18))?.xor(cs, &x.shr(3))?;
        let y = &w[i - 2];
        let s1 = y.rotr(17).xor(cs, &y.rotr(19))?.xor(cs, &y.shr(10))?;
        let next = Word::addmany(cs, &mut eq, &[w[i - 16].clone(), s0, w[i - 7].clone(), s1])?;
        w.push(next);
    }
    let mut a = Lazy::Done(h[0].clone());
    let [mut b, mut c, mut d] = [h[1].clone(), h[2].clone(), h[3].clone()];
    let mut e = Lazy::Done(h[4].clone());
    let [mut f, mut g, mut hh] = [h[5].clone(), h[6].clone(), h[7].clone()];
    for (i, wi) in w.iter().enumerate() {
        let new_e = e.get(cs, &mut eq, &[])?;
        let s1 = new_e.rotations(cs, [6, 11, 25])?;
        let choice = Word::triop(cs, [&new_e, &f, &g], ch)?;
        let t1 = [hh, s1, choice, Word::constant(K[i]), wi.clone()];
        let new_a = a.get(cs, &mut eq, &[])?;
        let s0 = new_a.rotations(cs, [2, 13, 22])?;
        let majority = Word::triop(cs, [&new_a, &b, &c], maj)?;
        hh = g;
        g = f;
        f = new_e;
        e = Lazy::Sum(t1.iter().cloned().chain([d]).collect());
        d = c;
        c = b;
        b = new_a;
        a = Lazy::Sum(t1.into_iter().chain([s0, majority]).collect());
    }
    let out = [
        a.get(cs, &mut eq, std::slice::from_ref(&h[0]))?,
        Word::addmany(cs, &mut eq, &[h[1].clone(), b])?,
        Word::addmany(cs, &mut eq, &[h[2].clone(), c])?,
        Word::addmany(cs, &mut eq, &[h[3].clone(), d])?,
        e.get(cs, &mut eq, std::slice::from_ref(&h[4]))?,
        Word::addmany(cs, &mut eq, &[h[5].clone(), f])?,
        Word::addmany(cs, &mut eq, &[h[6].clone(), g])?,
        Word::addmany(cs, &mut eq, &[h[7].clone(), hh])?,
    ];
    eq.finish(cs);
    Ok(out)
}

/// SHA-256 of `input` (whole bytes, most significant bit first), as bellperson's `sha256`
/// gadget assigns it: the digest's 256 bits, most significant first.
pub fn sha256<C: ValuesOnly>(cs: &mut C, input: &[Bit]) -> Result<Vec<Bit>, SynthesisError> {
    if !input.len().is_multiple_of(8) {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut padded = input.to_vec();
    padded.push(Bit::Const(true));
    while !(padded.len() + 64).is_multiple_of(512) {
        padded.push(Bit::Const(false));
    }
    let len = input.len() as u64;
    padded.extend((0..64).rev().map(|i| Bit::Const((len >> i) & 1 == 1)));
    let mut h: [Word; 8] = std::array::from_fn(|i| Word::constant(IV[i]));
    for block in padded.chunks(512) {
        h = compress(cs, block, &h)?;
    }
    Ok(h.iter().flat_map(Word::bits_be).collect())
}

/// The bits of a 32-bit constant, most significant first.
pub fn constant_be(value: u32) -> impl Iterator<Item = Bit> {
    (0..32)
        .rev()
        .map(move |i| Bit::Const((value >> i) & 1 == 1))
}

/// The field element whose little-endian bits are the first `Fr::CAPACITY` of `bits` (what
/// `multipack::pack_bits` allocates).
pub fn pack(bits: &[Bit]) -> Fr {
    let mut bytes = [0u8; 32];
    for (i, b) in bits.iter().take(Fr::CAPACITY as usize).enumerate() {
        bytes[i / 8] |= (b.value() as u8) << (i % 8);
    }
    // Below 2^254, so always canonical.
    Fr::from_bytes_le(&bytes).unwrap_or(Fr::from(0u64))
}

/// Bits reordered within each byte (padding a partial byte with constant zeros), as
/// storage-proofs' `reverse_bit_numbering`.
pub fn reverse_bit_numbering(mut bits: Vec<Bit>) -> Vec<Bit> {
    while !bits.len().is_multiple_of(8) {
        bits.push(Bit::Const(false));
    }
    for byte in bits.chunks_mut(8) {
        byte.reverse();
    }
    bits
}

#[cfg(test)]
mod tests;
