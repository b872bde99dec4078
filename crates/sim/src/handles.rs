//! A table of values that packets refer to by handle: packets are `Copy` and small, the
//! headers some of them carry (a CP header, a CM probe response with its per-flow counts) are
//! not. A slot is freed when its packet is delivered, consumed or dropped by a queue, and
//! reused by the next insert.

/// Values by `u32` handle, with freed slots reused.
#[derive(Debug)]
pub struct Handles<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Handles<T> {
    fn default() -> Self {
        Handles {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Handles<T> {
    /// Stores `v`, returning its handle.
    pub fn insert(&mut self, v: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                if let Some(slot) = self.slots.get_mut(i as usize) {
                    *slot = Some(v);
                }
                i
            }
            None => {
                self.slots.push(Some(v));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The value behind handle `i`.
    pub fn get(&self, i: u32) -> Option<&T> {
        self.slots.get(i as usize)?.as_ref()
    }

    /// The value behind handle `i`, to rewrite.
    pub fn get_mut(&mut self, i: u32) -> Option<&mut T> {
        self.slots.get_mut(i as usize)?.as_mut()
    }

    /// Frees handle `i`, returning its value.
    pub fn remove(&mut self, i: u32) -> Option<T> {
        let v = self.slots.get_mut(i as usize)?.take()?;
        self.free.push(i);
        Some(v)
    }

    /// Values stored now.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Handles;

    #[test]
    fn a_freed_handle_is_reused_and_a_stale_one_finds_nothing() {
        let mut h = Handles::default();
        let a = h.insert("a");
        let b = h.insert("b");
        assert_eq!((a, b), (0, 1));
        assert_eq!(h.remove(a), Some("a"));
        assert_eq!(h.remove(a), None);
        assert_eq!(h.get(a), None);
        assert_eq!(h.live(), 1);
        assert_eq!(h.insert("c"), a);
        assert_eq!(h.get(a), Some(&"c"));
        assert_eq!(h.get(7), None);
    }
}
