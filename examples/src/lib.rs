//! Hosts the examples of the switchyard workspace (see `tour.rs`).
