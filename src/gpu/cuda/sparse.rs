//! a/b/c evaluated on the device from a recorded R1CS: the recording's matrices and coefficient
//! table kept resident beside the key's bases (under the same memory policy, evicted least
//! recently used with them), the witness uploaded, one `spmv_*` launch per matrix into the
//! zero-padded domain buffers and the a·b = c check on the device, so a/b/c never exist on the
//! host. The result is a [`DeviceAbc`] for [`crate::stages::partition::AbcInput::Device`].

use blstrs::Scalar;
use cudarc::driver::{CudaSlice, PushKernelArg};

use super::backend::CudaBackend;
use super::device::{Device, Lane};
use super::memory::{staging_of, DeviceIdx, DeviceMatrix, ResidentRecording, State};
use super::partition::{DeviceAbc, DeviceAux};
use super::staging::Staging;
use crate::compiled::{CoeffIndices, CompiledError, Recording, SparseMatrix};
use crate::gpu::error::{GpuError, GpuResult};
use crate::gpu::host::{self, FR_LIMBS};
use crate::gpu::launch::{self, SpmvBufs, SpmvShape};
use crate::groth16::error::Result;
use crate::groth16::msm::Scalars;
use crate::groth16::prover::Abc;

/// Device bytes a recording takes when resident.
pub(crate) fn recording_bytes(r: &Recording) -> u64 {
    let m: usize = r
        .matrices()
        .iter()
        .map(|m| (m.row_ptr().len() + m.cols().len()) * 4 + m.coeffs().len() * m.coeffs().width())
        .sum();
    (m + r.coeffs().len() * 32) as u64
}

/// One matrix of a recording on the device, its arrays through the pinned staging when there is
/// one ([`Device::upload_ints`]).
fn upload_matrix(
    dev: &Device,
    mut staging: Option<&mut Staging>,
    m: &SparseMatrix,
) -> GpuResult<DeviceMatrix> {
    const WHAT: &str = "recorded R1CS";
    let idx = match m.coeffs() {
        // Empty matrices still get a one-element buffer (the launch reads none of it).
        CoeffIndices::U8(v) => {
            DeviceIdx::U8(dev.upload_ints(staging.as_deref_mut(), &nonempty(v, 0), WHAT)?)
        }
        CoeffIndices::U16(v) => {
            DeviceIdx::U16(dev.upload_ints(staging.as_deref_mut(), &nonempty(v, 0), WHAT)?)
        }
        CoeffIndices::U32(v) => {
            DeviceIdx::U32(dev.upload_ints(staging.as_deref_mut(), &nonempty(v, 0), WHAT)?)
        }
    };
    Ok(DeviceMatrix {
        row_ptr: dev.upload_ints(staging.as_deref_mut(), m.row_ptr(), WHAT)?,
        cols: dev.upload_ints(staging, &nonempty(m.cols(), 0), WHAT)?,
        idx,
        terms: m.terms(),
    })
}

/// `v`, or one `fill` when it is empty (a zero-length device buffer cannot be allocated).
fn nonempty<T: Clone>(v: &[T], fill: T) -> std::borrow::Cow<'_, [T]> {
    if v.is_empty() {
        std::borrow::Cow::Owned(vec![fill])
    } else {
        std::borrow::Cow::Borrowed(v)
    }
}

impl State {
    /// Makes `r` resident (uploaded when missing, after room for it and `scratch` more bytes
    /// is made), marking it used now.
    fn make_recording_resident(
        &mut self,
        dev: &Device,
        cap: u64,
        r: &Recording,
        scratch: u64,
    ) -> GpuResult<()> {
        self.tick += 1;
        let tick = self.tick;
        let present = self.recordings.contains_key(&r.id());
        let need = scratch + if present { 0 } else { recording_bytes(r) };
        self.in_use_recording = Some(r.id());
        self.make_room(dev, cap, need, &[], "recorded R1CS and a/b/c")?;
        if !present {
            let [a, b, c] = r.matrices();
            let mut staging = staging_of(&mut self.staging, dev);
            let matrices = [
                upload_matrix(dev, staging.as_deref_mut(), a)?,
                upload_matrix(dev, staging.as_deref_mut(), b)?,
                upload_matrix(dev, staging, c)?,
            ];
            let table = dev.upload_small(host::scalars_as_u64(r.coeffs()))?;
            self.recordings.insert(
                r.id(),
                ResidentRecording {
                    matrices,
                    table,
                    bytes: recording_bytes(r),
                    last_use: tick,
                },
            );
        }
        if let Some(e) = self.recordings.get_mut(&r.id()) {
            e.last_use = tick;
        }
        Ok(())
    }
}

/// What [`CudaBackend::evaluate_abc`]'s launches left: a, b, c, the witness on the device, the
/// first row where a·b ≠ c (`u32::MAX`: none), and the witness's upload time (with its
/// expansion on the device, for a packed one).
struct Evaluated {
    abc: [CudaSlice<u64>; 3],
    aux: CudaSlice<u64>,
    first_bad: u32,
    upload: std::time::Duration,
}

impl CudaBackend {
    /// a, b, c of the witness (`inputs`, `aux`) against `rec`, on the device, checked a·b = c
    /// row by row there: a [`DeviceAbc`] of the recording's domain. A witness packed as bits
    /// goes up packed and is expanded on the device (its plain copy never exists on the
    /// host). An unsatisfied witness is [`CompiledError::Unsatisfied`] naming the first row.
    pub fn evaluate_abc(
        &self,
        rec: &Recording,
        inputs: &[Scalar],
        aux: Scalars<'_>,
    ) -> Result<DeviceAbc> {
        rec.check_witness_len(inputs.len(), aux.len())?;
        let shape = rec.shape();
        let n = shape.domain_size();
        let rows = shape.rows();
        let waited = std::time::Instant::now();
        let mut guard = self.state()?;
        let lock = waited.elapsed();
        let st: &mut State = &mut guard;
        // The plain witness on the device, and a packed one's bits, dense values and counts
        // beside it while it expands.
        let packed = match aux {
            Scalars::Plain(_) => 0,
            Scalars::Packed(p) => super::witness::expand_room(p),
        };
        let scratch = (3 * n + inputs.len() + aux.len().max(1)) as u64 * 32 + 4 + packed;
        let t = std::time::Instant::now();
        let released = st.make_recording_resident(&self.dev, self.cap(), rec, scratch);
        let resident = t.elapsed();
        let result = released.and_then(|()| self.spmv_all(st, rec, inputs, aux, n, rows));
        st.in_use_recording = None;
        let Evaluated {
            abc: bufs,
            aux: d_aux,
            first_bad,
            upload,
        } = result?;
        // Where device a/b/c's time goes (BATON_LOG=debug): the wait for the device's state
        // (another call holding it), making the recording resident (room, and its upload the
        // first time), the witness's upload (and expansion, packed), the launches and the check
        // (kernels/NOTES.md, "Sparse a/b/c"). Without debug the upload's time is only its host
        // side.
        let bytes = match aux {
            Scalars::Plain(v) => std::mem::size_of_val(v) as f64,
            Scalars::Packed(p) => p.bytes() as f64,
        };
        tracing::debug!(
            rows,
            terms = rec.terms(),
            packed = matches!(aux, Scalars::Packed(_)),
            lock_seconds = lock.as_secs_f64(),
            resident_seconds = resident.as_secs_f64(),
            upload_seconds = upload.as_secs_f64(),
            upload_gb_per_s = bytes / upload.as_secs_f64().max(1e-9) / 1e9,
            kernels_seconds = t.elapsed().saturating_sub(resident + upload).as_secs_f64(),
            "device a/b/c"
        );
        if first_bad != u32::MAX {
            return Err(CompiledError::Unsatisfied {
                index: first_bad as usize,
            }
            .into());
        }
        Ok(DeviceAbc::from_parts(
            n.trailing_zeros(),
            self.dev.ordinal,
            bufs,
            Some(DeviceAux {
                limbs: d_aux,
                scalars: aux.len(),
            }),
            Some(rec.id()),
        ))
    }

    fn spmv_all(
        &self,
        st: &mut State,
        rec: &Recording,
        inputs: &[Scalar],
        aux: Scalars<'_>,
        n: usize,
        rows: usize,
    ) -> GpuResult<Evaluated> {
        let dev = &self.dev;
        let t = std::time::Instant::now();
        let d_inputs = dev.upload_small(host::scalars_as_u64(inputs))?;
        // The witness is the partition's largest host input (32 bytes per variable): through
        // the pinned staging, as every other large upload, not a pageable copy. Packed, only
        // its bits and dense values go up (a 24th-48th of a PoRep witness's plain bytes).
        let staging = st.staging(dev);
        let (d_aux, _) = match aux {
            Scalars::Plain(v) => {
                let limbs = nonempty(host::scalars_as_u64(v), 0);
                dev.upload_new(Lane::Compute, staging, &limbs, "witness for a/b/c")?
            }
            Scalars::Packed(p) => dev.expand_packed(staging, p)?,
        };
        // Waited for only where the split is logged, to time it apart from the launches (which
        // queue behind it anyway); otherwise its tail overlaps them.
        if tracing::enabled!(tracing::Level::DEBUG) {
            dev.lane(Lane::Compute)
                .synchronize()
                .map_err(super::device::drv("witness for a/b/c"))?;
        }
        let upload = t.elapsed();
        let resident = st
            .recordings
            .get(&rec.id())
            .ok_or_else(|| GpuError::Internal("recording not resident after upload".into()))?;
        let table = &resident.table;
        let first_aux = inputs.len() as u32;
        let rows32 = rows as u32;
        let mut bufs = Vec::with_capacity(3);
        for m in &resident.matrices {
            // Zeroed: rows past the recording's are the domain's padding.
            let mut out = dev.alloc_zeros::<u64>(n * FR_LIMBS, "a/b/c on the device")?;
            let s = SpmvShape {
                rows,
                terms: m.terms,
                table: rec.coeffs().len(),
                inputs: inputs.len(),
                aux: aux.len(),
            };
            let b = SpmvBufs {
                out: out.len(),
                row_ptr: m.row_ptr.len(),
                cols: m.cols.len(),
                idx: match &m.idx {
                    DeviceIdx::U8(v) => v.len(),
                    DeviceIdx::U16(v) => v.len(),
                    DeviceIdx::U32(v) => v.len(),
                },
                table: table.len(),
                inputs: d_inputs.len(),
                aux: d_aux.len(),
            };
            let (kernel, name) = match &m.idx {
                DeviceIdx::U8(_) => (&dev.k.spmv[0], "spmv_u8"),
                DeviceIdx::U16(_) => (&dev.k.spmv[1], "spmv_u16"),
                DeviceIdx::U32(_) => (&dev.k.spmv[2], "spmv_u32"),
            };
            dev.launch(kernel, launch::spmv(name, s, b), |args| {
                args.arg(&mut out).arg(&m.row_ptr).arg(&m.cols);
                match &m.idx {
                    DeviceIdx::U8(v) => args.arg(v),
                    DeviceIdx::U16(v) => args.arg(v),
                    DeviceIdx::U32(v) => args.arg(v),
                };
                args.arg(table)
                    .arg(&d_inputs)
                    .arg(&d_aux)
                    .arg(&first_aux)
                    .arg(&rows32);
            })?;
            bufs.push(out);
        }
        let [a, b, c]: [CudaSlice<u64>; 3] = bufs
            .try_into()
            .map_err(|_| GpuError::Internal("three a/b/c buffers".into()))?;
        let mut bad = dev.upload_small(&[u32::MAX])?;
        let l = launch::abc_check(rows, a.len(), b.len(), c.len(), bad.len());
        dev.launch(&dev.k.abc_check, l, |args| {
            args.arg(&a).arg(&b).arg(&c).arg(&rows32).arg(&mut bad);
        })?;
        let first_bad = dev
            .stream
            .clone_dtoh(&bad)
            .map_err(super::device::drv("download a·b = c check"))?;
        dev.note_usage();
        Ok(Evaluated {
            abc: [a, b, c],
            aux: d_aux,
            first_bad: first_bad.first().copied().unwrap_or(0),
            upload,
        })
    }

    /// Copies a [`DeviceAbc`] back to the host (conformance tests of the device evaluation).
    pub fn download_abc(&self, d: &DeviceAbc) -> Result<Abc> {
        let [a, b, c] = d.buffers().map(|buf| -> Result<Vec<Scalar>> {
            let mut v = vec![Scalar::from(0u64); buf.len() / FR_LIMBS];
            self.dev
                .stream
                .memcpy_dtoh(buf, host::scalars_as_u64_mut(&mut v))
                .map_err(super::device::drv("download a/b/c"))?;
            Ok(v)
        });
        Ok(Abc {
            a: a?,
            b: b?,
            c: c?,
        })
    }
}
