//! The spirals training loop, epoch by epoch: what `examples/train.rs` runs on each device and
//! what the web page (`examples/web`) runs in the browser, one epoch per animation frame.

use switchyard::autocast::GradScaler;
use switchyard::ops::{try_narrow, try_stack, try_to_dtype};
use switchyard::optim::Adam;
use switchyard::{DType, Device, DispatchError, Tensor};

use crate::mlp::{Mlp, SPIRALS_WIDTHS, train_step_mixed};
use crate::plot::{self, Boundary, Curve};
use crate::spirals::{Spirals, SplitMix64};

type Result<T> = std::result::Result<T, TrainingError>;

/// Why training could not go on.
#[derive(Clone, Debug, PartialEq)]
pub enum TrainingError {
    /// Settings that cannot train (no epochs, empty batches).
    Settings(String),
    /// Every epoch already ran.
    Over {
        /// How many epochs ran.
        epochs: usize,
    },
    /// An op failed.
    Dispatch(DispatchError),
}

impl From<DispatchError> for TrainingError {
    fn from(error: DispatchError) -> Self {
        TrainingError::Dispatch(error)
    }
}

impl std::fmt::Display for TrainingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrainingError::Settings(message) => f.write_str(message),
            TrainingError::Over { epochs } => {
                write!(f, "the training is over: all {epochs} epochs ran")
            }
            TrainingError::Dispatch(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for TrainingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TrainingError::Dispatch(error) => Some(error),
            _ => None,
        }
    }
}

/// Seeds of the initial parameters and of the per-epoch shuffles.
pub const INIT_SEED: u64 = 7;
pub const SHUFFLE_SEED: u64 = 8;
/// The decision boundary's grid: cells per side, over `[-GRID_EXTENT, GRID_EXTENT]²`.
pub const GRID_CELLS: usize = 150;
pub const GRID_EXTENT: f32 = 1.2;

/// How to train.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Epochs in all: the learning rate's schedule spans them.
    pub epochs: usize,
    /// Points per step.
    pub batch: usize,
    /// Adam's initial learning rate, decayed to a tenth along a cosine.
    pub lr: f64,
    /// Mixed precision: the forward pass under autocast to this dtype (`f16` with a scaler).
    pub autocast: Option<DType>,
}

impl Default for Settings {
    /// 40 epochs of batches of 64, learning rate 0.01, `f32`.
    fn default() -> Self {
        Settings {
            epochs: 40,
            batch: 64,
            lr: 0.01,
            autocast: None,
        }
    }
}

/// A model of [`SPIRALS_WIDTHS`] being trained on one device.
#[derive(Debug)]
pub struct Training {
    data: Spirals,
    device: Device,
    settings: Settings,
    model: Mlp,
    adam: Adam,
    scaler: Option<GradScaler>,
    shuffles: SplitMix64,
    /// Every point, on `device`, in the generated order: what the accuracy is measured on.
    all: (Tensor, Tensor),
    losses: Vec<f64>,
    accuracy: f64,
}

impl Training {
    /// A fresh model (the same initial parameters on every device) and its optimizer on
    /// `device`. An error if `settings` asks for no epochs or empty batches.
    pub fn new(data: Spirals, device: Device, settings: Settings) -> Result<Training> {
        if settings.epochs == 0 || settings.batch == 0 {
            return Err(TrainingError::Settings(format!(
                "training needs at least one epoch and batches of at least one point, not {} \
                 epochs of {}",
                settings.epochs, settings.batch
            )));
        }
        let model = Mlp::new(&SPIRALS_WIDTHS, INIT_SEED)?.to(device)?;
        let adam = Adam::try_new(model.parameters(), settings.lr)?;
        let (x, y) = data.tensors()?;
        let all = (x.try_to(device)?, y.try_to(device)?);
        Ok(Training {
            data,
            device,
            settings,
            model,
            adam,
            // f16's range is narrow: small gradients would flush to zero without loss scaling.
            scaler: (settings.autocast == Some(DType::F16)).then(GradScaler::new),
            shuffles: SplitMix64::new(SHUFFLE_SEED),
            all,
            losses: Vec::with_capacity(settings.epochs),
            accuracy: 0.0,
        })
    }

    /// Trains one more epoch (every point once, in a new order) and returns its mean loss; the
    /// training accuracy after it is [`Training::accuracy`]. An error after the last epoch.
    /// After any other error (an op failed) the model may have taken some of the epoch's steps:
    /// start a new training rather than go on.
    pub fn next_epoch(&mut self) -> Result<f64> {
        let trained = self.train_epoch()?;
        let losses = trained.losses.try_to_vec::<f32>()?;
        let accuracy = trained.accuracy.try_item()?.as_f64();
        Ok(self.record(&losses, accuracy))
    }

    /// [`Training::next_epoch`] reading its results back without blocking: how a web page
    /// trains on WebGPU, where a blocking read is an error. The epoch's work is recorded before
    /// the first await; the future resolves when the device has the loss and the accuracy.
    pub async fn next_epoch_async(&mut self) -> Result<f64> {
        let trained = self.train_epoch()?;
        let losses = trained.losses.try_to_vec_async::<f32>().await?;
        let accuracy = trained.accuracy.try_item_async().await?.as_f64();
        Ok(self.record(&losses, accuracy))
    }

    /// Runs one epoch's steps; its results stay on the device until [`Training::record`] gets
    /// them read back.
    fn train_epoch(&mut self) -> Result<Trained> {
        let (epoch, epochs) = (self.losses.len(), self.settings.epochs);
        if epoch == epochs {
            return Err(TrainingError::Over { epochs });
        }
        // Cosine decay from `lr` to a tenth of it: large steps first, then settling (a constant
        // rate keeps the accuracy wobbling by a percent between epochs).
        let progress = epoch as f64 / epochs.max(2).saturating_sub(1) as f64;
        let lr = self.settings.lr;
        self.adam
            .set_lr(lr * (0.1 + 0.45 * (1.0 + (std::f64::consts::PI * progress).cos())));
        // A new order each epoch, built on the host and moved in one copy per tensor.
        let n = self.data.len();
        let (x, y) = self.data.tensors_in(&self.shuffles.permutation(n))?;
        let (x, y) = (x.try_to(self.device)?, y.try_to(self.device)?);
        let mut losses = Vec::with_capacity(n.div_ceil(self.settings.batch));
        for start in (0..n).step_by(self.settings.batch) {
            let len = self.settings.batch.min(n - start);
            let xb = try_narrow(&x, 0, start as isize, len)?;
            let yb = try_narrow(&y, 0, start as isize, len)?;
            losses.push(train_step_mixed(
                &self.model,
                &mut self.adam,
                &xb,
                &yb,
                self.settings.autocast,
                self.scaler.as_mut(),
            )?);
        }
        Ok(Trained {
            // One tensor, so one read brings every batch's loss back (in `f32`, whatever the
            // autocast dtype computed them in).
            losses: try_to_dtype(&try_stack(&losses, 0)?, DType::F32)?,
            accuracy: self.model.accuracy_on_device(&self.all.0, &self.all.1)?,
        })
    }

    /// Records an epoch from its batches' `losses` (each the mean over its batch) and the
    /// `accuracy` after it; returns the epoch's mean loss.
    fn record(&mut self, losses: &[f32], accuracy: f64) -> f64 {
        let (n, batch) = (self.data.len(), self.settings.batch);
        // Each batch's mean, weighted by its points (the last batch may be short).
        let total: f64 = (losses.iter().enumerate())
            .map(|(i, &loss)| f64::from(loss) * batch.min(n - i * batch) as f64)
            .sum();
        let loss = total / n as f64;
        self.losses.push(loss);
        self.accuracy = accuracy;
        loss
    }

    /// Whether every epoch ran.
    pub fn is_over(&self) -> bool {
        self.losses.len() == self.settings.epochs
    }

    /// Each finished epoch's mean loss.
    pub fn losses(&self) -> &[f64] {
        &self.losses
    }

    /// The training accuracy after the last finished epoch (0 before the first).
    pub fn accuracy(&self) -> f64 {
        self.accuracy
    }

    /// Where it trains.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The data it trains on.
    pub fn data(&self) -> &Spirals {
        &self.data
    }

    /// The model as trained so far.
    pub fn model(&self) -> &Mlp {
        &self.model
    }

    /// This run's loss curve, labelled with its device and accuracy.
    pub fn curve(&self) -> Curve {
        Curve {
            label: format!("{} ({:.1}%)", self.device, 100.0 * self.accuracy),
            losses: self.losses.clone(),
        }
    }

    /// The picture ([`plot::svg`]): `curves` beside this model's decision boundary over the
    /// plane, with the data on top.
    pub fn picture(&self, title: &str, curves: &[Curve]) -> Result<String> {
        let classes = self.grid_classes()?.try_to_vec::<i64>()?;
        Ok(self.draw(title, curves, classes))
    }

    /// [`Training::picture`] reading the boundary back without blocking (see
    /// [`Training::next_epoch_async`]).
    pub async fn picture_async(&self, title: &str, curves: &[Curve]) -> Result<String> {
        let classes = self.grid_classes()?.try_to_vec_async::<i64>().await?;
        Ok(self.draw(title, curves, classes))
    }

    /// The predicted class of each cell of the boundary's grid, on the training's device.
    fn grid_classes(&self) -> Result<Tensor> {
        let centres = Boundary::cell_centres(GRID_EXTENT, GRID_CELLS);
        let grid = Tensor::from_vec(
            centres.iter().flatten().copied().collect(),
            &[centres.len(), 2],
        )?;
        Ok(self.model.predict(&grid.try_to(self.device)?)?)
    }

    fn draw(&self, title: &str, curves: &[Curve], classes: Vec<i64>) -> String {
        let boundary = Boundary {
            extent: GRID_EXTENT,
            cells: GRID_CELLS,
            classes,
        };
        let points: Vec<([f32; 2], i64)> = (self.data.points.iter().copied())
            .zip(self.data.labels.iter().copied())
            .collect();
        plot::svg(title, curves, &boundary, &points)
    }
}

/// An epoch's results on the device, not yet read back.
struct Trained {
    /// Each batch's loss, `f32`, `[batches]`.
    losses: Tensor,
    /// The training accuracy after the epoch, 0-dimensional `f32`.
    accuracy: Tensor,
}
