//! The grant token that travels with a partition's buffers, and the id that names it.

use std::fmt;
use std::sync::Arc;

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

/// Told when a grant, or a part split off it, is dropped without being settled: a message was
/// lost or an actor died, and the buffers it stood for went down with it.
pub trait GrantWatch: Send + Sync + fmt::Debug {
    /// `lost` was dropped unsettled. Called from the dropping thread (possibly while unwinding):
    /// must not block or panic.
    fn dropped(&self, lost: LostGrant);
}

/// What a grant dropped unsettled stood for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostGrant {
    /// The grant.
    pub id: GrantId,
    /// The bytes it still held, class by class: gone with the buffers it travelled with.
    pub held: Footprint,
    /// Whether it was the partition's own token (so the partition's outcome may be lost too),
    /// not a part split off for Dealloc.
    pub partition: bool,
}

/// The token for one granted partition: its bytes are charged and it holds a slot.
///
/// Not `Clone`: move it inside the message that moves the buffer (Synthesize → Prove →
/// FinishProof), so whoever owns the buffers owns the token. It knows the bytes it still stands
/// for ([`Grant::held`]): a part handed to Dealloc with the buffers it covers is split off
/// ([`Grant::split`]), and Dealloc ends each part with [`Grant::settle`] once its buffers are
/// dropped.
///
/// It is a guard: dropped without `settle` (a lost message, a dead actor), it tells the
/// [`GrantWatch`] its ledger was given ([`Ledger::watch_grants`](super::Ledger::watch_grants)),
/// so that the bytes and the partition are reconciled rather than leaked.
#[must_use = "a grant holds a slot and charged bytes; pass it along with the buffer"]
pub struct Grant {
    id: GrantId,
    footprint: Footprint,
    held: Footprint,
    partition: bool,
    watch: Option<Arc<dyn GrantWatch>>,
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grant")
            .field("id", &self.id)
            .field("footprint", &self.footprint)
            .field("held", &self.held)
            .field("partition", &self.partition)
            .field("watched", &self.watch.is_some())
            .finish()
    }
}

impl PartialEq for Grant {
    fn eq(&self, other: &Self) -> bool {
        (self.id, self.footprint, self.held, self.partition)
            == (other.id, other.footprint, other.held, other.partition)
    }
}

impl Eq for Grant {}

impl Grant {
    pub(super) fn new(
        id: GrantId,
        footprint: Footprint,
        watch: Option<Arc<dyn GrantWatch>>,
    ) -> Self {
        Self {
            id,
            footprint,
            held: footprint,
            partition: true,
            watch,
        }
    }

    fn part(&self, held: Footprint) -> Grant {
        Grant {
            id: self.id,
            footprint: self.footprint,
            held,
            partition: false,
            watch: self.watch.clone(),
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
        self.part(part)
    }

    /// Splits every held byte of `classes` off (see [`Grant::split`]).
    pub fn split_classes(&mut self, classes: &[BufferClass]) -> Grant {
        let mut part = Footprint::default();
        for &class in classes {
            part.set(class, self.held.bytes(class));
            self.held.set(class, 0);
        }
        self.part(part)
    }

    /// Ends the token once the buffers it stood for are dropped: the grant's id and the bytes to
    /// report freed, class by class (classes at zero left out).
    pub fn settle(mut self) -> (GrantId, Vec<(BufferClass, u64)>) {
        self.watch = None;
        (self.id, self.held.frees(&BufferClass::ALL))
    }
}

impl Drop for Grant {
    fn drop(&mut self) {
        let Some(watch) = self.watch.take() else {
            return;
        };
        if self.partition || self.held.total_bytes() > 0 {
            watch.dropped(LostGrant {
                id: self.id,
                held: self.held,
                partition: self.partition,
            });
        }
    }
}
