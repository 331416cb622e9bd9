//! The reference model for the ledger's property test: random operations, expected results, invariant checks.

use super::*;

/// One call on the ledger; each `usize` picks an issued grant (modulo how many there are).
#[derive(Clone, Debug)]
pub enum Op {
    Grant(PartitionShape),
    Synthesized(usize),
    Delivered(usize),
    Cancel(usize),
    Advance(usize, Stage),
    Move(usize, BufferClass, Option<Stage>, Stage),
    /// 0: zero bytes, 1: half, 2: all that is left, 3: one too many.
    Free(usize, BufferClass, u8),
    FreeAll(usize),
}

/// Random operations, weighted so grants and frees dominate.
pub fn op() -> impl Strategy<Value = Op> {
    let stage = || prop::sample::select(Stage::ALL.to_vec());
    let class = || prop::sample::select(BufferClass::ALL.to_vec());
    let shape =
        (0u64..600, 0u64..8, 0u64..600).prop_map(|(constraints, inputs, aux)| PartitionShape {
            constraints,
            inputs,
            aux,
        });
    prop_oneof![
        4 => shape.prop_map(Op::Grant),
        2 => any::<usize>().prop_map(Op::Synthesized),
        2 => any::<usize>().prop_map(Op::Delivered),
        1 => any::<usize>().prop_map(Op::Cancel),
        2 => (any::<usize>(), stage()).prop_map(|(i, s)| Op::Advance(i, s)),
        1 => (any::<usize>(), class(), prop::option::of(stage()), stage())
            .prop_map(|(i, c, f, t)| Op::Move(i, c, f, t)),
        4 => (any::<usize>(), class(), 0u8..4).prop_map(|(i, c, p)| Op::Free(i, c, p)),
        1 => any::<usize>().prop_map(Op::FreeAll),
    ]
}

/// What the test expects of one grant, kept independently of the ledger.
#[derive(Debug)]
pub struct Model {
    pub id: GrantId,
    pub left: [u64; 4],
    pub stage: [Stage; 4],
    pub slot: bool,
    pub synthesized: bool,
    pub delivered: bool,
    pub cancelled: bool,
}

impl Model {
    pub fn ended(&self) -> bool {
        self.left.iter().all(|&b| b == 0)
    }
    fn advance(&mut self, to: Stage) {
        for c in 0..4 {
            if self.left[c] > 0 && self.stage[c] < to {
                self.stage[c] = to;
            }
        }
    }
    /// A once-only event: the error the ledger must give, or `Ok` after applying it.
    fn event(
        &mut self,
        seen: fn(&mut Model) -> &mut bool,
        name: &'static str,
        to: Stage,
    ) -> Result<(), LedgerError> {
        if self.ended() {
            return Err(LedgerError::GrantEnded { grant: self.id });
        }
        if self.cancelled {
            return Err(LedgerError::Cancelled { grant: self.id });
        }
        if std::mem::replace(seen(self), true) {
            return Err(LedgerError::AlreadyReported {
                grant: self.id,
                event: name,
            });
        }
        self.advance(to);
        Ok(())
    }
}

/// Checks every gauge against the models and the invariants; returns charged bytes.
pub fn check(l: &Ledger, models: &[Model], slots: usize, peak_seen: u64) -> u64 {
    let policy = l.config().policy;
    let mut gauges = [[0u64; 5]; 4];
    for m in models {
        for c in 0..4 {
            gauges[c][m.stage[c] as usize] += m.left[c];
        }
    }
    for class in BufferClass::ALL {
        for stage in Stage::ALL {
            assert_eq!(
                l.bytes(class, stage),
                gauges[class as usize][stage as usize],
                "{class}/{stage}"
            );
        }
    }
    let charged: u64 = models.iter().flat_map(|m| m.left).sum();
    assert_eq!(l.charged_bytes(), charged);
    if policy != Policy::ReleaseOnSynthesized {
        assert!(
            charged <= l.budget_bytes(),
            "charged {charged} > budget {}",
            l.budget_bytes()
        );
        let undelivered = models
            .iter()
            .filter(|m| !m.ended() && !m.delivered && !m.cancelled);
        assert!(undelivered.count() <= slots);
    }
    let held = models.iter().filter(|m| m.slot).count();
    assert!(held <= slots);
    assert_eq!(l.free_slots(), slots - held);
    assert!(l.peak_charged_bytes() >= charged);
    assert_eq!(l.peak_charged_bytes(), peak_seen.max(charged));
    assert_eq!(
        l.outstanding_grants(),
        models.iter().filter(|m| !m.ended()).count()
    );
    let snap = l.snapshot();
    assert_eq!(
        (snap.charged_bytes, snap.free_slots, snap.budget_bytes),
        (charged, l.free_slots(), l.budget_bytes())
    );
    charged
}

pub fn apply(l: &mut Ledger, models: &mut Vec<Model>, op: Op) {
    let policy = l.config().policy;
    if let Op::Grant(shape) = op {
        let fp = Footprint::for_shape(shape);
        let charged: u64 = models.iter().flat_map(|m| m.left).sum();
        let held = models.iter().filter(|m| m.slot).count();
        let got = l.try_grant(&fp);
        if fp.total_bytes() > l.budget_bytes() {
            let e = LedgerError::TooLarge {
                needed_bytes: fp.total_bytes(),
                budget_bytes: l.budget_bytes(),
            };
            assert_eq!(got, Err(e));
        } else if held == l.config().slots
            || (policy != Policy::ReleaseOnSynthesized
                && charged + fp.total_bytes() > l.budget_bytes())
        {
            assert_eq!(got, Ok(None));
        } else {
            let g = got.expect("admissible").expect("slot and bytes are free");
            assert_eq!((g.id(), g.footprint()), (GrantId(models.len() as u64), fp));
            models.push(Model {
                id: g.id(),
                left: BufferClass::ALL.map(|c| fp.bytes(c)),
                stage: [Stage::Synthesizing; 4],
                slot: true,
                synthesized: false,
                delivered: false,
                cancelled: false,
            });
        }
        return;
    }
    let n = models.len();
    let pick = |i: usize| i % n;
    if n == 0 {
        return;
    }
    match op {
        Op::Grant(_) => {}
        Op::Synthesized(i) => {
            let m = &mut models[pick(i)];
            let want = m.event(|m| &mut m.synthesized, "synthesized", Stage::QueuedForGpu);
            if want.is_ok() && policy == Policy::ReleaseOnSynthesized {
                m.slot = false;
            }
            assert_eq!(l.synthesized(m.id), want);
        }
        Op::Delivered(i) => {
            let m = &mut models[pick(i)];
            let want = m.event(|m| &mut m.delivered, "delivered", Stage::OnGpu);
            m.slot &= want.is_err();
            assert_eq!(l.delivered(m.id), want);
        }
        Op::Cancel(i) => {
            let m = &mut models[pick(i)];
            let want = m.event(|m| &mut m.cancelled, "cancelled", Stage::Dealloc);
            m.slot &= want.is_err();
            assert_eq!(l.cancel(m.id), want.map(|()| m.left.iter().sum()));
        }
        Op::Advance(i, to) => {
            let m = &mut models[pick(i)];
            let want = if m.ended() {
                Err(LedgerError::GrantEnded { grant: m.id })
            } else {
                Ok(())
            };
            m.advance(to);
            assert_eq!(l.advance(m.id, to), want);
        }
        Op::Move(i, class, from, to) => {
            let m = &mut models[pick(i)];
            let (grant, c) = (m.id, class as usize);
            let from = from.unwrap_or(m.stage[c]);
            let want = if m.ended() {
                Err(LedgerError::GrantEnded { grant })
            } else if m.left[c] == 0 {
                Err(LedgerError::ClassFreed { grant, class })
            } else if m.stage[c] != from {
                Err(LedgerError::StageMismatch {
                    grant,
                    class,
                    expected: from,
                    actual: m.stage[c],
                })
            } else if to <= from {
                Err(LedgerError::BackwardMove {
                    grant,
                    class,
                    from,
                    to,
                })
            } else {
                m.stage[c] = to;
                Ok(())
            };
            assert_eq!(l.move_stage(grant, class, from, to), want);
        }
        Op::Free(i, class, part) => {
            let m = &mut models[pick(i)];
            let (grant, c, left) = (m.id, class as usize, m.left[class as usize]);
            let bytes = [0, left / 2, left, left + 1][part as usize];
            let want = if m.ended() || (bytes > 0 && left == 0) {
                Err(LedgerError::DoubleFree {
                    grant,
                    class,
                    bytes,
                })
            } else if bytes > left {
                Err(LedgerError::OverFree {
                    grant,
                    class,
                    bytes,
                    remaining_bytes: left,
                })
            } else {
                m.left[c] -= bytes;
                let ended = bytes > 0 && m.ended();
                m.slot &= !ended;
                Ok(ended)
            };
            assert_eq!(l.freed(grant, class, bytes), want);
        }
        Op::FreeAll(i) => {
            let m = &mut models[pick(i)];
            let want = if m.ended() {
                Err(LedgerError::GrantEnded { grant: m.id })
            } else {
                Ok(m.left.iter().sum())
            };
            m.left = [0; 4];
            m.slot = false;
            assert_eq!(l.freed_all(m.id), want);
        }
    }
}
