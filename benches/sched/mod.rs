//! Where the host's CPU time went while a job ran: every thread's run time and run-queue wait
//! from `/proc/self/task/*/schedstat` (nanoseconds), its minor page faults from `stat` and its
//! voluntary context switches (sleeps: a lock, a page fault waiting on another thread's
//! unmapping, I/O) from `status`, grouped by thread name with its index dropped
//! ("baton-worker-3" → "baton-worker-"). Linux only; elsewhere the snapshots are empty and the
//! table says so.

use std::collections::{BTreeMap, HashMap};

/// One thread's counters: run ns, run-queue wait ns, minor faults, voluntary switches.
type Counters = [u64; 4];

/// One reading of every thread of this process: tid → (name, counters).
pub struct Snapshot(HashMap<u32, (String, Counters)>);

/// Reads every thread's name and counters now. Threads that end while being read are skipped.
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
        let read = |f: &str| std::fs::read_to_string(path.join(f));
        let (Ok(comm), Ok(sched)) = (read("comm"), read("schedstat")) else {
            continue;
        };
        let mut f = sched
            .split_whitespace()
            .map(|v| v.parse::<u64>().unwrap_or(0));
        let (run, wait) = (f.next().unwrap_or(0), f.next().unwrap_or(0));
        // stat: the fields after the parenthesised name; minflt is the 10th field overall.
        let minflt = read("stat").ok().and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_string();
            rest.split_whitespace().nth(7)?.parse::<u64>().ok()
        });
        let vcsw = read("status").ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        });
        let counters = [run, wait, minflt.unwrap_or(0), vcsw.unwrap_or(0)];
        out.insert(tid, (group_of(comm.trim()), counters));
    }
    Snapshot(out)
}

/// A thread's name without its trailing index.
fn group_of(name: &str) -> String {
    name.trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string()
}

/// One group's use between two snapshots (or its mean over runs).
#[derive(Clone, Copy, Default)]
pub struct Use {
    /// Threads of the group that ran at all.
    pub threads: usize,
    pub run_ms: f64,
    pub wait_ms: f64,
    pub minor_faults: f64,
    pub sleeps: f64,
}

pub type Groups = BTreeMap<String, Use>;

/// Per group, what its threads used between `before` and `after`. A thread born in between
/// counts from zero; one that ended is not counted.
pub fn between(before: &Snapshot, after: &Snapshot) -> Groups {
    let mut out = Groups::new();
    for (tid, (name, now)) in &after.0 {
        let then = before.0.get(tid).map_or([0; 4], |(_, c)| *c);
        let d: Counters = std::array::from_fn(|i| now[i].saturating_sub(then[i]));
        let e = out.entry(name.clone()).or_default();
        e.threads += usize::from(d[0] > 0);
        e.run_ms += d[0] as f64 / 1e6;
        e.wait_ms += d[1] as f64 / 1e6;
        e.minor_faults += d[2] as f64;
        e.sleeps += d[3] as f64;
    }
    out
}

/// The mean over `runs` of each group's figures (a group missing from a run counts 0 there).
pub fn mean(runs: &[Groups]) -> Groups {
    let mut out = Groups::new();
    for g in runs {
        for (name, u) in g {
            let e = out.entry(name.clone()).or_default();
            e.threads = e.threads.max(u.threads);
            e.run_ms += u.run_ms;
            e.wait_ms += u.wait_ms;
            e.minor_faults += u.minor_faults;
            e.sleeps += u.sleeps;
        }
    }
    let n = runs.len().max(1) as f64;
    for e in out.values_mut() {
        e.run_ms /= n;
        e.wait_ms /= n;
        e.minor_faults /= n;
        e.sleeps /= n;
    }
    out
}
