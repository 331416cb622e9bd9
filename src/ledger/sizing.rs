//! Sizing: a partition's footprint from its shape.

use super::labels::BufferClass;

/// Size of one BLS12-381 scalar.
const SCALAR_BYTES: u64 = 32;

/// A partition's dimensions, as measured by a first synthesis or stated by a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionShape {
    /// Number of constraints (n).
    pub constraints: u64,
    /// Number of public input variables (m_in).
    pub inputs: u64,
    /// Number of private variables (m_aux).
    pub aux: u64,
}

/// Bytes one partition holds in each buffer class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    bytes_by_class: [u64; BufferClass::COUNT],
}

impl Footprint {
    /// A footprint from explicit per-class byte counts.
    pub const fn new(
        abc_bytes: u64,
        aux_bytes: u64,
        inputs_bytes: u64,
        density_bytes: u64,
    ) -> Self {
        Self {
            bytes_by_class: [abc_bytes, aux_bytes, inputs_bytes, density_bytes],
        }
    }

    /// The footprint of a shape: with d = next power of two of (constraints + inputs),
    /// abc = 3·d·32, aux = aux·32, inputs = inputs·32, density = ⌈(inputs + aux)/8⌉·3.
    /// Sizes that overflow saturate at `u64::MAX`, which admission then refuses.
    pub fn for_shape(shape: PartitionShape) -> Self {
        let domain = shape
            .constraints
            .saturating_add(shape.inputs)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX);
        let variables = shape.inputs.saturating_add(shape.aux);
        Self::new(
            domain.saturating_mul(3 * SCALAR_BYTES),
            shape.aux.saturating_mul(SCALAR_BYTES),
            shape.inputs.saturating_mul(SCALAR_BYTES),
            variables.div_ceil(8).saturating_mul(3),
        )
    }

    /// Bytes in one class.
    pub const fn bytes(&self, class: BufferClass) -> u64 {
        self.bytes_by_class[class as usize]
    }

    pub(super) fn set(&mut self, class: BufferClass, bytes: u64) {
        self.bytes_by_class[class as usize] = bytes;
    }

    /// The part of the abc bytes held by b and c, two of the three evaluations: dead once H is
    /// computed (H takes a's buffer, the rest, until the H MSM).
    pub const fn bc_bytes(&self) -> u64 {
        self.bytes(BufferClass::Abc) * 2 / 3
    }

    /// The bytes of `classes`, as (class, bytes) pairs; classes at zero left out.
    pub fn frees(&self, classes: &[BufferClass]) -> Vec<(BufferClass, u64)> {
        classes
            .iter()
            .map(|c| (*c, self.bytes(*c)))
            .filter(|(_, b)| *b > 0)
            .collect()
    }

    /// Bytes in all classes (saturating at `u64::MAX`).
    pub fn total_bytes(&self) -> u64 {
        self.checked_total_bytes().unwrap_or(u64::MAX)
    }

    pub(super) fn checked_total_bytes(&self) -> Option<u64> {
        self.bytes_by_class
            .iter()
            .try_fold(0u64, |sum, &b| sum.checked_add(b))
    }
}
