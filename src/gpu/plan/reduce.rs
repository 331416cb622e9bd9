//! The level plan of the MSM's bucket reduction (`msm_reduce_level`): how each window's buckets
//! come down to one value, sized so that every multiprocessor stays busy.

/// One `msm_reduce_level` launch: each window's `m` values in groups of 2^`lg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceLevel {
    /// Values per window going in.
    pub m: u32,
    /// log2 of the group size.
    pub lg: u32,
}

impl ReduceLevel {
    /// Values per window coming out.
    pub fn groups(&self) -> u32 {
        self.m >> self.lg
    }
}

/// Threads of `msm_reduce_level` one multiprocessor keeps in flight (the kernel's registers
/// allow about this many).
const REDUCE_THREADS_PER_SM: u64 = 256;
/// A launch's fixed cost, in units of one point addition by one thread.
const LAUNCH_COST: u64 = 1;

/// The levels that take each of `nwin` windows of `half` buckets down to one value, chosen to
/// keep every multiprocessor busy: a level of g groups of 2^lg costs about
/// ⌈nwin·g / capacity⌉ waves of (2 or 3)·2^lg + lg serial additions (the first level adds
/// twice per value, later ones three times; R is doubled lg times), plus a launch. A plan of
/// few wide groups leaves most of the device idle while a few threads add hundreds of points
/// one after another; many narrow levels cost launches. `half` is a power of two ≥ 2.
pub fn reduce_plan(nwin: u32, half: u32, sms: u32) -> Vec<ReduceLevel> {
    let capacity = sms.max(1) as u64 * REDUCE_THREADS_PER_SM;
    let top = 31 - half.max(2).leading_zeros();
    // best[l][first]: (cost, lg) to reduce 2^l values per window to one.
    let mut best = vec![[(0u64, 0u32); 2]; top as usize + 1];
    for l in 1..=top {
        for first in 0..2 {
            let per_value = if first == 1 { 2 } else { 3 };
            let mut choice = (u64::MAX, 1);
            for lg in 1..=l.min(7) {
                let threads = nwin as u64 * (1u64 << (l - lg));
                let waves = threads.div_ceil(capacity);
                let cost = waves * (per_value * (1u64 << lg) + lg as u64)
                    + LAUNCH_COST
                    + best[(l - lg) as usize][0].0;
                if cost < choice.0 {
                    choice = (cost, lg);
                }
            }
            best[l as usize][first] = choice;
        }
    }
    let mut out = Vec::new();
    let (mut l, mut first) = (top, 1);
    while l > 0 {
        let lg = best[l as usize][first].1;
        out.push(ReduceLevel { m: 1 << l, lg });
        l -= lg;
        first = 0;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::plan::{MsmShape, DEFAULT_SMS};

    #[test]
    fn reduce_plans_end_at_one_value_and_keep_the_device_busy() {
        for c in 2..=22u32 {
            let sh = MsmShape::new(1 << 20, c);
            let plan = sh.reduce_levels(DEFAULT_SMS);
            assert_eq!(plan[0].m, sh.half, "c {c}: starts at the buckets");
            for w in plan.windows(2) {
                assert_eq!(w[0].groups(), w[1].m, "c {c}: levels chain");
            }
            let last = plan.last().expect("a level");
            assert_eq!(last.groups(), 1, "c {c}: one value per window");
            assert!(plan.iter().all(|l| (1..=7).contains(&l.lg)));
        }
        // 2^20 points, c = 16: 16 windows of 2^15 buckets. The old plan (groups of 128) ran
        // 4096 threads of 256 additions, then 32 threads of 384; the first level now keeps
        // at least the device's capacity of threads in flight.
        let plan = reduce_plan(16, 1 << 15, DEFAULT_SMS);
        let threads = 16u64 * plan[0].groups() as u64;
        assert!(
            threads >= DEFAULT_SMS as u64 * REDUCE_THREADS_PER_SM / 2,
            "{plan:?}"
        );
        assert!(plan.iter().all(|l| l.lg <= 4), "{plan:?}");
    }
}
