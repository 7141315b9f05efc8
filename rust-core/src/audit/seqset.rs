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

    /// Whether `seq` is in the set.
    pub fn contains(&self, seq: u64) -> bool {
        self.words.get((seq / 64) as usize).is_some_and(|w| w & (1u64 << (seq % 64)) != 0)
    }

    /// How many sequence numbers the set holds.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether the set holds none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds every number of `other`.
    pub fn union(&mut self, other: &SeqSet) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        self.count = self.words.iter().map(|w| w.count_ones() as u64).sum();
    }

    /// The set as inclusive ranges `[first, last]`: compact in a summary file (a run without gaps is one range).
    pub fn ranges(&self) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for (i, w) in self.words.iter().enumerate() {
            let mut w = *w;
            while w != 0 {
                let seq = i as u64 * 64 + w.trailing_zeros() as u64;
                w &= w - 1;
                match out.last_mut() {
                    Some(last) if last[1] + 1 == seq => last[1] = seq,
                    _ => out.push([seq, seq]),
                }
            }
        }
        out
    }

    /// The set of [`SeqSet::ranges`].
    pub fn from_ranges(ranges: &[[u64; 2]]) -> SeqSet {
        let mut set = SeqSet::default();
        for [first, last] in ranges {
            for seq in *first..=*last {
                set.insert(seq);
            }
        }
        set
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
    fn seq_sets_round_trip_as_ranges() {
        let mut a = SeqSet::default();
        for s in [0, 1, 2, 3, 7, 64, 65, 200] {
            a.insert(s);
        }
        assert_eq!(a.ranges(), vec![[0, 3], [7, 7], [64, 65], [200, 200]]);
        assert_eq!(SeqSet::from_ranges(&a.ranges()), a);
    }

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
