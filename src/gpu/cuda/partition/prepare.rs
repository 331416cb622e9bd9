//! What a partition call asks of the memory policy before it takes anything: twiddles, H
//! tables, every base set it reads resident, and room for its own buffers.

use super::shape::{QueryBases, Shape};
use crate::domain::Domain;
use crate::gpu::cuda::backend::CudaBackend;
use crate::gpu::cuda::memory::{BasesKey, State};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{GpuGroup, G1, G2};
use crate::key::ProvingKey;
use blstrs::{G1Affine, G2Affine};

impl CudaBackend {
    /// Twiddles, H tables and every resident base set of the call, then room for the call's
    /// own buffers. Out of memory here leaves everything of the caller's untouched.
    pub(super) fn prepare(
        &self,
        st: &mut State,
        pk: &ProvingKey,
        sh: &Shape,
        g1: &[QueryBases<'_, G1Affine>],
        g2: Option<&QueryBases<'_, G2Affine>>,
        with_b_g2: bool,
    ) -> GpuResult<Vec<BasesKey>> {
        let cap = self.cap();
        let id = pk.id();
        st.ensure_twiddles(&self.dev, cap, sh.log_n, 0)?;
        if !st.tables.contains_key(&sh.log_n) {
            st.make_room(&self.dev, cap, 3 << 20, &[], "H tables")?;
            let domain = Domain::for_size(sh.n).map_err(|e| GpuError::Internal(e.to_string()))?;
            let t = self.dev.h_tables(&domain)?;
            st.tables.insert(sh.log_n, t);
        }
        let mut keys = Vec::new();
        for q in g1 {
            st.make_resident(
                &self.dev,
                cap,
                q.key(id),
                G1::affine_limbs(q.points),
                0,
                &keys,
            )?;
            keys.push(q.key(id));
        }
        if let Some(q) = g2 {
            st.make_resident(
                &self.dev,
                cap,
                q.key(id),
                G2::affine_limbs(q.points),
                0,
                &keys,
            )?;
            keys.push(q.key(id));
        }
        st.make_room(
            &self.dev,
            cap,
            sh.need_bytes(with_b_g2, self.dev.msm_window, self.dev.msm_pieces),
            &keys,
            "partition",
        )?;
        Ok(keys)
    }
}
