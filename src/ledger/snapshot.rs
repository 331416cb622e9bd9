//! A read-only copy of the ledger, for status replies and metrics.

use super::labels::{BufferClass, Policy, Stage};

/// A read-only copy of the ledger's gauges, for status replies and metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerSnapshot {
    /// The configured policy.
    pub policy: Policy,
    /// The byte budget.
    pub budget_bytes: u64,
    /// Bytes charged now.
    pub charged_bytes: u64,
    /// Most bytes ever charged at once.
    pub peak_charged_bytes: u64,
    /// Charged bytes indexed `[class as usize][stage as usize]`.
    pub bytes_by_class_stage: [[u64; Stage::COUNT]; BufferClass::COUNT],
    /// Configured slot count.
    pub slots: usize,
    /// Slots not held by any grant.
    pub free_slots: usize,
    /// Grants not yet ended.
    pub outstanding_grants: usize,
    /// Bytes of resident data (proving keys in use) set aside from the budget.
    pub resident_bytes: u64,
}

impl LedgerSnapshot {
    /// Charged bytes of one class at one stage.
    pub const fn bytes(&self, class: BufferClass, stage: Stage) -> u64 {
        self.bytes_by_class_stage[class as usize][stage as usize]
    }
}
