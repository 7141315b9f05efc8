//! The acknowledged (or seen) sequence numbers of one producer handle, as a bitmap.

/// A set of sequence numbers as a bitmap: 100,000 messages take 12.5 KB.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeqSet {
    words: Vec<u64>,
    count: u64,
}

impl SeqSet {
    /// Adds `seq`; false if it was already there.
    pub fn insert(&mut self, seq: u64) -> bool {
        let (w, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let fresh = self.words[w] & bit == 0;
        if fresh {
            self.words[w] |= bit;
            self.count += 1;
        }
        fresh
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.words.get((seq / 64) as usize).is_some_and(|w| w & (1u64 << (seq % 64)) != 0)
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn union(&mut self, other: &SeqSet) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        self.count = self.words.iter().map(|w| w.count_ones() as u64).sum();
    }

    /// Numbers below the highest one present that are absent: gaps in a producer's sequence.
    pub fn gaps(&self) -> u64 {
        let highest = self
            .words
            .iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i as u64 * 64 + 63 - w.leading_zeros() as u64);
        highest.map_or(0, |h| h + 1 - self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seq_sets_count_union_and_gaps() {
        let mut a = SeqSet::default();
        assert!(a.insert(0) && a.insert(5) && a.insert(130));
        assert!(!a.insert(5));
        assert_eq!((a.len(), a.gaps()), (3, 128));
        let mut b = SeqSet::default();
        b.insert(1);
        b.insert(130);
        a.union(&b);
        assert_eq!(a.len(), 4);
        assert!(a.contains(1) && a.contains(130) && !a.contains(2));
        assert_eq!(SeqSet::default().gaps(), 0);
    }
}
