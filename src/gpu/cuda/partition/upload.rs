//! a, b, c on the device: a [`DeviceAbc`] handed by the caller, or host a/b/c uploaded on the
//! copy stream, each transformed to the coset as soon as it is there; then H, kept on the
//! device for its MSM.

use std::time::{Duration, Instant};

use cudarc::driver::CudaSlice;

use super::shape::Shape;
use crate::error::Result;
use crate::gpu::cuda::backend::CudaBackend;
use crate::gpu::cuda::device::Lane;
use crate::gpu::cuda::memory::{staging_of, State};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::partition::AbcInput;
use crate::prover::Abc;

/// a, b, c of one partition in device memory: 2^log_n Fr each, natural order, zero-padded.
/// For a/b/c evaluated on the device (a recorded R1CS times the witness); pass it as
/// [`AbcInput::Device`]. When evaluated there it also keeps the witness it was evaluated from,
/// so that the partition call does not upload the same witness a second time.
pub struct DeviceAbc {
    log_n: u32,
    device: usize,
    bufs: [CudaSlice<u64>; 3],
    aux: Option<DeviceAux>,
}

/// The private witness on the device: its u64 limbs (at least one) and how many scalars.
pub(crate) struct DeviceAux {
    pub limbs: CudaSlice<u64>,
    pub scalars: usize,
}

impl DeviceAbc {
    /// log2 of the domain the buffers hold.
    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// a, b, c of 2^log_n Fr each (u64 limbs) on device `device`.
    pub(crate) fn from_parts(
        log_n: u32,
        device: usize,
        bufs: [CudaSlice<u64>; 3],
        aux: Option<DeviceAux>,
    ) -> Self {
        DeviceAbc {
            log_n,
            device,
            bufs,
            aux,
        }
    }

    /// The three buffers.
    pub(crate) fn buffers(&self) -> [&CudaSlice<u64>; 3] {
        [&self.bufs[0], &self.bufs[1], &self.bufs[2]]
    }
}

/// Host wall time spent, to report the host share of a partition.
#[derive(Default)]
pub(crate) struct HostClock(pub Duration);

impl HostClock {
    pub fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.0 += t.elapsed();
        r
    }
}

impl CudaBackend {
    /// Copies host a/b/c to the device as a [`DeviceAbc`] (tests of the device-input path;
    /// a/b/c evaluated on the device fill one the same way).
    pub fn upload_abc(&self, abc: &Abc) -> Result<DeviceAbc> {
        let n = abc.a.len().max(abc.b.len()).max(abc.c.len()).max(2);
        let n = n.next_power_of_two();
        let mut st = self.state()?;
        let mut bufs = Vec::with_capacity(3);
        for v in [&abc.a, &abc.b, &abc.c] {
            let mut d = self
                .dev
                .alloc_zeros_on::<u64>(Lane::Copy, n * FR_LIMBS, "a/b/c")?;
            let staging = st.staging(&self.dev);
            let src = host::scalars_as_u64(v);
            self.dev
                .upload_staged(&self.dev.copy, staging, src, &mut d.slice_mut(..), "a/b/c")?;
            bufs.push(d);
        }
        let bufs: [CudaSlice<u64>; 3] = bufs
            .try_into()
            .map_err(|_| GpuError::Internal("three a/b/c buffers".into()))?;
        Ok(DeviceAbc::from_parts(
            n.trailing_zeros(),
            self.dev.ordinal,
            bufs,
            None,
        ))
    }

    /// H on the device from `input`: the returned buffer holds h's n coefficients (the last
    /// one zero); host a/b/c go to `abc_done` once uploaded. Device a/b/c hand back the
    /// witness they were evaluated from, when they kept it.
    pub(super) fn device_h(
        &self,
        st: &mut State,
        sh: &Shape,
        input: AbcInput<'_>,
        abc_done: &mut dyn FnMut(Abc),
        clock: &mut HostClock,
    ) -> GpuResult<(CudaSlice<u64>, Option<DeviceAux>)> {
        // Disjoint borrows: the staging buffers change, the tables are read.
        let State {
            staging,
            twiddles,
            tables,
            ..
        } = st;
        let (Some(tw), Some(tabs)) = (twiddles.as_ref(), tables.get(&sh.log_n)) else {
            return Err(GpuError::Internal("twiddles or H tables missing".into()));
        };
        let n = sh.n;
        let (bufs, aux): (Vec<CudaSlice<u64>>, Option<DeviceAux>) = match input {
            AbcInput::Device(any) => {
                let d = any.downcast::<DeviceAbc>().map_err(|_| {
                    GpuError::Internal("device a/b/c of another backend type".into())
                })?;
                if d.log_n != sh.log_n || d.device != self.dev.ordinal {
                    return Err(GpuError::Internal(format!(
                        "device a/b/c of 2^{} on device {}, partition of 2^{} on device {}",
                        d.log_n, d.device, sh.log_n, self.dev.ordinal
                    )));
                }
                let DeviceAbc { bufs, aux, .. } = *d;
                let mut bufs = Vec::from(bufs);
                for b in bufs.iter_mut() {
                    self.dev.h_to_coset(b, tw, tabs, sh.log_n)?;
                }
                (bufs, aux)
            }
            AbcInput::Host(abc) => {
                if let Some(long) = [&abc.a, &abc.b, &abc.c].iter().find(|v| v.len() > n) {
                    return Err(GpuError::BufferTooShort {
                        kernel: "partition",
                        arg: "domain (a, b or c is longer)",
                        have: n,
                        need: long.len(),
                    });
                }
                let mut bufs = Vec::with_capacity(3);
                for v in [&abc.a, &abc.b, &abc.c] {
                    let mut d =
                        self.dev
                            .alloc_zeros_on::<u64>(Lane::Copy, n * FR_LIMBS, "a/b/c")?;
                    clock.0 += self.dev.upload_staged(
                        &self.dev.copy,
                        staging_of(staging, &self.dev),
                        host::scalars_as_u64(v),
                        &mut d.slice_mut(..),
                        "upload a/b/c",
                    )?;
                    // Queued on the compute stream behind the upload (cudarc orders it).
                    self.dev.h_to_coset(&mut d, tw, tabs, sh.log_n)?;
                    bufs.push(d);
                }
                // The device no longer reads host a, b, c.
                abc_done(std::mem::take(abc));
                (bufs, None)
            }
        };
        let [mut a, mut b, c]: [CudaSlice<u64>; 3] = bufs
            .try_into()
            .map_err(|_| GpuError::Internal("three a/b/c buffers".into()))?;
        self.dev.h_finish(&mut a, &mut b, &c, tw, tabs, sh.log_n)?;
        Ok((b, aux))
    }
}
