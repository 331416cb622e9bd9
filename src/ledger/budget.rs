//! The budget: the `auto` budget from the host's available memory.

use super::error::LedgerError;

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

/// The host's available memory (`MemAvailable` in `/proc/meminfo`), if it can be read.
pub fn available_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
