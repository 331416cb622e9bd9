//! A proving request (one key, one circuit per partition) and the ledger footprint of its
//! partitions.

use std::sync::Arc;

use crate::groth16::key::ProvingKey;
use crate::ledger::{Footprint, PartitionShape};
use crate::scheduler::Priority;
use crate::stages::pipeline::PartitionCircuit;

/// A proving request: one key, one circuit per partition.
pub struct Request {
    pub(crate) pk: Arc<ProvingKey>,
    pub(crate) circuits: Vec<Arc<dyn PartitionCircuit>>,
    footprint: Option<Footprint>,
    priority: Priority,
    arrival: Option<u64>,
}

impl Request {
    /// Proofs of `circuits` (each a partition) under `pk`.
    pub fn new<C: PartitionCircuit>(pk: Arc<ProvingKey>, circuits: Vec<C>) -> Self {
        let circuits = circuits
            .into_iter()
            .map(|c| Arc::new(c) as Arc<dyn PartitionCircuit>)
            .collect();
        Self::shared(pk, circuits)
    }

    /// Proofs of circuits already shared (the daemon keeps them for retries and restarts).
    pub fn shared(pk: Arc<ProvingKey>, circuits: Vec<Arc<dyn PartitionCircuit>>) -> Self {
        Request {
            pk,
            circuits,
            footprint: None,
            priority: Priority::Normal,
            arrival: None,
        }
    }

    /// Sets the admission level (default [`Priority::Normal`]): the engine grants waiting
    /// partitions of higher levels first.
    pub fn with_priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// The admission level.
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// Places the job by `arrival` (any increasing count of the caller's) within its level,
    /// instead of behind everything submitted before it: a caller that prepares several jobs
    /// at once (keys loading, inputs checked) keeps them in the order it accepted them.
    pub fn with_arrival(mut self, arrival: u64) -> Self {
        self.arrival = Some(arrival);
        self
    }

    /// The arrival stated by [`with_arrival`](Self::with_arrival), if any.
    pub fn arrival(&self) -> Option<u64> {
        self.arrival
    }

    /// The proving key.
    pub fn key(&self) -> &Arc<ProvingKey> {
        &self.pk
    }

    /// The partitions' circuits, in request order.
    pub fn circuits(&self) -> &[Arc<dyn PartitionCircuit>] {
        &self.circuits
    }

    /// States the per-partition footprint instead of deriving it from the key (simulations).
    pub fn with_footprint(mut self, footprint: Footprint) -> Self {
        self.footprint = Some(footprint);
        self
    }

    /// The ledger footprint of one partition: stated, or from the key's shape.
    pub fn footprint(&self) -> Footprint {
        self.footprint.unwrap_or_else(|| footprint_of(&self.pk))
    }

    /// The footprint the request states, if it does.
    pub(crate) fn stated_footprint(&self) -> Option<Footprint> {
        self.footprint
    }
}

/// A partition's footprint from its key: d = |H| + 1, inputs = |IC|, aux = |L|.
pub fn footprint_of(pk: &ProvingKey) -> Footprint {
    let d = pk.h.len() as u64 + 1;
    let inputs = pk.vk.ic.len() as u64;
    Footprint::for_shape(PartitionShape {
        constraints: d.saturating_sub(inputs),
        inputs,
        aux: pk.l.len() as u64,
    })
}
