//! The CUDA kernel sources, embedded and concatenated into one NVRTC translation unit in the
//! order `kernels/NOTES.md` gives, and their compilation to PTX with an on-disk cache keyed by
//! the SHA-256 of source and options.

/// Which kernels go into the translation unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSet {
    /// The NTT and MSM kernels the backend launches.
    Production,
    /// The production set plus the test kernels (`test/test.cuh`, `test.cu`).
    WithTests,
}

/// The production files, in concatenation order (each depends only on earlier ones).
const PRODUCTION: [(&str, &str); 18] = [
    ("common.cuh", include_str!("../../kernels/common.cuh")),
    (
        "field/mont.cuh",
        include_str!("../../kernels/field/mont.cuh"),
    ),
    ("field/fp.cuh", include_str!("../../kernels/field/fp.cuh")),
    ("field/fr.cuh", include_str!("../../kernels/field/fr.cuh")),
    ("field/inv.cuh", include_str!("../../kernels/field/inv.cuh")),
    ("ec/xyzz.cuh", include_str!("../../kernels/ec/xyzz.cuh")),
    ("ec/g1.cuh", include_str!("../../kernels/ec/g1.cuh")),
    ("ec/g2.cuh", include_str!("../../kernels/ec/g2.cuh")),
    ("ec/affine.cuh", include_str!("../../kernels/ec/affine.cuh")),
    ("ntt/ntt.cuh", include_str!("../../kernels/ntt/ntt.cuh")),
    ("msm/msm.cuh", include_str!("../../kernels/msm/msm.cuh")),
    ("msm/pairs.cuh", include_str!("../../kernels/msm/pairs.cuh")),
    (
        "witness/density.cuh",
        include_str!("../../kernels/witness/density.cuh"),
    ),
    ("ntt.cu", include_str!("../../kernels/ntt.cu")),
    ("msm.cu", include_str!("../../kernels/msm.cu")),
    ("witness.cu", include_str!("../../kernels/witness.cu")),
    (
        "sparse/spmv.cuh",
        include_str!("../../kernels/sparse/spmv.cuh"),
    ),
    ("sparse.cu", include_str!("../../kernels/sparse.cu")),
];

/// The test kernels, appended after the production set.
const TESTS: [(&str, &str); 2] = [
    ("test/test.cuh", include_str!("../../kernels/test/test.cuh")),
    ("test.cu", include_str!("../../kernels/test.cu")),
];

use super::options::{FieldKara, FieldLazy, FieldSqr, GpuOptions, MsmMul, MsmOnes, MsmScatter};
use super::plan::{MSM_CHAIN_LEVELS, MSM_CHAIN_SPAN};

/// The concatenated translation unit of `set`.
pub fn source(set: KernelSet) -> String {
    let tests: &[(&str, &str)] = match set {
        KernelSet::Production => &[],
        KernelSet::WithTests => &TESTS,
    };
    let mut out = String::new();
    for (name, text) in PRODUCTION.iter().chain(tests) {
        out.push_str("// ---- ");
        out.push_str(name);
        out.push('\n');
        out.push_str(text);
        out.push('\n');
    }
    out
}

/// NVRTC options for a virtual architecture such as `compute_90`, with the MSM knobs of
/// `opts` as defines (kernels/NOTES.md): `gpu.msm_acc_minb` the register cap of
/// `msm_accumulate`, `gpu.msm_prefetch` the next base loaded one addition ahead,
/// `gpu.msm_mul` the accumulation's products (`MSM_ACC_MUL` 0 inline, 1 call, 2 rolled),
/// `gpu.msm_scatter = "starts"` the keyless scatter (`MSM_KEYLESS`), `gpu.msm_ones =
/// "compact"` the ones compacted per warp (`MSM_ONES_COMPACT`), `gpu.field_sqr = "pairs"` the
/// dedicated squaring (`FIELD_SQR`), `gpu.field_lazy = "sum"` Y3's products summed and reduced
/// once (`FIELD_LAZY`; "off": two products), `gpu.field_karatsuba` G1's out-of-line products
/// by Karatsuba (`FIELD_KARA`: 0 off, 1 the product, 2 also the sum), `gpu.ntt_regs` the register cap of `ntt_pass_r4`
/// (`NTT_R4_MAXREG`); and the levels of `msm_chains` the host launches (`MSM_CHAIN_SPAN`,
/// `MSM_CHAIN_LEVELS`, from [`super::plan`]).
pub fn nvrtc_options(arch: &str, opts: &GpuOptions) -> Vec<String> {
    let mul = match opts.msm_mul {
        MsmMul::Inline => 0,
        MsmMul::Call => 1,
        MsmMul::Rolled => 2,
    };
    vec![
        format!("--gpu-architecture={arch}"),
        "-default-device".into(),
        "--std=c++17".into(),
        format!("-DMSM_ACC_MINB={}", opts.msm_acc_minb),
        format!("-DMSM_PREFETCH={}", u32::from(opts.msm_prefetch)),
        format!("-DMSM_ACC_MUL={mul}"),
        format!(
            "-DMSM_KEYLESS={}",
            u32::from(opts.msm_scatter == MsmScatter::Starts)
        ),
        format!(
            "-DMSM_ONES_COMPACT={}",
            u32::from(opts.msm_ones == MsmOnes::Compact)
        ),
        format!(
            "-DFIELD_SQR={}",
            u32::from(opts.field_sqr == FieldSqr::Pairs)
        ),
        format!(
            "-DFIELD_LAZY={}",
            u32::from(opts.field_lazy == FieldLazy::Sum)
        ),
        format!(
            "-DFIELD_KARA={}",
            match opts.field_karatsuba {
                FieldKara::Off => 0,
                FieldKara::Mul => 1,
                FieldKara::MulSum => 2,
            }
        ),
        format!("-DNTT_R4_MAXREG={}", opts.ntt_regs),
        format!("-DMSM_PAIRS_PER={}u", opts.msm_affine_per),
        format!("-DMSM_CHAIN_SPAN={}u", MSM_CHAIN_SPAN),
        format!("-DMSM_CHAIN_LEVELS={}", MSM_CHAIN_LEVELS),
    ]
}

/// Hex SHA-256 of the source and the options: the cache key of a compiled module.
pub fn cache_key(source: &str, options: &[String]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(source.as_bytes());
    for o in options {
        h.update([0u8]);
        h.update(o.as_bytes());
    }
    hex::encode(h.finalize())
}

/// Where compiled PTX is kept: `ptx` under [`crate::cache_dir`] (`$BATON_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/baton`, else `~/.cache/baton`), where the CLI keeps its keys too.
pub fn cache_dir() -> Option<std::path::PathBuf> {
    crate::cache_dir().map(|d| d.join("ptx"))
}

#[cfg(feature = "cuda")]
pub use nvrtc::{compile, compile_ptx, compile_uncached, compile_with_cache};

#[cfg(feature = "cuda")]
mod nvrtc {
    use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

    use super::{cache_dir, cache_key, nvrtc_options, source, KernelSet};
    use crate::gpu::error::{GpuError, GpuResult};
    use crate::gpu::options::GpuOptions;

    /// The production kernels as PTX for `arch` (e.g. `compute_90`) with the knobs of `opts`,
    /// from the cache when present.
    pub fn compile_ptx(arch: &str, opts: &GpuOptions) -> GpuResult<Ptx> {
        compile(KernelSet::Production, arch, opts)
    }

    /// `set` as PTX for `arch`, from the on-disk cache ([`cache_dir`]) when present; a fresh
    /// compile is stored there.
    pub fn compile(set: KernelSet, arch: &str, opts: &GpuOptions) -> GpuResult<Ptx> {
        compile_with_cache(set, arch, opts, cache_dir().as_deref())
    }

    /// As [`compile`] with the cache in `dir` (no cache when `None`).
    pub fn compile_with_cache(
        set: KernelSet,
        arch: &str,
        opts: &GpuOptions,
        dir: Option<&std::path::Path>,
    ) -> GpuResult<Ptx> {
        let src = source(set);
        let opts = nvrtc_options(arch, opts);
        let key = cache_key(&src, &opts);
        let path = dir.map(|d| d.join(format!("{key}.ptx")));
        if let Some(p) = &path {
            if let Ok(text) = std::fs::read_to_string(p) {
                if text.contains(".visible .entry") {
                    tracing::debug!(path = %p.display(), "PTX cache hit");
                    return Ok(Ptx::from_src(text));
                }
            }
        }
        // Tens of seconds on a fresh machine (with the driver's compile of the PTX after it):
        // said, so that a daemon's start or a test that prints nothing meanwhile is not taken
        // for a hang.
        tracing::info!(kernels = ?set, "compiling the CUDA kernels (NVRTC); cached for the next start");
        let t = std::time::Instant::now();
        let ptx = compile_source(&src, &opts)?;
        tracing::info!(seconds = t.elapsed().as_secs_f64(), "CUDA kernels compiled");
        if let Some(p) = &path {
            if let Err(e) = store(p, &ptx.to_src()) {
                tracing::warn!(path = %p.display(), error = %e, "could not cache the PTX");
            }
        }
        Ok(ptx)
    }

    /// `set` compiled now for `arch` with default knobs, bypassing the cache (compile tests).
    pub fn compile_uncached(set: KernelSet, arch: &str) -> GpuResult<Ptx> {
        compile_source(&source(set), &nvrtc_options(arch, &GpuOptions::default()))
    }

    fn store(path: &std::path::Path, text: &str) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    fn compile_source(src: &str, opts: &[String]) -> GpuResult<Ptx> {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(GpuError::Compile {
                log: "libnvrtc not found (install the CUDA toolkit's NVRTC or set LD_LIBRARY_PATH)"
                    .into(),
            });
        }
        let options = CompileOptions {
            options: opts.to_vec(),
            name: Some("baton.cu".into()),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(src, options).map_err(|e| GpuError::Compile {
            log: match e {
                CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
                other => format!("NVRTC: {other:?}"),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_concatenate_in_order_without_includes() {
        let s = source(KernelSet::WithTests);
        let pos = |n: &str| s.find(&format!("// ---- {n}\n")).unwrap();
        assert!(pos("common.cuh") < pos("field/mont.cuh"));
        assert!(pos("msm/msm.cuh") < pos("ntt.cu"));
        assert!(pos("msm.cu") < pos("test.cu"));
        assert!(!source(KernelSet::Production).contains("// ---- test.cu"));
        assert!(!s.lines().any(|l| l.trim_start().starts_with("#include")));
    }

    #[test]
    fn knobs_reach_the_compiler_options() {
        let opts = GpuOptions {
            msm_acc_minb: 2,
            msm_prefetch: true,
            msm_mul: MsmMul::Rolled,
            msm_scatter: MsmScatter::Starts,
            msm_window: crate::gpu::options::MsmWindow::Nontrivial,
            msm_ones: MsmOnes::Each,
            field_sqr: FieldSqr::Mul,
            field_lazy: FieldLazy::Off,
            field_karatsuba: FieldKara::MulSum,
            ..GpuOptions::default()
        };
        let o = nvrtc_options("compute_90", &opts);
        for d in [
            "-DMSM_ACC_MINB=2",
            "-DMSM_PREFETCH=1",
            "-DMSM_ACC_MUL=2",
            "-DMSM_KEYLESS=1",
            "-DMSM_ONES_COMPACT=0",
            "-DFIELD_SQR=0",
            "-DFIELD_LAZY=0",
            "-DFIELD_KARA=2",
        ] {
            assert!(o.contains(&d.to_string()), "{d}: {o:?}");
        }
        let d = nvrtc_options("compute_90", &GpuOptions::default());
        assert!(d.contains(&"-DMSM_ACC_MUL=1".to_string()), "{d:?}");
        assert!(d.contains(&"-DMSM_KEYLESS=1".to_string()), "{d:?}");
        assert!(d.contains(&"-DMSM_ONES_COMPACT=1".to_string()), "{d:?}");
        assert!(d.contains(&"-DFIELD_SQR=1".to_string()), "{d:?}");
        assert!(d.contains(&"-DFIELD_LAZY=1".to_string()), "{d:?}");
        assert!(d.contains(&"-DFIELD_KARA=0".to_string()), "{d:?}");
        assert_ne!(
            cache_key("x", &o),
            cache_key("x", &nvrtc_options("compute_90", &GpuOptions::default()))
        );
    }

    #[test]
    fn sass_same_script_lists_the_default_defines() {
        // scripts/sass-same.sh compares machine code under a copy of these defines; a stale
        // copy would vouch for kernels the backend does not build.
        let script = include_str!("../../scripts/sass-same.sh");
        let key = "DEFINES=${DEFINES:-\"";
        let start = script.find(key).expect("DEFINES line") + key.len();
        let len = script[start..].find('"').expect("closing quote");
        let listed: Vec<&str> = script[start..start + len].split_whitespace().collect();
        let opts = nvrtc_options("compute_90", &GpuOptions::default());
        let want: Vec<&str> = opts.iter().filter_map(|o| o.strip_prefix("-D")).collect();
        assert_eq!(listed, want);
    }

    #[test]
    fn cache_key_depends_on_options() {
        let a = cache_key("x", &["-a".into()]);
        assert_ne!(a, cache_key("x", &["-b".into()]));
        assert_ne!(a, cache_key("x-a", &[]));
        assert_eq!(a.len(), 64);
    }
}
