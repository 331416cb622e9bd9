//! The memory-budget ledger: byte charges and slots for every large buffer in flight (no actor framework here).
//!
//! The supervisor owns one `Ledger`. A partition starts synthesis only with a
//! `Grant`, which charges its whole `Footprint` and takes one slot. Charges then
//! follow each buffer class through the `Stage`s; bytes come back only on
//! `Ledger::freed` (Dealloc confirmed the drop) or `Ledger::freed_all` (the
//! supervisor confirmed the buffers are gone). When a grant's slot comes back
//! depends on the `Policy`.

mod budget;
mod error;
mod grant;
mod keys_in_use;
mod labels;
mod live;
mod resident;
mod sizing;
mod snapshot;

use std::collections::BTreeMap;
use std::sync::Arc;

use keys_in_use::ResidentKeys;
use live::{shift, Gauges, Live};

pub use budget::{
    auto_budget_bytes, available_memory_bytes, effective_slots, fits_host, plan_budget,
    AvailableMemory, BudgetPlan, KeyBudget, Reserve, LOOKAHEAD_PER_DEVICE,
};
pub use error::LedgerError;
pub use grant::{Grant, GrantId, GrantWatch, LostGrant};
pub use labels::{BufferClass, Policy, Stage, UnknownPolicy};
pub use sizing::{Footprint, PartitionShape};
pub use snapshot::LedgerSnapshot;

/// What a ledger is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedgerConfig {
    /// Bytes all outstanding grants may hold together.
    pub budget_bytes: u64,
    /// Permits for undelivered buffers (the engine sizes them with [`effective_slots`]).
    pub slots: usize,
    /// When slots come back and whether the budget holds.
    pub policy: Policy,
}

/// The byte budget and slot pool, with every outstanding grant.
#[derive(Debug)]
pub struct Ledger {
    config: LedgerConfig,
    charged_bytes: u64,
    peak_charged_bytes: u64,
    gauges: Gauges,
    free_slots: usize,
    next_id: u64,
    live: BTreeMap<GrantId, Live>,
    /// Bytes of resident data (proving keys) set aside from the budget, not grants.
    resident_bytes: u64,
    /// Told of every grant dropped unsettled.
    watch: Option<Arc<dyn GrantWatch>>,
    /// Proving keys in use.
    keys: ResidentKeys,
}

impl Ledger {
    /// An empty ledger; refuses a zero budget or zero slots.
    pub fn new(config: LedgerConfig) -> Result<Self, LedgerError> {
        if config.budget_bytes == 0 || config.slots == 0 {
            return Err(LedgerError::InvalidConfig {
                budget_bytes: config.budget_bytes,
                slots: config.slots,
            });
        }
        Ok(Self {
            config,
            charged_bytes: 0,
            peak_charged_bytes: 0,
            gauges: [[0; Stage::COUNT]; BufferClass::COUNT],
            free_slots: config.slots,
            next_id: 0,
            live: BTreeMap::new(),
            resident_bytes: 0,
            watch: None,
            keys: ResidentKeys::default(),
        })
    }

    /// How proving keys in use count against memory (default [`KeyBudget::Reserve`]).
    pub fn with_key_budget(mut self, mode: KeyBudget) -> Self {
        self.keys.mode = mode;
        self
    }

    /// Every grant issued from now on tells `watch` if it is dropped unsettled (see [`Grant`]).
    pub fn watch_grants(&mut self, watch: Arc<dyn GrantWatch>) {
        self.watch = Some(watch);
    }

    /// The configuration it was built from.
    pub const fn config(&self) -> LedgerConfig {
        self.config
    }
    /// The byte budget.
    pub const fn budget_bytes(&self) -> u64 {
        self.config.budget_bytes
    }
    /// Bytes charged now, across all grants, classes and stages.
    pub const fn charged_bytes(&self) -> u64 {
        self.charged_bytes
    }
    /// Most bytes ever charged at once.
    pub const fn peak_charged_bytes(&self) -> u64 {
        self.peak_charged_bytes
    }
    /// Slots not held by any grant.
    pub const fn free_slots(&self) -> usize {
        self.free_slots
    }
    /// Grants not yet ended (some bytes still charged).
    pub fn outstanding_grants(&self) -> usize {
        self.live.len()
    }
    /// Charged bytes of one class at one stage.
    pub const fn bytes(&self, class: BufferClass, stage: Stage) -> u64 {
        self.gauges[class as usize][stage as usize]
    }

    /// Sets `bytes` of resident data (a proving key in use) aside from the budget: grants then
    /// fit in budget − resident. It never revokes a grant; it only delays new ones.
    pub fn reserve_resident(&mut self, bytes: u64) {
        self.resident_bytes = self.resident_bytes.saturating_add(bytes);
    }

    /// Gives back bytes set aside by [`Ledger::reserve_resident`].
    pub fn release_resident(&mut self, bytes: u64) {
        self.resident_bytes = self.resident_bytes.saturating_sub(bytes);
    }

    /// Bytes set aside for resident data.
    pub const fn resident_bytes(&self) -> u64 {
        self.resident_bytes
    }

    /// The part of the budget grants may use: budget − resident.
    pub const fn grantable_bytes(&self) -> u64 {
        self.config.budget_bytes.saturating_sub(self.resident_bytes)
    }

    /// Checks that a footprint could ever be granted: not empty, not above the whole budget
    /// (less any resident data set aside).
    pub fn admit(&self, footprint: &Footprint) -> Result<(), LedgerError> {
        admit_within(footprint, self.grantable_bytes())
    }

    /// Grants the footprint if the policy allows it now: `Ok(None)` means wait for a
    /// slot or for bytes; `Err` means it can never be granted (see [`Ledger::admit`]).
    /// Needs a free slot, and under an enforcing policy charged + footprint ≤ budget.
    pub fn try_grant(&mut self, footprint: &Footprint) -> Result<Option<Grant>, LedgerError> {
        self.try_grant_leaving(footprint, Reserve::NONE)
    }

    /// [`try_grant`](Self::try_grant) that also leaves `reserve` free after the grant (the
    /// slots and bytes kept for more urgent work): a footprint that fits only by using the
    /// reserve waits.
    pub fn try_grant_leaving(
        &mut self,
        footprint: &Footprint,
        reserve: Reserve,
    ) -> Result<Option<Grant>, LedgerError> {
        self.admit(footprint)?;
        if self.free_slots <= reserve.slots {
            return Ok(None);
        }
        let Some(charged_bytes) = self.charged_bytes.checked_add(footprint.total_bytes()) else {
            return Ok(None);
        };
        if self.config.policy.enforces_budget()
            && charged_bytes.saturating_add(reserve.bytes) > self.grantable_bytes()
        {
            return Ok(None);
        }
        let id = GrantId(self.next_id);
        self.next_id += 1;
        self.free_slots -= 1;
        self.charged_bytes = charged_bytes;
        self.peak_charged_bytes = self.peak_charged_bytes.max(charged_bytes);
        for class in BufferClass::ALL {
            let gauge = &mut self.gauges[class as usize][Stage::Synthesizing as usize];
            *gauge = gauge.saturating_add(footprint.bytes(class));
        }
        let live = Live {
            remaining_bytes: BufferClass::ALL.map(|c| footprint.bytes(c)),
            stage: [Stage::Synthesizing; BufferClass::COUNT],
            holds_slot: true,
            synthesized: false,
            delivered: false,
            cancelled: false,
        };
        self.live.insert(id, live);
        Ok(Some(Grant::new(id, *footprint, self.watch.clone())))
    }

    /// Synthesis finished: its classes still behind `QueuedForGpu` move there.
    /// Under `ReleaseOnSynthesized` the slot comes back here.
    pub fn synthesized(&mut self, grant: GrantId) -> Result<(), LedgerError> {
        let release_slot = !self.config.policy.enforces_budget();
        self.report(
            grant,
            |l| &mut l.synthesized,
            "synthesized",
            Stage::QueuedForGpu,
            release_slot,
        )
        .map(drop)
    }

    /// The GPU actor accepted the buffer (its handler started): classes still behind
    /// `OnGpu` move there, and the slot comes back if the grant still holds it. May
    /// arrive before [`Ledger::synthesized`]; the order of the two does not matter.
    pub fn delivered(&mut self, grant: GrantId) -> Result<(), LedgerError> {
        self.report(grant, |l| &mut l.delivered, "delivered", Stage::OnGpu, true)
            .map(drop)
    }

    /// The partition failed: gives the slot back if still held (the buffer will never
    /// be delivered) and moves every live class to `Dealloc`, "to be freed". Bytes stay
    /// charged until [`Ledger::freed`] or [`Ledger::freed_all`] confirms them gone.
    /// Later `synthesized`/`delivered`/`cancel` for it are errors. Returns the bytes
    /// still awaiting a confirmed free.
    pub fn cancel(&mut self, grant: GrantId) -> Result<u64, LedgerError> {
        self.report(
            grant,
            |l| &mut l.cancelled,
            "cancelled",
            Stage::Dealloc,
            true,
        )
    }

    /// Moves one class's charge from `from` to a later stage `to`.
    pub fn move_stage(
        &mut self,
        grant: GrantId,
        class: BufferClass,
        from: Stage,
        to: Stage,
    ) -> Result<(), LedgerError> {
        let live = self
            .live
            .get_mut(&grant)
            .ok_or_else(|| missing(grant, self.next_id))?;
        let c = class as usize;
        let actual = live.stage[c];
        if live.remaining_bytes[c] == 0 {
            return Err(LedgerError::ClassFreed { grant, class });
        }
        if actual != from {
            return Err(LedgerError::StageMismatch {
                grant,
                class,
                expected: from,
                actual,
            });
        }
        if to <= from {
            return Err(LedgerError::BackwardMove {
                grant,
                class,
                from,
                to,
            });
        }
        shift(&mut self.gauges, c, live.remaining_bytes[c], from, to);
        live.stage[c] = to;
        Ok(())
    }

    /// Moves every class of the grant that still has bytes and sits before `to` up to
    /// `to`; classes already there or later stay where they are.
    pub fn advance(&mut self, grant: GrantId, to: Stage) -> Result<(), LedgerError> {
        let live = self
            .live
            .get_mut(&grant)
            .ok_or_else(|| missing(grant, self.next_id))?;
        live.advance(&mut self.gauges, to);
        Ok(())
    }

    /// Dealloc confirmed that `bytes` of `class` were dropped: credits them back from
    /// whatever stage the class sits at (0 bytes is a no-op). Returns `true` when this
    /// ended the grant (all classes at zero); a grant that ends still holding its slot
    /// gives it back. A free after the grant ended is a `DoubleFree`.
    pub fn freed(
        &mut self,
        grant: GrantId,
        class: BufferClass,
        bytes: u64,
    ) -> Result<bool, LedgerError> {
        let live = match self.live.get_mut(&grant) {
            Some(live) => live,
            None if grant.0 < self.next_id => {
                return Err(LedgerError::DoubleFree {
                    grant,
                    class,
                    bytes,
                })
            }
            None => return Err(missing(grant, self.next_id)),
        };
        let (c, remaining_bytes) = (class as usize, live.remaining_bytes[class as usize]);
        if bytes == 0 {
            return Ok(false);
        }
        if remaining_bytes == 0 {
            return Err(LedgerError::DoubleFree {
                grant,
                class,
                bytes,
            });
        }
        if bytes > remaining_bytes {
            return Err(LedgerError::OverFree {
                grant,
                class,
                bytes,
                remaining_bytes,
            });
        }
        live.remaining_bytes[c] -= bytes;
        let stage = live.stage[c] as usize;
        self.gauges[c][stage] = self.gauges[c][stage].saturating_sub(bytes);
        self.charged_bytes = self.charged_bytes.saturating_sub(bytes);
        Ok(self.end_if_done(grant))
    }

    /// The supervisor confirms that all of the grant's buffers are gone (e.g. dropped
    /// by an unwinding thread): credits every byte still charged and ends the grant.
    /// Returns the bytes credited.
    pub fn freed_all(&mut self, grant: GrantId) -> Result<u64, LedgerError> {
        let live = self
            .live
            .get_mut(&grant)
            .ok_or_else(|| missing(grant, self.next_id))?;
        let credited_bytes = live.remaining_total_bytes();
        for c in 0..BufferClass::COUNT {
            let stage = live.stage[c] as usize;
            let bytes = std::mem::take(&mut live.remaining_bytes[c]);
            self.gauges[c][stage] = self.gauges[c][stage].saturating_sub(bytes);
        }
        self.charged_bytes = self.charged_bytes.saturating_sub(credited_bytes);
        self.end_if_done(grant);
        Ok(credited_bytes)
    }

    /// A copy of every gauge.
    pub fn snapshot(&self) -> LedgerSnapshot {
        LedgerSnapshot {
            policy: self.config.policy,
            budget_bytes: self.config.budget_bytes,
            charged_bytes: self.charged_bytes,
            peak_charged_bytes: self.peak_charged_bytes,
            bytes_by_class_stage: self.gauges,
            slots: self.config.slots,
            free_slots: self.free_slots,
            outstanding_grants: self.live.len(),
            resident_bytes: self.resident_bytes,
        }
    }

    /// Records a once-only event (`flag`) for a live, uncancelled grant, advances its
    /// classes to `to`, and returns its slot if `release_slot`. Returns bytes still charged.
    fn report(
        &mut self,
        grant: GrantId,
        flag: fn(&mut Live) -> &mut bool,
        event: &'static str,
        to: Stage,
        release_slot: bool,
    ) -> Result<u64, LedgerError> {
        let live = self
            .live
            .get_mut(&grant)
            .ok_or_else(|| missing(grant, self.next_id))?;
        if live.cancelled {
            return Err(LedgerError::Cancelled { grant });
        }
        let seen = flag(live);
        if std::mem::replace(seen, true) {
            return Err(LedgerError::AlreadyReported { grant, event });
        }
        live.advance(&mut self.gauges, to);
        if release_slot && std::mem::take(&mut live.holds_slot) {
            self.free_slots += 1;
        }
        Ok(live.remaining_total_bytes())
    }

    /// Removes the grant if it has no bytes left, returning its slot if it still held one.
    fn end_if_done(&mut self, grant: GrantId) -> bool {
        let done = self
            .live
            .get(&grant)
            .is_some_and(|l| l.remaining_total_bytes() == 0);
        if done {
            if let Some(live) = self.live.remove(&grant) {
                self.free_slots += usize::from(live.holds_slot);
            }
        }
        done
    }
}

/// Checks that `footprint` could be granted from `budget_bytes`: not empty, not above it.
fn admit_within(footprint: &Footprint, budget_bytes: u64) -> Result<(), LedgerError> {
    match footprint.checked_total_bytes() {
        Some(0) => Err(LedgerError::EmptyFootprint),
        Some(needed_bytes) if needed_bytes <= budget_bytes => Ok(()),
        other => Err(LedgerError::TooLarge {
            needed_bytes: other.unwrap_or(u64::MAX),
            budget_bytes,
        }),
    }
}

/// The error for an id that has no live grant.
fn missing(grant: GrantId, next_id: u64) -> LedgerError {
    if grant.0 < next_id {
        LedgerError::GrantEnded { grant }
    } else {
        LedgerError::UnknownGrant { grant, next_id }
    }
}
