//! Where the host's CPU time went while a job ran: every thread's run time and run-queue wait
//! from `/proc/self/task/*/schedstat` (nanoseconds), grouped by thread name with its index
//! dropped ("baton-worker-3" → "baton-worker-"). Linux only; elsewhere the snapshots are
//! empty and the table says so.

use std::collections::{BTreeMap, HashMap};

/// One reading of every thread of this process: tid → (name, run ns, wait ns).
pub struct Snapshot(HashMap<u32, (String, u64, u64)>);

/// Reads every thread's name and schedstat now. Threads that end while being read are
/// skipped.
pub fn snapshot() -> Snapshot {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Snapshot(out);
    };
    for entry in dir.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(path.join("comm")),
            std::fs::read_to_string(path.join("schedstat")),
        ) else {
            continue;
        };
        let mut f = stat
            .split_whitespace()
            .map(|v| v.parse::<u64>().unwrap_or(0));
        let (run, wait) = (f.next().unwrap_or(0), f.next().unwrap_or(0));
        out.insert(tid, (group_of(comm.trim()), run, wait));
    }
    Snapshot(out)
}

/// A thread's name without its trailing index.
fn group_of(name: &str) -> String {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

/// Per group: (threads that ran, run ms, run-queue wait ms) between `before` and `after`.
/// A thread born in between counts from zero; one that ended is not counted.
pub type Groups = BTreeMap<String, (usize, f64, f64)>;

pub fn between(before: &Snapshot, after: &Snapshot) -> Groups {
    let mut out = Groups::new();
    for (tid, (name, run, wait)) in &after.0 {
        let (r0, w0) = before.0.get(tid).map_or((0, 0), |(_, r, w)| (*r, *w));
        let (dr, dw) = (run.saturating_sub(r0), wait.saturating_sub(w0));
        let e = out.entry(name.clone()).or_insert((0, 0.0, 0.0));
        e.0 += usize::from(dr > 0);
        e.1 += dr as f64 / 1e6;
        e.2 += dw as f64 / 1e6;
    }
    out
}

/// The mean over `runs` of each group's figures (a group missing from a run counts 0 there).
pub fn mean(runs: &[Groups]) -> Groups {
    let mut out = Groups::new();
    for g in runs {
        for (name, (t, r, w)) in g {
            let e = out.entry(name.clone()).or_insert((0, 0.0, 0.0));
            e.0 = e.0.max(*t);
            e.1 += r;
            e.2 += w;
        }
    }
    let n = runs.len().max(1) as f64;
    for e in out.values_mut() {
        e.1 /= n;
        e.2 /= n;
    }
    out
}
