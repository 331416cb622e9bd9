//! `baton fil-params --shape-only`: builds the shape-only PoRep key of a sector size in memory
//! (the real circuit's query sizes and densities, random tiled points: proofs made with it do
//! not verify) and prints its sizes, densities, bytes and build time; `--out` writes it, with
//! `.shape` in the file name and never inside the parameter cache.

use std::path::{Path, PathBuf};

use baton::filecoin::{shape_key, witness_mix_by, ParamCache, Sha256Route};

/// `fil-params`' shape-key options.
#[derive(clap::Args, Debug)]
pub struct ShapeArgs {
    /// Build in memory a PoRep key of the real circuit's exact shape with random points
    /// (NOT a real key: proofs will not verify) and print its sizes, for benches.
    #[arg(long)]
    shape_only: bool,
    /// With --shape-only: also write it here (`.shape` in the name, outside the cache).
    #[arg(long, requires = "shape_only")]
    out: Option<PathBuf>,
    /// With --shape-only: build no key; synthesize partition 0's witness (its first N
    /// challenges, all when N is 0 or left out) and print how many values are 0, 1 or
    /// neither, and its bytes packed as bits against plain scalars.
    #[arg(
        long,
        requires = "shape_only",
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "0"
    )]
    witness_mix: Option<usize>,

    /// With --witness-mix: synthesize the SHA-256 through the circuit's own gadget rather than
    /// by value as the engine does (the reference its time is compared with).
    #[arg(long, requires = "witness_mix")]
    gadget_sha256: bool,
}

impl ShapeArgs {
    /// What `fil-params` does with these options at `sector_size`; `None`: no shape option
    /// was given, make real parameters.
    pub fn run(self, sector_size: u64, cache: &ParamCache) -> Option<Result<bool, String>> {
        match (self.witness_mix, self.shape_only) {
            (Some(n), _) => {
                let route = match self.gadget_sha256 {
                    true => Sha256Route::Gadget,
                    false => Sha256Route::ByValue,
                };
                Some(mix(sector_size, (n > 0).then_some(n), route))
            }
            (None, true) => Some(run(sector_size, self.out, cache)),
            (None, false) => None,
        }
    }
}

/// Builds, reports and optionally writes the shape key of `sector_size`.
pub fn run(sector_size: u64, out: Option<PathBuf>, cache: &ParamCache) -> Result<bool, String> {
    if let Some(path) = &out {
        check_out(path, cache.dir())?;
    }
    let key = shape_key(sector_size).map_err(|e| e.to_string())?;
    let s = key.shape();
    let pk = key.unverifiable_key();
    let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
    println!("{}: {}", key.circuit(), key.label());
    println!(
        "inputs {}  aux {}  constraints {}  domain {}",
        s.inputs, s.aux, s.constraints, s.domain
    );
    println!(
        "h {}  l {}  a {}  b_g1 {}  b_g2 {}  ic {}",
        pk.h.len(),
        pk.l.len(),
        pk.a.len(),
        pk.b_g1.len(),
        pk.b_g2.len(),
        pk.vk.ic.len()
    );
    println!(
        "densities: a_aux {} ({:.1}%)  b_inputs {} ({:.1}%)  b_aux {} ({:.1}%)",
        s.a_aux,
        pct(s.a_aux, s.aux),
        s.b_inputs,
        pct(s.b_inputs, s.inputs),
        s.b_aux,
        pct(s.b_aux, s.aux)
    );
    println!(
        "bytes {} ({:.2} GiB)  built in {:.2?} (C1 and synthesis {:.2?}, points {:.2?})",
        pk.heap_bytes(),
        pk.heap_bytes() as f64 / (1u64 << 30) as f64,
        key.synthesis_time() + key.tiling_time(),
        key.synthesis_time(),
        key.tiling_time()
    );
    println!("NOT a real key: proofs made with it will not verify");
    if let Some(path) = out {
        pk.write_file(&path)
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        println!("written to {} ({})", path.display(), key.label());
    }
    Ok(true)
}

/// Synthesizes partition 0's witness at `sector_size` (the first `challenges`, or all) and
/// prints what it is made of and what it takes packed.
pub fn mix(
    sector_size: u64,
    challenges: Option<usize>,
    route: Sha256Route,
) -> Result<bool, String> {
    let m = witness_mix_by(sector_size, challenges, route).map_err(|e| e.to_string())?;
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let pct = |n: usize| 100.0 * n as f64 / m.mix.len().max(1) as f64;
    println!(
        "partition 0: {} of {} challenges synthesized witness-only in {:.2?}, SHA-256 {} \
         (prelude {} values; the C1 output generated in {:.2?})",
        m.challenges,
        m.of,
        m.time,
        match route {
            Sha256Route::ByValue => "by value",
            Sha256Route::Gadget => "through the gadget",
        },
        m.prelude,
        m.generation
    );
    println!(
        "values {}: zero {} ({:.1}%)  one {} ({:.1}%)  neither {} ({:.1}%)",
        m.mix.len(),
        m.mix.zeros,
        pct(m.mix.zeros),
        m.mix.ones,
        pct(m.mix.ones),
        m.mix.dense,
        pct(m.mix.dense)
    );
    let whole = m.partition();
    println!(
        "the partition's witness: {:.3} GiB as scalars, {:.3} GiB packed ({:.1}x smaller)",
        gib(whole.plain_bytes()),
        gib(whole.packed_bytes()),
        whole.plain_bytes() as f64 / whole.packed_bytes().max(1) as f64
    );
    Ok(true)
}

/// Refuses an output path without `.shape` in its file name or inside the parameter cache, where
/// filecoin-proofs or baton could take it for real parameters.
fn check_out(path: &Path, cache: &Path) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains(".shape") {
        return Err(format!(
            "{}: a shape key's file name must contain `.shape`",
            path.display()
        ));
    }
    let absolute = |p: &Path| {
        let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        p.canonicalize().unwrap_or(p)
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = absolute(dir.unwrap_or(Path::new(".")));
    if dir.starts_with(absolute(cache)) {
        return Err(format!(
            "{}: a shape key may not be written inside the parameter cache {}",
            path.display(),
            cache.display()
        ));
    }
    Ok(())
}
