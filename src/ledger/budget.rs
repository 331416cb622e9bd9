//! The budget, decided here and nowhere else: the byte budget (`auto` from the host's available
//! memory, or stated and checked against it), the slot count, and how proving keys in use count
//! against memory.

use super::error::LedgerError;
use super::labels::Policy;

/// Synthesized buffers the ledger policy lets wait per GPU actor beyond one per worker.
pub const LOOKAHEAD_PER_DEVICE: usize = 2;

/// How proving keys in use count against memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyBudget {
    /// The budget was sized from available memory (`auto`): each key in use is set aside from
    /// it, from its first job until its last one ends.
    #[default]
    Reserve,
    /// The budget was stated: a key's first use checks that the budget and the keys in use
    /// still fit in the host's memory; refused, or with `overcommit` only warned.
    Check {
        /// Warn instead of refusing (`memory.overcommit`).
        overcommit: bool,
    },
}

/// What [`plan_budget`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetPlan {
    /// The byte budget.
    pub budget_bytes: u64,
    /// How keys in use count.
    pub keys: KeyBudget,
}

/// Decides the budget at start: `explicit` (`memory.budget`) must fit in `available_bytes`
/// unless `overcommit`; `None` is `auto`: available memory minus `margin_bytes`.
pub fn plan_budget(
    explicit: Option<u64>,
    margin_bytes: u64,
    overcommit: bool,
    available_bytes: Option<u64>,
) -> Result<BudgetPlan, LedgerError> {
    match explicit {
        Some(budget_bytes) => {
            fits_host(budget_bytes, 0, 0, available_bytes, overcommit)?;
            Ok(BudgetPlan {
                budget_bytes,
                keys: KeyBudget::Check { overcommit },
            })
        }
        None => {
            let available_bytes = available_bytes.ok_or(LedgerError::UnknownMemory)?;
            Ok(BudgetPlan {
                budget_bytes: auto_budget_bytes(available_bytes, margin_bytes, 0)?,
                keys: KeyBudget::Reserve,
            })
        }
    }
}

/// Whether a stated budget fits beside `resident_bytes` of keys in use: the host has
/// `available_bytes` free now, plus what the keys and the `charged_bytes` of buffers already
/// hold. Refused naming all three numbers, or with `overcommit` warned. An unknown available
/// memory cannot be checked and passes.
pub fn fits_host(
    budget_bytes: u64,
    resident_bytes: u64,
    charged_bytes: u64,
    available_bytes: Option<u64>,
    overcommit: bool,
) -> Result<(), LedgerError> {
    let Some(available_bytes) = available_bytes else {
        return Ok(());
    };
    let host_bytes = available_bytes
        .saturating_add(resident_bytes)
        .saturating_add(charged_bytes);
    if budget_bytes.saturating_add(resident_bytes) <= host_bytes {
        return Ok(());
    }
    let err = LedgerError::Overcommitted {
        budget_bytes,
        resident_bytes,
        host_bytes,
    };
    if overcommit {
        tracing::warn!("{err} (memory.overcommit = true: going on)");
        Ok(())
    } else {
        Err(err)
    }
}

/// The slot count: `explicit` (`memory.slots`), or by policy. The ledger policy adds a lookahead of
/// [`LOOKAHEAD_PER_DEVICE`] buffers per GPU actor: enough that a worker whose buffer waits for a
/// busy GPU can start its next partition, without queueing more than the GPUs can take (a lookahead
/// of one per worker bought no throughput in the simulation and nearly doubled queued memory when
/// the GPU was the bottleneck; see BENCHMARKS.md, "H200 — GPU knob defaults"). The other policies
/// get one slot per worker.
pub fn effective_slots(
    explicit: Option<usize>,
    policy: Policy,
    workers: usize,
    gpu_actors: usize,
) -> usize {
    explicit.unwrap_or(match policy {
        Policy::Ledger => workers + LOOKAHEAD_PER_DEVICE * gpu_actors.max(1),
        Policy::HoldUntilDelivered | Policy::ReleaseOnSynthesized => workers,
    })
}

/// The `auto` budget: available memory minus a safety margin minus the resident SRS.
/// Errs when nothing is left.
pub fn auto_budget_bytes(
    available_bytes: u64,
    margin_bytes: u64,
    resident_srs_bytes: u64,
) -> Result<u64, LedgerError> {
    match available_bytes
        .saturating_sub(margin_bytes)
        .saturating_sub(resident_srs_bytes)
    {
        0 => Err(LedgerError::BudgetExhausted {
            available_bytes,
            margin_bytes,
            resident_srs_bytes,
        }),
        budget_bytes => Ok(budget_bytes),
    }
}

/// Where the ledger reads the host's available memory: [`available_memory_bytes`] unless an
/// embedder (or a test) knows better.
pub type AvailableMemory = std::sync::Arc<dyn Fn() -> Option<u64> + Send + Sync>;

/// The host's available memory (`MemAvailable` in `/proc/meminfo`), if it can be read.
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Slots and bytes a grant must leave free (kept for more urgent work: see
/// [`Ledger::try_grant_leaving`](super::Ledger::try_grant_leaving)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reserve {
    /// Free slots to leave.
    pub slots: usize,
    /// Grantable bytes to leave.
    pub bytes: u64,
}

impl Reserve {
    /// Nothing kept.
    pub const NONE: Reserve = Reserve { slots: 0, bytes: 0 };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_budget_must_fit_in_the_host_beside_the_keys() {
        let plan = plan_budget(Some(100), 0, false, Some(150)).expect("fits");
        assert_eq!(plan.keys, KeyBudget::Check { overcommit: false });
        let err = plan_budget(Some(200), 0, false, Some(150)).expect_err("too large");
        assert_eq!(
            err,
            LedgerError::Overcommitted {
                budget_bytes: 200,
                resident_bytes: 0,
                host_bytes: 150
            }
        );
        let text = err.to_string();
        for n in ["200", "150", "memory.overcommit"] {
            assert!(text.contains(n), "{text}");
        }
        assert!(
            plan_budget(Some(200), 0, true, Some(150)).is_ok(),
            "warned only"
        );
        assert!(
            plan_budget(Some(200), 0, false, None).is_ok(),
            "cannot check"
        );
        // 110 budget + 30 key on a host with 95 free beside the 30 loaded key: 140 > 125.
        let err = fits_host(110, 30, 0, Some(95), false).expect_err("over");
        assert_eq!(
            err,
            LedgerError::Overcommitted {
                budget_bytes: 110,
                resident_bytes: 30,
                host_bytes: 125
            }
        );
        assert!(fits_host(90, 30, 0, Some(95), false).is_ok());
        assert!(
            fits_host(110, 30, 20, Some(95), false).is_ok(),
            "20 already charged"
        );
    }

    #[test]
    fn auto_budgets_reserve_keys_and_need_to_know_the_memory() {
        let plan = plan_budget(None, 10, false, Some(100)).expect("auto");
        assert_eq!(
            plan,
            BudgetPlan {
                budget_bytes: 90,
                keys: KeyBudget::Reserve
            }
        );
        assert_eq!(
            plan_budget(None, 10, false, None),
            Err(LedgerError::UnknownMemory)
        );
        assert_eq!(effective_slots(None, Policy::Ledger, 10, 2), 14);
        assert_eq!(effective_slots(None, Policy::HoldUntilDelivered, 10, 2), 10);
        assert_eq!(effective_slots(Some(3), Policy::Ledger, 10, 2), 3);
    }
}
