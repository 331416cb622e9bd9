//! Tests of the admission scheduler through its public API: unit cases, then a property test
//! against a model written differently (one flat list ordered by keys, not queues per level).

use std::collections::{BTreeMap, BTreeSet};

use baton::scheduler::*;
use proptest::prelude::*;

fn t(job: u64, index: usize, attempt: u32) -> Ticket {
    Ticket {
        job,
        index,
        attempt,
    }
}

#[test]
fn a_critical_job_submitted_last_is_admitted_before_the_low_ones_waiting() {
    let mut s = Scheduler::new(3);
    for job in 1..=4 {
        s.submit(job, Priority::Low, 2).expect("new job");
    }
    // The first LOW partition already holds a grant: it is never taken back.
    assert_eq!(s.pop(), Some(t(1, 0, 1)));
    let ahead = s.submit(9, Priority::Critical, 1).expect("new job");
    assert_eq!(ahead, 0, "nothing waits at CRITICAL");
    assert_eq!(s.peek(), Some(t(9, 0, 1)));
    assert_eq!(s.pop(), Some(t(9, 0, 1)));
    assert_eq!(s.finished(t(9, 0, 1)), Ok(Finished::JobDone));
    // Then FIFO within LOW.
    assert_eq!(s.pop(), Some(t(1, 1, 1)));
    assert_eq!(s.pop(), Some(t(2, 0, 1)));
    assert_eq!(s.waiting_by_level(), [5, 0, 0, 0]);
    let ahead = s.submit(10, Priority::Normal, 1).expect("new job");
    assert_eq!(ahead, 0, "LOW partitions are not ahead of a NORMAL one");
    let ahead = s.submit(11, Priority::Low, 1).expect("new job");
    assert_eq!(ahead, 6, "five LOW and one NORMAL ahead");
}

#[test]
fn jobs_submitted_out_of_order_wait_in_arrival_order_within_their_level() {
    let mut s = Scheduler::new(3);
    // Accepted as 1, 2, 3 at NORMAL; reach the scheduler as 3, 1, 2 (keys loaded at
    // different speeds); a CRITICAL one arriving last still goes first.
    assert_eq!(s.submit_at(30, Priority::Normal, 2, 3), Ok(0));
    assert_eq!(
        s.submit_at(10, Priority::Normal, 1, 1),
        Ok(0),
        "ahead of job 3"
    );
    assert_eq!(
        s.submit_at(20, Priority::Normal, 1, 2),
        Ok(1),
        "behind job 1 only"
    );
    assert_eq!(s.submit_at(40, Priority::Critical, 1, 4), Ok(0));
    let order: Vec<(u64, usize)> =
        std::iter::from_fn(|| s.pop().map(|t| (t.job, t.index))).collect();
    assert_eq!(order, [(40, 0), (10, 0), (20, 0), (30, 0), (30, 1)]);
}

#[test]
fn cancel_says_exactly_whether_anything_had_started() {
    let mut s = Scheduler::new(3);
    s.submit(1, Priority::Normal, 3).expect("new");
    s.submit(2, Priority::Normal, 1).expect("new");
    assert_eq!(
        s.cancel(2),
        Cancelled::Done {
            was_running: false,
            running: 0
        }
    );
    assert!(!s.is_active(2));
    assert_eq!(
        s.cancel(2),
        Cancelled::Unknown,
        "a queued job is forgotten at once"
    );
    let first = s.pop().expect("job 1 partition 0");
    assert_eq!(
        s.cancel(1),
        Cancelled::Done {
            was_running: true,
            running: 1
        }
    );
    assert_eq!(s.waiting(), 0, "its waiting partitions left the queue");
    assert_eq!(s.cancel(1), Cancelled::AlreadyAbandoned);
    assert_eq!(s.peek(), None);
    // The abandoned partition reports later: ignored, never retried, then the job is gone.
    assert_eq!(s.failed(first, true), Ok(Failure::Ignored));
    assert_eq!((s.jobs(), s.cancel(1)), (0, Cancelled::Unknown));
    assert_eq!(s.cancel(77), Cancelled::Unknown);
    // A caller whose job ended may forget it, running partitions and all.
    s.submit(3, Priority::Low, 2).expect("new");
    let started = s.pop().expect("3/0");
    s.forget(3);
    assert_eq!((s.jobs(), s.waiting()), (0, 0));
    assert!(
        s.finished(started).is_err(),
        "a forgotten job's partition is not running"
    );
}

#[test]
fn retries_go_to_the_front_of_their_level_until_attempts_run_out() {
    let mut s = Scheduler::new(2);
    s.submit(1, Priority::High, 2).expect("new");
    s.submit(2, Priority::High, 1).expect("new");
    let a = s.pop().expect("1/0");
    assert_eq!(s.failed(a, true), Ok(Failure::Retry(t(1, 0, 2))));
    assert_eq!(s.peek(), Some(t(1, 0, 2)), "the retry goes first");
    let b = s.pop().expect("retry");
    assert_eq!(
        s.failed(b, true),
        Ok(Failure::JobFailed {
            attempts: 2,
            running: 0
        })
    );
    assert_eq!(s.peek(), Some(t(2, 0, 1)), "job 1's other partition left");
    assert_eq!(
        s.failed(b, true),
        Err(SchedulerError::NotRunning {
            job: 1,
            index: 0,
            attempt: 2
        })
    );
    let c = s.pop().expect("2/0");
    assert_eq!(
        s.failed(c, false),
        Ok(Failure::JobFailed {
            attempts: 1,
            running: 0
        }),
        "a failure that cannot pass again is not retried"
    );
    assert_eq!(s.submit(3, Priority::Low, 0), Err(SchedulerError::Empty(3)));
    s.submit(4, Priority::Low, 1).expect("new");
    assert_eq!(
        s.submit(4, Priority::Low, 1),
        Err(SchedulerError::Duplicate(4))
    );
    assert_eq!("CRITICAL".parse::<Priority>(), Ok(Priority::Critical));
    assert!("urgent".parse::<Priority>().is_err());
}

#[derive(Clone, Debug)]
enum Op {
    Submit { level: usize, parts: usize },
    Pop,
    Finish(usize),
    Fail(usize, bool),
    Cancel(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0..4usize, 1..4usize).prop_map(|(level, parts)| Op::Submit { level, parts }),
        3 => Just(Op::Pop),
        2 => any::<usize>().prop_map(Op::Finish),
        1 => any::<(usize, bool)>().prop_map(|(k, r)| Op::Fail(k, r)),
        1 => any::<usize>().prop_map(Op::Cancel),
    ]
}

#[derive(Default)]
struct ModelJob {
    parts: usize,
    done: usize,
    started: bool,
    abandoned: bool,
    attempts: BTreeMap<usize, u32>,
}

/// The model: every waiting ticket in one list keyed by (level, order); the next one is the
/// highest level, then the smallest order. Submissions count up from 0, retries count down from
/// -1, so a retry precedes everything that waited at its level.
#[derive(Default)]
struct Model {
    waiting: Vec<(usize, i64, Ticket)>,
    running: BTreeSet<(u64, usize, u32)>,
    jobs: BTreeMap<u64, ModelJob>,
    level_of: BTreeMap<u64, usize>,
    up: i64,
    down: i64,
    ended: BTreeSet<u64>,
}

impl Model {
    fn next(&self) -> Option<Ticket> {
        self.waiting
            .iter()
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|w| w.2)
    }

    fn abandon(&mut self, job: u64) -> usize {
        self.waiting.retain(|w| w.2.job != job);
        if let Some(j) = self.jobs.get_mut(&job) {
            j.abandoned = true;
        }
        let running = self.running.iter().filter(|r| r.0 == job).count();
        if running == 0 {
            self.end(job);
        }
        running
    }

    /// Takes the `k`-th running ticket (mod their count); an abandoned job whose last running
    /// ticket this was ends. Returns the ticket and whether its job was abandoned.
    fn take_running(&mut self, k: usize) -> ((u64, usize, u32), Ticket, bool) {
        let r = *self
            .running
            .iter()
            .nth(k % self.running.len())
            .expect("k < len");
        self.running.remove(&r);
        let abandoned = self.jobs.get(&r.0).is_some_and(|j| j.abandoned);
        if abandoned && !self.running.iter().any(|x| x.0 == r.0) {
            self.end(r.0);
        }
        (r, t(r.0, r.1, r.2), abandoned)
    }

    fn end(&mut self, job: u64) {
        self.jobs.remove(&job);
        assert!(self.ended.insert(job), "job {job} ended twice");
    }
}

const MAX_ATTEMPTS: u32 = 3;

fn step(s: &mut Scheduler, m: &mut Model, next_job: &mut u64, op: Op) {
    match op {
        Op::Submit { level, parts } => {
            let job = *next_job;
            *next_job += 1;
            let ahead = m.waiting.iter().filter(|w| w.0 >= level).count();
            let prio = Priority::from_index(level).expect("level < 4");
            assert_eq!(s.submit(job, prio, parts), Ok(ahead));
            for index in 0..parts {
                m.waiting.push((level, m.up, t(job, index, 1)));
                m.up += 1;
            }
            m.level_of.insert(job, level);
            m.jobs.insert(
                job,
                ModelJob {
                    parts,
                    attempts: (0..parts).map(|i| (i, 1)).collect(),
                    ..ModelJob::default()
                },
            );
        }
        Op::Pop => {
            let want = m.next();
            assert_eq!(s.peek(), want);
            assert_eq!(s.pop(), want);
            if let Some(tk) = want {
                m.waiting.retain(|w| w.2 != tk);
                m.running.insert((tk.job, tk.index, tk.attempt));
                let j = m
                    .jobs
                    .get_mut(&tk.job)
                    .expect("waiting ticket of a live job");
                assert!(!j.abandoned, "popped a partition of an abandoned job");
                j.started = true;
            }
        }
        Op::Finish(k) | Op::Fail(k, _) if m.running.is_empty() => {
            let _ = k;
        }
        Op::Finish(k) => {
            let (r, tk, abandoned) = m.take_running(k);
            let want = if abandoned {
                Finished::Ignored
            } else {
                let j = m.jobs.get_mut(&r.0).expect("running job known");
                j.done += 1;
                if j.done == j.parts {
                    m.end(r.0);
                    Finished::JobDone
                } else {
                    Finished::Pending
                }
            };
            assert_eq!(s.finished(tk), Ok(want));
            assert!(s.finished(tk).is_err(), "a ticket reports once");
        }
        Op::Fail(k, retryable) => {
            let (r, tk, abandoned) = m.take_running(k);
            let want = if abandoned {
                Failure::Ignored
            } else {
                let j = m.jobs.get_mut(&r.0).expect("running job known");
                let attempts = j.attempts[&r.1];
                if retryable && attempts < MAX_ATTEMPTS {
                    j.attempts.insert(r.1, attempts + 1);
                    let next = t(r.0, r.1, attempts + 1);
                    m.down -= 1;
                    m.waiting.push((m.level_of[&r.0], m.down, next));
                    Failure::Retry(next)
                } else {
                    let running = m.abandon(r.0);
                    Failure::JobFailed { attempts, running }
                }
            };
            assert_eq!(s.failed(tk, retryable), Ok(want));
        }
        Op::Cancel(k) => {
            let job = (k as u64) % (*next_job).max(1);
            let want = match m.jobs.get(&job) {
                None => Cancelled::Unknown,
                Some(j) if j.abandoned => Cancelled::AlreadyAbandoned,
                Some(j) => {
                    let was_running = j.started;
                    let running = m.abandon(job);
                    Cancelled::Done {
                        was_running,
                        running,
                    }
                }
            };
            assert_eq!(s.cancel(job), want);
        }
    }
}

fn check(s: &Scheduler, m: &Model) {
    let mut by_level = [0usize; 4];
    for w in &m.waiting {
        by_level[w.0] += 1;
    }
    assert_eq!(s.waiting_by_level(), by_level);
    assert_eq!(s.jobs(), m.jobs.len());
    for (id, j) in &m.jobs {
        assert_eq!(s.is_active(*id), !j.abandoned);
        assert_eq!(
            s.running(*id),
            m.running.iter().filter(|r| r.0 == *id).count()
        );
        assert!(j.attempts.values().all(|a| *a <= MAX_ATTEMPTS));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Any sequence of submits, pops, results, failures and cancels: the scheduler admits
    /// exactly what the model admits (highest level first, FIFO within, retries in front), never
    /// admits a partition of an abandoned job, ends each job once, and drains to empty.
    #[test]
    fn scheduler_matches_the_model(ops in proptest::collection::vec(op(), 1..120)) {
        let mut s = Scheduler::new(MAX_ATTEMPTS);
        let mut m = Model::default();
        let mut next_job = 0u64;
        for o in ops {
            step(&mut s, &mut m, &mut next_job, o);
            check(&s, &m);
        }
        // Drain: pop and finish everything; the scheduler ends empty and every job ended once.
        loop {
            step(&mut s, &mut m, &mut next_job, Op::Pop);
            if m.running.is_empty() && m.waiting.is_empty() {
                break;
            }
            step(&mut s, &mut m, &mut next_job, Op::Finish(0));
            check(&s, &m);
        }
        prop_assert_eq!(s.jobs(), 0);
        prop_assert_eq!(s.waiting(), 0);
        prop_assert_eq!(m.ended.len() as u64, next_job);
    }
}
