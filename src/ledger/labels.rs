//! The ledger's labels: buffer classes, pipeline stages and policies, with their metric and config names.

use std::fmt;
use std::str::FromStr;

/// The large buffers one partition owns, each with its own lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferClass {
    /// The a, b, c evaluations (3 · d scalars); dropped once H is computed.
    Abc,
    /// The private assignment (one scalar per aux variable).
    Aux,
    /// The public assignment (one scalar per input).
    Inputs,
    /// The MSM density bitmaps (about three bits per variable).
    Density,
}

impl BufferClass {
    /// How many classes there are.
    pub const COUNT: usize = 4;
    /// Every class, in index order.
    pub const ALL: [BufferClass; Self::COUNT] = [Self::Abc, Self::Aux, Self::Inputs, Self::Density];
    /// The witness classes: what goes on to the B_G2 stage once a/b/c and H are gone.
    pub const WITNESS: [BufferClass; 3] = [Self::Aux, Self::Inputs, Self::Density];

    /// The metric label (`class` in `baton_ledger_bytes`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Abc => "abc",
            Self::Aux => "aux",
            Self::Inputs => "inputs",
            Self::Density => "density",
        }
    }
}

impl fmt::Display for BufferClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a buffer's charge sits, in pipeline order; charges only move forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// A synthesis worker is filling it.
    Synthesizing,
    /// Synthesis finished; waiting for the GPU actor to accept it.
    QueuedForGpu,
    /// The GPU actor owns it.
    OnGpu,
    /// The B_G2 actor owns it (split proving).
    Bg2,
    /// Handed to Dealloc; the drop is not yet confirmed.
    Dealloc,
}

impl Stage {
    /// How many stages there are.
    pub const COUNT: usize = 5;
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; Self::COUNT] = [
        Self::Synthesizing,
        Self::QueuedForGpu,
        Self::OnGpu,
        Self::Bg2,
        Self::Dealloc,
    ];

    /// The metric label (`stage` in `baton_ledger_bytes`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Synthesizing => "synthesizing",
            Self::QueuedForGpu => "queued_gpu",
            Self::OnGpu => "on_gpu",
            Self::Bg2 => "bg2",
            Self::Dealloc => "dealloc",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When a grant's slot comes back, and whether the byte budget holds.
///
/// `Ledger` and `HoldUntilDelivered` run the same code: both return the slot at
/// [`Ledger::delivered`](super::Ledger::delivered) and enforce the budget. They differ only in the slot
/// count the caller configures: workers plus a lookahead per GPU
/// ([`Config::effective_slots`](crate::Config::effective_slots)) for
/// `Ledger`, workers alone for `HoldUntilDelivered` (bounded but slower).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Slot back at delivery, budget enforced, slots = workers + lookahead.
    #[default]
    Ledger,
    /// Slot back at delivery, budget enforced, slots = workers (the field's slow fix).
    HoldUntilDelivered,
    /// Slot back at synthesis end, budget charged but not enforced (the field's
    /// pile-up, kept for comparison): charged bytes may exceed the budget.
    ReleaseOnSynthesized,
}

impl Policy {
    /// Every policy.
    pub const ALL: [Policy; 3] = [
        Self::Ledger,
        Self::HoldUntilDelivered,
        Self::ReleaseOnSynthesized,
    ];

    /// The config and metric name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Ledger => "ledger",
            Self::HoldUntilDelivered => "hold_until_delivered",
            Self::ReleaseOnSynthesized => "release_on_synthesized",
        }
    }

    /// Whether a grant must fit in the budget (false only for the pile-up policy).
    pub const fn enforces_budget(self) -> bool {
        !matches!(self, Self::ReleaseOnSynthesized)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Policy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPolicy {
                given: s.to_owned(),
            })
    }
}

/// A policy name that is not one of the three.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown memory policy {given:?} (expected ledger, hold_until_delivered or release_on_synthesized)")]
pub struct UnknownPolicy {
    /// The name given.
    pub given: String,
}
