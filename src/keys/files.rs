//! baton's own files for a key file, named in this one place: the recording of its circuit and
//! the record of its point check live under baton's cache directory, one folder per kind, never
//! beside the key. The parameter cache (`FIL_PROOFS_PARAMETER_CACHE`) belongs to lotus and
//! curio and is often mounted read-only or shared between hosts; what earlier versions of baton
//! left there is read once and moved ([`KeyFileKind::old_path`]).

use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::groth16::key::{vk_bytes, VK_HEAD_BYTES};

/// A kind of file baton keeps for a key file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyFileKind {
    /// The recording of the key's circuit (`recordings/<key name>.<id>.r1cs`).
    Recording,
    /// The record of the key's point check (`checked-keys/<key name>.<id>.baton-checked`).
    CheckRecord,
}

impl KeyFileKind {
    fn folder(self) -> &'static str {
        match self {
            Self::Recording => "recordings",
            Self::CheckRecord => "checked-keys",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Self::Recording => "r1cs",
            Self::CheckRecord => "baton-checked",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Recording => "recording",
            Self::CheckRecord => "key check record",
        }
    }

    /// Where baton versions before this one wrote this kind of file for `key`: beside it
    /// (`<stem>.r1cs`, `<name>.baton-checked`).
    pub fn old_path(self, key: &Path) -> PathBuf {
        match self {
            Self::Recording => key.with_extension("r1cs"),
            Self::CheckRecord => key.with_file_name(format!("{}.baton-checked", file_name(key))),
        }
    }
}

fn file_name(key: &Path) -> String {
    key.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "key".into())
}

/// The folder baton keeps its files for keys in: [`crate::cache_dir`] (`$BATON_CACHE_DIR`,
/// else `$XDG_CACHE_HOME/baton`, else `~/.cache/baton`), else the temp dir's `baton`, where the
/// CLI keeps the keys it makes.
pub fn base_dir() -> PathBuf {
    crate::cache::cache_dir().unwrap_or_else(|| std::env::temp_dir().join("baton"))
}

/// Where baton keeps its `kind` file for the key file at `key`, whose verifying key hashes to
/// `vk_digest` ([`vk_digest`]): `<base>/<folder>/<key name>.<id>.<ext>` under [`base_dir`].
///
/// The id is SHA-256 over the key's canonical path, its size and `vk_digest`, 16 hex digits.
/// The path tells apart keys of one name in different directories; the size and the verifying
/// key (a few KB at the head of the file, read without touching the rest) tell a replaced file
/// from the one the file was made for. Hashing the whole key would name it exactly but takes
/// minutes at 32 GiB, the cost the check record exists to skip; what must hold of the content
/// is checked where it matters instead: a recording carries its key's tag and is refused for
/// any other key, a check record carries the file's inode, time and content digest.
pub fn path_for(key: &Path, vk_digest: &[u8; 32], kind: KeyFileKind) -> PathBuf {
    path_in(&base_dir(), key, vk_digest, kind)
}

fn path_in(base: &Path, key: &Path, vk_digest: &[u8; 32], kind: KeyFileKind) -> PathBuf {
    let full = std::fs::canonicalize(key)
        .or_else(|_| std::path::absolute(key))
        .unwrap_or_else(|_| key.to_path_buf());
    let size = std::fs::metadata(&full).map_or(0, |m| m.len());
    let mut h = Sha256::new();
    h.update(full.as_os_str().as_bytes());
    h.update([0]);
    h.update(size.to_le_bytes());
    h.update(vk_digest);
    let id = hex::encode(&h.finalize()[..8]);
    // The key's own name keeps the folder readable; cut so the whole stays under 255 bytes.
    let name: String = file_name(key).chars().take(160).collect();
    base.join(kind.folder())
        .join(format!("{name}.{id}.{}", kind.extension()))
}

/// SHA-256 of the verifying key at the head of a key file whose first bytes are `head`: the
/// same digest as [`crate::compiled::KeyTag::of`] gives for the key read from that file.
/// `None` when `head` does not hold the whole verifying key.
pub fn vk_digest(head: &[u8]) -> Option<[u8; 32]> {
    let len = vk_bytes(head)?;
    head.get(..len).map(|vk| Sha256::digest(vk).into())
}

/// [`vk_digest`] of the key file at `key`, reading its verifying key and nothing more; `None`
/// when it cannot be read or is too short.
pub fn vk_digest_of_file(key: &Path) -> Option<[u8; 32]> {
    let mut file = File::open(key).ok()?;
    let file_bytes = file.metadata().ok()?.len();
    let mut head = vec![0u8; VK_HEAD_BYTES];
    file.read_exact(&mut head).ok()?;
    let len = vk_bytes(&head)?;
    if len as u64 > file_bytes {
        return None;
    }
    head.resize(len, 0);
    file.read_exact(&mut head[VK_HEAD_BYTES..]).ok()?;
    vk_digest(&head)
}

/// The `kind` file an earlier version left at `old` was read and now lives at `new`: removes
/// `old` where that is allowed (a read-only parameter directory keeps it, unread from now on)
/// and says so, once per file.
pub(crate) fn retire(kind: KeyFileKind, old: &Path, new: &Path) {
    let removed = std::fs::remove_file(old).is_ok();
    tracing::info!(
        from = %old.display(),
        to = %new.display(),
        removed,
        "moved the {} out of the key's directory into baton's cache",
        kind.what()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("baton-key-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch");
        d
    }

    #[test]
    fn named_by_path_size_and_verifying_key_in_a_folder_per_kind() {
        let dir = scratch("names");
        let base = Path::new("/cache");
        let (a, b) = (dir.join("a/k.params"), dir.join("b/k.params"));
        for k in [&a, &b] {
            std::fs::create_dir_all(k.parent().expect("parent")).expect("dir");
            std::fs::write(k, [1u8; 10]).expect("key");
        }
        let name = |k: &Path, vk: u8, kind| path_in(base, k, &[vk; 32], kind);
        let rec = name(&a, 0, KeyFileKind::Recording);
        assert!(rec.starts_with("/cache/recordings"), "{rec:?}");
        let file = rec.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(
            file.starts_with("k.params.") && file.ends_with(".r1cs"),
            "{file}"
        );
        let check = name(&a, 0, KeyFileKind::CheckRecord);
        assert!(check.starts_with("/cache/checked-keys"), "{check:?}");
        assert!(check.to_string_lossy().ends_with(".baton-checked"));
        // Another directory, another verifying key, another size: another file each.
        assert_ne!(name(&b, 0, KeyFileKind::Recording), rec);
        assert_ne!(name(&a, 1, KeyFileKind::Recording), rec);
        std::fs::write(&a, [1u8; 11]).expect("grow");
        assert_ne!(name(&a, 0, KeyFileKind::Recording), rec);
        // One file reached by two paths is one key.
        let dotted = dir.join("b/../a/k.params");
        assert_eq!(
            name(&dotted, 0, KeyFileKind::Recording),
            name(&a, 0, KeyFileKind::Recording)
        );
        // A long name is cut to stay a valid file name.
        let long = dir.join("x".repeat(250));
        let n = name(&long, 0, KeyFileKind::CheckRecord);
        assert!(n.file_name().is_some_and(|f| f.len() < 255), "{n:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn old_places_are_beside_the_key() {
        let k = Path::new("/p/v28-x.params");
        assert_eq!(
            KeyFileKind::Recording.old_path(k),
            PathBuf::from("/p/v28-x.r1cs")
        );
        assert_eq!(
            KeyFileKind::CheckRecord.old_path(k),
            PathBuf::from("/p/v28-x.params.baton-checked")
        );
    }

    #[test]
    fn the_verifying_key_digest_reads_the_head_only() {
        let dir = scratch("vk");
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let pk =
            crate::generate_random_parameters(crate::circuits::Synthetic::new(1 << 6, 0), &mut rng)
                .expect("setup");
        let path = dir.join("k.params");
        pk.write_file(&path).expect("write");
        let want = crate::compiled::KeyTag::of(&pk).0;
        assert_eq!(vk_digest_of_file(&path), Some(want));
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(vk_digest(&bytes), Some(want));
        // Cut inside the verifying key: no digest.
        std::fs::write(&path, &bytes[..900]).expect("cut");
        assert_eq!(vk_digest_of_file(&path), None);
        assert_eq!(vk_digest(&bytes[..900]), None);
        assert_eq!(vk_digest_of_file(&dir.join("absent")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
