//! CRITICAL synthesis first: while a CRITICAL partition synthesizes, ordinary synthesis pauses.
//!
//! A WinningPoSt has one epoch. Under load every core runs some PoRep partition's synthesis, and
//! a CRITICAL partition's own synthesis, sharing the cores with them, took ~3x its idle time on a
//! 16-thread host (BENCHMARKS.md, "CRITICAL latency under load"); nicing the ordinary threads did
//! not change that. So the ordinary threads stop instead: every constraint system baton
//! synthesizes into calls [`checkpoint`] as it allocates, and a thread marked as ordinary
//! ([`mark_ordinary`]) parks there while its engine's [`Gate`] is held by a CRITICAL synthesis
//! ([`Gate::hold`]), then goes on where it stopped. Nothing is lost or redone.
//!
//! The check costs one relaxed load of a process-wide count while no CRITICAL synthesis runs
//! anywhere; only then does a thread look at its own mark. A parked thread looks again every
//! [`RECHECK`], so a hold that is dropped without its wake-up costs at most that.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a parked thread waits before it looks at its gate again.
pub const RECHECK: Duration = Duration::from_millis(50);

/// Holds in progress over every engine in the process: the fast path's one load.
static HOLDS_ANYWHERE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The gate this thread's synthesis yields to; `None`: it never parks.
    static ORDINARY: RefCell<Option<Arc<Gate>>> = const { RefCell::new(None) };
}

/// One engine's gate: held while any of its CRITICAL partitions synthesizes.
#[derive(Debug, Default)]
pub struct Gate {
    /// Holds now: read without the lock by every checkpoint while some gate is held.
    holds: AtomicUsize,
    /// Taken to wait for, and to announce, the last hold's end.
    lock: Mutex<()>,
    released: Condvar,
    /// Nanoseconds ordinary threads spent parked, summed (a metric).
    parked_nanos: AtomicU64,
    /// Times an ordinary thread parked.
    parks: AtomicU64,
    /// `baton_synthesis_parked_seconds_total`, when the engine has metrics.
    metric: Option<prometheus::Counter>,
}

/// A CRITICAL synthesis in progress: ordinary threads of the gate's engine park until every
/// hold is dropped.
#[derive(Debug)]
pub struct Hold {
    gate: Arc<Gate>,
}

impl Gate {
    /// A gate with no holds.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// A gate with no holds that adds its parked seconds to `metric` too.
    pub fn with_metric(metric: prometheus::Counter) -> Arc<Self> {
        Arc::new(Self {
            metric: Some(metric),
            ..Self::default()
        })
    }

    /// Holds the gate until the returned [`Hold`] is dropped.
    pub fn hold(self: &Arc<Self>) -> Hold {
        self.holds.fetch_add(1, Ordering::SeqCst);
        HOLDS_ANYWHERE.fetch_add(1, Ordering::SeqCst);
        Hold { gate: self.clone() }
    }

    /// Whether a CRITICAL synthesis holds the gate now.
    pub fn held(&self) -> bool {
        self.holds.load(Ordering::SeqCst) > 0
    }

    /// Seconds ordinary threads have spent parked at this gate, and how many times they parked.
    pub fn parked(&self) -> (f64, u64) {
        (
            self.parked_nanos.load(Ordering::Relaxed) as f64 * 1e-9,
            self.parks.load(Ordering::Relaxed),
        )
    }

    fn park(&self) {
        if !self.held() {
            return;
        }
        let t = Instant::now();
        // The count is read under the lock that the last hold's end takes to announce it, so
        // that announcement cannot fall between the read and the wait.
        let mut guard = lock(&self.lock);
        while self.held() {
            guard = match self.released.wait_timeout(guard, RECHECK) {
                Ok((g, _)) => g,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        drop(guard);
        let took = t.elapsed();
        if let Some(m) = &self.metric {
            m.inc_by(took.as_secs_f64());
        }
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.parked_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.parks.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        HOLDS_ANYWHERE.fetch_sub(1, Ordering::SeqCst);
        if self.gate.holds.fetch_sub(1, Ordering::SeqCst) == 1 {
            let _announce = lock(&self.gate.lock);
            self.gate.released.notify_all();
        }
    }
}

/// The lock guards no data, so one a panicking thread held is as good as any.
fn lock(m: &Mutex<()>) -> std::sync::MutexGuard<'_, ()> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Marks this thread's synthesis as ordinary, yielding to `gate` (`None`: never parks). The
/// ordinary pool's threads are marked once, when they start.
pub fn mark_ordinary(gate: Option<Arc<Gate>>) {
    ORDINARY.with(|o| *o.borrow_mut() = gate);
}

/// Where ordinary synthesis may pause: returns at once unless a CRITICAL synthesis holds this
/// thread's gate, else when none does.
#[inline]
pub fn checkpoint() {
    if HOLDS_ANYWHERE.load(Ordering::Relaxed) != 0 {
        checkpoint_slow();
    }
}

#[cold]
fn checkpoint_slow() {
    // No clone of the gate: threads of other engines pass here on every allocation while a
    // gate is held anywhere, and a shared count would have them all write one cache line.
    ORDINARY.with(|o| {
        if let Some(gate) = o.borrow().as_ref() {
            gate.park();
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// An ordinary thread stops at its checkpoint while the gate is held and goes on once it
    /// is dropped; an unmarked thread and a thread of another gate never stop.
    #[test]
    fn ordinary_threads_park_while_held() {
        let gate = Gate::new();
        let other = Gate::new();
        let hold = gate.hold();
        assert!(gate.held() && !other.held());
        let (tx, rx) = mpsc::channel();
        let spawn = |mark: Option<Arc<Gate>>, name: &'static str| {
            let tx = tx.clone();
            std::thread::spawn(move || {
                mark_ordinary(mark);
                checkpoint();
                let _ = tx.send(name);
            })
        };
        let ordinary = spawn(Some(gate.clone()), "ordinary");
        let unmarked = spawn(None, "unmarked");
        let elsewhere = spawn(Some(other.clone()), "other engine");
        let mut early: Vec<_> = (0..2)
            .map(|_| {
                rx.recv_timeout(Duration::from_secs(10))
                    .expect("a free thread")
            })
            .collect();
        early.sort();
        assert_eq!(early, ["other engine", "unmarked"]);
        // Still parked after several of its rechecks.
        assert!(
            rx.recv_timeout(RECHECK * 4).is_err(),
            "ran past a held gate"
        );
        drop(hold);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(10)).expect("released"),
            "ordinary"
        );
        for t in [ordinary, unmarked, elsewhere] {
            t.join().expect("thread");
        }
        let (secs, parks) = gate.parked();
        assert_eq!(parks, 1);
        assert!(secs > 0.0, "parked {secs} s");
        assert_eq!(other.parked().1, 0);
        assert!(!gate.held());
    }

    /// Two holds: the gate opens only when both are dropped.
    #[test]
    fn opens_after_the_last_hold() {
        let gate = Gate::new();
        let (a, b) = (gate.hold(), gate.hold());
        drop(a);
        assert!(gate.held());
        drop(b);
        assert!(!gate.held());
    }
}
