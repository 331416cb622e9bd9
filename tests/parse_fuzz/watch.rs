//! Watching one call on fuzzed input: its panics (caught and printed with the input), the bytes
//! it allocates on the calling thread at its peak (a counting global allocator), and the panics
//! filecoin-proofs raises that baton's `guard` turns into errors (each site printed once).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Mutex, Once};

/// The most one call may hold allocated on its own thread at once, above what it started with.
/// A good 2 KiB input peaks near 100 KiB, a bad one near 4 MiB (serde's preallocation of a
/// vector, at most 1 MiB, a few levels deep); a length prefix believed, or a vanilla proof
/// copied for every sector of a 32 GiB partition, goes far past it.
pub const PEAK_LIMIT_BYTES: isize = 32 << 20;

/// System's allocator, counting live bytes per thread.
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    /// The largest peak of a [`checked`] call on this thread since [`take_largest_peak`].
    static LARGEST: Cell<isize> = const { Cell::new(0) };
}

/// Live bytes of the whole process.
static LIVE_ALL: AtomicIsize = AtomicIsize::new(0);

fn note(delta: isize) {
    LIVE_ALL.fetch_add(delta, Ordering::Relaxed);
    // `try_with`: the counters may already be gone while a thread exits.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are const-initialized
// thread-locals without destructors, so counting neither allocates nor re-enters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller's contract is `System`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// What one watched call did.
pub struct Watched<T> {
    /// Its result, or the panic's message.
    pub result: Result<T, String>,
    /// The most it held allocated on this thread at once, above its start.
    pub peak_bytes: isize,
}

/// Runs `f` on this thread, catching a panic and measuring its peak allocation.
pub fn watch<T>(f: impl FnOnce() -> T) -> Watched<T> {
    quiet_panics();
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let result = catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into())
    });
    let peak_bytes = PEAK.with(Cell::get) - start;
    Watched { result, peak_bytes }
}

/// What a call on an input of `input_bytes` may hold at once: [`PEAK_LIMIT_BYTES`], and room to
/// hold its input decoded a few times over.
pub fn peak_limit(input_bytes: usize) -> isize {
    PEAK_LIMIT_BYTES + 64 * input_bytes as isize
}

/// `f(input)` must return without panicking and within [`peak_limit`] of the input's size; its
/// result, or why not, with the input printed.
pub fn checked<I: Debug + ?Sized, T>(
    what: &str,
    input: &I,
    input_bytes: usize,
    f: impl FnOnce() -> T,
) -> Result<T, String> {
    let w = watch(f);
    LARGEST.with(|l| l.set(l.get().max(w.peak_bytes)));
    let out = w
        .result
        .map_err(|m| format!("{what} panicked ({m}) on {input:?}"))?;
    let limit = peak_limit(input_bytes);
    if w.peak_bytes > limit {
        return Err(format!(
            "{what} held {} bytes at once (limit {limit}) on {input_bytes} bytes: {input:?}",
            w.peak_bytes
        ));
    }
    Ok(out)
}

/// The bytes the whole process holds now (a property's cases leave it where they found it,
/// give or take what other tests running beside them hold).
pub fn live_bytes() -> isize {
    LIVE_ALL.load(Ordering::Relaxed)
}

/// The largest peak of a [`checked`] call on this thread since the last time it was taken.
pub fn take_largest_peak() -> isize {
    LARGEST.with(|l| l.replace(0))
}

/// Bytes shown as hex, encoded only when a failure prints them.
pub struct Hex<'a>(pub &'a [u8]);

impl Debug for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

static SITES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// A panic hook that prints each panic site once, without a backtrace: filecoin-proofs panics on
/// many malformed vanilla proofs (baton's `guard` catches them), and a backtrace per case would
/// both flood the log and slow the run.
pub fn quiet_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let site = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_else(|| "an unknown place".into());
            let first = SITES
                .lock()
                .map(|mut s| s.insert(site.clone()))
                .unwrap_or(false);
            if first {
                eprintln!("parse_fuzz: first panic at {site}: {info}");
            }
        }));
    });
}
