//! The journal: every accepted job and every finished proof, in an embedded database (redb) under
//! `server.state_dir`, so that a daemon killed at any point resumes its jobs and still answers for
//! the finished ones. Each write is one committed (fsynced) transaction.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

/// Job id → [`JobRecord`] as JSON.
const JOBS: TableDefinition<&str, &[u8]> = TableDefinition::new("jobs");
/// Job id → the accepted request as received (protobuf), kept until the job ends.
const REQUESTS: TableDefinition<&str, &[u8]> = TableDefinition::new("requests");
/// Job id → the proof bytes of a completed job.
const PROOFS: TableDefinition<&str, &[u8]> = TableDefinition::new("proofs");
/// Request digest → the id of the job that completed it (only completed jobs: a failed or
/// cancelled request runs again when it is sent again).
const COMPLETED: TableDefinition<&str, &str> = TableDefinition::new("completed_by_digest");
/// Request id → the id of the newest job accepted under it (ids are labels, shared by jobs).
const BY_REQUEST: TableDefinition<&str, &str> = TableDefinition::new("newest_by_request_id");

/// The journal's file name inside the state directory.
pub const FILE_NAME: &str = "journal.redb";

/// A journal that cannot be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The state directory cannot be made.
    #[error("state directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The database refused (another daemon holds it, the disk is full, the file is damaged).
    #[error("journal: {0}")]
    Db(String),
    /// A record does not decode (written by an incompatible version).
    #[error("journal record of job {id}: {reason}")]
    Record {
        /// The job.
        id: String,
        /// Why.
        reason: String,
    },
}

impl From<JournalError> for crate::server::error::CallError {
    fn from(e: JournalError) -> Self {
        crate::server::error::CallError::Internal(e.to_string())
    }
}

fn dberr(e: impl Into<redb::Error>) -> JournalError {
    JournalError::Db(e.into().to_string())
}

/// Where a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    /// Accepted, not finished (queued or running).
    Accepted,
    /// Proved; the proof is in the journal.
    Completed,
    /// Failed for good; the record holds the error.
    Failed,
    /// Cancelled by a client.
    Cancelled,
}

/// Milliseconds a job spent in each phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// From acceptance to its first partition's grant.
    pub queue_wait_ms: u64,
    /// Loading (or making) the proving key.
    pub srs_load_ms: u64,
    /// Synthesis, summed over partitions.
    pub synthesis_ms: u64,
    /// H and MSMs, summed over partitions.
    pub gpu_compute_ms: u64,
    /// From acceptance to the end.
    pub total_ms: u64,
}

/// What the journal keeps about one job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    /// The client's request id (a label several jobs may share; empty for jobs journaled
    /// before job ids and request ids were told apart, whose job id was the request id).
    #[serde(default)]
    pub request_id: String,
    /// Acceptance order (resumed jobs are queued again in this order).
    pub seq: u64,
    /// The wire `ProofKind` value.
    pub kind: i32,
    /// The admission level (`Priority as u8`).
    pub priority: u8,
    /// SHA-256 of the request as received, hex: a job's identity (an identical request
    /// attaches to it while it is live, and is served its proof once it completed).
    pub digest: String,
    /// Wall-clock acceptance time, ms since the Unix epoch.
    pub accepted_ms: u64,
    /// Where the job is.
    pub state: JobState,
    /// When it ended, ms since the Unix epoch.
    pub finished_ms: Option<u64>,
    /// Why it failed.
    pub error: Option<String>,
    /// Phase timings (set when it ends).
    pub timings: Timings,
}

/// A job's record and, when it completed, its proof bytes.
pub type Stored = (JobRecord, Option<Vec<u8>>);

/// An accepted job the journal still holds unfinished, with its request.
#[derive(Debug)]
pub struct Unfinished {
    /// Job id.
    pub id: String,
    /// Its record.
    pub record: JobRecord,
    /// The request as received.
    pub request: Vec<u8>,
}

/// The embedded database.
pub struct Journal {
    db: Database,
}

impl Journal {
    /// Opens (or creates) `dir/journal.redb`, making `dir` if needed. Fails while another
    /// process has it open.
    pub fn open(dir: &Path) -> Result<Self, JournalError> {
        std::fs::create_dir_all(dir).map_err(|source| JournalError::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
        let db = Database::create(dir.join(FILE_NAME)).map_err(dberr)?;
        let tx = db.begin_write().map_err(dberr)?;
        for table in [JOBS, REQUESTS, PROOFS] {
            tx.open_table(table).map_err(dberr)?;
        }
        for table in [COMPLETED, BY_REQUEST] {
            tx.open_table(table).map_err(dberr)?;
        }
        tx.commit().map_err(dberr)?;
        Ok(Journal { db })
    }

    /// Writes job `id`'s record, then `more` in the same transaction, and commits (fsynced).
    fn write(
        &self,
        id: &str,
        record: &JobRecord,
        more: impl FnOnce(&redb::WriteTransaction) -> Result<(), JournalError>,
    ) -> Result<(), JournalError> {
        let json = encode(id, record)?;
        let tx = self.db.begin_write().map_err(dberr)?;
        tx.open_table(JOBS)
            .map_err(dberr)?
            .insert(id, json.as_slice())
            .map_err(dberr)?;
        more(&tx)?;
        tx.commit().map_err(dberr)
    }

    /// Records an accepted job and its request, durably, before the caller answers; the job
    /// becomes the newest of its request id.
    pub fn accept(&self, id: &str, record: &JobRecord, request: &[u8]) -> Result<(), JournalError> {
        self.write(id, record, |tx| {
            tx.open_table(REQUESTS)
                .map_err(dberr)?
                .insert(id, request)
                .map_err(dberr)?;
            tx.open_table(BY_REQUEST)
                .map_err(dberr)?
                .insert(record.request_id.as_str(), id)
                .map_err(dberr)?;
            Ok(())
        })
    }

    /// Records how a job ended (with its proof when it completed) and drops its request.
    pub fn finish(
        &self,
        id: &str,
        record: &JobRecord,
        proof: Option<&[u8]>,
    ) -> Result<(), JournalError> {
        self.write(id, record, |tx| {
            tx.open_table(REQUESTS)
                .map_err(dberr)?
                .remove(id)
                .map_err(dberr)?;
            if let Some(p) = proof {
                tx.open_table(PROOFS)
                    .map_err(dberr)?
                    .insert(id, p)
                    .map_err(dberr)?;
                tx.open_table(COMPLETED)
                    .map_err(dberr)?
                    .insert(record.digest.as_str(), id)
                    .map_err(dberr)?;
            }
            Ok(())
        })
    }

    /// The record of job `id` and its proof, if the journal has it.
    pub fn get(&self, id: &str) -> Result<Option<Stored>, JournalError> {
        let tx = self.db.begin_read().map_err(dberr)?;
        let jobs = tx.open_table(JOBS).map_err(dberr)?;
        let Some(raw) = jobs.get(id).map_err(dberr)? else {
            return Ok(None);
        };
        let record = decode(id, raw.value())?;
        let proofs = tx.open_table(PROOFS).map_err(dberr)?;
        let proof = proofs.get(id).map_err(dberr)?.map(|p| p.value().to_vec());
        Ok(Some((record, proof)))
    }

    /// The id of the completed job whose request had digest `digest`, while it is kept.
    pub fn completed_with(&self, digest: &str) -> Result<Option<String>, JournalError> {
        self.lookup(COMPLETED, digest)
    }

    /// The id of the newest job accepted under request id `request_id`, while it is kept.
    pub fn newest_of(&self, request_id: &str) -> Result<Option<String>, JournalError> {
        self.lookup(BY_REQUEST, request_id)
    }

    fn lookup(
        &self,
        table: TableDefinition<&str, &str>,
        key: &str,
    ) -> Result<Option<String>, JournalError> {
        let tx = self.db.begin_read().map_err(dberr)?;
        let t = tx.open_table(table).map_err(dberr)?;
        let found = t.get(key).map_err(dberr)?.map(|v| v.value().to_string());
        Ok(found)
    }

    /// Every job accepted and not finished, in acceptance order, with its request.
    pub fn unfinished(&self) -> Result<Vec<Unfinished>, JournalError> {
        let tx = self.db.begin_read().map_err(dberr)?;
        let jobs = tx.open_table(JOBS).map_err(dberr)?;
        let requests = tx.open_table(REQUESTS).map_err(dberr)?;
        let mut out = Vec::new();
        for row in jobs.iter().map_err(dberr)? {
            let (k, v) = row.map_err(dberr)?;
            let id = k.value().to_string();
            let record = decode(&id, v.value())?;
            if record.state != JobState::Accepted {
                continue;
            }
            let request = match requests.get(id.as_str()).map_err(dberr)? {
                Some(r) => r.value().to_vec(),
                None => {
                    return Err(JournalError::Record {
                        id,
                        reason: "accepted but its request is missing".into(),
                    })
                }
            };
            out.push(Unfinished {
                id,
                record,
                request,
            });
        }
        out.sort_by_key(|u| u.record.seq);
        Ok(out)
    }

    /// The highest acceptance number recorded (0 when empty).
    pub fn last_seq(&self) -> Result<u64, JournalError> {
        let tx = self.db.begin_read().map_err(dberr)?;
        let jobs = tx.open_table(JOBS).map_err(dberr)?;
        let mut last = 0;
        for row in jobs.iter().map_err(dberr)? {
            let (k, v) = row.map_err(dberr)?;
            last = last.max(decode(k.value(), v.value())?.seq);
        }
        Ok(last)
    }

    /// Forgets jobs that ended more than `retention_ms` before `now_ms`; returns how many.
    pub fn prune(&self, now_ms: u64, retention_ms: u64) -> Result<usize, JournalError> {
        let old: Vec<(String, JobRecord)> = {
            let tx = self.db.begin_read().map_err(dberr)?;
            let jobs = tx.open_table(JOBS).map_err(dberr)?;
            let mut old = Vec::new();
            for row in jobs.iter().map_err(dberr)? {
                let (k, v) = row.map_err(dberr)?;
                let r = decode(k.value(), v.value())?;
                if r.finished_ms
                    .is_some_and(|f| f.saturating_add(retention_ms) < now_ms)
                {
                    old.push((k.value().to_string(), r));
                }
            }
            old
        };
        if old.is_empty() {
            return Ok(0);
        }
        let tx = self.db.begin_write().map_err(dberr)?;
        {
            let mut jobs = tx.open_table(JOBS).map_err(dberr)?;
            let mut proofs = tx.open_table(PROOFS).map_err(dberr)?;
            let mut completed = tx.open_table(COMPLETED).map_err(dberr)?;
            let mut by_request = tx.open_table(BY_REQUEST).map_err(dberr)?;
            for (id, r) in &old {
                jobs.remove(id.as_str()).map_err(dberr)?;
                proofs.remove(id.as_str()).map_err(dberr)?;
                // The indexes name this job only if no later job took its place there.
                remove_if_names(&mut completed, &r.digest, id)?;
                remove_if_names(&mut by_request, &r.request_id, id)?;
            }
        }
        tx.commit().map_err(dberr)?;
        Ok(old.len())
    }
}

/// Removes `key` from an index table when it still points at job `id`.
fn remove_if_names(
    table: &mut redb::Table<&str, &str>,
    key: &str,
    id: &str,
) -> Result<(), JournalError> {
    let names = table
        .get(key)
        .map_err(dberr)?
        .is_some_and(|v| v.value() == id);
    if names {
        table.remove(key).map_err(dberr)?;
    }
    Ok(())
}

fn encode(id: &str, r: &JobRecord) -> Result<Vec<u8>, JournalError> {
    serde_json::to_vec(r).map_err(|e| JournalError::Record {
        id: id.to_string(),
        reason: e.to_string(),
    })
}

fn decode(id: &str, bytes: &[u8]) -> Result<JobRecord, JournalError> {
    serde_json::from_slice(bytes).map_err(|e| JournalError::Record {
        id: id.to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: u64) -> JobRecord {
        JobRecord {
            request_id: "rid".into(),
            seq,
            kind: 1001,
            priority: 1,
            digest: format!("digest-{seq}"),
            accepted_ms: 1000,
            state: JobState::Accepted,
            finished_ms: None,
            error: None,
            timings: Timings::default(),
        }
    }

    #[test]
    fn accepted_jobs_survive_a_reopen_and_finished_ones_are_pruned_after_retention() {
        let dir = std::env::temp_dir().join(format!("baton-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let j = Journal::open(&dir).expect("open");
            j.accept("b", &record(2), b"req-b").expect("accept");
            j.accept("a", &record(1), b"req-a").expect("accept");
            j.accept("c", &record(3), b"req-c").expect("accept");
            let done = JobRecord {
                state: JobState::Completed,
                finished_ms: Some(5000),
                ..record(3)
            };
            j.finish("c", &done, Some(&[7u8; 192])).expect("finish");
            assert!(Journal::open(&dir).is_err(), "one process at a time");
        }
        let j = Journal::open(&dir).expect("reopen");
        let left = j.unfinished().expect("read");
        let ids: Vec<_> = left
            .iter()
            .map(|u| (u.id.as_str(), u.request.as_slice()))
            .collect();
        assert_eq!(
            ids,
            [("a", &b"req-a"[..]), ("b", &b"req-b"[..])],
            "acceptance order"
        );
        let (rec, proof) = j.get("c").expect("read").expect("kept");
        assert_eq!(
            (rec.state, proof),
            (JobState::Completed, Some(vec![7u8; 192]))
        );
        assert_eq!(j.last_seq().expect("read"), 3);
        // Indexes: only the completed job serves its digest; the request id names the newest.
        assert_eq!(
            j.completed_with("digest-3").expect("read").as_deref(),
            Some("c")
        );
        assert_eq!(j.completed_with("digest-1").expect("read"), None);
        assert_eq!(j.newest_of("rid").expect("read").as_deref(), Some("c"));
        assert_eq!(
            j.prune(5000 + 999, 1000).expect("prune"),
            0,
            "still within retention"
        );
        assert_eq!(j.prune(5000 + 1001, 1000).expect("prune"), 1);
        assert!(j.get("c").expect("read").is_none());
        assert_eq!(
            j.completed_with("digest-3").expect("read"),
            None,
            "pruned with its job"
        );
        assert_eq!(j.newest_of("rid").expect("read"), None);
        assert_eq!(
            j.unfinished().expect("read").len(),
            2,
            "unfinished jobs are never pruned"
        );
        drop(j);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
