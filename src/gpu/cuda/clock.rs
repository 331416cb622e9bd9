//! The per-step clock of a device MSM (`BATON_MSM_PHASES`): CUDA events between its kernels,
//! reported as one line per MSM.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};

use crate::gpu::plan::MsmShape;

/// CUDA events between the MSM's steps when `BATON_MSM_PHASES` is set (the per-kernel
/// breakdown of the GPU bench's rows): one line per MSM on stderr with each step's
/// milliseconds. Timing only: an event that fails is left out, never an MSM error.
pub(crate) struct PhaseClock<'a> {
    stream: &'a CudaStream,
    marks: Vec<(&'static str, CudaEvent)>,
    /// n, the shape and the group ("G1", "G2"), for the report line.
    pub(crate) shape: Option<(usize, MsmShape, &'static str)>,
}

impl<'a> PhaseClock<'a> {
    pub(crate) fn start(stream: &'a CudaStream, on: bool) -> Option<Self> {
        if !on {
            return None;
        }
        let mut clock = PhaseClock {
            stream,
            marks: Vec::new(),
            shape: None,
        };
        clock.mark("start");
        Some(clock)
    }

    fn mark(&mut self, what: &'static str) {
        if let Ok(ev) = self
            .stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        {
            self.marks.push((what, ev));
        }
    }

    /// Prints the steps' times; call after the stream has synchronized.
    pub(crate) fn report(self) {
        let Some((n, sh, group)) = self.shape else {
            return;
        };
        let mut line = format!(
            "msm phases: {group} n={n} c={} entries={} (ms)",
            sh.c, sh.entries
        );
        let mut total = 0.0;
        for pair in self.marks.windows(2) {
            if let Ok(ms) = pair[0].1.elapsed_ms(&pair[1].1) {
                total += ms;
                line.push_str(&format!(" {} {ms:.2}", pair[1].0));
            }
        }
        eprintln!("{line} total {total:.2}");
    }
}

/// Marks a step of an MSM on its clock, if it has one.
pub(crate) fn phase(clock: &mut Option<PhaseClock<'_>>, what: &'static str) {
    if let Some(c) = clock.as_mut() {
        c.mark(what);
    }
}

/// The chunks of one staged upload when `BATON_UPLOAD_TRACE` is set: CUDA events around
/// each chunk's DMA on its stream and the host's time copying into the staging and waiting
/// for a staging buffer, reported as one line. It tells a slow DMA (long chunks) from a slow
/// host (short chunks, long copies or gaps between them). Timing only, like [`PhaseClock`].
pub(crate) struct UploadClock<'a> {
    stream: &'a CudaStream,
    what: &'static str,
    chunks: Vec<(CudaEvent, CudaEvent)>,
    pub(crate) host_copy: std::time::Duration,
    pub(crate) host_wait: std::time::Duration,
    started: std::time::Instant,
}

impl<'a> UploadClock<'a> {
    pub(crate) fn start(stream: &'a CudaStream, what: &'static str, on: bool) -> Option<Self> {
        on.then(|| UploadClock {
            stream,
            what,
            chunks: Vec::new(),
            host_copy: std::time::Duration::ZERO,
            host_wait: std::time::Duration::ZERO,
            started: std::time::Instant::now(),
        })
    }

    fn event(&self) -> Option<CudaEvent> {
        self.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .ok()
    }

    /// An event before a chunk's DMA is queued; [`UploadClock::after`] pairs it.
    pub(crate) fn before(&self) -> Option<CudaEvent> {
        self.event()
    }

    pub(crate) fn after(&mut self, before: Option<CudaEvent>) {
        if let (Some(b), Some(a)) = (before, self.event()) {
            self.chunks.push((b, a));
        }
    }

    /// Waits for the last chunk and prints: the DMA time per chunk (min, median, max), the
    /// DMA sum, the span from the first chunk's start to the last one's end, and the host's
    /// copy and wait times.
    pub(crate) fn report(self, bytes: usize) {
        let Some(last) = self.chunks.last() else {
            return;
        };
        if last.1.synchronize().is_err() {
            return;
        }
        let mut dma: Vec<f32> = self
            .chunks
            .iter()
            .filter_map(|(b, a)| b.elapsed_ms(a).ok())
            .collect();
        if dma.is_empty() {
            return;
        }
        let span = self.chunks[0].0.elapsed_ms(&last.1).unwrap_or(f32::NAN);
        let sum: f32 = dma.iter().sum();
        dma.sort_by(f32::total_cmp);
        let (lo, mid, hi) = (dma[0], dma[dma.len() / 2], dma[dma.len() - 1]);
        eprintln!(
            "upload trace: {} {:.0} MiB in {} chunks: DMA {sum:.1} ms (chunk min {lo:.2} median {mid:.2} max {hi:.2}), span {span:.1} ms, {:.1} GB/s; host copy {:.1} ms, staging waits {:.1} ms, wall {:.1} ms",
            self.what,
            bytes as f64 / (1 << 20) as f64,
            dma.len(),
            bytes as f64 / (span as f64 * 1e6),
            self.host_copy.as_secs_f64() * 1e3,
            self.host_wait.as_secs_f64() * 1e3,
            self.started.elapsed().as_secs_f64() * 1e3,
        );
    }
}
