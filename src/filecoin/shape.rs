//! Dispatch on the sector size to filecoin-proofs' tree shape, and a guard that turns a panic
//! inside filecoin-proofs (several of its paths `expect` on bad input) into an error.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::error::{FilecoinError, Result};

/// Calls `$f::<Shape>(args...)` with the tree shape of the sector size `$size` (bytes).
macro_rules! with_tree {
    ($size:expr, $f:ident, $($arg:expr),* $(,)?) => {{
        use filecoin_proofs::constants::*;
        match $size {
            SECTOR_SIZE_2_KIB => $f::<SectorShape2KiB>($($arg),*),
            SECTOR_SIZE_8_MIB => $f::<SectorShape8MiB>($($arg),*),
            SECTOR_SIZE_512_MIB => $f::<SectorShape512MiB>($($arg),*),
            SECTOR_SIZE_32_GIB => $f::<SectorShape32GiB>($($arg),*),
            SECTOR_SIZE_64_GIB => $f::<SectorShape64GiB>($($arg),*),
            other => Err($crate::filecoin::FilecoinError::BadInput(format!(
                "sector size {other} is not one filecoin-proofs supports"
            ))),
        }
    }};
}
pub(crate) use with_tree;

/// Runs `f`, turning a panic into [`FilecoinError::Panicked`] naming `during`.
pub(crate) fn guard<T>(during: &'static str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let reason = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            Err(FilecoinError::Panicked { during, reason })
        }
    }
}

/// Decodes bincode vanilla proofs (as filecoin-ffi passes them), naming the first bad one.
pub(crate) fn decode_vanilla<T: serde::de::DeserializeOwned>(
    bytes: &[Vec<u8>],
    what: &str,
) -> Result<Vec<T>> {
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            bincode::deserialize::<T>(b).map_err(|e| {
                FilecoinError::BadInput(format!(
                    "vanilla proof {i} ({} bytes) is not {what}: {e}",
                    b.len()
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error() {
        let r: Result<()> = guard("testing", || panic!("boom"));
        assert!(
            matches!(&r, Err(FilecoinError::Panicked { during: "testing", reason }) if reason == "boom")
        );
        assert_eq!(guard("ok", || Ok(3)).ok(), Some(3));
    }
}
