//! The Groth16 core over BLS12-381, with no engine, actor or device in it: the proving
//! constraint system and its density trackers (`cs`), the radix-2 domain and H (`domain`), the
//! CPU multi-scalar multiplication (`msm`, over plain or packed scalars), a witness kept as bits
//! (`packed`), keys in bellperson's `.params` layout (`key`), proving in stages (`prover`) on a
//! `Backend` (`backend`: the primitives behind a trait, with its CPU reference; the GPU
//! implements it), the 192-byte proof (`proof`), verification (`verify`), random setup for
//! tests and benchmarks (`setup`), keys of a circuit's shape with tiled random points for
//! benches (`tiled`), batched subgroup checks (`subgroup`), and the one error type these share
//! (`error`; a backend's failure is boxed in it, so the core names no backend), and the slot a
//! backend ties to a key's host memory (`attachment`). The engine, the
//! stages and the GPU build on this layer; nothing here imports them.

pub mod attachment;
pub mod backend;
pub mod cs;
pub mod domain;
pub mod error;
pub mod key;
pub mod msm;
pub mod packed;
pub mod proof;
pub mod prover;
pub mod setup;
pub mod subgroup;
pub mod tiled;
pub mod verify;
