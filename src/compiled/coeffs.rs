//! The coefficient index of every term of a recorded matrix: an index into the recording's
//! shared table of distinct coefficients, stored in the narrowest integer width that holds the
//! table (PoRep's 1,526 distinct coefficients fit in u16). Indices 0 and 1 always mean +1 and −1.

use rayon::prelude::*;

/// Table index of the coefficient +1.
pub const ONE_INDEX: u32 = 0;
/// Table index of the coefficient −1.
pub const MINUS_ONE_INDEX: u32 = 1;

/// The coefficient index of each term, in the narrowest width that holds the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CoeffIndices {
    /// Tables of at most 256 entries.
    U8(Vec<u8>),
    /// Tables of at most 65,536 entries.
    U16(Vec<u16>),
    /// Larger tables.
    U32(Vec<u32>),
}

/// An integer usable as a coefficient index.
pub(crate) trait Idx: Copy + Send + Sync {
    /// The index as a u32.
    fn at(self) -> u32;
}

impl Idx for u8 {
    fn at(self) -> u32 {
        self.into()
    }
}

impl Idx for u16 {
    fn at(self) -> u32 {
        self.into()
    }
}

impl Idx for u32 {
    fn at(self) -> u32 {
        self
    }
}

impl CoeffIndices {
    /// Bytes per index for a table of `table_len` entries.
    pub fn width_for(table_len: usize) -> usize {
        match table_len {
            0..=0x100 => 1,
            0x101..=0x1_0000 => 2,
            _ => 4,
        }
    }

    /// Narrows `wide` to `width` bytes per index (1, 2 or 4); the caller has checked that every
    /// index fits, so nothing is lost (the conversion saturates rather than wraps otherwise).
    pub fn narrowed(wide: Vec<u32>, width: usize) -> Self {
        match width {
            1 => Self::U8(wide.iter().map(|&i| i.min(0xff) as u8).collect()),
            2 => Self::U16(wide.iter().map(|&i| i.min(0xffff) as u16).collect()),
            _ => Self::U32(wide),
        }
    }

    /// Bytes per index.
    pub fn width(&self) -> usize {
        match self {
            Self::U8(_) => 1,
            Self::U16(_) => 2,
            Self::U32(_) => 4,
        }
    }

    /// Number of indices.
    pub fn len(&self) -> usize {
        match self {
            Self::U8(v) => v.len(),
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
        }
    }

    /// True when there are no terms.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest index, if any.
    pub fn max(&self) -> Option<u32> {
        match self {
            Self::U8(v) => v.par_iter().map(|i| i.at()).max(),
            Self::U16(v) => v.par_iter().map(|i| i.at()).max(),
            Self::U32(v) => v.par_iter().copied().max(),
        }
    }

    /// Appends the indices as little-endian bytes.
    pub fn write_le(&self, out: &mut Vec<u8>, range: std::ops::Range<usize>) {
        match self {
            Self::U8(v) => out.extend_from_slice(&v[range]),
            Self::U16(v) => v[range].iter().for_each(|i| out.extend(i.to_le_bytes())),
            Self::U32(v) => v[range].iter().for_each(|i| out.extend(i.to_le_bytes())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_width_follows_the_table() {
        assert_eq!(CoeffIndices::width_for(256), 1);
        assert_eq!(CoeffIndices::width_for(257), 2);
        assert_eq!(CoeffIndices::width_for(65_537), 4);
        assert_eq!(
            CoeffIndices::narrowed(vec![3, 255], 1),
            CoeffIndices::U8(vec![3, 255])
        );
    }
}
