//! The grant token that travels with a partition's buffers, and the id that names it.

use std::fmt;

use super::labels::BufferClass;
use super::sizing::Footprint;

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
/// Not `Clone`: move it inside the message that moves the buffer (Synthesize → Prove →
/// FinishProof), so whoever owns the buffers owns the token. It knows the bytes it still stands
/// for ([`Grant::held`]): a part handed to Dealloc with the buffers it covers is split off
/// ([`Grant::split`]), and Dealloc ends each part with [`Grant::settle`] once its buffers are
/// dropped.
#[must_use = "a grant holds a slot and charged bytes; pass it along with the buffer"]
#[derive(Debug, PartialEq, Eq)]
pub struct Grant {
    id: GrantId,
    footprint: Footprint,
    held: Footprint,
}

impl Grant {
    pub(super) const fn new(id: GrantId, footprint: Footprint) -> Self {
        Self {
            id,
            footprint,
            held: footprint,
        }
    }

    /// The id to report events under.
    pub const fn id(&self) -> GrantId {
        self.id
    }

    /// What the ledger charged for the whole partition.
    pub const fn footprint(&self) -> Footprint {
        self.footprint
    }

    /// The bytes this token still stands for (not yet split off for Dealloc).
    pub const fn held(&self) -> Footprint {
        self.held
    }

    /// Splits `bytes` of `class` (at most what is held) off into a token of the same grant, to
    /// travel with the buffers that stood for them.
    pub fn split(&mut self, class: BufferClass, bytes: u64) -> Grant {
        let bytes = bytes.min(self.held.bytes(class));
        self.held.set(class, self.held.bytes(class) - bytes);
        let mut part = Footprint::default();
        part.set(class, bytes);
        Grant {
            id: self.id,
            footprint: self.footprint,
            held: part,
        }
    }

    /// Splits every held byte of `classes` off (see [`Grant::split`]).
    pub fn split_classes(&mut self, classes: &[BufferClass]) -> Grant {
        let mut part = Footprint::default();
        for &class in classes {
            part.set(class, self.held.bytes(class));
            self.held.set(class, 0);
        }
        Grant {
            id: self.id,
            footprint: self.footprint,
            held: part,
        }
    }

    /// Ends the token once the buffers it stood for are dropped: the grant's id and the bytes to
    /// report freed, class by class (classes at zero left out).
    pub fn settle(self) -> (GrantId, Vec<(BufferClass, u64)>) {
        (self.id, self.held.frees(&BufferClass::ALL))
    }
}
