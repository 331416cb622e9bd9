//! Unit tests of `options`.

use super::*;

#[test]
fn knobs_parse_and_name_themselves() {
    let mut o = GpuOptions::default();
    assert_eq!(o.msm_label(), "default");
    o.set("msm_mul", "Rolled").expect("rolled");
    o.set("msm_window", "nontrivial").expect("window");
    o.set("msm_scatter", " keys ").expect("scatter");
    o.set("msm_acc_minb", "6").expect("minb");
    assert_eq!(
        o.msm_label(),
        "msm_mul=rolled,msm_window=nontrivial,msm_scatter=keys,msm_acc_minb=6"
    );
    let err = o.set("msm_mul", "asm").expect_err("bad value");
    assert!(
        err.contains("inline, call, rolled") && err.contains("asm"),
        "{err}"
    );
    assert!(o.set("msm_colour", "red").is_err());
    o.set("msm_acc_minb", "9").expect("parses");
    assert_eq!(o.problem().map(|p| p.0), Some("gpu.msm_acc_minb"));
    let mut n = GpuOptions::default();
    n.set("ntt_block", "8").expect("ntt_block");
    assert_eq!((n.ntt_block, n.problem()), (8, None));
    for bad in ["3", "11"] {
        n.set("ntt_block", bad).expect("parses");
        assert_eq!(n.problem().map(|p| p.0), Some("gpu.ntt_block"), "{bad}");
    }
    let mut n = GpuOptions::default();
    n.set("ntt_radix", "4").expect("ntt_radix");
    assert_eq!((n.ntt_radix, n.problem()), (4, None));
    for bad in ["3", "8"] {
        n.set("ntt_radix", bad).expect("parses");
        assert_eq!(n.problem().map(|p| p.0), Some("gpu.ntt_radix"), "{bad}");
    }
    let mut n = GpuOptions::default();
    for (good, cols) in [("0", "0"), ("96", "1"), ("128", "3"), ("64", "auto")] {
        n.set("ntt_regs", good).expect("ntt_regs");
        n.set("ntt_columns", cols).expect("ntt_columns");
        assert_eq!(n.problem(), None, "{good} {cols}");
    }
    for bad in ["56", "100", "136"] {
        n.set("ntt_regs", bad).expect("parses");
        assert_eq!(n.problem().map(|p| p.0), Some("gpu.ntt_regs"), "{bad}");
    }
    n.set("ntt_regs", "0").expect("ntt_regs");
    n.set("ntt_columns", "4").expect("parses");
    assert_eq!(n.problem().map(|p| p.0), Some("gpu.ntt_columns"));
    let mut p = GpuOptions::default();
    p.set("msm_pieces", "4").expect("msm_pieces");
    assert_eq!(
        (p.msm_pieces, p.problem(), p.msm_label()),
        (4, None, "msm_pieces=4".into())
    );
    p.set("msm_pieces", "9").expect("parses");
    assert_eq!(p.problem().map(|p| p.0), Some("gpu.msm_pieces"));
    let mut s = GpuOptions::default();
    s.set("msm_scatter_parts", "2").expect("msm_scatter_parts");
    s.set("field_lazy", "off").expect("field_lazy");
    s.set("field_karatsuba", "mul").expect("field_karatsuba");
    assert_eq!(
        (s.problem(), s.msm_label()),
        (
            None,
            "field_lazy=off,field_karatsuba=mul,msm_scatter_parts=2".into()
        )
    );
    for bad in ["3", "16"] {
        s.set("msm_scatter_parts", bad).expect("parses");
        assert_eq!(
            s.problem().map(|p| p.0),
            Some("gpu.msm_scatter_parts"),
            "{bad}"
        );
    }
    assert!(s.set("msm_scatter_parts", "0").is_err());
    assert!(s.set("field_lazy", "lazy").is_err());
    assert!(s.set("field_karatsuba", "sum").is_err());
    let mut n = GpuOptions::default();
    n.set("msm_window_large", "22").expect("msm_window_large");
    assert_eq!((n.window_rule().large, n.problem()), (22, None));
    assert_eq!(n.msm_label(), "msm_window_large=22");
    for bad in ["15", "24"] {
        n.set("msm_window_large", bad).expect("parses");
        assert_eq!(
            n.problem().map(|p| p.0),
            Some("gpu.msm_window_large"),
            "{bad}"
        );
    }
    for k in KNOBS {
        assert!(GpuOptions::default().set(k, "").is_err(), "{k}");
    }
}

#[test]
fn memory_limit_takes_a_size_or_device() {
    let mut o = GpuOptions::default();
    assert_eq!(o.memory_limit, None, "the device's memory by default");
    o.set("memory_limit", "24GiB").expect("a size");
    assert_eq!(o.memory_limit, Some(24 << 30));
    o.set("memory_limit", "17179869184").expect("bytes");
    assert_eq!(o.memory_limit, Some(16 << 30));
    o.set("memory_limit", "device").expect("device");
    assert_eq!(o.memory_limit, None);
    for bad in ["0", "lots", "-1GiB"] {
        let e = o.set("memory_limit", bad).expect_err(bad);
        assert!(e.contains("24GiB"), "{bad}: {e}");
    }
}
