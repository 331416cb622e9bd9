//! Reading a key file with the full point check once, then trusting it: a small record under
//! baton's cache (`checked-keys/`, named by the key file's path, size and verifying key:
//! `keys::files`; never beside the key, whose directory lotus and curio own) remembers the file's
//! identity (length, modification time, inode, device) and a digest of its content. A later read
//! whose identity matches skips every check; a touched or rewritten file whose digest matches
//! skips the point check and refreshes the record; anything else is checked again in full. A
//! record an earlier version left beside the key (or under its older name in the cache) is read
//! once and moved.
//!
//! The record trusts the file system: whoever can rewrite the key and restore its modification
//! time could also rewrite the record. It guards against corrupt and swapped files, not against
//! someone with write access to the parameter cache or to baton's cache.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use crate::groth16::error::Result;
use crate::groth16::key::{Check, ProvingKey};
use crate::keys::files::{self as key_files, KeyFileKind};

/// How a key read through [`read_checked_once`] came to be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Every point was checked now (first use of this file, or it changed).
    Checked,
    /// The record matched the file's identity: no check, no hashing.
    Remembered,
    /// The identity differed but the content digest matched the record: no point check.
    SameContent,
    /// Not read from a parameter file: made by the store's caller, who vouches for it.
    Made,
}

/// Bytes per block of the content digest (blocks are hashed in parallel).
const BLOCK_BYTES: usize = 4 << 20;
const RECORD_VERSION: &str = "baton-key-check-1";

#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    len: u64,
    mtime_ns: i128,
    ino: u64,
    dev: u64,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Self {
        Identity {
            len: meta.len(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    identity: Identity,
    digest: String,
}

impl Record {
    fn render(&self) -> String {
        let i = &self.identity;
        format!(
            "{RECORD_VERSION}\nlen={}\nmtime_ns={}\nino={}\ndev={}\ndigest={}\n",
            i.len, i.mtime_ns, i.ino, i.dev, self.digest
        )
    }

    fn parse(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        if lines.next()? != RECORD_VERSION {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            let line = lines.next()?;
            line.strip_prefix(name)?
                .strip_prefix('=')
                .map(str::to_string)
        };
        Some(Record {
            identity: Identity {
                len: field("len")?.parse().ok()?,
                mtime_ns: field("mtime_ns")?.parse().ok()?,
                ino: field("ino")?.parse().ok()?,
                dev: field("dev")?.parse().ok()?,
            },
            digest: field("digest")?,
        })
    }
}

/// Where the record of `key` (whose verifying key hashes to `vk`) lives.
fn record_path(key: &Path, vk: &[u8; 32]) -> PathBuf {
    key_files::path_for(key, vk, KeyFileKind::CheckRecord)
}

/// Where earlier versions kept it: beside the key, else under the cache by the key's path alone.
fn old_record_paths(key: &Path) -> Vec<PathBuf> {
    let mut out = vec![KeyFileKind::CheckRecord.old_path(key)];
    if let Some(dir) = crate::cache::cache_dir() {
        let name = key
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "key".into());
        let full = std::fs::canonicalize(key).unwrap_or_else(|_| key.to_path_buf());
        let tag = hex::encode(&Sha256::digest(full.to_string_lossy().as_bytes())[..8]);
        out.push(dir.join("checked-keys").join(format!("{name}-{tag}")));
    }
    out
}

fn read_record(path: &Path) -> Option<Record> {
    Record::parse(&std::fs::read_to_string(path).ok()?)
}

/// The record of `key`, from its place under the cache, else from where an earlier version left
/// it (then moved to its place; the old file is removed where the directory allows).
fn load_record(key: &Path, vk: &[u8; 32]) -> Option<Record> {
    let path = record_path(key, vk);
    if let Some(r) = read_record(&path) {
        return Some(r);
    }
    old_record_paths(key).into_iter().find_map(|old| {
        let r = read_record(&old)?;
        if write_record(&path, &r) {
            key_files::retire(KeyFileKind::CheckRecord, &old, &path);
        }
        Some(r)
    })
}

/// Writes the record to `path` through a temporary file; whether it is there now.
fn write_record(path: &Path, record: &Record) -> bool {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let ok = path
        .parent()
        .is_some_and(|d| std::fs::create_dir_all(d).is_ok())
        && std::fs::write(&tmp, record.render()).is_ok()
        && std::fs::rename(&tmp, path).is_ok();
    if !ok {
        let _ = std::fs::remove_file(&tmp);
    }
    ok
}

/// Writes the record of `key`; a failure only costs a check next time.
fn store_record(key: &Path, vk: &[u8; 32], record: &Record) {
    let path = record_path(key, vk);
    if !write_record(&path, record) {
        tracing::warn!(
            key = %key.display(),
            record = %path.display(),
            "could not record the key check; it will run again"
        );
    }
}

/// SHA-256 over the SHA-256 of each block, so all cores share the hashing.
fn digest(bytes: &[u8]) -> String {
    let blocks: Vec<[u8; 32]> = bytes
        .par_chunks(BLOCK_BYTES)
        .map(|b| Sha256::digest(b).into())
        .collect();
    let mut h = Sha256::new();
    h.update((bytes.len() as u64).to_le_bytes());
    for b in &blocks {
        h.update(b);
    }
    hex::encode(h.finalize())
}

/// Reads the `.params` file at `path`, running the full point check only the first time this
/// file (or a file with its content) is read on this machine.
pub fn read_checked_once(path: &Path) -> Result<(ProvingKey, Trust)> {
    let file = File::open(path)?;
    let identity = Identity::of(&file.metadata()?);
    // SAFETY: the map is read-only and dropped before this function returns; a file truncated
    // underneath us by another process could fault, the same contract as any mmap reader.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    // A file too short for its verifying key fails to parse below; its record is never found.
    let vk = key_files::vk_digest(&map).unwrap_or([0; 32]);
    let record = load_record(path, &vk);
    if let Some(r) = &record {
        if r.identity == identity {
            return Ok((
                ProvingKey::from_bytes(&map, Check::None)?.with_path(path),
                Trust::Remembered,
            ));
        }
    }
    let content = digest(&map);
    let same = record
        .as_ref()
        .is_some_and(|r| r.identity.len == identity.len && r.digest == content);
    let (key, trust) = if same {
        (
            ProvingKey::from_bytes(&map, Check::None)?,
            Trust::SameContent,
        )
    } else {
        (ProvingKey::from_bytes(&map, Check::Full)?, Trust::Checked)
    };
    store_record(
        path,
        &vk,
        &Record {
            identity,
            digest: content,
        },
    );
    Ok((key.with_path(path), trust))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips_and_rejects_other_versions() {
        let r = Record {
            identity: Identity {
                len: 10,
                mtime_ns: -5,
                ino: 7,
                dev: 9,
            },
            digest: "ab".into(),
        };
        assert_eq!(Record::parse(&r.render()), Some(r.clone()));
        let other = r.render().replace(RECORD_VERSION, "baton-key-check-0");
        assert_eq!(Record::parse(&other), None);
        assert_eq!(Record::parse("garbage"), None);
    }

    #[test]
    fn digest_depends_on_every_block() {
        let mut a = vec![1u8; BLOCK_BYTES * 2 + 3];
        let d = digest(&a);
        a[BLOCK_BYTES + 1] ^= 1;
        assert_ne!(digest(&a), d);
        assert_ne!(digest(&a[..a.len() - 1]), digest(&a));
    }
}
