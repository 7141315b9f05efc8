//! The per-thread generator that every format's plan runs in: the plan (a tree built once from the schema and the
//! field rules), the random source and the number of the next record (`seq(…)` and `{seq}` count from it).

/// A format's generation plan, which makes one record at a time.
pub trait Plan {
    /// One record before encoding: an Avro value, a JSON value, a Protobuf message.
    type Record;

    /// Record number `seq`, drawing from `rng`.
    fn generate(&mut self, rng: &mut fastrand::Rng, seq: u64) -> Self::Record;
}

/// A generator of random records for one schema (one per thread: it holds counters and an RNG).
pub struct Generator<P> {
    plan: P,
    rng: fastrand::Rng,
    seq: u64,
}

impl<P: Plan> Generator<P> {
    /// Starts at record 0 with a random seed.
    pub(super) fn of(plan: P) -> Generator<P> {
        Generator { plan, rng: fastrand::Rng::new(), seq: 0 }
    }

    /// Uses a fixed seed (tests: reproducible records).
    pub fn with_seed(mut self, seed: u64) -> Generator<P> {
        self.rng = fastrand::Rng::with_seed(seed);
        self
    }

    /// The next record.
    pub fn next_record(&mut self) -> P::Record {
        let seq = self.seq;
        self.seq += 1;
        self.plan.generate(&mut self.rng, seq)
    }
}
