//! concord-validate: concord's TCP and queues cross-validated against ns-3 3.44.
//!
//! A grid of dumbbell and parking-lot cases ([`grid`], defined in `grid.toml`) runs in concord
//! ([`concord_run`]) and in ns-3 ([`ns3`], the program `bench/ns3/validate.cc` built against
//! PyPI's `ns3==3.44.post0`), each measured the same way ([`measurement`]); [`compare`] checks
//! the targets and names the mechanism behind a difference from measured ns-3 variants;
//! [`linux`] runs the cases the namespace test bed can host with kernel TCP;
//! [`runs`] tells which seeds gave the same concord run;
//! [`ns3_cache`] keeps ns-3's outputs for reruns; [`suite`] runs it all on a pool of threads and [`report`] writes the table and figures.

pub mod compare;
pub mod concord_run;
pub mod grid;
pub mod linux;
pub mod measurement;
pub mod ns3;
pub mod ns3_cache;
pub mod report;
pub mod runs;
pub mod suite;
