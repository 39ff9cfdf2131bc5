//! `f32` storage aligned to 64 bytes, for the weights and the gradient buffers.
//!
//! With a row width that is a multiple of 16 floats, every feature-transformer row then starts
//! on a cache line, and the AVX2 loops can use aligned loads. It matters beyond cache lines: for
//! x86-64-v2, LLVM tunes for Sandy Bridge and splits every 256-bit load or store it cannot
//! prove aligned into two 128-bit halves, which nearly halves the speed of the loops that
//! stream rows. The kernels check alignment at run time, so this type makes them fast, not safe.

use std::fmt;
use std::ops::{Deref, DerefMut};

/// One cache line of floats.
#[derive(Clone, Copy, PartialEq)]
#[repr(C, align(64))]
struct Line([f32; 16]);

const _: () = assert!(size_of::<Line>() == 64 && align_of::<Line>() == 64);

/// A fixed-length `[f32]` whose first element is 64-byte aligned.
#[derive(Clone)]
pub(crate) struct AlignedVec {
    lines: Vec<Line>,
    len: usize,
}

impl AlignedVec {
    pub fn zeros(len: usize) -> AlignedVec {
        AlignedVec {
            lines: vec![Line([0.0; 16]); len.div_ceil(16)],
            len,
        }
    }

    pub fn from_slice(values: &[f32]) -> AlignedVec {
        let mut v = AlignedVec::zeros(values.len());
        v.copy_from_slice(values);
        v
    }
}

impl Deref for AlignedVec {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        // SAFETY: `Line` is `repr(C)` around `[f32; 16]` and exactly 64 bytes (asserted above),
        // so the lines are `16 · lines.len() >= len` contiguous, initialised floats.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<f32>(), self.len) }
    }
}

impl DerefMut for AlignedVec {
    fn deref_mut(&mut self) -> &mut [f32] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<f32>(), self.len) }
    }
}

impl PartialEq for AlignedVec {
    fn eq(&self, other: &AlignedVec) -> bool {
        **self == **other
    }
}

impl fmt::Debug for AlignedVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AlignedVec({} floats)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_sized() {
        for len in [0, 1, 15, 16, 17, 1000] {
            let mut v = AlignedVec::zeros(len);
            assert_eq!(v.len(), len);
            assert_eq!(v.as_ptr() as usize % 64, 0);
            v.iter_mut().enumerate().for_each(|(i, x)| *x = i as f32);
            let w = AlignedVec::from_slice(&v);
            assert_eq!(v, w);
            assert_eq!(w.last().copied(), len.checked_sub(1).map(|l| l as f32));
        }
    }
}
