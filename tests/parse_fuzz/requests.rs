//! Whole `SubmitProofRequest`s: a good one of some kind with a few of its fields changed (the
//! kind to any number, one kind's fields under another kind, each field to an edge value or to
//! mutated bytes), and the hex of a request's wire bytes for failure messages.

use std::fmt;

use baton::server::proto::SubmitProofRequest;
use proptest::collection::vec;
use proptest::option::weighted;
use proptest::prelude::*;
use proptest::sample::Index;
use prost::Message;

use super::mutate::{apply_bytes, byte_ops, odd_u64, ByteOp};
use super::seeds::Seeds;

/// A request shown as the hex of its wire bytes (what the journal keeps, what `decode` takes).
pub struct Wire<'a>(pub &'a SubmitProofRequest);

impl fmt::Debug for Wire<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SubmitProofRequest (kind {}, wire bytes {})",
            self.0.proof_kind,
            hex::encode(self.0.encode_to_vec())
        )
    }
}

/// Kind numbers: each of the wire's, and others.
pub fn kind_number() -> impl Strategy<Value = i32> {
    prop_oneof![
        6 => 0i32..=4,
        2 => prop_oneof![Just(1001), Just(1002)],
        1 => prop_oneof![Just(5), Just(1000), Just(1003), Just(-1), Just(i32::MAX), Just(i32::MIN), any::<i32>()],
    ]
}

fn short_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 32),
        vec(any::<u8>(), 0..64),
        Just(vec![0xff; 32]),
        Just(vec![0; 32]),
    ]
}

/// What `vanilla_proof` becomes.
#[derive(Clone, Debug)]
pub enum Doc {
    /// The seed's, with bytes changed.
    Mutated(Vec<ByteOp>),
    /// The bare C1 output.
    BareC1,
    /// Another kind's document (the built-in JSON or the envelope).
    Other(Index),
    /// Random bytes.
    Random(Vec<u8>),
}

/// What `vanilla_proofs` becomes.
#[derive(Clone, Debug)]
pub enum List {
    /// None at all.
    Empty,
    /// The first one this many times.
    Repeat(usize),
    /// One of them with bytes changed.
    Mutated(Index, Vec<ByteOp>),
    /// Another kind's list.
    Other(Index),
    /// Random bytes.
    Random(Vec<Vec<u8>>),
}

/// Which fields of a good request change, and to what.
#[derive(Clone, Debug)]
pub struct Fields {
    /// The kind sent.
    pub kind: i32,
    /// Whose good request the other fields start from (`None`: the kind's own).
    pub base: Option<Index>,
    priority: Option<i32>,
    registered_proof: Option<u64>,
    sector_size: Option<u64>,
    miner_id: Option<u64>,
    sector_number: Option<u64>,
    partition_index: Option<u32>,
    randomness: Option<Vec<u8>>,
    comms: [Option<Vec<u8>>; 3],
    vanilla_proof: Option<Doc>,
    vanilla_proofs: Option<List>,
}

/// A few fields changed, most left good.
pub fn fields() -> impl Strategy<Value = Fields> {
    let p = 0.15;
    let doc = prop_oneof![
        3 => byte_ops().prop_map(Doc::Mutated),
        1 => Just(Doc::BareC1),
        1 => any::<Index>().prop_map(Doc::Other),
        1 => vec(any::<u8>(), 0..512).prop_map(Doc::Random),
    ];
    let list = prop_oneof![
        1 => Just(List::Empty),
        1 => (2usize..6).prop_map(List::Repeat),
        4 => (any::<Index>(), byte_ops()).prop_map(|(i, o)| List::Mutated(i, o)),
        1 => any::<Index>().prop_map(List::Other),
        1 => vec(vec(any::<u8>(), 0..256), 1..4).prop_map(List::Random),
    ];
    let size = prop_oneof![
        Just(2048u64),
        Just(8 << 20),
        Just(512 << 20),
        Just(32 << 30),
        Just(64 << 30),
        odd_u64()
    ];
    (
        (kind_number(), weighted(0.2, any::<Index>())),
        (
            weighted(p, prop_oneof![0i32..=4, any::<i32>()]),
            weighted(p, prop_oneof![0u64..20, odd_u64()]),
            weighted(p, size),
            weighted(p, odd_u64()),
            weighted(p, odd_u64()),
            weighted(p, prop_oneof![0u32..4, any::<u32>()]),
        ),
        (
            weighted(p, short_bytes()),
            [
                weighted(p, short_bytes()),
                weighted(p, short_bytes()),
                weighted(p, short_bytes()),
            ],
            weighted(0.4, doc),
            weighted(0.4, list),
        ),
    )
        .prop_map(
            |((kind, base), (pr, rp, ss, mi, sn, pi), (ra, comms, vp, vps))| Fields {
                kind,
                base,
                priority: pr,
                registered_proof: rp,
                sector_size: ss,
                miner_id: mi,
                sector_number: sn,
                partition_index: pi,
                randomness: ra,
                comms,
                vanilla_proof: vp,
                vanilla_proofs: vps,
            },
        )
}

impl Fields {
    /// The request: the base's good one with these changes.
    pub fn request(&self, seeds: &Seeds) -> SubmitProofRequest {
        let all = seeds.all();
        let kind = baton::server::proto::ProofKind::try_from(self.kind)
            .unwrap_or(baton::server::proto::ProofKind::BatonSynthetic);
        let mut r = match &self.base {
            Some(i) => all[i.index(all.len())].clone(),
            None => seeds.request(kind),
        };
        r.proof_kind = self.kind;
        let set = |dst: &mut u64, v: &Option<u64>| {
            if let Some(v) = v {
                *dst = *v;
            }
        };
        set(&mut r.registered_proof, &self.registered_proof);
        set(&mut r.sector_size, &self.sector_size);
        set(&mut r.miner_id, &self.miner_id);
        set(&mut r.sector_number, &self.sector_number);
        if let Some(v) = self.priority {
            r.priority = v;
        }
        if let Some(v) = self.partition_index {
            r.partition_index = v;
        }
        if let Some(v) = &self.randomness {
            r.randomness = v.clone();
        }
        for (dst, v) in [&mut r.comm_r_old, &mut r.comm_r_new, &mut r.comm_d_new]
            .into_iter()
            .zip(&self.comms)
        {
            if let Some(v) = v {
                *dst = v.clone();
            }
        }
        match &self.vanilla_proof {
            None => {}
            Some(Doc::Mutated(ops)) => r.vanilla_proof = apply_bytes(&r.vanilla_proof, ops),
            Some(Doc::BareC1) => r.vanilla_proof = seeds.c1_json.clone(),
            Some(Doc::Other(i)) => r.vanilla_proof = all[i.index(all.len())].vanilla_proof.clone(),
            Some(Doc::Random(b)) => r.vanilla_proof = b.clone(),
        }
        match &self.vanilla_proofs {
            None => {}
            Some(List::Empty) => r.vanilla_proofs.clear(),
            Some(List::Repeat(n)) => {
                let first = r.vanilla_proofs.first().cloned().unwrap_or_default();
                r.vanilla_proofs = vec![first; *n];
            }
            Some(List::Mutated(i, ops)) => {
                if r.vanilla_proofs.is_empty() {
                    r.vanilla_proofs.push(Vec::new());
                }
                let k = i.index(r.vanilla_proofs.len());
                r.vanilla_proofs[k] = apply_bytes(&r.vanilla_proofs[k], ops);
            }
            Some(List::Other(i)) => {
                r.vanilla_proofs = all[i.index(all.len())].vanilla_proofs.clone()
            }
            Some(List::Random(v)) => r.vanilla_proofs = v.clone(),
        }
        r
    }
}
