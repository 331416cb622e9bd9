//! The stages a partition passes through (synthesis, the device share, B_G2) as swappable
//! traits (`pipeline`), and the device share of a partition as one backend call
//! (`partition`: the contract a device implements). The engine's actors call these and choose
//! the backends they run on (`engine::backends`); the stages know nothing of actors.

pub mod partition;
pub mod pipeline;
