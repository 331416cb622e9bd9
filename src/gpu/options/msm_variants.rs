//! The MSM variants the GPU bench and the variant conformance test run side by side, and the
//! names they go by.

use super::{choice_name, GpuOptions};

impl GpuOptions {
    /// The MSM knobs that differ from the defaults, as `key=value` joined by commas
    /// (`"default"` when none do): a variant's name in benchmark tables.
    pub fn msm_label(&self) -> String {
        let d = GpuOptions::default();
        let mut parts = Vec::new();
        if self.msm_mul != d.msm_mul {
            parts.push(format!("msm_mul={}", choice_name(self.msm_mul)));
        }
        if self.msm_window != d.msm_window {
            parts.push(format!("msm_window={}", choice_name(self.msm_window)));
        }
        if self.msm_window_large != d.msm_window_large {
            parts.push(format!("msm_window_large={}", self.msm_window_large));
        }
        if self.msm_ones != d.msm_ones {
            parts.push(format!("msm_ones={}", choice_name(self.msm_ones)));
        }
        if self.field_sqr != d.field_sqr {
            parts.push(format!("field_sqr={}", choice_name(self.field_sqr)));
        }
        if self.field_lazy != d.field_lazy {
            parts.push(format!("field_lazy={}", choice_name(self.field_lazy)));
        }
        if self.field_karatsuba != d.field_karatsuba {
            parts.push(format!(
                "field_karatsuba={}",
                choice_name(self.field_karatsuba)
            ));
        }
        if self.msm_pieces != d.msm_pieces {
            match self.msm_pieces {
                0 => parts.push("msm_pieces=auto".into()),
                k => parts.push(format!("msm_pieces={k}")),
            }
        }
        if self.msm_piece_buckets != d.msm_piece_buckets {
            parts.push(format!(
                "msm_piece_buckets={}",
                choice_name(self.msm_piece_buckets)
            ));
        }
        if self.msm_first_piece != d.msm_first_piece {
            parts.push(format!(
                "msm_first_piece={}",
                choice_name(self.msm_first_piece)
            ));
        }
        if self.memory_pool != d.memory_pool {
            parts.push(format!("memory_pool={}", choice_name(self.memory_pool)));
        }
        if self.msm_scatter_order != d.msm_scatter_order {
            parts.push(format!(
                "msm_scatter_order={}",
                choice_name(self.msm_scatter_order)
            ));
        }
        if self.msm_scatter_digits != d.msm_scatter_digits {
            parts.push(format!(
                "msm_scatter_digits={}",
                choice_name(self.msm_scatter_digits)
            ));
        }
        if self.msm_scatter_parts != d.msm_scatter_parts {
            parts.push(format!("msm_scatter_parts={}", self.msm_scatter_parts));
        }
        if self.msm_scatter != d.msm_scatter {
            parts.push(format!("msm_scatter={}", choice_name(self.msm_scatter)));
        }
        if self.msm_acc_minb != d.msm_acc_minb {
            parts.push(format!("msm_acc_minb={}", self.msm_acc_minb));
        }
        if self.h_stream != d.h_stream {
            parts.push(format!("h_stream={}", choice_name(self.h_stream)));
        }
        if self.msm_affine_rounds != d.msm_affine_rounds {
            parts.push(format!("msm_affine_rounds={}", self.msm_affine_rounds));
        }
        if self.msm_affine_per != d.msm_affine_per {
            parts.push(format!("msm_affine_per={}", self.msm_affine_per));
        }
        if self.msm_affine_split != d.msm_affine_split {
            parts.push(format!("msm_affine_split={}", self.msm_affine_split));
        }
        if self.capped_cut != d.capped_cut {
            parts.push(format!("capped_cut={}", choice_name(self.capped_cut)));
        }
        if self.capped_recording != d.capped_recording {
            parts.push(format!(
                "capped_recording={}",
                choice_name(self.capped_recording)
            ));
        }
        if self.capped_h_beside != d.capped_h_beside {
            parts.push(format!(
                "capped_h_beside={}",
                choice_name(self.capped_h_beside)
            ));
        }
        if self.msm_prefetch != d.msm_prefetch {
            parts.push(format!("msm_prefetch={}", self.msm_prefetch));
        }
        if parts.is_empty() {
            "default".into()
        } else {
            parts.join(",")
        }
    }
}

/// The MSM variants the GPU bench and the variant conformance test compare side by side, the
/// default first: each a spec of `key=value` knobs (comma-separated) over the base options.
/// `BATON_MSM_VARIANTS` replaces the list (specs separated by `;`).
pub const MSM_VARIANTS: [&str; 24] = [
    "default",
    "memory_pool=release",
    "msm_scatter_digits=recompute",
    "msm_piece_buckets=own",
    "msm_first_piece=small",
    "msm_scatter_order=scalar",
    "msm_scatter_order=window",
    "field_sqr=mul",
    "field_lazy=off",
    "field_karatsuba=mul",
    "field_karatsuba=mul_sum",
    "msm_scatter_parts=1",
    "msm_scatter_parts=8",
    "msm_pieces=1",
    "msm_ones=each",
    "msm_pieces=2",
    "msm_pieces=4",
    "msm_mul=inline,msm_scatter=keys,msm_acc_minb=4",
    "msm_window=points",
    "msm_window=nontrivial",
    "msm_mul=rolled,msm_acc_minb=4",
    "msm_scatter=keys",
    "msm_affine_rounds=1,msm_affine_per=32",
    "msm_affine_rounds=2,msm_affine_split=true",
];

/// `base` with the knobs of `spec` (`"default"`, or `key=value` pairs separated by commas,
/// keys as in [`KNOBS`]), checked as the config checks them.
pub fn variant(base: &GpuOptions, spec: &str) -> Result<GpuOptions, String> {
    let mut o = base.clone();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part == "default" {
            continue;
        }
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("variant {spec:?}: {part:?} is no key=value"))?;
        o.set(k.trim(), v)
            .map_err(|e| format!("variant {spec:?}: {}: {e}", k.trim()))?;
    }
    match o.problem() {
        Some((key, why)) => Err(format!("variant {spec:?}: {key}: {why}")),
        None => Ok(o),
    }
}

/// The variants of `list` (`;`-separated specs; [`MSM_VARIANTS`] when `None`) over `base`.
pub fn variants(base: &GpuOptions, list: Option<&str>) -> Result<Vec<GpuOptions>, String> {
    match list {
        Some(l) => l
            .split(';')
            .filter(|s| !s.trim().is_empty())
            .map(|s| variant(base, s))
            .collect(),
        None => MSM_VARIANTS.iter().map(|s| variant(base, s)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::options::{MsmMul, MsmScatter};

    #[test]
    fn variants_are_named_by_their_spec() {
        let base = GpuOptions::default();
        let all = variants(&base, None).expect("the built-in list parses");
        assert_eq!(all.len(), MSM_VARIANTS.len());
        assert_eq!(all[0], base, "the default comes first");
        for (o, spec) in all.iter().zip(MSM_VARIANTS) {
            assert_eq!(o.msm_label(), spec, "a label is its spec");
        }
        let two = variants(&base, Some("default; msm_mul=rolled ;")).expect("list");
        assert_eq!(two.len(), 2);
        assert_eq!(two[1].msm_mul, MsmMul::Rolled);
        assert_eq!(
            (base.msm_mul, base.msm_scatter, base.msm_acc_minb),
            (MsmMul::Call, MsmScatter::Starts, 3),
            "the defaults measured best (BENCHMARKS.md, H200 — GPU knob defaults)"
        );
        for bad in ["msm_mul", "msm_mul=fast", "msm_acc_minb=0", "colour=red"] {
            assert!(variant(&base, bad).is_err(), "{bad}");
        }
        let on = GpuOptions {
            device_partition: false,
            ..base
        };
        assert!(
            !variant(&on, "msm_scatter=keys")
                .expect("spec")
                .device_partition
        );
    }
}
