//! How an MSM of host scalars is cut into pieces (`gpu.msm_pieces`, `gpu.msm_first_piece`):
//! the host uploads piece k + 1 while the device runs piece k, so only the first piece's
//! upload is not hidden behind kernels.

use crate::gpu::options::{MsmFirstPiece, MSM_AUTO_PIECE, MSM_AUTO_PIECES, MSM_PIECE_MIN};

/// Pieces an MSM of n host scalars is cut into under `gpu.msm_pieces = asked`: as asked (0,
/// `"auto"`: one per [`MSM_AUTO_PIECE`] scalars, at most [`MSM_AUTO_PIECES`]) when every piece
/// keeps at least [`MSM_PIECE_MIN`] scalars and fits one launch sequence (`chunk` scalars),
/// otherwise fewer (1: whole, or the chunked path of larger MSMs).
pub fn msm_pieces(n: usize, asked: u32, chunk: usize) -> usize {
    let most = (n / MSM_PIECE_MIN).max(1);
    let asked = match asked {
        0 => (n / MSM_AUTO_PIECE).clamp(1, MSM_AUTO_PIECES),
        k => k as usize,
    };
    let k = asked.min(most);
    if k > 1 && n.div_ceil(k) <= chunk {
        k
    } else {
        1
    }
}

/// Scalars in a piece of a lean cut ([`Cut::Lean`]): below the sizes where the window rule
/// turns to its large windows, whose buckets and sorted digits take several GiB a piece.
pub const LEAN_PIECE: usize = 1 << 22;

/// How a partition call cuts its MSMs of device scalars into pieces (which share one set of
/// buckets, each piece's window an equal share's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// As `gpu.msm_pieces = asked` says ([`msm_pieces`]).
    Knob(u32),
    /// Pieces of at most [`LEAN_PIECE`] scalars: small windows and small scratch, for a device
    /// whose memory does not hold the call's buffers beside the knob's pieces (a capped or
    /// 16-32 GiB card), at some cost in bucket additions. H runs first, alone with a, b, c.
    Lean,
    /// The lean cut's pieces with the knob cut's order: a, b, c stay beside the witness's
    /// MSMs, so that H overlaps them, for the bytes of a, b, c more than [`Cut::Lean`] asks
    /// (`gpu.capped_cut = "overlap"`).
    Overlap,
}

impl Cut {
    /// Pieces an MSM of k device scalars is cut into.
    pub fn pieces(self, k: usize) -> usize {
        match self {
            Cut::Knob(asked) => msm_pieces(k, asked, k),
            Cut::Lean | Cut::Overlap => k.div_ceil(LEAN_PIECE).max(1),
        }
    }

    /// Whether H is computed before the witness's MSMs, so that a, b, c and the witness are
    /// never on the device together.
    pub fn h_first(self) -> bool {
        self == Cut::Lean
    }
}

/// Device scratch bytes an MSM of k scalars already on the device may need under `rule`, cut
/// into pieces as `cut` says: one piece's (an equal share's) at a time, the pieces' frees and
/// allocations being ordered on one stream.
pub fn resident_msm_scratch<G: crate::gpu::host::GpuGroup>(
    k: usize,
    rule: crate::gpu::options::WindowRule,
    cut: Cut,
) -> u64 {
    super::msm_scratch_bound::<G>(k.div_ceil(cut.pieces(k)), rule)
}

/// The bounds [lo, hi) of `pieces` consecutive pieces of n: near-equal, or with
/// [`MsmFirstPiece::Small`] a first piece of a quarter of that (at least [`MSM_PIECE_MIN`]
/// scalars) and the rest near-equal, where none of them then exceeds `chunk` scalars.
pub fn piece_bounds(
    n: usize,
    pieces: usize,
    first: MsmFirstPiece,
    chunk: usize,
) -> Vec<(usize, usize)> {
    let k = pieces.max(1);
    let equal = |lo: usize, len: usize, k: usize| {
        (0..k).map(move |i| (lo + i * len / k, lo + (i + 1) * len / k))
    };
    let small = (n / k / 4).max(MSM_PIECE_MIN).min(n / k);
    let rest = n - small;
    if first == MsmFirstPiece::Equal || k < 2 || rest.div_ceil(k - 1) > chunk {
        return equal(0, n, k).collect();
    }
    std::iter::once((0, small))
        .chain(equal(small, rest, k - 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msm_pieces_cover_the_scalars_and_keep_their_size() {
        let chunk = 1 << 28;
        assert_eq!(msm_pieces(1 << 26, 4, chunk), 4);
        assert_eq!(msm_pieces(1 << 26, 1, chunk), 1, "one asked, whole");
        assert_eq!(msm_pieces(1 << 26, 0, chunk), 4, "auto: 2^24 each");
        assert_eq!(msm_pieces(1 << 27, 0, chunk), 4, "auto: at most four");
        assert_eq!(msm_pieces(1 << 25, 0, chunk), 2);
        assert_eq!(
            msm_pieces((1 << 25) - 1, 0, chunk),
            1,
            "auto: whole below 2^25"
        );
        assert_eq!(msm_pieces(1 << 24, 0, chunk), 1);
        assert_eq!(msm_pieces(3 << 20, 8, chunk), 3, "pieces of 2^20 at least");
        assert_eq!(
            msm_pieces((1 << 20) - 1, 4, chunk),
            1,
            "small MSMs stay whole"
        );
        assert_eq!(
            msm_pieces(1 << 26, 2, 1 << 24),
            1,
            "a piece past one launch: the chunks"
        );
    }

    /// The pieces cover [0, n) in order, none empty.
    fn covers(b: &[(usize, usize)], n: usize, k: usize) {
        assert_eq!(b.len(), k);
        assert_eq!((b[0].0, b[k - 1].1), (0, n));
        assert!(b.windows(2).all(|w| w[0].1 == w[1].0), "consecutive");
        assert!(b.iter().all(|(lo, hi)| hi > lo), "none empty");
    }

    #[test]
    fn equal_pieces_differ_by_one_at_most() {
        for (n, k) in [(1usize << 26, 4usize), ((1 << 24) + 7, 3), (5_000_001, 2)] {
            let b = piece_bounds(n, k, MsmFirstPiece::Equal, n);
            covers(&b, n, k);
            assert!(b
                .iter()
                .all(|(lo, hi)| hi - lo >= n / k && hi - lo <= n / k + 1));
        }
    }

    #[test]
    fn a_small_first_piece_is_a_quarter_of_the_others_share() {
        let n = 1usize << 26;
        let b = piece_bounds(n, 4, MsmFirstPiece::Small, n);
        covers(&b, n, 4);
        assert_eq!(b[0], (0, 1 << 22), "a quarter of 2^24");
        let rest = n - (1 << 22);
        assert!(b[1..]
            .iter()
            .all(|(lo, hi)| hi - lo >= rest / 3 && hi - lo <= rest / 3 + 1));
        // At least MSM_PIECE_MIN, at most an equal share.
        let n = (1usize << 22) + 1000;
        let b = piece_bounds(n, 4, MsmFirstPiece::Small, n);
        covers(&b, n, 4);
        assert_eq!(b[0], (0, MSM_PIECE_MIN), "a quarter below 2^20");
        let n = (1usize << 22) - 4;
        let b = piece_bounds(n, 4, MsmFirstPiece::Small, n);
        assert_eq!(
            b,
            piece_bounds(n, 4, MsmFirstPiece::Equal, n),
            "shares below 2^20"
        );
        let n = 3 << 21;
        let b = piece_bounds(n, 2, MsmFirstPiece::Small, n);
        covers(&b, n, 2);
        assert_eq!(b[0].1, MSM_PIECE_MIN);
        // Equal again where the larger pieces would pass one launch sequence.
        let b = piece_bounds(1 << 26, 4, MsmFirstPiece::Small, 1 << 24);
        assert_eq!(b, piece_bounds(1 << 26, 4, MsmFirstPiece::Equal, 1 << 24));
        assert_eq!(piece_bounds(n, 1, MsmFirstPiece::Small, n), vec![(0, n)]);
    }
}
