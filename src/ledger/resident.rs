//! Proving keys in use: how many jobs hold each and what it weighs, so that the ledger sets a
//! key aside (or checks it against the host) on its first use and gives it back with its last.

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
}

#[cfg(test)]
mod tests {
    use super::super::{Footprint, KeyBudget, Ledger, LedgerConfig, LedgerError, Policy};

    #[test]
    fn resident_bytes_shrink_what_grants_may_use() {
        let mut l = Ledger::new(LedgerConfig {
            budget_bytes: 1000,
            slots: 4,
            policy: Policy::Ledger,
        })
        .expect("ledger");
        let f = Footprint::new(400, 0, 0, 0);
        l.reserve_resident(300);
        assert_eq!(l.grantable_bytes(), 700);
        let g = l.try_grant(&f).expect("ok").expect("fits in 700");
        assert!(l.try_grant(&f).expect("ok").is_none(), "400 + 400 > 700");
        match l.admit(&Footprint::new(800, 0, 0, 0)) {
            Err(LedgerError::TooLarge {
                needed_bytes: 800,
                budget_bytes: 700,
            }) => {}
            other => panic!("expected TooLarge against 700, got {other:?}"),
        }
        l.release_resident(300);
        assert!(
            l.try_grant(&f).expect("ok").is_some(),
            "400 + 400 <= 1000 once released"
        );
        assert!(l.charged_bytes() <= l.budget_bytes());
        drop(g);
    }

    #[test]
    fn keys_are_counted_once_and_checked_or_reserved() {
        let config = LedgerConfig {
            budget_bytes: 1000,
            slots: 4,
            policy: Policy::Ledger,
        };
        let mut auto = Ledger::new(config).expect("ledger");
        auto.use_key(7, 300, || None).expect("reserved");
        auto.use_key(7, 300, || None).expect("second job, same key");
        assert_eq!(auto.resident_bytes(), 300, "one key, set aside once");
        auto.unuse_key(7);
        assert_eq!(auto.resident_bytes(), 300, "one job still uses it");
        auto.unuse_key(7);
        assert_eq!(auto.resident_bytes(), 0, "back with the last job");

        let check = |overcommit| {
            Ledger::new(config)
                .expect("ledger")
                .with_key_budget(KeyBudget::Check { overcommit })
        };
        let mut stated = check(false);
        // 1000 budget + 300 key, with 1100 free beside the loaded key: 1300 <= 1400.
        stated.use_key(1, 300, || Some(1100)).expect("fits");
        assert_eq!(
            stated.resident_bytes(),
            0,
            "a stated budget sets nothing aside"
        );
        // A second key of 300: 1000 + 600 > 800 free + 600 held.
        let err = stated
            .use_key(2, 300, || Some(800))
            .expect_err("does not fit");
        assert_eq!(
            err,
            LedgerError::Overcommitted {
                budget_bytes: 1000,
                resident_bytes: 600,
                host_bytes: 1400
            }
        );
        // The refused key is not counted: trying again with room passes.
        stated.use_key(2, 300, || Some(1000)).expect("fits now");
        let mut warned = check(true);
        warned
            .use_key(3, 300, || Some(10))
            .expect("overcommit only warns");
    }
}
