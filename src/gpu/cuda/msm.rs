//! The device MSM launch sequence of kernels/NOTES.md: count digits, scan, scatter, accumulate
//! buckets in segments, finalize, reduce windows level by level, and sum the bases of the ones.
//! Returns the `nwin + 1` XYZZ sums for the host to combine.

use cudarc::driver::{CudaSlice, CudaView};

use super::{drv, DResult, Device, DeviceGroup};
use crate::gpu::host::{MsmShape, MSM_SEGMENT};

/// Elements a block of `scan_block` covers.
const SCAN_SPAN: u32 = 4096;

impl Device {
    /// Inclusive prefix sum of the first `m` entries of `data`, recursively over block sums.
    fn scan(&self, data: &mut CudaSlice<u32>, m: u32) -> DResult<()> {
        let nb = m.div_ceil(SCAN_SPAN);
        if nb <= 1 {
            let null = 0u64;
            return launch!(self, scan_block, 1, 1024, 0; &mut *data, &m, &null);
        }
        // SAFETY: `scan_block` writes one sum per block before anything reads them.
        let mut sums =
            unsafe { self.stream.alloc::<u32>(nb as usize) }.map_err(drv("alloc scan"))?;
        launch!(self, scan_block, nb, 1024, 0; &mut *data, &m, &mut sums)?;
        self.scan(&mut sums, nb)?;
        launch!(self, scan_add, nb, 1024, 0; &mut *data, &m, &sums)
    }

    /// XYZZ window sums (`nwin` windows, then the sum over scalars equal to one) of
    /// Σ scalars[i]·bases[i], i < n, with window c. `bases` and `scalars` hold at least n
    /// points and n scalars; n·nwin < 2^32.
    pub(crate) fn msm<G: DeviceGroup>(
        &self,
        bases: &CudaView<'_, u64>,
        scalars: &CudaView<'_, u64>,
        n: usize,
        c: u32,
    ) -> DResult<Vec<u64>> {
        let sh = MsmShape::for_group::<G>(n, c);
        let gk = G::kernels(&self.k);
        let (n32, nwin, nbk, seg) = (n as u32, sh.nwin, sh.nbk, MSM_SEGMENT as u32);
        let entries = n * nwin as usize;
        let st = &self.stream;
        let mut counts = st
            .alloc_zeros::<u32>(nbk as usize + 1)
            .map_err(drv("alloc counts"))?;
        // SAFETY (all allocs below): every entry a kernel reads was written by an earlier one
        // (scatter fills keys/vals up to counts[nbk]; accumulate/finalize write every bucket and
        // segment piece; each reduce level writes its whole output).
        let mut keys = unsafe { st.alloc::<u32>(entries) }.map_err(drv("alloc keys"))?;
        let mut vals = unsafe { st.alloc::<u32>(entries) }.map_err(drv("alloc vals"))?;
        let xyzz = |count: usize, what: &'static str| {
            unsafe { st.alloc::<u64>(count * G::XYZZ_LIMBS) }.map_err(drv(what))
        };
        let mut buckets = xyzz(nbk as usize, "alloc buckets")?;
        let mut pfirst = xyzz(sh.nseg as usize, "alloc segments")?;
        let mut plast = xyzz(sh.nseg as usize, "alloc segments")?;

        let grid_n = n.div_ceil(256);
        launch!(self, msm_count, grid_n, 256, 0; scalars, &n32, &c, &nwin, &mut counts)?;
        self.scan(&mut counts, nbk + 1)?;
        launch!(self, msm_scatter, grid_n, 256, 0;
            scalars, &n32, &c, &nwin, &mut counts, &mut keys, &mut vals)?;
        launch!(@fn self, &gk.accumulate, "msm_accumulate", sh.nseg.div_ceil(128), 128, 0;
            bases, &keys, &vals, &counts, &nbk, &seg, &mut buckets, &mut pfirst, &mut plast)?;
        launch!(@fn self, &gk.finalize, "msm_finalize", nbk.div_ceil(256), 256, 0;
            &counts, &nbk, &seg, &mut buckets, &pfirst, &plast)?;
        drop((keys, vals, pfirst, plast));

        let mut out = st
            .alloc_zeros::<u64>((nwin as usize + 1) * G::XYZZ_LIMBS)
            .map_err(drv("alloc out"))?;
        let null = 0u64;
        let mut m = sh.half;
        let mut level: Option<(CudaSlice<u64>, CudaSlice<u64>)> = None;
        loop {
            let lg = 7u32.min(31 - m.leading_zeros());
            let g = m >> lg;
            if g == 1 {
                let grid = nwin.div_ceil(64);
                match &level {
                    None => launch!(@fn self, &gk.reduce_level, "msm_reduce_level", grid, 64, 0;
                        &null, &buckets, &nwin, &m, &lg, &mut out, &null)?,
                    Some((t, r)) => {
                        launch!(@fn self, &gk.reduce_level, "msm_reduce_level", grid, 64, 0;
                        t, r, &nwin, &m, &lg, &mut out, &null)?
                    }
                }
                break;
            }
            let count = (nwin * g) as usize;
            let mut to = xyzz(count, "alloc reduce")?;
            let mut ro = xyzz(count, "alloc reduce")?;
            let grid = (nwin * g).div_ceil(64);
            match &level {
                None => launch!(@fn self, &gk.reduce_level, "msm_reduce_level", grid, 64, 0;
                    &null, &buckets, &nwin, &m, &lg, &mut to, &mut ro)?,
                Some((t, r)) => {
                    launch!(@fn self, &gk.reduce_level, "msm_reduce_level", grid, 64, 0;
                    t, r, &nwin, &m, &lg, &mut to, &mut ro)?
                }
            }
            level = Some((to, ro));
            m = g;
        }
        drop(level);
        drop(buckets);

        let nb1 = sh.nb1;
        let mut partials = xyzz(nb1 as usize, "alloc partials")?;
        launch!(@fn self, &gk.ones, "msm_ones", nb1, 128, 0; bases, scalars, &n32, &mut partials)?;
        {
            let mut tail = out.slice_mut(nwin as usize * G::XYZZ_LIMBS..);
            launch!(@fn self, &gk.sum, "ec_sum", 1, 128, 0; &partials, &nb1, &mut tail)?;
        }
        let host = st.clone_dtoh(&out).map_err(drv("download window sums"))?;
        st.synchronize().map_err(drv("synchronize"))?;
        Ok(host)
    }
}
