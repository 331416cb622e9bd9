//! What a partition call asks of the memory policy before it takes anything: twiddles, H
//! tables, every base set it reads resident, and room for its own buffers. The same steps,
//! without evicting anything, make a key resident ahead of its partitions.

use super::shape::{queries, QueryBases, Shape};
use crate::gpu::cuda::backend::{CudaBackend, MAX_GPU_LOG_N};
use crate::gpu::cuda::memory::{BasesKey, State};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{GpuGroup, G1, G2};
use crate::groth16::domain::Domain;
use crate::groth16::key::ProvingKey;
use blstrs::{G1Affine, G2Affine};

/// Room asked for a domain's H tables while they are made (two scale tables and 1/Z, with
/// slack for the upload).
const H_TABLES_ROOM: u64 = crate::gpu::plan::H_TABLES_BYTES;

impl CudaBackend {
    /// Twiddles, H tables and every resident base set of the call, then room for the call's
    /// own buffers. Out of memory here leaves everything of the caller's untouched.
    pub(super) fn prepare(
        &self,
        st: &mut State,
        sh: &Shape,
        g1: &[QueryBases<'_, G1Affine>],
        g2: Option<&QueryBases<'_, G2Affine>>,
        with_b_g2: bool,
    ) -> GpuResult<Vec<BasesKey>> {
        let keys = self.key_resident(st, sh, g1, g2)?;
        st.make_room(
            &self.dev,
            self.cap(),
            sh.need_bytes(with_b_g2, self.dev.msm_window, self.dev.msm_pieces),
            &keys,
            "partition",
        )?;
        Ok(keys)
    }

    /// Twiddles and H tables for `sh`'s domain, then the base sets of `g1` and `g2`, each
    /// without evicting the ones before it; returns the sets' keys in that order.
    fn key_resident(
        &self,
        st: &mut State,
        sh: &Shape,
        g1: &[QueryBases<'_, G1Affine>],
        g2: Option<&QueryBases<'_, G2Affine>>,
    ) -> GpuResult<Vec<BasesKey>> {
        let (dev, cap) = (&self.dev, self.cap());
        st.ensure_twiddles(dev, cap, sh.log_n, 0)?;
        if !st.tables.contains_key(&sh.log_n) {
            st.make_room(dev, cap, H_TABLES_ROOM, &[], "H tables")?;
            let domain = Domain::for_size(sh.n).map_err(|e| GpuError::Internal(e.to_string()))?;
            let t = dev.h_tables(&domain)?;
            st.tables.insert(sh.log_n, t);
        }
        let mut keys = Vec::new();
        for q in g1 {
            st.make_resident(dev, cap, q.key(), G1::affine_limbs(q.whole), 0, &keys)?;
            keys.push(q.key());
        }
        if let Some(q) = g2 {
            st.make_resident(dev, cap, q.key(), G2::affine_limbs(q.whole), 0, &keys)?;
            keys.push(q.key());
        }
        Ok(keys)
    }

    /// Makes `pk`'s bases (B_G2's too with `with_b_g2`), the twiddles and H tables of its
    /// domain resident ahead of its partitions, when all of it fits in the device's free
    /// memory beside the largest partition the key can have, without evicting anything.
    /// Returns the bytes of bases uploaded: 0 when they were resident already, when they do
    /// not fit (the first partition then makes room as usual), for a key no partition call
    /// can take, or with `gpu.warm_keys = false`.
    pub(crate) fn warm_key(&self, pk: &ProvingKey, with_b_g2: bool) -> GpuResult<u64> {
        let Some(sh) = Shape::largest(pk).filter(|sh| sh.log_n <= MAX_GPU_LOG_N) else {
            return Ok(0);
        };
        if !self.dev.warm_keys {
            return Ok(0);
        }
        let (g1, g2) = queries(pk, 0, 0, with_b_g2);
        let mut guard = self.state()?;
        let st: &mut State = &mut guard;
        let missing = |key: BasesKey, bytes: usize| match st.bases.contains_key(&key) {
            true => 0,
            false => bytes as u64,
        };
        let bases: u64 = g1
            .iter()
            .map(|q| missing(q.key(), size_of_val(q.whole)))
            .chain(g2.iter().map(|q| missing(q.key(), size_of_val(q.whole))))
            .sum();
        if bases == 0 {
            return Ok(0);
        }
        let twiddles = match st.needs_twiddles(sh.log_n) {
            true => 32u64 << sh.log_n,
            false => 0,
        };
        let tables = match st.tables.contains_key(&sh.log_n) {
            true => 0,
            false => H_TABLES_ROOM,
        };
        let call = sh.need_bytes(with_b_g2, self.dev.msm_window, self.dev.msm_pieces);
        let need = bases + twiddles + tables + call;
        if let Err(usable) = st.fits(&self.dev, self.cap(), need)? {
            tracing::info!(
                device = self.dev.ordinal,
                need_bytes = need,
                usable_bytes = usable,
                "key not made resident ahead: it would evict other bases"
            );
            return Ok(0);
        }
        self.key_resident(st, &sh, &g1, g2.as_ref())?;
        Ok(bases)
    }
}
