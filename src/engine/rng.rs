//! Seeded random streams, one per purpose. A run of a (point, replicate) pair draws arrivals, service times,
//! network delays, faults and clocks from the world's streams, seeded by the master seed, the replicate and the
//! parameters that describe the system and workload; and backoff jitter and admission from the policy's streams,
//! seeded by every parameter. Points that differ only in client policy meet the same world in the same replicate
//! (common random numbers), and no seed depends on threads, iteration order, or how long a run lasts.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every simulation uses. rand_xoshiro promises a stable stream for a given seed (unlike
/// `StdRng`/`SmallRng`), so results reproduce across versions and platforms.
pub type SimRng = Xoshiro256PlusPlus;

/// A generator seeded with `seed` (expanded to 256 bits by SplitMix64, as `seed_from_u64` documents).
pub fn sim_rng(seed: u64) -> SimRng {
    SimRng::seed_from_u64(seed)
}

/// SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64-bit FNV-1a of `bytes`: fixed by its specification, so it never changes between builds (unlike
/// `std::hash`), which makes it fit for deriving seeds from parameter text.
pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The seed of one replicate of one sweep point.
pub fn replicate_seed(master_seed: u64, point_hash: u64, replicate: u32) -> u64 {
    mix64(mix64(master_seed ^ mix64(point_hash)) ^ u64::from(replicate))
}

/// What a random stream is for. The world's streams describe the system and its workload, the policy's the
/// clients' choices. Each is drawn in its own order: a policy that sends more attempts draws more service times,
/// delays and faults, which shifts those streams for later attempts, but never the arrivals, think times,
/// clocks or timers, which are drawn per request, client or host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// New requests and what arrives (a poison message) (world).
    Arrivals,
    /// Closed clients' think times: the seed of counter-based draws, one per client and request (world).
    Think,
    /// Service times (world).
    Service,
    /// Service times of hedged copies, so that hedging does not shift the first copies' (world).
    Hedges,
    /// Network delays (world).
    Network,
    /// Failed calls and the server's error answers (world).
    Faults,
    /// Hosts' clock skews (world).
    Clocks,
    /// Periodic jobs' timers: systemd's per-host perturbation and RandomizedDelaySec draws (world).
    Timers,
    /// Backoff jitter (policy).
    Jitter,
    /// Clock-aligned retries' offsets, per client or per attempt (policy).
    Offsets,
    /// Uniform draws handed to a probabilistic retry limiter (policy).
    Admission,
}

impl Stream {
    /// Whether the stream is seeded by the world's parameters only.
    pub const fn is_world(self) -> bool {
        !matches!(self, Stream::Jitter | Stream::Offsets | Stream::Admission)
    }

    /// Tells the streams of one run apart: eight ASCII letters.
    const fn tag(self) -> u64 {
        u64::from_be_bytes(*match self {
            Stream::Arrivals => b"arrivals",
            Stream::Think => b"think___",
            Stream::Service => b"service_",
            Stream::Hedges => b"hedges__",
            Stream::Network => b"network_",
            Stream::Faults => b"faults__",
            Stream::Clocks => b"clocks__",
            Stream::Timers => b"timers__",
            Stream::Jitter => b"jitter__",
            Stream::Offsets => b"offsets_",
            Stream::Admission => b"admissio",
        })
    }
}

/// The two seeds of one run: the world's and the policy's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSeeds {
    /// From the master seed, the replicate and the system and workload parameters.
    pub world: u64,
    /// From the master seed, the replicate and every parameter that enters a seed: the run's seed in runs.csv.
    pub policy: u64,
}

impl RunSeeds {
    /// The seeds of `replicate` of a point whose world and policy parameters hash to the given values.
    pub fn of_replicate(master_seed: u64, world_hash: u64, policy_hash: u64, replicate: u32) -> RunSeeds {
        RunSeeds {
            world: replicate_seed(master_seed, world_hash, replicate),
            policy: replicate_seed(master_seed, policy_hash, replicate),
        }
    }

    /// One seed for both sides (tests, and runs outside a sweep).
    pub const fn single(seed: u64) -> RunSeeds {
        RunSeeds { world: seed, policy: seed }
    }

    /// The seed of `stream`: SplitMix64's mixer over the side's seed and the stream's tag.
    pub fn seed_of(self, stream: Stream) -> u64 {
        let side = if stream.is_world() { self.world } else { self.policy };
        mix64(side ^ stream.tag())
    }

    /// A generator for `stream`.
    pub fn stream(self, stream: Stream) -> SimRng {
        sim_rng(self.seed_of(stream))
    }
}

/// One generator per [`Stream`], for a run to draw from by purpose.
#[derive(Clone)]
pub struct Streams {
    pub arrivals: SimRng,
    pub service: SimRng,
    pub hedges: SimRng,
    pub network: SimRng,
    pub faults: SimRng,
    pub clocks: SimRng,
    pub timers: SimRng,
    pub jitter: SimRng,
    pub offsets: SimRng,
    pub admission: SimRng,
}

impl Streams {
    pub fn new(seeds: RunSeeds) -> Streams {
        Streams {
            arrivals: seeds.stream(Stream::Arrivals),
            service: seeds.stream(Stream::Service),
            hedges: seeds.stream(Stream::Hedges),
            network: seeds.stream(Stream::Network),
            faults: seeds.stream(Stream::Faults),
            clocks: seeds.stream(Stream::Clocks),
            timers: seeds.stream(Stream::Timers),
            jitter: seeds.stream(Stream::Jitter),
            offsets: seeds.stream(Stream::Offsets),
            admission: seeds.stream(Stream::Admission),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn fnv1a_matches_its_published_test_vectors() {
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn seeds_differ_by_point_and_replicate_and_repeat_exactly() {
        let a = replicate_seed(1, stable_hash(b"clients=10"), 0);
        assert_eq!(a, replicate_seed(1, stable_hash(b"clients=10"), 0));
        assert_ne!(a, replicate_seed(1, stable_hash(b"clients=10"), 1));
        assert_ne!(a, replicate_seed(1, stable_hash(b"clients=20"), 0));
        assert_ne!(a, replicate_seed(2, stable_hash(b"clients=10"), 0));
        let first: Vec<u64> = (0..4).map(|_| sim_rng(a).random()).collect();
        let mut rng = sim_rng(a);
        assert_eq!(first[0], rng.random::<u64>());
    }

    #[test]
    fn streams_follow_their_side_and_differ_from_each_other() {
        let a = RunSeeds { world: 1, policy: 2 };
        let b = RunSeeds { world: 1, policy: 3 };
        let first = |seeds: RunSeeds, stream| seeds.stream(stream).random::<u64>();
        assert_eq!(first(a, Stream::Service), first(b, Stream::Service));
        assert_ne!(first(a, Stream::Jitter), first(b, Stream::Jitter));
        assert_ne!(first(a, Stream::Service), first(a, Stream::Network));
        assert_ne!(first(a, Stream::Jitter), first(a, Stream::Admission));
    }
}
