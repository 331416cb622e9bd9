//! Macros shared by the crate's modules (declared first in lib.rs, so every module sees them).

/// The `ConstraintSystem` methods every constraint system of the crate that keeps no namespace
/// path writes alike: namespaces are ignored (their name closures never called) and the system
/// is its own root.
macro_rules! ignore_namespaces {
    () => {
        fn push_namespace<NR, N>(&mut self, _: N)
        where
            NR: Into<String>,
            N: FnOnce() -> NR,
        {
        }

        fn pop_namespace(&mut self) {}

        fn get_root(&mut self) -> &mut Self::Root {
            self
        }
    };
}
