//! The synthesized partitions waiting for a device, most urgent first: a synthesis worker puts
//! its partition here and posts a [`TakeNext`](crate::engine::messages::TakeNext) to every Gpu
//! actor; an actor handling a token takes the most urgent partition waiting (the highest
//! priority, then the first queued), if any is left. So a CRITICAL partition waits only for the
//! partitions already on the devices, not for every one queued before it. Each device gets one
//! token per partition, so any one device alone would drain the queue; a token that finds it
//! empty (another device took the partition) does nothing.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::engine::messages::Prove;
use crate::scheduler::Priority;

/// The queue, shared by the synthesis and Gpu actors of one engine.
#[derive(Default)]
pub struct GpuQueue {
    inner: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    parts: BTreeMap<(Reverse<Priority>, u64), Prove>,
}

impl GpuQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        // A panic while held cannot leave the map half-updated (one insert or remove).
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a synthesized partition (ownership moves in).
    pub fn push(&self, prove: Prove) {
        let mut w = self.lock();
        let seq = w.next;
        w.next += 1;
        w.parts.insert((Reverse(prove.priority), seq), prove);
    }

    /// The most urgent partition waiting, moved out.
    pub fn pop(&self) -> Option<Prove> {
        self.lock().parts.pop_first().map(|(_, p)| p)
    }

    /// Partitions waiting.
    pub fn len(&self) -> usize {
        self.lock().parts.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
