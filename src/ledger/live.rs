//! What the ledger remembers about one outstanding grant, and the per-class stage gauges.

use super::labels::{BufferClass, Stage};

/// Per-class byte gauges, indexed `[class][stage]`.
pub(super) type Gauges = [[u64; Stage::COUNT]; BufferClass::COUNT];

/// What the ledger remembers about one outstanding grant.
#[derive(Debug)]
pub(super) struct Live {
    pub(super) remaining_bytes: [u64; BufferClass::COUNT],
    pub(super) stage: [Stage; BufferClass::COUNT],
    pub(super) holds_slot: bool,
    pub(super) synthesized: bool,
    pub(super) delivered: bool,
    pub(super) cancelled: bool,
}

impl Live {
    /// Moves every class that still has bytes and sits before `to` up to `to`.
    pub(super) fn advance(&mut self, gauges: &mut Gauges, to: Stage) {
        for c in 0..BufferClass::COUNT {
            if self.remaining_bytes[c] > 0 && self.stage[c] < to {
                shift(gauges, c, self.remaining_bytes[c], self.stage[c], to);
                self.stage[c] = to;
            }
        }
    }

    pub(super) fn remaining_total_bytes(&self) -> u64 {
        self.remaining_bytes.iter().sum()
    }
}

/// Moves `bytes` of class index `c` from one stage gauge to another.
pub(super) fn shift(gauges: &mut Gauges, c: usize, bytes: u64, from: Stage, to: Stage) {
    gauges[c][from as usize] = gauges[c][from as usize].saturating_sub(bytes);
    gauges[c][to as usize] = gauges[c][to as usize].saturating_add(bytes);
}
