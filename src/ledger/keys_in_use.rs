//! Proving keys in use: how many jobs hold each and what it weighs (the ledger's rules for them
//! are in `resident`).

use std::collections::HashMap;

use super::budget::KeyBudget;

/// Keys in use, by id: (bytes, jobs using it).
#[derive(Debug, Default)]
pub(super) struct ResidentKeys {
    keys: HashMap<u64, (u64, usize)>,
    /// How keys count against memory.
    pub(super) mode: KeyBudget,
}

impl ResidentKeys {
    /// One more job on key `id` of `bytes`; the key's bytes on its first use.
    pub(super) fn add_use(&mut self, id: u64, bytes: u64) -> Option<u64> {
        let entry = self.keys.entry(id).or_insert((bytes, 0));
        entry.1 += 1;
        (entry.1 == 1).then_some(entry.0)
    }

    /// One job fewer on key `id`; the key's bytes when that was its last.
    pub(super) fn remove_use(&mut self, id: u64) -> Option<u64> {
        let entry = self.keys.get_mut(&id)?;
        entry.1 = entry.1.saturating_sub(1);
        if entry.1 > 0 {
            return None;
        }
        self.keys.remove(&id).map(|(bytes, _)| bytes)
    }

    /// Bytes of every key in use.
    pub(super) fn total_bytes(&self) -> u64 {
        self.keys.values().map(|(b, _)| *b).sum()
    }

    /// The bytes key `id` is counted with, while in use.
    pub(super) fn bytes_of(&self, id: u64) -> Option<u64> {
        self.keys.get(&id).map(|(b, _)| *b)
    }
}
