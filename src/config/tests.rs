//! Tests of the configuration: files, environment, defaults and named errors.

use super::*;
use crate::gpu::options::HStream;

#[test]
fn parses_sizes() {
    assert_eq!(parse_bytes("64GiB"), Some(64 << 30));
    assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
    assert_eq!(parse_bytes("1000"), Some(1000));
    assert_eq!(parse_bytes("1.5GB"), Some(1_500_000_000));
    assert_eq!(parse_bytes("lots"), None);
    assert_eq!(parse_devices("0,1").ok(), Some(vec![0, 1]));
    assert_eq!(parse_devices(" [2, 3] ").ok(), Some(vec![2, 3]));
    assert!(parse_devices("").is_err());
    let err = parse_devices("0,x").expect_err("not an index");
    assert!(err.to_string().contains("gpu.devices"), "{err}");
}

#[test]
fn the_example_file_is_a_valid_config() {
    let c = Config::from_toml(include_str!("../../baton.example.toml")).expect("example parses");
    c.validate().expect("example validates");
    assert_eq!(
        c.bg2_device,
        Bg2Device::Auto,
        "the example lets the engine pick"
    );
    assert!(c.gpu_devices.is_empty(), "the example uses every GPU");
}

#[test]
fn the_default_is_every_visible_gpu() {
    let c = Config::default();
    assert!(c.gpu_devices.is_empty());
    assert_eq!(c.resolved_devices(4), vec![0, 1, 2, 3]);
    assert_eq!(c.resolved_devices(0), vec![0], "no GPU: one CPU actor");
    let cpu = Config {
        backend: BackendChoice::Cpu,
        ..Config::default()
    };
    assert_eq!(
        cpu.resolved_devices(4),
        vec![0],
        "the CPU backend runs one actor"
    );
    let listed = Config::from_toml("[gpu]\ndevices = [2]\n").expect("a list");
    assert_eq!(listed.resolved_devices(4), vec![2]);
    for all in ["[gpu]\ndevices = []\n", "[gpu]\ndevices = \"all\"\n"] {
        let c = Config::from_toml(all).expect(all);
        assert_eq!(c.resolved_devices(2), vec![0, 1], "{all}");
    }
    assert_eq!(parse_devices("all").ok(), Some(vec![]));
    assert!(parse_devices(",").is_err());
}

#[test]
fn toml_and_env_are_read_and_validated() {
    let c = Config::from_toml("[memory]\nbudget = \"2GiB\"\npolicy = \"hold_until_delivered\"\n[synthesis]\nworkers = 3\n")
        .expect("valid");
    assert_eq!(c.budget_bytes, Some(2 << 30));
    assert_eq!(c.policy, Policy::HoldUntilDelivered);
    assert_eq!(c.synthesis_workers, 3);
    assert_eq!(c.effective_slots(), 4, "workers + the CRITICAL one");
    let c = Config {
        policy: Policy::Ledger,
        synthesis_workers: 10,
        gpu_devices: vec![0, 1],
        ..c
    };
    assert_eq!(c.effective_slots(), 15, "workers + 2 per device + CRITICAL");
    let none = Config {
        critical_workers: 0,
        ..c.clone()
    };
    assert_eq!(none.effective_slots(), 14, "nothing kept for CRITICAL");
    let c = Config::from_toml("[synthesis]\ncritical_workers = 0\n").expect("valid");
    assert_eq!(c.critical_workers, 0);
    assert!(Config::from_toml("[synthesis]\ncritical_workers = \"x\"\n").is_err());
    assert_eq!(Config::default().synthesis_nice, 0);
    let c = Config::from_toml("[synthesis]\nnice = 10\n").expect("valid");
    assert_eq!(c.synthesis_nice, 10);
    for bad in ["20", "-1", "\"low\""] {
        let e = Config::from_toml(&format!("[synthesis]\nnice = {bad}\n"));
        assert!(
            e.is_err_and(|e| e.to_string().contains("synthesis.nice")),
            "{bad}"
        );
    }

    assert!(Config::default().yield_to_critical);
    let c = Config::from_toml("[synthesis]\nyield_to_critical = false\n").expect("valid");
    assert!(!c.yield_to_critical);
    let e = Config::from_toml("[synthesis]\nyield_to_critical = \"sometimes\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("synthesis.yield_to_critical")));

    let env = vec![
        ("BATON_BG2_WORKERS".to_string(), "2".to_string()),
        ("BATON_GPU_BACKEND".to_string(), "cpu".to_string()),
        ("BATON_BG2_DEVICE".to_string(), "gpu".to_string()),
        ("BATON_GPU_DEVICES".to_string(), "1,0".to_string()),
        ("BATON_LOG".to_string(), "info".to_string()),
        ("BATON_BENCH_RUNS".to_string(), "5".to_string()),
        ("BATON_CACHE_DIR".to_string(), "/tmp/x".to_string()),
    ];
    let c = Config::load_from(Path::new("/nonexistent/baton.toml"), env).expect("env");
    assert_eq!(c.bg2_workers, 2);
    assert_eq!(c.backend, BackendChoice::Cpu);
    assert_eq!(c.bg2_device, Bg2Device::Gpu);
    assert_eq!(c.gpu_devices, vec![1, 0]);
    let auto = Config::default();
    assert_eq!(auto.bg2_device, Bg2Device::Auto, "auto by default");
    assert!(
        auto.bg2_on_gpu(32),
        "32 threads cannot keep up with one GPU"
    );
    assert!(
        !auto.bg2_on_gpu(CPU_BG2_THREADS_PER_GPU),
        "enough threads for one GPU"
    );
    let two = Config {
        gpu_devices: vec![0, 1],
        ..Config::default()
    };
    assert!(
        two.bg2_on_gpu(CPU_BG2_THREADS_PER_GPU),
        "two GPUs need twice the threads"
    );
    let cpu = Config {
        bg2_device: Bg2Device::Cpu,
        ..Config::default()
    };
    assert!(!cpu.bg2_on_gpu(1));
    let err = Config::from_toml("[bg2]\ndevice = \"tpu\"\n").expect_err("bad device");
    assert!(err.to_string().contains("bg2.device"), "{err}");

    let c = Config::from_toml("[gpu]\ndevices = [0, 1]\n").expect("TOML array");
    assert_eq!(c.gpu_devices, vec![0, 1]);
    let c = Config::from_toml("[gpu]\ndevices = \"2,3\"\n").expect("string list");
    assert_eq!(c.gpu_devices, vec![2, 3]);
    let err = Config::from_toml("[gpu]\ndevices = [0, \"x\"]\n").expect_err("bad index");
    assert!(err.to_string().contains("gpu.devices"), "{err}");
    let c = Config::from_toml("[synthesis]\ncompiled = false\n").expect("compiled");
    assert!(!c.compiled && Config::default().compiled);
    let err = Config::from_toml("[synthesis]\ncompiled = 2\n").expect_err("bool");
    assert!(err.to_string().contains("synthesis.compiled"), "{err}");
    let c = Config::from_toml("[memory]\novercommit = true\n").expect("overcommit");
    assert!(c.overcommit && !Config::default().overcommit);
    let err = Config::from_toml("[memory]\novercommit = \"maybe\"\n").expect_err("bool");
    assert!(err.to_string().contains("memory.overcommit"), "{err}");
    let env = vec![
        ("BATON_GPU_HOST_THREADS".to_string(), "6".to_string()),
        ("BATON_GPU_MSM_ACC_MINB".to_string(), "5".to_string()),
        ("BATON_GPU_MSM_PREFETCH".to_string(), "true".to_string()),
        ("BATON_GPU_PARTITION".to_string(), "calls".to_string()),
        ("BATON_GPU_MSM_MUL".to_string(), "inline".to_string()),
        ("BATON_GPU_MSM_WINDOW".to_string(), "nontrivial".to_string()),
        ("BATON_GPU_MSM_SCATTER".to_string(), "keys".to_string()),
        ("BATON_GPU_H_STREAM".to_string(), "compute".to_string()),
        ("BATON_BENCH_MSM".to_string(), "20".to_string()),
        ("BATON_MSM_ACC_MINB".to_string(), "1".to_string()),
    ];
    let c = Config::load_from(Path::new("/nonexistent/baton.toml"), env).expect("gpu env");
    assert_eq!(c.gpu.host_threads, Some(6));
    assert_eq!(
        c.gpu.msm_acc_minb, 5,
        "BATON_GPU_* wins; BATON_MSM_* is no key"
    );
    assert!(c.gpu.msm_prefetch && !c.gpu.device_partition);
    assert_eq!(
        c.gpu.msm_label(),
        "msm_mul=inline,msm_window=nontrivial,msm_scatter=keys,msm_acc_minb=5,h_stream=compute,\
         msm_prefetch=true"
    );
    assert_eq!(GpuOptions::default().h_stream, HStream::Own);
    assert!(GpuOptions::default().warm_keys);
    let c = Config::from_toml("[gpu]\nwarm_keys = false\n").expect("warm_keys");
    assert!(!c.gpu.warm_keys);
    assert_eq!(Config::default().gpu, GpuOptions::default());
    let c = Config::from_toml("[gpu]\nhost_threads = \"auto\"\nmsm_acc_minb = 2\n").expect("gpu");
    assert_eq!((c.gpu.host_threads, c.gpu.msm_acc_minb), (None, 2));
    for bad in [
        "[gpu]\nmsm_acc_minb = 9\n",
        "[gpu]\nmsm_acc_minb = 0\n",
        "[gpu]\nhost_threads = 0\n",
        "[gpu]\nmsm_prefetch = \"maybe\"\n",
        "[gpu]\npartition = \"cloud\"\n",
        "[gpu]\nmsm_mul = \"asm\"\n",
        "[gpu]\nmsm_window = \"bits\"\n",
        "[gpu]\nmsm_scatter = \"sort\"\n",
        "[gpu]\nh_stream = \"side\"\n",
        "[gpu]\nwarm_keys = \"later\"\n",
    ] {
        let err = Config::from_toml(bad).expect_err(bad);
        assert!(err.to_string().contains("gpu."), "{bad}: {err}");
    }
    let err = Config::from_toml("[memory]\nbudget = \"lots\"\n").expect_err("bad budget");
    assert!(err.to_string().contains("memory.budget"), "{err}");
    let err = Config::from_toml("[synthesis]\nworkers = 0\n").expect_err("zero workers");
    assert!(err.to_string().contains("synthesis.workers"), "{err}");
    assert!(
        Config::from_toml("[memory]\nbugdet = \"1GiB\"\n").is_err(),
        "unknown keys are refused"
    );
    let twice = Config {
        gpu_devices: vec![0, 1, 0],
        ..Config::default()
    };
    let err = twice.validate().expect_err("duplicate device");
    assert!(
        err.to_string().contains("device 0 is listed twice"),
        "{err}"
    );
}

#[test]
fn experiments_knobs_are_read_under_gpu_experimental_and_nothing_else_is() {
    let c = Config::from_toml(
        "[gpu]\nwarm_keys = false\n[gpu.experimental]\nmsm_mul = \"inline\"\nntt_regs = 0\n",
    )
    .expect("experimental knobs");
    assert_eq!(c.gpu.msm_mul, crate::gpu::options::MsmMul::Inline);
    assert_eq!((c.gpu.ntt_regs, c.gpu.warm_keys), (0, false));
    // Still read under [gpu], as before.
    let old =
        Config::from_toml("[gpu]\nmsm_mul = \"inline\"\nntt_regs = 0\n").expect("under [gpu]");
    let mut same = c.gpu.clone();
    same.warm_keys = true;
    assert_eq!(old.gpu, same);
    for (bad, named) in [
        (
            "[gpu]\nmsm_mul = \"call\"\n[gpu.experimental]\nmsm_mul = \"inline\"\n",
            "gpu.msm_mul",
        ),
        (
            "[gpu.experimental]\nwarm_keys = false\n",
            "gpu.experimental.warm_keys",
        ),
        (
            "[gpu.experimental]\ndevices = \"0\"\n",
            "gpu.experimental.devices",
        ),
        (
            "[gpu.experimental]\nmsm_mul = \"asm\"\n",
            "gpu.experimental.msm_mul",
        ),
        ("[gpu.experimental]\nmsm_mull = \"call\"\n", "msm_mull"),
    ] {
        let err = Config::from_toml(bad).expect_err(bad);
        assert!(err.to_string().contains(named), "{bad}: {err}");
    }
}

#[test]
fn memory_limit_is_an_operators_gpu_key() {
    let c = Config::from_toml("[gpu]\nmemory_limit = \"16GiB\"\n").expect("valid");
    assert_eq!(c.gpu.memory_limit, Some(16 << 30));
    let e = Config::from_toml("[gpu.experimental]\nmemory_limit = \"16GiB\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.memory_limit")));
    let e = Config::from_toml("[gpu]\nmemory_limit = \"lots\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.memory_limit")));
}

#[test]
fn capped_cut_is_an_experiment_lean_by_default() {
    use crate::gpu::options::CappedCut;
    assert_eq!(GpuOptions::default().capped_cut, CappedCut::Lean);
    let c = Config::from_toml("[gpu.experimental]\ncapped_cut = \"knob\"\n").expect("valid");
    assert_eq!(c.gpu.capped_cut, CappedCut::Knob);
    assert_eq!(c.gpu.msm_label(), "capped_cut=knob");
    let c = Config::from_toml("[gpu.experimental]\ncapped_cut = \"overlap\"\n").expect("valid");
    assert_eq!(c.gpu.capped_cut, CappedCut::Overlap);
    assert_eq!(c.gpu.msm_label(), "capped_cut=overlap");
    let e = Config::from_toml("[gpu.experimental]\ncapped_cut = \"tight\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.capped_cut")));
    let e = Config::from_toml(
        "[gpu]\ncapped_cut = \"lean\"\n[gpu.experimental]\ncapped_cut = \"knob\"\n",
    );
    assert!(e.is_err(), "set in both tables");
}

#[test]
fn capped_recording_spares_by_default_and_evict_is_a_knob() {
    use crate::gpu::options::{CappedHBeside, CappedRecording};
    assert_eq!(
        GpuOptions::default().capped_recording,
        CappedRecording::Spare
    );
    let c = Config::from_toml("[gpu.experimental]\ncapped_recording = \"evict\"\n").expect("valid");
    assert_eq!(c.gpu.capped_recording, CappedRecording::Evict);
    assert_eq!(c.gpu.msm_label(), "capped_recording=evict");
    assert_eq!(GpuOptions::default().capped_h_beside, CappedHBeside::Off);
    let c = Config::from_toml("[gpu.experimental]\ncapped_h_beside = \"witness_first\"\n")
        .expect("valid");
    assert_eq!(c.gpu.capped_h_beside, CappedHBeside::WitnessFirst);
    assert_eq!(c.gpu.msm_label(), "capped_h_beside=witness_first");
    let e = Config::from_toml("[gpu.experimental]\ncapped_h_beside = \"often\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.capped_h_beside")));
    let e = Config::from_toml("[gpu.experimental]\ncapped_recording = \"keep\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.capped_recording")));
}

#[test]
fn msm_affine_rounds_is_an_experiment_off_by_default_and_bounded() {
    assert_eq!(GpuOptions::default().msm_affine_rounds, 0);
    let c = Config::from_toml("[gpu.experimental]\nmsm_affine_rounds = \"2\"\n").expect("valid");
    assert_eq!(c.gpu.msm_affine_rounds, 2);
    assert_eq!(c.gpu.msm_label(), "msm_affine_rounds=2");
    let e = Config::from_toml("[gpu.experimental]\nmsm_affine_rounds = \"5\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.msm_affine_rounds")));
    let e = Config::from_toml("[gpu.experimental]\nmsm_affine_rounds = \"two\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.msm_affine_rounds")));
    assert_eq!(GpuOptions::default().msm_affine_per, 16);
    let c = Config::from_toml("[gpu.experimental]\nmsm_affine_per = \"32\"\n").expect("valid");
    assert_eq!(c.gpu.msm_affine_per, 32);
    let e = Config::from_toml("[gpu.experimental]\nmsm_affine_per = \"24\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.msm_affine_per")));
    assert!(!GpuOptions::default().msm_affine_split);
    let c = Config::from_toml("[gpu.experimental]\nmsm_affine_split = \"on\"\n").expect("valid");
    assert!(c.gpu.msm_affine_split);
    assert_eq!(c.gpu.msm_label(), "msm_affine_split=true");
    let e = Config::from_toml("[gpu.experimental]\nmsm_affine_split = \"maybe\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.msm_affine_split")));
}

#[test]
fn ntt_twiddles_is_an_operators_gpu_key_and_auto_splits_small_devices() {
    use crate::gpu::options::NttTwiddles;
    assert_eq!(GpuOptions::default().ntt_twiddles, NttTwiddles::Auto);
    let c = Config::from_toml("[gpu]\nntt_twiddles = \"split\"\n").expect("valid");
    assert_eq!(c.gpu.ntt_twiddles, NttTwiddles::Split);
    let e = Config::from_toml("[gpu]\nntt_twiddles = \"half\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.ntt_twiddles")));
    let e = Config::from_toml("[gpu.experimental]\nntt_twiddles = \"full\"\n");
    assert!(e.is_err_and(|e| e.to_string().contains("gpu.experimental.ntt_twiddles")));
    // "auto": split on a 16, 24 or 32 GiB card or limit, whole on an H100 or H200.
    for (gib, split) in [
        (16u64, true),
        (24, true),
        (32, true),
        (80, false),
        (139, false),
    ] {
        assert_eq!(NttTwiddles::Auto.split(gib << 30), split, "{gib} GiB");
    }
    assert!(!NttTwiddles::Full.split(16 << 30));
    assert!(NttTwiddles::Split.split(139 << 30));
}
