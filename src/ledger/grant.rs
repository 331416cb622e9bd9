//! The grant token that travels with a partition's buffers, and the id that names it.

use std::fmt;

use super::Footprint;

/// Names one grant in messages; issued in increasing order, never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GrantId(pub u64);

impl fmt::Display for GrantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// The token for one granted partition: its bytes are charged and it holds a slot.
///
/// Not `Clone`: move it inside the message that moves the buffer (Synthesize →
/// SynthesizedPartition → ...), so whoever owns the buffer owns the slot and can
/// name it when reporting `delivered`, `freed` or a failure.
#[must_use = "a grant holds a slot and charged bytes; pass it along with the buffer"]
#[derive(Debug, PartialEq, Eq)]
pub struct Grant {
    id: GrantId,
    footprint: Footprint,
}

impl Grant {
    pub(super) const fn new(id: GrantId, footprint: Footprint) -> Self {
        Self { id, footprint }
    }

    /// The id to report events under.
    pub const fn id(&self) -> GrantId {
        self.id
    }

    /// What was charged.
    pub const fn footprint(&self) -> Footprint {
        self.footprint
    }
}
