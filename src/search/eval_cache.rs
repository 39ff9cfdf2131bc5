//! A per-thread cache of static evaluations.

/// Static evaluations by position key: a position met again after its TT entry was replaced
/// (quiescence leaves are many) is not evaluated twice. Cleared with the TT by `new_game`.
pub(super) struct EvalCache {
    entries: Box<[(u64, i32)]>,
}

impl EvalCache {
    const SIZE: usize = 1 << 16;

    pub(super) fn new() -> EvalCache {
        EvalCache {
            entries: vec![(0, 0); Self::SIZE].into_boxed_slice(),
        }
    }

    pub(super) fn clear(&mut self) {
        self.entries.fill((0, 0));
    }

    #[inline(always)]
    pub(super) fn probe(&self, key: u64) -> Option<i32> {
        let (k, v) = self.entries[key as usize & (Self::SIZE - 1)];
        (k == key && key != 0).then_some(v)
    }

    #[inline(always)]
    pub(super) fn store(&mut self, key: u64, v: i32) {
        self.entries[key as usize & (Self::SIZE - 1)] = (key, v);
    }
}
