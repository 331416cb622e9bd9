//! Tests of the memory-budget ledger through its public API: unit cases, then a model-checked property test.

use baton::ledger::*;
use proptest::prelude::*;

#[path = "ledger_props/model.rs"]
mod model;
use model::{apply, check, op};

/// 165 bytes: abc 100, aux 50, inputs 10, density 5.
const FP: Footprint = Footprint::new(100, 50, 10, 5);

fn ledger(policy: Policy, budget_bytes: u64, slots: usize) -> Ledger {
    Ledger::new(LedgerConfig {
        budget_bytes,
        slots,
        policy,
    })
    .expect("valid config")
}

fn grant(l: &mut Ledger, fp: &Footprint) -> GrantId {
    l.try_grant(fp).expect("admissible").expect("granted").id()
}

#[test]
fn too_large_admission_names_both_numbers() {
    let mut l = ledger(Policy::Ledger, 1000, 2);
    let big = Footprint::new(900, 200, 0, 0);
    let err = l.admit(&big).expect_err("larger than the budget");
    assert_eq!(
        err,
        LedgerError::TooLarge {
            needed_bytes: 1100,
            budget_bytes: 1000
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("1100") && msg.contains("1000"), "{msg}");
    assert_eq!(l.try_grant(&big), Err(err));
    assert_eq!((l.charged_bytes(), l.free_slots()), (0, 2));
    let empty = Footprint::default();
    assert_eq!(l.try_grant(&empty), Err(LedgerError::EmptyFootprint));
    let huge = Footprint::new(u64::MAX, 1, 0, 0);
    assert_eq!(
        l.admit(&huge),
        Err(LedgerError::TooLarge {
            needed_bytes: u64::MAX,
            budget_bytes: 1000
        })
    );
}

#[test]
fn release_on_synthesized_piles_up_past_the_budget_and_ledger_does_not() {
    let budget_bytes = 2 * FP.total_bytes();
    for policy in Policy::ALL {
        let mut l = ledger(policy, budget_bytes, 2);
        let mut granted = 0;
        for _ in 0..6 {
            if let Some(g) = l.try_grant(&FP).expect("admissible") {
                l.synthesized(g.id()).expect("live grant");
                granted += 1;
            }
        }
        if policy == Policy::ReleaseOnSynthesized {
            assert_eq!(granted, 6);
            assert_eq!(l.charged_bytes(), 6 * FP.total_bytes());
            assert!(l.peak_charged_bytes() > l.budget_bytes());
            assert_eq!(l.bytes(BufferClass::Abc, Stage::QueuedForGpu), 600);
        } else {
            assert_eq!(granted, 2, "{policy}");
            assert!(l.peak_charged_bytes() <= l.budget_bytes(), "{policy}");
        }
    }
    // Plenty of slots: the byte budget alone stops the ledger.
    let mut l = ledger(Policy::Ledger, budget_bytes, 8);
    let ids: Vec<_> = (0..2).map(|_| grant(&mut l, &FP)).collect();
    ids.iter().for_each(|&g| l.delivered(g).expect("live"));
    assert_eq!((l.try_grant(&FP), l.free_slots()), (Ok(None), 8));
}

#[test]
fn under_ledger_the_slot_returns_at_delivered_not_at_synthesized() {
    let mut l = ledger(Policy::Ledger, 100 * FP.total_bytes(), 1);
    let g = grant(&mut l, &FP);
    assert_eq!(l.free_slots(), 0);
    l.synthesized(g).expect("live");
    assert_eq!(l.free_slots(), 0);
    assert_eq!(
        l.try_grant(&FP),
        Ok(None),
        "bytes fit, but the slot is still out"
    );
    assert_eq!(l.bytes(BufferClass::Aux, Stage::QueuedForGpu), 50);
    l.delivered(g).expect("live");
    assert_eq!(
        (l.free_slots(), l.bytes(BufferClass::Aux, Stage::OnGpu)),
        (1, 50)
    );
    assert_eq!(
        l.delivered(g),
        Err(LedgerError::AlreadyReported {
            grant: g,
            event: "delivered"
        })
    );
    assert_eq!(l.free_slots(), 1, "a repeated delivery returns nothing");
    assert!(l.try_grant(&FP).expect("admissible").is_some());
}

#[test]
fn delivered_may_arrive_before_synthesized() {
    for policy in Policy::ALL {
        let mut l = ledger(policy, 10_000, 1);
        let g = grant(&mut l, &FP);
        l.delivered(g).expect("live");
        assert_eq!(l.free_slots(), 1);
        l.synthesized(g).expect("late synthesized is fine");
        assert_eq!(
            (l.free_slots(), l.bytes(BufferClass::Abc, Stage::OnGpu)),
            (1, 100)
        );
    }
}

#[test]
fn classes_of_one_grant_sit_at_different_stages() {
    let mut l = ledger(Policy::Ledger, 10_000, 2);
    let g = grant(&mut l, &FP);
    l.delivered(g).expect("live");
    l.move_stage(g, BufferClass::Abc, Stage::OnGpu, Stage::Dealloc)
        .expect("forward");
    l.advance(g, Stage::Bg2).expect("live");
    assert_eq!(l.bytes(BufferClass::Abc, Stage::Dealloc), 100);
    assert_eq!(
        l.bytes(BufferClass::Abc, Stage::Bg2),
        0,
        "advance never moves back"
    );
    assert_eq!(l.bytes(BufferClass::Aux, Stage::Bg2), 50);
    assert_eq!(l.freed(g, BufferClass::Abc, 100), Ok(false));
    let mismatch = l.move_stage(g, BufferClass::Aux, Stage::OnGpu, Stage::Dealloc);
    let e = LedgerError::StageMismatch {
        grant: g,
        class: BufferClass::Aux,
        expected: Stage::OnGpu,
        actual: Stage::Bg2,
    };
    assert_eq!(mismatch, Err(e));
    let back = l.move_stage(g, BufferClass::Aux, Stage::Bg2, Stage::OnGpu);
    assert!(matches!(back, Err(LedgerError::BackwardMove { .. })));
    let gone = l.move_stage(g, BufferClass::Abc, Stage::Dealloc, Stage::Dealloc);
    assert_eq!(
        gone,
        Err(LedgerError::ClassFreed {
            grant: g,
            class: BufferClass::Abc
        })
    );
    assert_eq!(l.charged_bytes(), 65);
    let snap = l.snapshot();
    assert_eq!(
        (snap.charged_bytes, snap.peak_charged_bytes, snap.free_slots),
        (65, 165, 2)
    );
    assert_eq!(snap.bytes(BufferClass::Density, Stage::Bg2), 5);
}

#[test]
fn frees_are_checked_and_errors_carry_numbers() {
    let mut l = ledger(Policy::Ledger, 10_000, 2);
    let g = grant(&mut l, &FP);
    let over = l
        .freed(g, BufferClass::Aux, 60)
        .expect_err("only 50 charged");
    assert!(
        over.to_string().contains("60") && over.to_string().contains("50"),
        "{over}"
    );
    assert_eq!(l.freed(g, BufferClass::Aux, 20), Ok(false));
    assert_eq!(l.freed(g, BufferClass::Aux, 30), Ok(false));
    let double = l.freed(g, BufferClass::Aux, 30).expect_err("aux is gone");
    assert_eq!(
        double,
        LedgerError::DoubleFree {
            grant: g,
            class: BufferClass::Aux,
            bytes: 30
        }
    );
    assert!(double.to_string().contains("30"), "{double}");
    assert_eq!(l.freed_all(g), Ok(115));
    assert_eq!(
        (l.charged_bytes(), l.free_slots(), l.outstanding_grants()),
        (0, 2, 0)
    );
    assert!(matches!(
        l.freed(g, BufferClass::Abc, 1),
        Err(LedgerError::DoubleFree { .. })
    ));
    assert_eq!(l.freed_all(g), Err(LedgerError::GrantEnded { grant: g }));
    assert_eq!(l.delivered(g), Err(LedgerError::GrantEnded { grant: g }));
    let never = GrantId(7);
    let unknown = l.advance(never, Stage::Bg2).expect_err("never issued");
    assert_eq!(
        unknown,
        LedgerError::UnknownGrant {
            grant: never,
            next_id: 1
        }
    );
}

#[test]
fn cancel_returns_an_undelivered_slot_once_and_bytes_wait_for_a_confirmed_free() {
    let mut l = ledger(Policy::Ledger, 10_000, 1);
    let g = grant(&mut l, &FP);
    assert_eq!(l.cancel(g), Ok(165));
    assert_eq!((l.free_slots(), l.charged_bytes()), (1, 165));
    assert_eq!(l.bytes(BufferClass::Abc, Stage::Dealloc), 100);
    assert_eq!(l.delivered(g), Err(LedgerError::Cancelled { grant: g }));
    assert_eq!(l.cancel(g), Err(LedgerError::Cancelled { grant: g }));
    assert_eq!(l.free_slots(), 1);
    assert_eq!(l.freed(g, BufferClass::Abc, 100), Ok(false));
    assert_eq!(l.freed_all(g), Ok(65));
    assert_eq!((l.charged_bytes(), l.outstanding_grants()), (0, 0));

    // Cancelled after delivery: the slot already came back, so none comes back again.
    let g1 = grant(&mut l, &FP);
    l.delivered(g1).expect("live");
    let g2 = grant(&mut l, &FP);
    assert_eq!(l.cancel(g1), Ok(165));
    assert_eq!(l.free_slots(), 0, "g2 still holds the only slot");
    l.freed_all(g1).expect("live");
    l.delivered(g2).expect("live");
    assert_eq!(l.free_slots(), 1);
}

#[test]
fn footprint_follows_the_shape_formula() {
    let fp = Footprint::for_shape(PartitionShape {
        constraints: 1000,
        inputs: 24,
        aux: 3000,
    });
    assert_eq!(
        fp,
        Footprint::new(3 * 1024 * 32, 3000 * 32, 24 * 32, 378 * 3)
    );
    assert_eq!(fp.total_bytes(), 98_304 + 96_000 + 768 + 1134);
    let over = Footprint::for_shape(PartitionShape {
        constraints: 1000,
        inputs: 25,
        aux: 0,
    });
    assert_eq!(over.bytes(BufferClass::Abc), 3 * 2048 * 32);
    assert_eq!(over.bytes(BufferClass::Density), 4 * 3);
    let zero = Footprint::for_shape(PartitionShape::default());
    assert_eq!(zero, Footprint::new(96, 0, 0, 0));
    let huge = Footprint::for_shape(PartitionShape {
        constraints: u64::MAX,
        inputs: 1,
        aux: 0,
    });
    assert_eq!(huge.total_bytes(), u64::MAX);
}

#[test]
fn labels_policy_names_and_config_checks() {
    let classes: Vec<_> = BufferClass::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(classes, ["abc", "aux", "inputs", "density"]);
    let stages: Vec<_> = Stage::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        stages,
        ["synthesizing", "queued_gpu", "on_gpu", "bg2", "dealloc"]
    );
    for p in Policy::ALL {
        assert_eq!(p.as_str().parse::<Policy>(), Ok(p));
    }
    assert_eq!(Policy::default(), Policy::Ledger);
    assert!("hold"
        .parse::<Policy>()
        .expect_err("unknown")
        .to_string()
        .contains("\"hold\""));
    let bad = Ledger::new(LedgerConfig {
        budget_bytes: 5,
        slots: 0,
        policy: Policy::Ledger,
    });
    assert_eq!(
        bad.expect_err("no slots"),
        LedgerError::InvalidConfig {
            budget_bytes: 5,
            slots: 0
        }
    );
}

#[test]
fn sizing_helpers() {
    assert_eq!(auto_budget_bytes(1000, 100, 300), Ok(600));
    let none = auto_budget_bytes(1000, 800, 300).expect_err("nothing left");
    assert!(
        none.to_string().contains("800") && none.to_string().contains("300"),
        "{none}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn ledger_invariants_hold_over_random_operation_sequences(
        policy in prop::sample::select(Policy::ALL.to_vec()),
        budget_bytes in 1_000u64..400_000,
        slots in 1usize..5,
        ops in prop::collection::vec(op(), 1..120),
    ) {
        let mut l = ledger(policy, budget_bytes, slots);
        let mut models = Vec::new();
        let mut peak = 0;
        for op in ops {
            apply(&mut l, &mut models, op);
            peak = peak.max(check(&l, &models, slots, peak));
        }
        // Drain: deliver what is undelivered, send everything to Dealloc, free it all.
        for (k, m) in models.iter_mut().enumerate().filter(|(_, m)| !m.ended()) {
            if !m.cancelled && !m.delivered {
                prop_assert_eq!(l.delivered(m.id), Ok(()));
            }
            prop_assert_eq!(l.advance(m.id, Stage::Dealloc), Ok(()));
            if k % 2 == 0 {
                prop_assert_eq!(l.freed_all(m.id), Ok(m.left.iter().sum::<u64>()));
            } else {
                let last = m.left.iter().rposition(|&b| b > 0);
                for (c, class) in BufferClass::ALL.into_iter().enumerate().filter(|&(c, _)| m.left[c] > 0) {
                    prop_assert_eq!(l.freed(m.id, class, m.left[c]), Ok(Some(c) == last));
                }
            }
            m.left = [0; 4];
            m.slot = false;
            let again = l.freed(m.id, BufferClass::Abc, 1);
            prop_assert_eq!(again, Err(LedgerError::DoubleFree { grant: m.id, class: BufferClass::Abc, bytes: 1 }));
        }
        check(&l, &models, slots, peak);
        prop_assert_eq!((l.charged_bytes(), l.free_slots(), l.outstanding_grants()), (0, slots, 0));
        for class in BufferClass::ALL {
            for stage in Stage::ALL {
                prop_assert_eq!(l.bytes(class, stage), 0);
            }
        }
        prop_assert!(l.try_grant(&FP).expect("admissible").is_some(), "the drained ledger grants again");
    }
}
