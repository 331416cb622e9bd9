//! The Supervisor's admission of a new request ([`Submit`]) and its dry run ([`CheckRoom`]): a
//! job's key counts against memory while the job runs (`Ledger::use_key`) and its partitions'
//! footprint must fit the budget (`Ledger::admit`). A refusal that proving keys in use stand in
//! the way of is answered as [`EngineError::NoRoom`], with how many bytes they would have to
//! give back, so that an embedder can evict idle keys and try again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::{Context, Handler};

use super::{Job, Supervisor};
use crate::compiled::Recordings;
use crate::engine::actors::mailbox::took;
use crate::engine::messages::{Abandoned, CheckRoom, RoomKey, Submit};
use crate::engine::status::{EngineError, PartitionState, PartitionTimes, Rejection};
use crate::groth16::key::ProvingKey;
use crate::ledger::{Footprint, LedgerError};
use crate::metrics::ActorKind;
use crate::scheduler::Priority;
use crate::stages::pipeline::PartitionCircuit;

impl Supervisor {
    /// A job's per-partition footprint now ([`route_footprint`]); `streams`: every circuit of
    /// the job packs its witness as it goes.
    pub(super) fn footprint_for(
        &self,
        pk: &ProvingKey,
        stated: Option<Footprint>,
        streams: bool,
    ) -> Footprint {
        route_footprint(
            &self.recordings,
            RouteFlags {
                abc_on_device: self.abc_on_device,
                pack_witness: self.pack_witness,
                streams,
            },
            pk,
            stated,
        )
    }

    /// The bytes a key counts for while in use: its points, with its circuit's recording as far
    /// as its size is known (a recording the job's first synthesis makes is not counted until
    /// the key's next use), and, where witnesses wait packed, the room for each device to
    /// expand one of its partitions' witnesses while it runs it.
    pub(super) fn key_bytes(&self, pk: &ProvingKey) -> u64 {
        let expand = match self.pack_witness {
            true => (pk.l.len() * std::mem::size_of::<blstrs::Scalar>() * self.gpu.len()) as u64,
            false => 0,
        };
        pk.heap_bytes() + self.recordings.expected_bytes(pk) + expand
    }

    /// The answer to a job on key `own` that the ledger refused with `e`:
    /// [`EngineError::NoRoom`] when keys in use stand in its way, else `Rejected`.
    pub(super) fn refusal(&self, own: u64, e: LedgerError) -> EngineError {
        match self.ledger.short_of_keys(&e) {
            Some(short_bytes) => EngineError::NoRoom {
                short_bytes,
                idle_bytes: self.idle_key_bytes(own),
                cause: e,
            },
            None => EngineError::Rejected(Rejection::Ledger(e)),
        }
    }

    /// Bytes the ledger counts for pinned keys that no job uses, key `own` aside.
    fn idle_key_bytes(&self, own: u64) -> u64 {
        self.pinned
            .iter()
            .filter(|k| **k != own && !self.jobs.values().any(|j| j.pk.id() == **k))
            .filter_map(|k| self.ledger.key_bytes(*k))
            .sum()
    }
}

impl Handler<Submit> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: Submit, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        let Submit { id, request, reply } = msg;
        if self.refuse_new {
            let _ = reply.send(Err(EngineError::ShuttingDown));
            return;
        }
        if request.circuits.is_empty() {
            let _ = reply.send(Err(EngineError::Rejected(Rejection::Empty)));
            return;
        }
        let stated = request.stated_footprint();
        let streams = packs_as_they_go(&request.circuits);
        let footprint = self.footprint_for(&request.pk, stated, streams);
        // The key counts against memory while a job uses it (set aside from an auto budget, or
        // checked beside a stated one).
        let key = request.pk.id();
        let key_bytes = self.key_bytes(&request.pk);
        let available = &self.available;
        let admitted = self
            .ledger
            .use_key(key, key_bytes, || available())
            .and_then(|()| {
                self.ledger
                    .admit(&footprint)
                    .inspect_err(|_| self.ledger.unuse_key(key))
            });
        if let Err(e) = admitted {
            let _ = reply.send(Err(self.refusal(key, e)));
            return;
        }
        let n = request.circuits.len();
        let priority = request.priority();
        if priority == Priority::Critical {
            self.admission.note_critical(footprint.total_bytes());
        }
        if let Err(e) = self.admission.push_job(id, priority, n, request.arrival()) {
            self.ledger.unuse_key(key);
            let _ = reply.send(Err(EngineError::Rejected(Rejection::Scheduler(e))));
            return;
        }
        tracing::info!(
            job = id,
            partitions = n,
            %priority,
            footprint_bytes = footprint.total_bytes(),
            "job admitted"
        );
        // The devices take the key while the first partitions synthesize.
        self.warm(&request.pk);
        self.jobs.insert(
            id,
            Job {
                pk: request.pk,
                circuits: request.circuits,
                footprint,
                stated,
                proofs: vec![None; n],
                states: vec![PartitionState::Queued; n],
                attempts: vec![1; n],
                in_flight: 0,
                reply: Some(reply),
                failed: false,
                priority,
                submitted: Instant::now(),
                first_grant: None,
                since: vec![None; n],
                synthesis: Duration::ZERO,
                gpu: Duration::ZERO,
                times: vec![PartitionTimes::default(); n],
                abandoned: Abandoned::default(),
                span: tracing::info_span!(parent: None, "job", id, partitions = n),
            },
        );
        self.pump();
    }
}

impl Handler<CheckRoom> for Supervisor {
    type Result = ();

    fn handle(&mut self, msg: CheckRoom, _: &mut Context<Self>) {
        took(&self.metrics, ActorKind::Supervisor);
        if self.refuse_new {
            let _ = msg.reply.send(Err(EngineError::ShuttingDown));
            return;
        }
        // A key not loaded yet has no id (ids start at 1): it is one more key of `bytes`.
        let (own, key_bytes, footprint) = match &msg.key {
            RoomKey::Loaded(pk) => (
                pk.id(),
                self.key_bytes(pk),
                // No circuits at hand: the plain witness's route, the larger.
                self.footprint_for(pk, msg.footprint, false),
            ),
            RoomKey::Unloaded { bytes } => (0, *bytes, msg.footprint.unwrap_or_default()),
        };
        // The largest partition the ledger must still grant: this job's, or one of a job in
        // flight whose partitions still wait (each is checked against the budget as it starts).
        let largest = self
            .jobs
            .values()
            .filter(|j| !j.failed && j.states.contains(&PartitionState::Queued))
            .map(|j| j.footprint)
            .chain([footprint])
            .max_by_key(Footprint::total_bytes)
            .unwrap_or(footprint);
        let available = &self.available;
        let r = self
            .ledger
            .room_for(own, key_bytes, &largest, || available())
            .map_err(|e| self.refusal(own, e));
        let _ = msg.reply.send(r);
    }
}

/// Whether every one of a job's `circuits` packs its witness as it goes
/// ([`crate::stages::pipeline::PartitionCircuit::packs_as_it_goes`]).
pub(super) fn packs_as_they_go(circuits: &[Arc<dyn PartitionCircuit>]) -> bool {
    circuits.iter().all(|c| c.packs_as_it_goes())
}

/// What decides a partition's route besides its key: whether the devices evaluate a/b/c,
/// whether witnesses wait packed, and whether the job's circuits pack as they go.
#[derive(Clone, Copy, Debug)]
pub(super) struct RouteFlags {
    pub abc_on_device: bool,
    pub pack_witness: bool,
    pub streams: bool,
}

/// A partition's footprint by the route its synthesis takes now: `stated`, else its witness
/// alone on the host when its key's recording is ready and the devices evaluate a/b/c (packed,
/// where witnesses wait as bits: the packing room alone for circuits that pack as they go, the
/// plain witness and the room for the others), else the key's full shape: before the recording
/// is made, on the CPU path, or once the recording is distrusted or a device could not hold the
/// key's a/b/c ([`Recordings::abc_on_host`]).
pub(super) fn route_footprint(
    recordings: &Recordings,
    flags: RouteFlags,
    pk: &ProvingKey,
    stated: Option<Footprint>,
) -> Footprint {
    if let Some(f) = stated {
        return f;
    }
    match recordings.get(pk) {
        Some(rec) if flags.abc_on_device && !recordings.abc_on_host(pk) => {
            match (flags.pack_witness, flags.streams) {
                (true, true) => rec.streamed_footprint(),
                (true, false) => rec.packed_footprint(),
                (false, _) => rec.footprint(true),
            }
        }
        _ => crate::engine::request::footprint_of(pk),
    }
}
