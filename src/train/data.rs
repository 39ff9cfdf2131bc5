//! Training samples: what the trainer asks of its data, and a compact in-memory set.
//!
//! A sample is two lists of active input indices (side to move, other side), an output bucket
//! and a target in `[0, 1]`. The trainer reads samples through [`Samples`], so a set can live
//! in memory ([`SampleSet`]), in a mapped file or anywhere else the glue likes; it never sees
//! what the inputs mean.
//!
//! [`SampleSet`] keeps every feature index as a `u16` in one vector and a 12-byte header per
//! sample, so a sample costs `12 + 2 × (active inputs of both perspectives)` bytes: ten million
//! samples of 30 + 30 active inputs take about 1.3 GB.

use serde::{Deserialize, Serialize};

/// The bounds a set of samples keeps to, checked once against the network instead of per
/// sample in the inner loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleShape {
    /// Every input index is below this.
    pub inputs: usize,
    /// Every bucket is below this.
    pub buckets: usize,
    /// No perspective has more active inputs than this.
    pub max_active: usize,
}

impl SampleShape {
    /// Whether samples of this shape can be fed to a network taking `network`.
    pub fn fits(&self, network: &SampleShape) -> bool {
        self.inputs <= network.inputs
            && self.buckets <= network.buckets
            && self.max_active <= network.max_active
    }
}

/// One sample, borrowed from its set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample<'a> {
    /// The side to move's active inputs.
    pub stm: &'a [u16],
    /// The other side's active inputs.
    pub other: &'a [u16],
    /// The output bucket.
    pub bucket: u8,
    /// What the prediction `sigmoid(output · SCALE / EVAL_SCALE)` should be, in `[0, 1]`.
    pub target: f32,
}

/// Why a sample was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SampleError {
    #[error("input {index} is out of range (the network has {inputs} inputs)")]
    Input { index: u16, inputs: usize },
    #[error("{count} active inputs in one perspective (at most {max})")]
    TooManyActive { count: usize, max: usize },
    #[error("bucket {bucket} is out of range (the network has {buckets} buckets)")]
    Bucket { bucket: u8, buckets: usize },
    #[error("target {0} is not in [0, 1]")]
    Target(f32),
    #[error("the set is full (2^40 feature indices)")]
    Full,
}

impl Sample<'_> {
    /// Checks the sample against `shape`.
    pub fn check(&self, shape: &SampleShape) -> Result<(), SampleError> {
        for feats in [self.stm, self.other] {
            if feats.len() > shape.max_active {
                return Err(SampleError::TooManyActive {
                    count: feats.len(),
                    max: shape.max_active,
                });
            }
            if let Some(&index) = feats.iter().find(|&&i| i as usize >= shape.inputs) {
                return Err(SampleError::Input {
                    index,
                    inputs: shape.inputs,
                });
            }
        }
        if self.bucket as usize >= shape.buckets {
            return Err(SampleError::Bucket {
                bucket: self.bucket,
                buckets: shape.buckets,
            });
        }
        if !(0.0..=1.0).contains(&self.target) {
            return Err(SampleError::Target(self.target));
        }
        Ok(())
    }
}

/// A source of samples. Implementations promise that every sample keeps to [`Samples::shape`]
/// (the trainer checks the shape against the network once; an index out of range found later
/// panics in a bounds check rather than reading out of bounds).
pub trait Samples: Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Sample `index`, below [`Samples::len`].
    fn sample(&self, index: usize) -> Sample<'_>;
    fn shape(&self) -> SampleShape;
    /// A hint that sample `index` is wanted soon; does nothing unless a set overrides it. The
    /// kernels call it twice per sample: a few samples ahead with `near` false, then one
    /// sample ahead with `near` true, so a set that reaches a sample through a record (as
    /// [`SampleSet`] does) can fetch the record first and the sample second. Training visits
    /// samples in a shuffled order, and a large set lives in main memory: without the hint,
    /// each sample costs two memory latencies in a row.
    #[inline]
    fn prefetch(&self, index: usize, near: bool) {
        let _ = (index, near);
    }
}

/// Per-sample record of a [`SampleSet`]: where its features start (40 bits), how many each
/// perspective has, its bucket and target.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Header {
    start_low: u32,
    target: f32,
    start_high: u8,
    stm: u8,
    other: u8,
    bucket: u8,
}

const _: () = assert!(size_of::<Header>() == 12);

/// Samples packed in memory: one `u16` per active input and a 12-byte header per sample.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleSet {
    shape: SampleShape,
    headers: Vec<Header>,
    features: Vec<u16>,
}

impl SampleSet {
    /// An empty set whose samples must keep to `shape` (usually `Architecture::sample_shape`).
    pub fn new(shape: SampleShape) -> SampleSet {
        SampleSet {
            shape,
            headers: Vec::new(),
            features: Vec::new(),
        }
    }

    /// An empty set with room for `samples` samples of `active` inputs in both perspectives
    /// together, so a large set is filled without reallocating.
    pub fn with_capacity(shape: SampleShape, samples: usize, active: usize) -> SampleSet {
        SampleSet {
            shape,
            headers: Vec::with_capacity(samples),
            features: Vec::with_capacity(samples.saturating_mul(active)),
        }
    }

    /// Adds a sample after checking it against the set's shape.
    pub fn push(
        &mut self,
        stm: &[u16],
        other: &[u16],
        bucket: u8,
        target: f32,
    ) -> Result<(), SampleError> {
        let sample = Sample {
            stm,
            other,
            bucket,
            target,
        };
        sample.check(&self.shape)?;
        // The header counts each perspective in a byte.
        if let Some(count) = [stm.len(), other.len()].into_iter().find(|&c| c > 255) {
            return Err(SampleError::TooManyActive { count, max: 255 });
        }
        let start = self.features.len() as u64;
        if start + (stm.len() + other.len()) as u64 > 1 << 40 {
            return Err(SampleError::Full);
        }
        self.features.extend_from_slice(stm);
        self.features.extend_from_slice(other);
        self.headers.push(Header {
            start_low: start as u32,
            target,
            start_high: (start >> 32) as u8,
            stm: stm.len() as u8,
            other: other.len() as u8,
            bucket,
        });
        Ok(())
    }

    /// Replaces sample `index`'s target (a driver that fixes its label scale after loading).
    pub fn set_target(&mut self, index: usize, target: f32) -> Result<(), SampleError> {
        if !(0.0..=1.0).contains(&target) {
            return Err(SampleError::Target(target));
        }
        if let Some(h) = self.headers.get_mut(index) {
            h.target = target;
        }
        Ok(())
    }

    /// Bytes the samples occupy (not counting spare capacity).
    pub fn bytes(&self) -> usize {
        self.headers.len() * size_of::<Header>() + self.features.len() * size_of::<u16>()
    }

    /// Frees spare capacity once the set is filled.
    pub fn shrink_to_fit(&mut self) {
        self.headers.shrink_to_fit();
        self.features.shrink_to_fit();
    }
}

impl Samples for SampleSet {
    fn len(&self) -> usize {
        self.headers.len()
    }

    #[inline]
    fn sample(&self, index: usize) -> Sample<'_> {
        let h = self.headers[index];
        let start = h.start_low as usize | (h.start_high as usize) << 32;
        let (stm, other) = self.features[start..start + h.stm as usize + h.other as usize]
            .split_at(h.stm as usize);
        Sample {
            stm,
            other,
            bucket: h.bucket,
            target: h.target,
        }
    }

    fn shape(&self) -> SampleShape {
        self.shape
    }

    #[inline]
    fn prefetch(&self, index: usize, near: bool) {
        let Some(h) = self.headers.get(index) else {
            return;
        };
        if !near {
            prefetch_line(h as *const Header as *const u8);
            return;
        }
        let start = h.start_low as usize | (h.start_high as usize) << 32;
        let end = start + h.stm as usize + h.other as usize;
        if let Some(f) = self.features.get(start..end) {
            let bytes = f.as_ptr_range();
            let mut p = bytes.start as *const u8;
            while p < bytes.end as *const u8 {
                prefetch_line(p);
                p = p.wrapping_add(64);
            }
        }
    }
}

/// Asks the processor to bring the cache line holding `p` into its caches.
#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults nor changes memory, whatever `p` is.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: SampleShape = SampleShape {
        inputs: 100,
        buckets: 4,
        max_active: 3,
    };

    #[test]
    fn push_and_read_back() {
        let mut set = SampleSet::new(SHAPE);
        set.push(&[1, 2, 99], &[5], 3, 0.25).unwrap();
        set.push(&[], &[7, 8], 0, 1.0).unwrap();
        assert_eq!(set.len(), 2);
        assert_eq!(
            set.sample(0),
            Sample {
                stm: &[1, 2, 99],
                other: &[5],
                bucket: 3,
                target: 0.25
            }
        );
        assert_eq!(set.sample(1).stm, &[] as &[u16]);
        assert_eq!(set.sample(1).other, &[7, 8]);
        assert_eq!(set.bytes(), 2 * 12 + 6 * 2);
    }

    #[test]
    fn push_refuses_what_does_not_fit() {
        let mut set = SampleSet::new(SHAPE);
        assert_eq!(
            set.push(&[100], &[], 0, 0.5),
            Err(SampleError::Input {
                index: 100,
                inputs: 100
            })
        );
        assert!(matches!(
            set.push(&[1, 2, 3, 4], &[], 0, 0.5),
            Err(SampleError::TooManyActive { .. })
        ));
        assert!(matches!(
            set.push(&[1], &[], 4, 0.5),
            Err(SampleError::Bucket { .. })
        ));
        assert!(matches!(
            set.push(&[1], &[], 0, 1.5),
            Err(SampleError::Target(_))
        ));
        assert!(matches!(
            set.push(&[1], &[], 0, f32::NAN),
            Err(SampleError::Target(_))
        ));
        assert!(set.is_empty());
    }
}
