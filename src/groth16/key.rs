//! Proving and verifying keys in bellperson's `.params` layout: the verifying key, then the H,
//! L, A, B_G1 and B_G2 queries, each a big-endian u32 count followed by uncompressed points.
//! Reading maps the file and decodes points in parallel, checked (every point on the curve, the
//! subgroup tested in batches: `subgroup`) or unchecked (for keys this process wrote itself or
//! already checked: `keys::trust`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use crate::groth16::attachment::KeyAttachment;
use crate::groth16::error::{Error, Result};

const G1_BYTES: usize = 96;
const G2_BYTES: usize = 192;

/// How much to trust the points of a key file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Every point must be on the curve and in the prime-order subgroup (the subgroup is tested
    /// in random batches, missing a bad point with probability below 2^-64; see `subgroup`).
    Full,
    /// Points are taken as they are (only for files this system produced).
    None,
}

/// The verifying key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// α in G1.
    pub alpha_g1: G1Affine,
    /// β in G1.
    pub beta_g1: G1Affine,
    /// β in G2.
    pub beta_g2: G2Affine,
    /// γ in G2.
    pub gamma_g2: G2Affine,
    /// δ in G1.
    pub delta_g1: G1Affine,
    /// δ in G2.
    pub delta_g2: G2Affine,
    /// (β·u_i + α·v_i + w_i)/γ for each public input, the constant one first.
    pub ic: Vec<G1Affine>,
}

/// The proving key: the verifying key plus the five queries. A clone gets its own id, so a
/// backend that keeps bases resident per key never mistakes a modified copy for the original.
#[derive(Debug)]
pub struct ProvingKey {
    /// What a backend attached to the key's host memory (the CUDA backend's page-locked ranges
    /// of its queries, [`KeyAttachment`]). First, so that it drops before the vectors it
    /// refers to.
    attachment: KeyAttachment,
    /// The verifying key.
    pub vk: VerifyingKey,
    /// τ^i·Z(τ)/δ for i < d − 1.
    pub h: Vec<G1Affine>,
    /// (β·u_j + α·v_j + w_j)/δ for each private variable.
    pub l: Vec<G1Affine>,
    /// u(τ) for inputs and the private variables present in A.
    pub a: Vec<G1Affine>,
    /// v(τ) in G1 for the variables present in B.
    pub b_g1: Vec<G1Affine>,
    /// v(τ) in G2 for the variables present in B.
    pub b_g2: Vec<G2Affine>,
    id: u64,
    /// The file it was read from, if any (its circuit's recording is named by it: `keys::files`).
    path: Option<std::path::PathBuf>,
}

impl PartialEq for ProvingKey {
    fn eq(&self, o: &Self) -> bool {
        self.vk == o.vk
            && self.h == o.h
            && self.l == o.l
            && self.a == o.a
            && self.b_g1 == o.b_g1
            && self.b_g2 == o.b_g2
    }
}

static NEXT_KEY_ID: AtomicU64 = AtomicU64::new(1);

impl Clone for ProvingKey {
    fn clone(&self) -> Self {
        Self::from_parts(
            self.vk.clone(),
            self.h.clone(),
            self.l.clone(),
            self.a.clone(),
            self.b_g1.clone(),
            self.b_g2.clone(),
        )
    }
}

impl ProvingKey {
    /// Assembles a key from its parts.
    pub fn from_parts(
        vk: VerifyingKey,
        h: Vec<G1Affine>,
        l: Vec<G1Affine>,
        a: Vec<G1Affine>,
        b_g1: Vec<G1Affine>,
        b_g2: Vec<G2Affine>,
    ) -> Self {
        ProvingKey {
            attachment: KeyAttachment::default(),
            vk,
            h,
            l,
            a,
            b_g1,
            b_g2,
            id: NEXT_KEY_ID.fetch_add(1, Ordering::Relaxed),
            path: None,
        }
    }

    /// The backend state attached to this key's host memory, made by `make` on first use
    /// (the first caller's wins; a clone of the key starts without one). The CUDA backend
    /// page-locks the query vectors in place here: once it has, do not resize them (hold the
    /// key in an `Arc`, as the engine does, or clone it to change it).
    pub fn attachment(
        &self,
        make: impl FnOnce() -> Box<dyn std::any::Any + Send + Sync>,
    ) -> &(dyn std::any::Any + Send + Sync) {
        self.attachment.get_or_init(make)
    }

    /// The file this key was read from ([`ProvingKey::read_with`]); `None` for keys made or
    /// parsed in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Remembers `path` as the file this key was read from (for readers other than
    /// [`ProvingKey::read_with`]): its circuit's recording is kept under baton's cache, named
    /// by that file ([`crate::compiled::cache_path`]).
    pub(crate) fn with_path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }

    /// A process-unique id, used by backends that keep the key's bases resident.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Bytes of points held in memory.
    pub fn heap_bytes(&self) -> u64 {
        let g1 = self.h.len() + self.l.len() + self.a.len() + self.b_g1.len() + self.vk.ic.len();
        (g1 * std::mem::size_of::<G1Affine>() + self.b_g2.len() * std::mem::size_of::<G2Affine>())
            as u64
    }

    /// Reads a `.params` file with full point checks.
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        Self::read_with(path, Check::Full)
    }

    /// Reads a `.params` file, memory-mapped.
    pub fn read_with(path: impl AsRef<Path>, check: Check) -> Result<Self> {
        let file = File::open(path.as_ref())?;
        // SAFETY: the map is read-only and dropped before this function returns; a file truncated
        // underneath us by another process could fault, the same contract as any mmap reader.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        let mut pk = Self::from_bytes(&map, check)?;
        pk.path = Some(path.as_ref().to_path_buf());
        Ok(pk)
    }

    /// Parses a key from bytes in the `.params` layout.
    pub fn from_bytes(bytes: &[u8], check: Check) -> Result<Self> {
        let mut r = Reader {
            bytes,
            pos: 0,
            check,
        };
        let vk = r.vk()?;
        let h = r.g1_section("H query")?;
        let l = r.g1_section("L query")?;
        let a = r.g1_section("A query")?;
        let b_g1 = r.g1_section("B_G1 query")?;
        let b_g2 = r.g2_section("B_G2 query")?;
        if r.pos != bytes.len() {
            return Err(Error::Malformed {
                what: "proving key",
                offset: r.pos as u64,
                reason: format!(
                    "{} trailing bytes after the B_G2 query",
                    bytes.len() - r.pos
                ),
            });
        }
        Ok(Self::from_parts(vk, h, l, a, b_g1, b_g2))
    }

    /// Writes the key in the `.params` layout.
    pub fn write<W: Write>(&self, w: W) -> Result<()> {
        let mut w = BufWriter::new(w);
        self.vk.write(&mut w)?;
        write_g1s(&mut w, &self.h)?;
        write_g1s(&mut w, &self.l)?;
        write_g1s(&mut w, &self.a)?;
        write_g1s(&mut w, &self.b_g1)?;
        w.write_all(&len_u32(self.b_g2.len())?.to_be_bytes())?;
        for chunk in self.b_g2.chunks(1 << 14) {
            let enc: Vec<[u8; G2_BYTES]> = chunk.par_iter().map(|p| p.to_uncompressed()).collect();
            for e in enc {
                w.write_all(&e)?;
            }
        }
        w.flush()?;
        Ok(())
    }

    /// Writes the key to `path` through a temporary file, so a crash never leaves half a key.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let tmp = path.with_extension("params.tmp");
        self.write(File::create(&tmp)?)?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }
}

impl VerifyingKey {
    /// Writes the verifying key in bellperson's layout.
    pub fn write<W: Write>(&self, mut w: W) -> Result<()> {
        w.write_all(&self.alpha_g1.to_uncompressed())?;
        w.write_all(&self.beta_g1.to_uncompressed())?;
        w.write_all(&self.beta_g2.to_uncompressed())?;
        w.write_all(&self.gamma_g2.to_uncompressed())?;
        w.write_all(&self.delta_g1.to_uncompressed())?;
        w.write_all(&self.delta_g2.to_uncompressed())?;
        write_g1s(&mut w, &self.ic)
    }

    /// Reads a verifying key (always fully checked: it is small).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Reader {
            bytes,
            pos: 0,
            check: Check::Full,
        }
        .vk()
    }
}

/// Bytes at the head of a `.params` file up to the verifying key's IC count: its six fixed
/// points and the count.
pub(crate) const VK_HEAD_BYTES: usize = 3 * G1_BYTES + 3 * G2_BYTES + 4;

/// Bytes of the verifying key at the head of a `.params` file whose first bytes are `head`
/// (the fixed points, the IC count and the IC points); `None` when `head` is shorter than
/// [`VK_HEAD_BYTES`].
pub(crate) fn vk_bytes(head: &[u8]) -> Option<usize> {
    let count = head.get(VK_HEAD_BYTES - 4..VK_HEAD_BYTES)?;
    let n = u32::from_be_bytes(count.try_into().ok()?) as usize;
    n.checked_mul(G1_BYTES)?.checked_add(VK_HEAD_BYTES)
}

fn len_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::LengthMismatch {
        what: "query length vs u32",
        left: n,
        right: u32::MAX as usize,
    })
}

fn write_g1s<W: Write>(w: &mut W, points: &[G1Affine]) -> Result<()> {
    w.write_all(&len_u32(points.len())?.to_be_bytes())?;
    for chunk in points.chunks(1 << 15) {
        let enc: Vec<[u8; G1_BYTES]> = chunk.par_iter().map(|p| p.to_uncompressed()).collect();
        for e in enc {
            w.write_all(&e)?;
        }
    }
    Ok(())
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    check: Check,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let left = self.bytes.len() - self.pos;
        if n > left {
            return Err(Error::Malformed {
                what: "proving key",
                offset: self.pos as u64,
                reason: format!("truncated: {what} needs {n} bytes, {left} left"),
            });
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn count(&mut self, what: &str) -> Result<usize> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn vk(&mut self) -> Result<VerifyingKey> {
        let alpha_g1 = self.one_g1("vk.alpha_g1")?;
        let beta_g1 = self.one_g1("vk.beta_g1")?;
        let beta_g2 = self.one_g2("vk.beta_g2")?;
        let gamma_g2 = self.one_g2("vk.gamma_g2")?;
        let delta_g1 = self.one_g1("vk.delta_g1")?;
        let delta_g2 = self.one_g2("vk.delta_g2")?;
        let ic = self.g1_section("vk.ic")?;
        Ok(VerifyingKey {
            alpha_g1,
            beta_g1,
            beta_g2,
            gamma_g2,
            delta_g1,
            delta_g2,
            ic,
        })
    }

    fn one_g1(&mut self, what: &'static str) -> Result<G1Affine> {
        let start = self.pos;
        let b = self.take(G1_BYTES, what)?;
        decode_g1(b, Check::Full)
            .filter(crate::groth16::subgroup::Subgroup::in_subgroup)
            .ok_or_else(|| bad_point(start, what))
    }

    fn one_g2(&mut self, what: &'static str) -> Result<G2Affine> {
        let start = self.pos;
        let b = self.take(G2_BYTES, what)?;
        decode_g2(b, Check::Full)
            .filter(crate::groth16::subgroup::Subgroup::in_subgroup)
            .ok_or_else(|| bad_point(start, what))
    }

    fn g1_section(&mut self, what: &'static str) -> Result<Vec<G1Affine>> {
        let n = self.count(what)?;
        let start = self.pos;
        let raw = self.take(n.saturating_mul(G1_BYTES), what)?;
        let check = self.check;
        let pts: Vec<Option<G1Affine>> = raw
            .par_chunks(G1_BYTES)
            .map(|c| decode_g1(c, check))
            .collect();
        subgroup_checked(
            collect_points(pts, start, G1_BYTES, what)?,
            check,
            start,
            G1_BYTES,
            what,
        )
    }

    fn g2_section(&mut self, what: &'static str) -> Result<Vec<G2Affine>> {
        let n = self.count(what)?;
        let start = self.pos;
        let raw = self.take(n.saturating_mul(G2_BYTES), what)?;
        let check = self.check;
        let pts: Vec<Option<G2Affine>> = raw
            .par_chunks(G2_BYTES)
            .map(|c| decode_g2(c, check))
            .collect();
        subgroup_checked(
            collect_points(pts, start, G2_BYTES, what)?,
            check,
            start,
            G2_BYTES,
            what,
        )
    }
}

fn collect_points<P>(
    pts: Vec<Option<P>>,
    start: usize,
    size: usize,
    what: &'static str,
) -> Result<Vec<P>> {
    let mut out = Vec::with_capacity(pts.len());
    for (i, p) in pts.into_iter().enumerate() {
        out.push(p.ok_or_else(|| bad_point(start + i * size, what))?);
    }
    Ok(out)
}

fn bad_point(offset: usize, what: &str) -> Error {
    Error::Malformed {
        what: "proving key",
        offset: offset as u64,
        reason: format!("{what}: not a valid point (a bad encoding, off the curve, outside the subgroup, or the point at infinity)"),
    }
}

/// The points of one section, after the batched subgroup test when `check` is full.
fn subgroup_checked<P: crate::groth16::subgroup::Subgroup>(
    points: Vec<P>,
    check: Check,
    start: usize,
    size: usize,
    what: &str,
) -> Result<Vec<P>> {
    if check == Check::None {
        return Ok(points);
    }
    match crate::groth16::subgroup::first_outside(&points) {
        None => Ok(points),
        Some(i) => Err(Error::Malformed {
            what: "proving key",
            offset: (start + i * size) as u64,
            reason: format!(
                "{what}: point {i} is on the curve but outside the prime-order subgroup"
            ),
        }),
    }
}

// A full check tests the curve equation here, per point (cheap); the subgroup test follows in
// batches over the whole section.
fn decode_g1(b: &[u8], check: Check) -> Option<G1Affine> {
    let mut repr = [0u8; G1_BYTES];
    repr.copy_from_slice(b);
    let p: Option<G1Affine> = G1Affine::from_uncompressed_unchecked(&repr).into();
    p.filter(|p| !bool::from(p.is_identity()))
        .filter(|p| check == Check::None || bool::from(p.is_on_curve()))
}

fn decode_g2(b: &[u8], check: Check) -> Option<G2Affine> {
    let mut repr = [0u8; G2_BYTES];
    repr.copy_from_slice(b);
    let p: Option<G2Affine> = G2Affine::from_uncompressed_unchecked(&repr).into();
    p.filter(|p| !bool::from(p.is_identity()))
        .filter(|p| check == Check::None || bool::from(p.is_on_curve()))
}
