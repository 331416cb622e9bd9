//! The ledger's one error type; every variant carries the numbers that explain it.

use super::{BufferClass, GrantId, Stage};

/// Everything the ledger refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// The configuration could never grant anything.
    #[error("ledger config grants nothing: budget_bytes={budget_bytes}, slots={slots} (both must be above 0)")]
    InvalidConfig {
        /// Configured budget.
        budget_bytes: u64,
        /// Configured slot count.
        slots: usize,
    },
    /// The `auto` budget found no memory left after the margin and the resident SRS.
    #[error("no memory left for buffers: {available_bytes} bytes available, minus {margin_bytes} margin, minus {resident_srs_bytes} resident SRS")]
    BudgetExhausted {
        /// Memory the host reports available.
        available_bytes: u64,
        /// Safety margin kept free.
        margin_bytes: u64,
        /// Bytes held by loaded parameters.
        resident_srs_bytes: u64,
    },
    /// `memory.budget` is `auto` but the host's available memory cannot be read.
    #[error("cannot read the host's available memory (/proc/meminfo); set memory.budget")]
    UnknownMemory,
    /// A stated budget and the proving keys in use do not fit in the host's memory.
    #[error("memory.budget ({budget_bytes} bytes) plus the resident proving keys ({resident_bytes} bytes) exceeds the memory this host has for them ({host_bytes} bytes: available now, plus what the keys and charged buffers already hold); lower memory.budget, or set memory.overcommit = true to run anyway")]
    Overcommitted {
        /// The stated budget.
        budget_bytes: u64,
        /// Bytes of the proving keys in use.
        resident_bytes: u64,
        /// Available memory plus what the keys and buffers in use already hold.
        host_bytes: u64,
    },
    /// The footprint exceeds the whole budget, so it could never be granted.
    #[error("partition needs {needed_bytes} bytes but the whole budget is {budget_bytes} bytes; it can never be granted")]
    TooLarge {
        /// The footprint's total (`u64::MAX` if it overflows).
        needed_bytes: u64,
        /// The whole budget.
        budget_bytes: u64,
    },
    /// The footprint is zero bytes, so no free could ever end its grant.
    #[error(
        "footprint is 0 bytes in all {} classes; there is nothing to charge",
        BufferClass::COUNT
    )]
    EmptyFootprint,
    /// The id was never issued by this ledger.
    #[error("grant {grant} was never issued (next id is {next_id})")]
    UnknownGrant {
        /// The id given.
        grant: GrantId,
        /// The id the next grant will get.
        next_id: u64,
    },
    /// The grant has ended: all its bytes were freed.
    #[error("grant {grant} has ended: all its bytes were already freed")]
    GrantEnded {
        /// The ended grant.
        grant: GrantId,
    },
    /// A free for a class (or a whole grant) whose bytes were all freed already.
    #[error("double free: grant {grant} {class} has 0 bytes charged, {bytes} more reported freed")]
    DoubleFree {
        /// The grant.
        grant: GrantId,
        /// The class reported.
        class: BufferClass,
        /// Bytes reported freed.
        bytes: u64,
    },
    /// A free for more bytes than the class still has charged.
    #[error("over-free: grant {grant} {class} has {remaining_bytes} bytes charged, {bytes} reported freed")]
    OverFree {
        /// The grant.
        grant: GrantId,
        /// The class reported.
        class: BufferClass,
        /// Bytes reported freed.
        bytes: u64,
        /// Bytes the class still had charged.
        remaining_bytes: u64,
    },
    /// `move_stage` named a `from` stage the class is not at.
    #[error("grant {grant} {class} is at stage {actual} (#{}), not {expected} (#{})", *actual as usize, *expected as usize)]
    StageMismatch {
        /// The grant.
        grant: GrantId,
        /// The class.
        class: BufferClass,
        /// The stage the caller named.
        expected: Stage,
        /// The stage the class is at.
        actual: Stage,
    },
    /// A stage move that does not go forward in the pipeline.
    #[error("grant {grant} {class}: stage {from} (#{}) to {to} (#{}) is not forward", *from as usize, *to as usize)]
    BackwardMove {
        /// The grant.
        grant: GrantId,
        /// The class.
        class: BufferClass,
        /// Where it is.
        from: Stage,
        /// Where it was asked to go.
        to: Stage,
    },
    /// The class has no bytes left, so it sits at no stage.
    #[error("grant {grant} {class} has 0 bytes left; it cannot move")]
    ClassFreed {
        /// The grant.
        grant: GrantId,
        /// The freed class.
        class: BufferClass,
    },
    /// The same once-only event was reported twice for one grant.
    #[error("grant {grant} was already reported {event}")]
    AlreadyReported {
        /// The grant.
        grant: GrantId,
        /// `synthesized` or `delivered`.
        event: &'static str,
    },
    /// An event other than a free for a grant the supervisor cancelled.
    #[error("grant {grant} was cancelled; only frees are accepted for it")]
    Cancelled {
        /// The cancelled grant.
        grant: GrantId,
    },
}
