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
    /// n and the shape, for the report line.
    pub(crate) shape: Option<(usize, MsmShape)>,
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
        let Some((n, sh)) = self.shape else {
            return;
        };
        let mut line = format!("msm phases: n={n} c={} entries={} (ms)", sh.c, sh.entries);
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
