//! The ledger's side of proving keys in use (counted in `keys_in_use`): a key set aside (or
//! checked against the host) on its first use and given back with its last; and the dry run of
//! a job's checks, saying how many bytes of keys stand in its way.

use super::budget::{fits_host, KeyBudget};
use super::{admit_within, Footprint, Ledger, LedgerError};

impl Ledger {
    /// One more job uses the key `id` of `bytes`. On the key's first use it is set aside from
    /// the budget ([`KeyBudget::Reserve`]), or the stated budget is checked to fit beside the
    /// keys in use in the host's memory, `available_bytes()` now ([`KeyBudget::Check`], see
    /// [`fits_host`]); a refused key is not counted.
    pub fn use_key(
        &mut self,
        id: u64,
        bytes: u64,
        available_bytes: impl FnOnce() -> Option<u64>,
    ) -> Result<(), LedgerError> {
        let Some(first) = self.keys.add_use(id, bytes) else {
            return Ok(());
        };
        match self.keys.mode {
            KeyBudget::Reserve => {
                self.reserve_resident(first);
                Ok(())
            }
            KeyBudget::Check { overcommit } => {
                let resident_bytes = self.keys.total_bytes();
                let r = fits_host(
                    self.config.budget_bytes,
                    resident_bytes,
                    self.charged_bytes,
                    available_bytes(),
                    overcommit,
                );
                if r.is_err() {
                    self.keys.remove_use(id);
                }
                r
            }
        }
    }

    /// One job fewer uses the key `id`; with its last, what was set aside comes back.
    pub fn unuse_key(&mut self, id: u64) {
        if let Some(bytes) = self.keys.remove_use(id) {
            if self.keys.mode == KeyBudget::Reserve {
                self.release_resident(bytes);
            }
        }
    }

    /// The bytes key `id` counts for while in use (`None` when no job uses it).
    pub fn key_bytes(&self, id: u64) -> Option<u64> {
        self.keys.bytes_of(id)
    }

    /// A dry run of a job's first checks, [`Ledger::use_key`] of key `id` of `bytes` and then
    /// [`Ledger::admit`] of `footprint`, counting nothing: `Err` is what the job would be refused
    /// now. An empty `footprint` asks about the key alone (one about to be read). With
    /// `memory.overcommit` a stated budget passes silently.
    pub fn room_for(
        &self,
        id: u64,
        bytes: u64,
        footprint: &Footprint,
        available_bytes: impl FnOnce() -> Option<u64>,
    ) -> Result<(), LedgerError> {
        let added_bytes = match self.keys.bytes_of(id) {
            Some(_) => 0,
            None => bytes,
        };
        match self.keys.mode {
            // No partition to admit (a key about to be read, nothing waiting): the key alone
            // must fit the budget beside the resident ones.
            KeyBudget::Reserve if footprint.total_bytes() == 0 => {
                match self.resident_bytes.saturating_add(added_bytes) <= self.config.budget_bytes {
                    true => Ok(()),
                    false => Err(LedgerError::TooLarge {
                        needed_bytes: added_bytes,
                        budget_bytes: self.config.budget_bytes.saturating_sub(self.resident_bytes),
                    }),
                }
            }
            KeyBudget::Reserve => {
                let resident_bytes = self.resident_bytes.saturating_add(added_bytes);
                let budget_bytes = self.config.budget_bytes.saturating_sub(resident_bytes);
                admit_within(footprint, budget_bytes)
            }
            KeyBudget::Check { overcommit } => {
                if added_bytes > 0 && !overcommit {
                    fits_host(
                        self.config.budget_bytes,
                        self.keys.total_bytes().saturating_add(added_bytes),
                        self.charged_bytes,
                        available_bytes(),
                        false,
                    )?;
                }
                match footprint.total_bytes() {
                    0 => Ok(()),
                    _ => self.admit(footprint),
                }
            }
        }
    }

    /// How many bytes of proving keys in use stand between a refusal `err` of this ledger and a
    /// pass, when giving keys back would cure it: a footprint above an auto budget less the keys
    /// set aside from it (yet within the whole budget), or a stated budget that does not fit in
    /// the host beside the keys. `None` for every other refusal.
    pub fn short_of_keys(&self, err: &LedgerError) -> Option<u64> {
        match (err, self.keys.mode) {
            (
                LedgerError::TooLarge {
                    needed_bytes,
                    budget_bytes,
                },
                KeyBudget::Reserve,
            ) if *needed_bytes <= self.config.budget_bytes => {
                Some(needed_bytes.saturating_sub(*budget_bytes))
            }
            (
                LedgerError::Overcommitted {
                    budget_bytes,
                    resident_bytes,
                    host_bytes,
                },
                KeyBudget::Check { .. },
            ) => Some(
                budget_bytes
                    .saturating_add(*resident_bytes)
                    .saturating_sub(*host_bytes),
            ),
            _ => None,
        }
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

    #[test]
    fn a_dry_run_counts_nothing_and_names_the_key_bytes_in_the_way() {
        let config = LedgerConfig {
            budget_bytes: 1000,
            slots: 4,
            policy: Policy::Ledger,
        };
        let fp = Footprint::new(500, 0, 0, 0);
        let mut auto = Ledger::new(config).expect("ledger");
        auto.use_key(1, 300, || None).expect("pinned");
        // Key 2 of 300 beside key 1: 1000 - 600 = 400 < 500.
        let err = auto.room_for(2, 300, &fp, || None).expect_err("no room");
        assert_eq!(
            err,
            LedgerError::TooLarge {
                needed_bytes: 500,
                budget_bytes: 400
            }
        );
        assert_eq!(auto.short_of_keys(&err), Some(100));
        assert_eq!(auto.resident_bytes(), 300, "the dry run counts nothing");
        assert_eq!((auto.key_bytes(1), auto.key_bytes(2)), (Some(300), None));
        auto.room_for(1, 300, &fp, || None)
            .expect("its own key is counted once");
        auto.unuse_key(1);
        auto.room_for(2, 300, &fp, || None)
            .expect("fits once key 1 is given back");
        let err = auto
            .room_for(2, 300, &Footprint::new(1100, 0, 0, 0), || None)
            .expect_err("above the whole budget");
        assert_eq!(auto.short_of_keys(&err), None, "no key can cure it");

        let check = |overcommit| {
            Ledger::new(config)
                .expect("ledger")
                .with_key_budget(KeyBudget::Check { overcommit })
        };
        let mut stated = check(false);
        stated.use_key(1, 300, || Some(1100)).expect("fits");
        // Key 2 of 300 with 800 free: 1000 + 600 > 800 + 600.
        let err = stated
            .room_for(2, 300, &fp, || Some(800))
            .expect_err("does not fit in the host");
        assert_eq!(
            err,
            LedgerError::Overcommitted {
                budget_bytes: 1000,
                resident_bytes: 600,
                host_bytes: 1400
            }
        );
        assert_eq!(stated.short_of_keys(&err), Some(200));
        assert_eq!(stated.key_bytes(2), None, "the dry run counts nothing");
        stated
            .room_for(1, 300, &fp, || Some(0))
            .expect("a key in use is not checked again");
        let err = stated
            .room_for(1, 300, &Footprint::new(1100, 0, 0, 0), || None)
            .expect_err("above the stated budget");
        assert_eq!(stated.short_of_keys(&err), None, "keys are not in its way");
        check(true)
            .room_for(2, 300, &fp, || Some(10))
            .expect("overcommit passes");
    }
}
