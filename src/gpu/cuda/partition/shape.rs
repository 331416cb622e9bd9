//! The sizes of one partition, checked against its key, and the device bytes its call needs
//! beyond the resident bases.

use blstrs::{G1Affine, G2Affine};

use crate::gpu::cuda::memory::BasesKey;
use crate::gpu::host::{G1, G2};
use crate::gpu::options::WindowRule;
use crate::gpu::plan::{self, Cut};
use crate::groth16::backend::Query;
use crate::groth16::error::{Error, Result};
use crate::groth16::key::ProvingKey;
use crate::groth16::msm::Scalars;
use crate::groth16::prover::Witness;

/// The sizes of one partition, checked against its key.
pub(crate) struct Shape {
    pub log_n: u32,
    pub n: usize,
    pub m_aux: usize,
    pub a_split: usize,
    pub b_split: usize,
    pub a_kept: usize,
    pub b_kept: usize,
    /// Device bytes a witness that arrived packed takes beside its plain values while the
    /// device expands it (its bits, dense values and counts); 0 for a plain one.
    pub packed_bytes: u64,
}

fn mismatch(what: &'static str, key: usize, circuit: usize) -> Error {
    Error::KeyMismatch { what, key, circuit }
}

/// The domain size of `pk`'s partitions: its H query's length + 1, a power of two ≥ 2.
fn domain_size(pk: &ProvingKey) -> Result<usize> {
    let n = pk.h.len() + 1;
    if !n.is_power_of_two() || n < 2 {
        return Err(mismatch("H query (domain size − 1)", pk.h.len(), n - 1));
    }
    Ok(n)
}

/// Which of a call's MSMs read resident bases, by query: H, L, A, B_G1 (the order of
/// [`queries`]) and B_G2. A resident MSM's scratch is the call's ([`Shape::need_bytes`]); a
/// streamed one's is in the room kept for streaming ([`plan::STREAM_ROOM`]).
pub(crate) type ResidentMsms = [bool; 5];

/// Every MSM of a call over resident bases, B_G2's where the call computes it.
pub(crate) fn every_msm_resident(with_b_g2: bool) -> ResidentMsms {
    [true, true, true, true, with_b_g2]
}

impl Shape {
    pub fn of(pk: &ProvingKey, w: &Witness, with_b_g2: bool) -> Result<Self> {
        let n = domain_size(pk)?;
        let (m_in, m_aux) = (w.inputs.len(), w.aux_len());
        let (a_kept, b_kept) = (w.a_aux_density.count(), w.b_aux_density.count());
        let b_in = w.b_input_density.count();
        let checks = [
            ("private variables (L query)", pk.l.len(), m_aux),
            ("A query", pk.a.len(), m_in + a_kept),
            ("B_G1 query", pk.b_g1.len(), b_in + b_kept),
            ("A density", m_aux, w.a_aux_density.len()),
            ("B density", m_aux, w.b_aux_density.len()),
            ("B input density", m_in, w.b_input_density.len()),
        ];
        for (what, key, circuit) in checks {
            if key != circuit {
                return Err(mismatch(what, key, circuit));
            }
        }
        if with_b_g2 && pk.b_g2.len() != b_in + b_kept {
            return Err(mismatch("B_G2 query", pk.b_g2.len(), b_in + b_kept));
        }
        let packed_bytes = match w.aux_scalars() {
            Scalars::Packed(p) => crate::gpu::cuda::witness::expand_room(p),
            Scalars::Plain(_) => 0,
        };
        Ok(Shape {
            log_n: n.trailing_zeros(),
            n,
            m_aux,
            a_split: m_in,
            b_split: b_in,
            a_kept,
            b_kept,
            packed_bytes,
        })
    }

    /// The largest partition `pk` can have, before any witness says how many variables A and
    /// B keep: every private variable in both. For room checks ahead of a key's partitions.
    /// `None` for a key no partition can have (see [`Shape::of`]).
    pub fn largest(pk: &ProvingKey) -> Option<Self> {
        let n = domain_size(pk).ok()?;
        let m_aux = pk.l.len();
        Some(Shape {
            log_n: n.trailing_zeros(),
            n,
            m_aux,
            a_split: 0,
            b_split: 0,
            a_kept: m_aux,
            b_kept: m_aux,
            packed_bytes: 0,
        })
    }

    /// Device bytes of the call beyond the resident bases under the window rule `window`: the
    /// witness (with the larger of its filtered copies, A's being freed before B's is made,
    /// and the bitmaps), a, b, c and the largest scratch of the witness's MSMs, which run
    /// while a, b, c upload; later h and its MSM's scratch. Only the MSMs `resident` names
    /// count scratch here.
    /// The MSMs are cut into pieces as `cut` says; the lean cut also runs H before the
    /// witness's MSMs, so that h alone of a, b, c stays beside them ([`Cut::h_first`]).
    pub fn need_bytes(&self, resident: ResidentMsms, window: WindowRule, cut: Cut) -> u64 {
        let fr = 32u64;
        // A streamed MSM's scratch is in the stream room, not the call's.
        let g1 = |i: usize, k: usize| match resident[i] {
            true => plan::resident_msm_scratch::<G1>(k, window, cut),
            false => 0,
        };
        let witness_scratch = [
            g1(1, self.m_aux),
            g1(2, self.a_kept),
            g1(3, self.b_kept),
            match resident[4] {
                true => plan::resident_msm_scratch::<G2>(self.b_kept, window, cut),
                false => 0,
            },
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        // A packed witness's parts are freed once it is expanded, before the filtered copies
        // and the MSMs' scratch exist.
        let plain = fr * self.m_aux as u64;
        let witness = (plain
            + fr * self.a_kept.max(self.b_kept) as u64
            + self.m_aux as u64 / 2
            + witness_scratch)
            .max(plain + self.packed_bytes);
        let abc = self.abc_bytes();
        let h = abc / 3;
        let h_msm = h + g1(0, self.n - 1);
        match cut {
            // The witness's MSMs beside a, b, c.
            Cut::Knob(_) | Cut::Overlap => (witness + abc).max(h_msm),
            // H first; then h beside the witness's MSMs.
            Cut::Lean => abc.max(h + witness).max(h_msm),
        }
    }

    /// Device bytes of a, b and c over the domain (h takes one of the three buffers):
    /// [`Self::need_bytes`] counts them in every phase they live.
    pub fn abc_bytes(&self) -> u64 {
        3 * 32 * self.n as u64
    }
}

/// One MSM of the call: its resident bases and the host points they stand for. A query is
/// resident whole (its key names the whole query), so that a key can be made resident before
/// any partition says where A's and B's inputs end; the MSM reads it from `skip` on.
pub(crate) struct QueryBases<'a, P> {
    pub key_id: u64,
    pub query: Query,
    /// The whole query.
    pub whole: &'a [P],
    /// Where this MSM's bases start inside it.
    pub skip: usize,
}

impl<'a, P> QueryBases<'a, P> {
    /// The resident set: the whole query.
    pub fn key(&self) -> BasesKey {
        (self.key_id, self.query, 0, self.whole.len())
    }

    /// The MSM's own bases on the host.
    pub fn points(&self) -> &'a [P] {
        self.whole.get(self.skip..).unwrap_or(&[])
    }
}

/// The G1 queries of a partition's MSMs (H, L, A's and B's aux parts, which start at
/// `a_split` and `b_split`), in that order, and its B_G2 aux part when asked for.
pub(crate) fn queries(
    pk: &ProvingKey,
    a_split: usize,
    b_split: usize,
    with_b_g2: bool,
) -> (
    [QueryBases<'_, G1Affine>; 4],
    Option<QueryBases<'_, G2Affine>>,
) {
    let key_id = pk.id();
    let q = |query, whole, skip| QueryBases {
        key_id,
        query,
        whole,
        skip,
    };
    (
        [
            q(Query::H, &pk.h[..], 0),
            q(Query::L, &pk.l[..], 0),
            q(Query::A, &pk.a[..], a_split),
            q(Query::BG1, &pk.b_g1[..], b_split),
        ],
        with_b_g2.then(|| QueryBases {
            key_id,
            query: Query::BG2,
            whole: &pk.b_g2[..],
            skip: b_split,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::options::GpuOptions;

    /// A PoRep-like partition of domain 2^log: every variable in A and B.
    fn porep(log: u32) -> Shape {
        let n = 1usize << log;
        Shape {
            log_n: log,
            n,
            m_aux: n - 5,
            a_split: 5,
            b_split: 5,
            a_kept: n - 5,
            b_kept: n - 5,
            packed_bytes: 0,
        }
    }

    #[test]
    fn a_streamed_msm_leaves_its_scratch_to_the_stream_room() {
        let rule = GpuOptions::default().window_rule();
        let sh = porep(26);
        let (g1, g2) = (
            plan::resident_msm_scratch::<G1>(sh.b_kept, rule, Cut::Lean),
            plan::resident_msm_scratch::<G2>(sh.b_kept, rule, Cut::Lean),
        );
        assert!(
            g2 > g1,
            "a G2 piece's scratch is the largest: {g2} against {g1}"
        );
        let every = sh.need_bytes(every_msm_resident(true), rule, Cut::Lean);
        // B_G2 streamed: the largest scratch is a G1 MSM's.
        let no_g2 = sh.need_bytes([true, true, true, true, false], rule, Cut::Lean);
        assert_eq!(every - no_g2, g2 - g1);
        assert_eq!(
            no_g2,
            sh.need_bytes(every_msm_resident(false), rule, Cut::Lean)
        );
        // H streamed as well: h's MSM scratch goes too, and the witness's phase is the peak.
        let no_h = sh.need_bytes([false, true, true, true, false], rule, Cut::Lean);
        assert!(no_h <= no_g2);
        // Nothing resident: the lean call is a, b, c, or h beside the witness and its copies.
        let none = sh.need_bytes([false; 5], rule, Cut::Lean);
        let (fr, m) = (32u64, sh.m_aux as u64);
        let witness = fr * m + fr * sh.b_kept as u64 + m / 2;
        assert_eq!(none, sh.abc_bytes().max(sh.abc_bytes() / 3 + witness));
        assert!(none < no_h);
    }

    #[test]
    fn pieces_let_the_largest_partition_fit_beside_its_key() {
        let rule = GpuOptions::default().window_rule();
        let gib = 1u64 << 30;
        let sh = porep(27);
        let n = sh.n as u64;
        // The resident key: H, L, A, B_G1 (96-byte points) and B_G2 (192), and the twiddles.
        let key = 4 * 96 * n + 192 * n + 32 * n;
        let whole = sh.need_bytes(every_msm_resident(true), rule, Cut::Knob(1));
        let cut = sh.need_bytes(every_msm_resident(true), rule, Cut::Knob(0));
        assert!(cut < whole, "pieces {cut} against whole {whole}");
        // An H200 reports about 140 GiB; the memory policy keeps 1/64 of it back.
        assert!(
            key + cut < 137 * gib,
            "2^27: key {} + call {} GiB",
            key / gib,
            cut / gib
        );
        // The lean cut leaves a 2^26 call within a 16 GiB card beside its twiddles, and a
        // 2^27 one within 24 GiB.
        let lean = porep(26).need_bytes(every_msm_resident(true), rule, Cut::Lean);
        assert!(lean < porep(26).need_bytes(every_msm_resident(true), rule, Cut::Knob(0)));
        // The overlap cut asks the lean pieces' bytes with a, b, c beside them: below the
        // knob's pieces, above the lean cut by at most a, b, c.
        let overlap = porep(26).need_bytes(every_msm_resident(true), rule, Cut::Overlap);
        assert!(
            lean < overlap
                && overlap < porep(26).need_bytes(every_msm_resident(true), rule, Cut::Knob(0))
        );
        assert!(overlap <= lean + porep(26).abc_bytes());
        assert!(lean + (2 << 30) < 12 * gib, "2^26 lean: {} MiB", lean >> 20);
        let lean27 = porep(27).need_bytes(every_msm_resident(true), rule, Cut::Lean);
        assert!(
            lean27 + (4 << 30) < 31 * gib,
            "2^27 lean: {} MiB",
            lean27 >> 20
        );
        // With split twiddles a 2^27 call and the least room its streamed sets need fit a
        // 16 GiB card less the memory policy's margin (a 64th); the whole table does not.
        let least = plan::streamed_minimum::<G1>(1 << 27, rule, plan::Streams::Points).max(
            plan::streamed_minimum::<G2>(1 << 27, rule, plan::Streams::Points),
        );
        let beside = lean27 + plan::H_TABLES_BYTES + least;
        let card = 16 * gib - gib / 4;
        let split = plan::twiddle_bytes(27, plan::twiddle_split(27, true));
        assert!(
            beside + split <= card,
            "2^27 lean {} MiB + least streaming {} MiB",
            lean27 >> 20,
            least >> 20
        );
        assert!(beside + plan::twiddle_bytes(27, 0) > card);
        // A packed PoRep witness (a 24th dense, two bitmaps and the counts) expands in less
        // than its filtered copies take later: the need is the plain witness's. Parts larger
        // than those copies and the MSMs' scratch are what the call needs.
        let m = sh.m_aux as u64;
        let packed = Shape {
            packed_bytes: m / 24 * 32 + m / 4 + m / 8,
            ..porep(27)
        };
        for c in [Cut::Lean, Cut::Knob(0)] {
            assert_eq!(
                packed.need_bytes(every_msm_resident(true), rule, c),
                sh.need_bytes(every_msm_resident(true), rule, c)
            );
        }
        let huge = Shape {
            packed_bytes: 64 * m,
            ..porep(27)
        };
        assert_eq!(
            huge.need_bytes(every_msm_resident(true), rule, Cut::Lean),
            32 * n + 32 * m + 64 * m
        );
        // Below the piece size the MSMs stay whole, and the need with them.
        let small = porep(22);
        assert_eq!(
            small.need_bytes(every_msm_resident(true), rule, Cut::Knob(0)),
            small.need_bytes(every_msm_resident(true), rule, Cut::Knob(1))
        );
    }
}
