//! The recording's file, kept under baton's cache by the key file's identity ([`cache_path`]),
//! never beside the key.
//!
//! Layout (little-endian), version 1:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `BATONR1C` |
//! | 4 | format version |
//! | 4 | coefficient-index width in bytes (1, 2 or 4) |
//! | 32 | key tag: SHA-256 of the verifying key this recording was made for ([`KeyTag`]) |
//! | 8 × 4 | inputs (the constant one included), aux, constraints (without input rows), table entries |
//! | 8 × 3 | terms of A, B and C |
//! | 32 × table | coefficients, canonical little-endian |
//! | per matrix | (rows + 1) × u32 row pointers, terms × u32 columns, terms × width indices |
//! | 32 | SHA-256 of every byte before it |
//!
//! The length the header implies is checked against the file's before anything large is
//! allocated (a cut file reads as truncated, never as an allocation of garbage size); the
//! checksum before the recording is used. Writing goes to a temporary file in the same folder
//! (made if missing), synced, then renamed over the target: a reader sees the old file or the
//! new one, never half.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use blstrs::Scalar;
use sha2::{Digest, Sha256};

use super::coeffs::CoeffIndices;
use super::error::CompiledError;
use super::matrix::SparseMatrix;
use super::recording::{Recording, Shape};
use crate::groth16::key::ProvingKey;
use crate::keys::files::{self as key_files, KeyFileKind};

const MAGIC: &[u8; 8] = b"BATONR1C";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;
const HEADER_BYTES: u64 = 8 + 4 + 4 + 32 + 8 * 7;
const DIGEST_BYTES: u64 = 32;
/// Bytes staged per write or read call.
const CHUNK: usize = 1 << 20;

/// Where baton keeps the recording of the key file at `key_path`: in `recordings/` under its
/// cache (`$BATON_CACHE_DIR`, else `~/.cache/baton`: [`crate::keys::files::base_dir`]), named
/// by the key file's path, size and verifying key ([`crate::keys::files::path_for`]), never
/// beside the key. Reads the file's verifying key and nothing more; a key file that cannot be
/// read yet is named by its path alone. The engine keeps a key's recording at this same path.
pub fn cache_path(key_path: &Path) -> PathBuf {
    let vk = key_files::vk_digest_of_file(key_path).unwrap_or([0; 32]);
    key_files::path_for(key_path, &vk, KeyFileKind::Recording)
}

/// Which proving key a recording file belongs to: SHA-256 of its verifying key's encoding
/// (δ is random per setup, so two keys never share it). A file written for another key of the
/// same dimensions is refused rather than trusted on its counts alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyTag(pub [u8; 32]);

impl KeyTag {
    /// The tag of `pk`.
    pub fn of(pk: &ProvingKey) -> Self {
        let mut bytes = Vec::new();
        // Writing into a Vec cannot fail; an empty encoding would only make the tag mismatch.
        let _ = pk.vk.write(&mut bytes);
        KeyTag(Sha256::digest(&bytes).into())
    }
}

struct Hashing<T> {
    inner: T,
    hash: Sha256,
    at: u64,
}

impl<W: Write> Hashing<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.at += bytes.len() as u64;
        self.inner.write_all(bytes)
    }
}

fn put_u32s(w: &mut Hashing<impl Write>, v: &[u32]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(CHUNK);
    for chunk in v.chunks(CHUNK / 4) {
        buf.clear();
        chunk.iter().for_each(|x| buf.extend(x.to_le_bytes()));
        w.put(&buf)?;
    }
    Ok(())
}

fn write_body(r: &Recording, tag: KeyTag, w: &mut Hashing<impl Write>) -> std::io::Result<()> {
    let s = r.shape();
    let m = r.matrices();
    let width = CoeffIndices::width_for(r.coeffs().len());
    w.put(MAGIC)?;
    w.put(&VERSION.to_le_bytes())?;
    w.put(&(width as u32).to_le_bytes())?;
    w.put(&tag.0)?;
    let counts = [s.inputs, s.aux, s.constraints, r.coeffs().len()]
        .into_iter()
        .chain(m.iter().map(SparseMatrix::terms));
    for n in counts {
        w.put(&(n as u64).to_le_bytes())?;
    }
    for c in r.coeffs() {
        w.put(&c.to_bytes_le())?;
    }
    let mut buf = Vec::with_capacity(CHUNK);
    for matrix in m {
        put_u32s(w, matrix.row_ptr())?;
        put_u32s(w, matrix.cols())?;
        let idx = matrix.coeffs();
        for start in (0..idx.len()).step_by(CHUNK) {
            buf.clear();
            idx.write_le(&mut buf, start..(start + CHUNK).min(idx.len()));
            w.put(&buf)?;
        }
    }
    let digest = w.hash.clone().finalize();
    w.inner.write_all(&digest)?;
    w.inner.flush()
}

impl Recording {
    /// Checks the recording against `pk`, then writes it to `path` tagged with the key (for a
    /// key file, its place is [`cache_path`]).
    pub fn write_for_key(&self, path: &Path, pk: &ProvingKey) -> Result<(), CompiledError> {
        self.check_key(pk)?;
        self.write_file(path, KeyTag::of(pk))
    }

    /// Reads the recording at `path` and checks that it was written for `pk` (its tag) and fits
    /// it (its shape).
    pub fn read_for_key(path: &Path, pk: &ProvingKey) -> Result<Self, CompiledError> {
        let (r, tag) = Self::read_file(path)?;
        if tag != KeyTag::of(pk) {
            return Err(CompiledError::OtherKey {
                path: path.to_path_buf(),
            });
        }
        r.check_key(pk)?;
        Ok(r)
    }

    /// Writes the recording to `path` atomically (temporary file, sync, rename), making its
    /// folder if missing.
    pub fn write_file(&self, path: &Path, tag: KeyTag) -> Result<(), CompiledError> {
        let io = |source| CompiledError::Io {
            path: path.to_path_buf(),
            source,
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(
            ".{}.tmp-{}",
            name.unwrap_or_else(|| "recording".into()),
            std::process::id()
        ));
        let result = (|| {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let file = File::create(&tmp)?;
            let mut w = Hashing {
                inner: BufWriter::with_capacity(CHUNK, file),
                hash: Sha256::new(),
                at: 0,
            };
            write_body(self, tag, &mut w)?;
            let file = w.inner.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result.map_err(io)?;
        // Best effort: make the rename itself durable.
        if let Some(dir) = path.parent().and_then(|d| File::open(d).ok()) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Reads and validates a recording file (length, version, checksum, structure); returns it
    /// with the tag of the key it was written for.
    pub fn read_file(path: &Path) -> Result<(Self, KeyTag), CompiledError> {
        let file = File::open(path).map_err(|source| CompiledError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let len = file
            .metadata()
            .map_err(|source| CompiledError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .len();
        let mut r = Reader {
            inner: Hashing {
                inner: BufReader::with_capacity(CHUNK, file),
                hash: Sha256::new(),
                at: 0,
            },
            path,
            len,
        };
        r.read()
    }
}

struct Reader<'a, R> {
    inner: Hashing<R>,
    path: &'a Path,
    len: u64,
}

impl<R: Read> Reader<'_, R> {
    fn corrupt(&self, reason: impl Into<String>) -> CompiledError {
        CompiledError::Corrupt {
            path: self.path.to_path_buf(),
            reason: reason.into(),
        }
    }

    fn take(&mut self, buf: &mut [u8], section: &'static str) -> Result<(), CompiledError> {
        let offset = self.inner.at;
        self.inner
            .inner
            .read_exact(buf)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => CompiledError::Truncated {
                    path: self.path.to_path_buf(),
                    section,
                    offset,
                    len: self.len,
                },
                _ => CompiledError::Io {
                    path: self.path.to_path_buf(),
                    source: e,
                },
            })?;
        self.inner.hash.update(&*buf);
        self.inner.at += buf.len() as u64;
        Ok(())
    }

    fn u32(&mut self, section: &'static str) -> Result<u32, CompiledError> {
        let mut b = [0u8; 4];
        self.take(&mut b, section)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self, section: &'static str) -> Result<usize, CompiledError> {
        let mut b = [0u8; 8];
        self.take(&mut b, section)?;
        usize::try_from(u64::from_le_bytes(b))
            .map_err(|_| self.corrupt(format!("{section} does not fit this machine")))
    }

    /// `n` little-endian integers of `W` bytes each, decoded by `decode`.
    fn le_vec<T, const W: usize>(
        &mut self,
        n: usize,
        section: &'static str,
        decode: fn([u8; W]) -> T,
    ) -> Result<Vec<T>, CompiledError> {
        let mut out = Vec::with_capacity(n);
        let mut buf = vec![0u8; CHUNK - CHUNK % W];
        // The header's counts were checked against the file's length, so this cannot overflow.
        let mut left = n * W;
        while left > 0 {
            let step = left.min(buf.len());
            self.take(&mut buf[..step], section)?;
            out.extend(
                buf[..step]
                    .chunks_exact(W)
                    .map(|b| decode(b.try_into().unwrap_or([0; W]))),
            );
            left -= step;
        }
        Ok(out)
    }

    fn u32s(&mut self, n: usize, section: &'static str) -> Result<Vec<u32>, CompiledError> {
        self.le_vec(n, section, u32::from_le_bytes)
    }

    fn indices(&mut self, n: usize, width: usize) -> Result<CoeffIndices, CompiledError> {
        const SECTION: &str = "coefficient indices";
        Ok(match width {
            1 => CoeffIndices::U8(self.le_vec(n, SECTION, |[b]: [u8; 1]| b)?),
            2 => CoeffIndices::U16(self.le_vec(n, SECTION, u16::from_le_bytes)?),
            _ => CoeffIndices::U32(self.u32s(n, SECTION)?),
        })
    }

    fn read(&mut self) -> Result<(Recording, KeyTag), CompiledError> {
        let mut magic = [0u8; 8];
        self.take(&mut magic, "header")?;
        if &magic != MAGIC {
            return Err(self.corrupt("not a baton R1CS recording (bad magic)"));
        }
        let version = self.u32("header")?;
        if version != VERSION {
            return Err(CompiledError::Version {
                path: self.path.to_path_buf(),
                found: version,
                supported: VERSION,
            });
        }
        let width = self.u32("header")? as usize;
        let mut tag = [0u8; 32];
        self.take(&mut tag, "header")?;
        let mut counts = [0usize; 7];
        for c in counts.iter_mut() {
            *c = self.u64("header")?;
        }
        let [inputs, aux, constraints, table, ta, tb, tc] = counts;
        if ![1, 2, 4].contains(&width) || width != CoeffIndices::width_for(table) {
            return Err(self.corrupt(format!(
                "coefficient-index width {width} for a table of {table} entries"
            )));
        }
        let shape = Shape {
            inputs,
            aux,
            constraints,
        };
        self.check_length(shape, table, [ta, tb, tc], width)?;

        let mut coeffs = Vec::with_capacity(table);
        let mut b = [0u8; 32];
        for i in 0..table {
            self.take(&mut b, "coefficient table")?;
            let c: Option<Scalar> = Scalar::from_bytes_le(&b).into();
            coeffs
                .push(c.ok_or_else(|| self.corrupt(format!("coefficient {i} is not canonical")))?);
        }
        let mut matrices = Vec::with_capacity(3);
        for (name, terms) in ["A", "B", "C"].into_iter().zip([ta, tb, tc]) {
            let row_ptr = self.u32s(shape.rows() + 1, "row pointers")?;
            let cols = self.u32s(terms, "columns")?;
            let idx = self.indices(terms, width)?;
            let m = SparseMatrix::new(row_ptr, cols, idx, inputs + aux, table)
                .map_err(|e| self.corrupt(format!("matrix {name}: {e}")))?;
            matrices.push(m);
        }
        let want = self.inner.hash.clone().finalize();
        let mut got = [0u8; 32];
        self.take(&mut got, "checksum")?;
        if want.as_slice() != got {
            return Err(self.corrupt("checksum mismatch"));
        }
        let matrices: [SparseMatrix; 3] = matrices
            .try_into()
            .map_err(|_| self.corrupt("three matrices"))?;
        let recording =
            Recording::from_parts(shape, coeffs, matrices).map_err(|e| self.corrupt(e))?;
        Ok((recording, KeyTag(tag)))
    }

    /// The header's counts must account for the file's length exactly.
    fn check_length(
        &self,
        shape: Shape,
        table: usize,
        terms: [usize; 3],
        width: usize,
    ) -> Result<(), CompiledError> {
        let rows = (shape.inputs as u64).checked_add(shape.constraints as u64);
        let expected = rows.and_then(|rows| {
            let per_matrix = (rows + 1).checked_mul(4)?;
            let mut total = HEADER_BYTES.checked_add((table as u64).checked_mul(32)?)?;
            for t in terms {
                let body = (t as u64).checked_mul(4 + width as u64)?;
                total = total.checked_add(per_matrix)?.checked_add(body)?;
            }
            total.checked_add(DIGEST_BYTES)
        });
        match expected {
            None => Err(self.corrupt("header counts overflow")),
            Some(e) if e > self.len => Err(CompiledError::Truncated {
                path: self.path.to_path_buf(),
                section: "end of file (by the header's counts)",
                offset: e,
                len: self.len,
            }),
            Some(e) if e < self.len => {
                Err(self.corrupt(format!("{} bytes after the checksum", self.len - e)))
            }
            Some(_) => Ok(()),
        }
    }
}
