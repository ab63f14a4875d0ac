//! Hosts the examples of the switchyard workspace (`tour.rs`, `train.rs`) and what the training
//! example shares with the benches and the web page (`examples/web`): the spirals dataset, the
//! MLP and its training step, the training loop epoch by epoch, the SVG picture.

pub mod mlp;
pub mod plot;
pub mod spirals;
pub mod training;
