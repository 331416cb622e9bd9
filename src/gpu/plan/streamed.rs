//! The plan of an MSM whose bases stream from the host (a key the device cannot hold beside
//! what it keeps, as under `gpu.memory_limit` on a 16-32 GiB card): the points and scalars go
//! up in equal pieces through [`STREAM_SLOTS`] rotating device slots, the next piece's copy
//! running while the device sums the current one, so one piece's slot pair and one piece's
//! scratch are all the device holds for it.

use super::msm_scratch_bound;
use crate::gpu::host::{GpuGroup, FR_LIMBS};
use crate::gpu::options::WindowRule;

/// Device slots a streamed MSM rotates through: a piece uploads into one while the kernels of
/// the piece before it read another.
pub const STREAM_SLOTS: usize = 2;

/// The fewest points a streamed piece holds: below it the per-piece work (counting, the
/// bucket reduction of a window change) outweighs the copy it hides.
pub const STREAM_PIECE_MIN: usize = 1 << 16;

/// Pieces a streamed MSM is cut into at least (when it has the points): the first piece's
/// upload is the one no kernel hides, so a quarter of the copy at most shows.
pub const STREAM_PIECES_MIN: usize = 4;

/// Device bytes a partition call keeps for the MSMs whose bases stream beside it (a key that
/// cannot be resident whole beside the call): enough for pieces of 2^22 G1 or 2^21 G2 points
/// (a piece's scratch is most of it), each piece's copy hidden behind the kernels of the one
/// before it.
pub const STREAM_ROOM: u64 = 3 << 30;

/// The streaming rooms of a partition call with `spare` device bytes beside its own buffers:
/// (the witness's MSMs' room, H's), the first at least `least` bytes. With `h_least` (H's MSM
/// may run beside the witness's, `gpu.experimental.capped_h_beside`) and room for both
/// smallest pieces, the spare is shared evenly, each room at most [`STREAM_ROOM`] and H's at
/// least `h_least`; else H's room is 0 (its MSM streams after the witness's, in the first).
pub fn split_rooms(spare: u64, least: u64, h_least: Option<u64>) -> (u64, u64) {
    let alone = (spare.min(STREAM_ROOM).max(least), 0);
    let Some(h_least) = h_least.filter(|&h| spare >= least + h) else {
        return alone;
    };
    let first = (spare / 2).min(STREAM_ROOM).max(least).min(spare - h_least);
    (first, (spare - first).min(STREAM_ROOM))
}

/// What a streamed MSM's slots hold: the points and their scalars (scalars on the host, the
/// per-call path), or the points alone (scalars already on the device, a partition call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Streams {
    /// Points and scalars both go up piece by piece.
    PointsAndScalars,
    /// Only the points go up; the scalars are read where they are.
    Points,
}

impl Streams {
    /// u64 limbs a slot holds per point of group `G`.
    fn slot_limbs<G: GpuGroup>(self) -> u64 {
        match self {
            Streams::PointsAndScalars => (G::AFFINE_LIMBS + FR_LIMBS) as u64,
            Streams::Points => G::AFFINE_LIMBS as u64,
        }
    }
}

/// Device bytes a streamed MSM of group `G` needs with pieces of `len` points: every slot's
/// points (and scalars, per `what`), and one piece's scratch under `rule`.
pub fn streamed_bytes<G: GpuGroup>(len: usize, rule: WindowRule, what: Streams) -> u64 {
    let slot = len as u64 * 8 * what.slot_limbs::<G>();
    STREAM_SLOTS as u64 * slot + msm_scratch_bound::<G>(len, rule)
}

/// The device bytes the smallest streamed MSM of n points needs: what a device must have
/// free for it at all.
pub fn streamed_minimum<G: GpuGroup>(n: usize, rule: WindowRule, what: Streams) -> u64 {
    streamed_bytes::<G>(n.clamp(1, STREAM_PIECE_MIN), rule, what)
}

/// How many equal pieces a streamed MSM of n points is cut into within `room` device bytes,
/// each at most `most` points (one launch sequence): the fewest that fit, and at least
/// [`STREAM_PIECES_MIN`] where each keeps [`STREAM_PIECE_MIN`] points; a power of two.
/// `Err(minimum)`: even pieces of [`STREAM_PIECE_MIN`] points do not fit, the bytes they need.
pub fn streamed_pieces<G: GpuGroup>(
    n: usize,
    most: usize,
    room: u64,
    rule: WindowRule,
    what: Streams,
) -> Result<usize, u64> {
    let n = n.max(1);
    let at_most = n.div_ceil(STREAM_PIECE_MIN).next_power_of_two();
    let floor = STREAM_PIECES_MIN.min((n / STREAM_PIECE_MIN).max(1));
    let mut k = 1usize << floor.ilog2();
    loop {
        let len = n.div_ceil(k);
        if len <= most && streamed_bytes::<G>(len, rule, what) <= room {
            return Ok(k);
        }
        if k >= at_most {
            return Err(streamed_minimum::<G>(n, rule, what));
        }
        k *= 2;
    }
}

/// Bytes of a domain's H tables kept on the device (two scale tables, 1/Z), with slack.
pub const H_TABLES_BYTES: u64 = 3 << 20;

/// The least device memory a partition of a domain of 2^log_n needs on the capped path, and
/// what that is: the twiddles (`twiddles` bytes, in the device's layout) and H tables
/// (resident throughout), beside the larger of H in two buffers and the smallest streamed
/// pieces of its largest MSM (`g1_points` in its largest G1 query, `g2_points` in B_G2 when
/// the device computes it, else 0).
pub fn partition_minimum(
    log_n: u32,
    twiddles: u64,
    g1_points: usize,
    g2_points: usize,
    rule: WindowRule,
) -> (u64, &'static str) {
    let buf = 32u64 << log_n;
    let h = 2 * buf;
    let g1 = streamed_minimum::<crate::gpu::host::G1>(g1_points, rule, Streams::PointsAndScalars);
    let g2 = match g2_points {
        0 => 0,
        k => streamed_minimum::<crate::gpu::host::G2>(k, rule, Streams::PointsAndScalars),
    };
    let (most, why) = if h >= g1.max(g2) {
        (h, "the twiddles and H's tables beside H in two buffers")
    } else {
        (
            g1.max(g2),
            "the twiddles and H's tables beside the smallest streamed MSM pieces",
        )
    };
    (twiddles + H_TABLES_BYTES + most, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::host::{G1, G2};
    use crate::gpu::options::GpuOptions;

    const PS: Streams = Streams::PointsAndScalars;

    #[test]
    fn rooms_are_shared_only_where_both_smallest_pieces_fit() {
        let gib = 1u64 << 30;
        // Without H beside, or too little for both least rooms: one room, as before.
        assert_eq!(split_rooms(8 * gib, gib, None), (STREAM_ROOM, 0));
        assert_eq!(split_rooms(gib / 2, gib, None), (gib, 0));
        assert_eq!(
            split_rooms(gib + gib / 2, gib, Some(gib)),
            (gib + gib / 2, 0)
        );
        // Plenty: a full room each.
        assert_eq!(
            split_rooms(8 * gib, gib, Some(gib)),
            (STREAM_ROOM, STREAM_ROOM)
        );
        // Short: an even share, neither below its least, the two within the spare.
        for (spare, least, h) in [(4 * gib, gib, gib), (3 * gib, 2 * gib, gib / 2)] {
            let (w, hr) = split_rooms(spare, least, Some(h));
            assert!(
                w >= least && hr >= h && w + hr <= spare,
                "{spare} {least} {h}"
            );
        }
        assert_eq!(split_rooms(4 * gib, gib, Some(gib)), (2 * gib, 2 * gib));
    }

    fn rule() -> WindowRule {
        GpuOptions::default().window_rule()
    }

    #[test]
    fn the_pieces_fit_the_room_and_are_as_few_as_fit() {
        let n = 1usize << 27;
        for room in [16u64 << 30, 8 << 30, 2 << 30, 1 << 30, 256 << 20] {
            let k = streamed_pieces::<G1>(n, n, room, rule(), PS).expect("fits");
            let len = n.div_ceil(k);
            assert!(
                streamed_bytes::<G1>(len, rule(), PS) <= room,
                "room {room}: {k}"
            );
            assert!(k >= STREAM_PIECES_MIN && k.is_power_of_two());
            if k > STREAM_PIECES_MIN {
                let fewer = n.div_ceil(k / 2);
                assert!(
                    streamed_bytes::<G1>(fewer, rule(), PS) > room,
                    "room {room}: half as many pieces would fit too"
                );
            }
        }
        // Less room, more pieces; G2's points are twice G1's.
        let g1 = streamed_pieces::<G1>(n, n, 1 << 30, rule(), PS).expect("G1");
        let g2 = streamed_pieces::<G2>(n, n, 1 << 30, rule(), PS).expect("G2");
        assert!(g2 > g1, "{g2} > {g1}");
        assert!(streamed_pieces::<G1>(n, n, 512 << 20, rule(), PS).expect("less") > g1);
    }

    #[test]
    fn device_scalars_leave_the_slots_to_the_points() {
        let n = 1usize << 26;
        let both = streamed_pieces::<G1>(n, n, STREAM_ROOM, rule(), PS).expect("fits");
        let points = streamed_pieces::<G1>(n, n, STREAM_ROOM, rule(), Streams::Points);
        let points = points.expect("fits");
        eprintln!("2^26 in {STREAM_ROOM} bytes: {both} pieces with scalars, {points} without");
        assert!(points <= both, "no more pieces with the scalars resident");
        assert!(
            streamed_bytes::<G1>(n / points, rule(), Streams::Points)
                <= streamed_bytes::<G1>(n / points, rule(), PS)
        );
        assert!(
            streamed_bytes::<G2>(1 << 20, rule(), Streams::Points)
                < streamed_bytes::<G2>(1 << 20, rule(), PS)
        );
        // The partition's room takes the 2^27 queries in pieces of at least 2^22 points.
        for (k, per) in [
            (
                streamed_pieces::<G1>(1 << 27, 1 << 27, STREAM_ROOM, rule(), Streams::Points),
                1 << 22,
            ),
            (
                streamed_pieces::<G2>(1 << 27, 1 << 27, STREAM_ROOM, rule(), Streams::Points),
                1 << 21,
            ),
        ] {
            let k = k.expect("fits the room");
            assert!((1usize << 27) / k >= per, "{k} pieces");
        }
    }

    #[test]
    fn a_piece_stays_within_one_launch_sequence() {
        let n = 1usize << 27;
        let k = streamed_pieces::<G1>(n, 1 << 24, u64::MAX, rule(), PS).expect("fits");
        assert_eq!(k, 8, "2^27 points in pieces of at most 2^24");
    }

    #[test]
    fn a_partition_needs_its_twiddles_and_h_in_two_buffers_at_least() {
        let full = crate::gpu::plan::twiddle_bytes(27, 0);
        let (min, why) = partition_minimum(27, full, 1 << 27, 1 << 27, rule());
        assert_eq!(min, 3 * (32u64 << 27) + H_TABLES_BYTES, "{why}");
        assert!(why.contains("H in two buffers"));
        assert!(min < 13 << 30, "2^27 fits a 16 GiB card: {min}");
        // Split twiddles: a third less.
        let split = crate::gpu::plan::twiddle_bytes(27, 14);
        let (less, _) = partition_minimum(27, split, 1 << 27, 1 << 27, rule());
        assert_eq!(min - less, full - split);
        // A tiny domain: the MSM pieces dominate.
        let (min, why) = partition_minimum(8, 32 << 8, 1 << 8, 1 << 8, rule());
        assert!(why.contains("streamed"), "{why}");
        assert!(min > (32 << 8) + H_TABLES_BYTES);
    }

    #[test]
    fn small_msms_keep_pieces_of_the_minimum_and_too_little_room_says_the_minimum() {
        // Fewer than four minimum pieces' worth: as many as keep the minimum (a power of two).
        let k = streamed_pieces::<G1>(3 * STREAM_PIECE_MIN, 1 << 30, u64::MAX, rule(), PS);
        assert_eq!(k, Ok(2), "3 pieces of the minimum, down to a power of two");
        let k = streamed_pieces::<G1>(STREAM_PIECE_MIN / 2, 1 << 30, u64::MAX, rule(), PS);
        assert_eq!(k, Ok(1));
        let min = streamed_minimum::<G1>(1 << 27, rule(), PS);
        assert_eq!(
            streamed_pieces::<G1>(1 << 27, 1 << 30, min - 1, rule(), PS),
            Err(min)
        );
        assert!(streamed_pieces::<G1>(1 << 27, 1 << 30, min, rule(), PS).is_ok());
        assert!(min < 256 << 20, "the floor is small beside a card: {min}");
    }
}
