//! The bytes of a point file: one point's finished runs, stored losslessly so a merge aggregates exactly the
//! numbers the unsharded run would have (CSV rounding happens only after aggregation, so the raw values must
//! survive: every f64 round-trips bit for bit).
//!
//! Layout (integers are LEB128 varints unless marked): magic `RLPOINT2`; the study fingerprint (32 bytes); point
//! index; point hash (u64 LE); run count; per run: replicate, seed (u64 LE), flags (bit 0 truncated, bit 1 has
//! latency), events, metrics, latency histogram, highlights; then the point's timelines summed by outcome (three
//! groups of: runs, length, and each sum as its high and low 64 bits); last, the SHA-256 of everything before it.
//! A metric is `2·v` for a non-negative whole `v < 2^53`, else `1` followed by the f64's bits (u64 LE); a sum of
//! counts has low bits 0, so it takes one byte plus its count's.

use sha2::{Digest, Sha256};

use crate::metrics::SparseHistogram;
use crate::model::RunOutput;
use crate::sweep::{PointTimelines, Run, TimelineSum};
use crate::time::SimTime;

const MAGIC: &[u8; 8] = b"RLPOINT2";
const DIGEST_BYTES: usize = 32;
const TRUNCATED: u8 = 1;
const HAS_LATENCY: u8 = 2;
const WHOLE_LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53

/// One point's runs as stored by one shard.
#[derive(Debug)]
pub struct PointRecord {
    /// [`super::Study::fingerprint`] of the study the runs belong to.
    pub fingerprint: [u8; 32],
    pub point: usize,
    pub point_hash: u64,
    /// Ordered by replicate; `Run::point` is `point`; their timelines are in `timelines`.
    pub runs: Vec<Run>,
    pub timelines: PointTimelines,
}

/// Encodes `runs` (all of `point`, their timelines summed in `timelines`) with their study's fingerprint.
pub fn encode(
    fingerprint: &[u8; 32],
    point: usize,
    point_hash: u64,
    runs: &[Run],
    timelines: &PointTimelines,
) -> Vec<u8> {
    let mut out =
        Vec::with_capacity(256 + 3 * timelines.by_outcome.iter().map(|group| group.sums.len()).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(fingerprint);
    put_varint(&mut out, point as u64);
    out.extend_from_slice(&point_hash.to_le_bytes());
    put_varint(&mut out, runs.len() as u64);
    for run in runs {
        let output = &run.output;
        put_varint(&mut out, u64::from(run.replicate));
        out.extend_from_slice(&run.seed.to_le_bytes());
        let flags =
            if output.truncated { TRUNCATED } else { 0 } | if output.latency.is_some() { HAS_LATENCY } else { 0 };
        out.push(flags);
        put_varint(&mut out, output.events);
        put_values(&mut out, &output.metrics);
        if let Some(latency) = &output.latency {
            let (entries, total, sum_nanos) = latency.parts();
            put_varint(&mut out, entries.len() as u64);
            for &(bucket, count) in entries {
                put_varint(&mut out, u64::from(bucket));
                put_varint(&mut out, count);
            }
            put_varint(&mut out, total);
            out.extend_from_slice(&sum_nanos.to_le_bytes());
        }
        put_varint(&mut out, output.highlights.len() as u64);
        for (start, end) in &output.highlights {
            put_varint(&mut out, start.as_nanos());
            put_varint(&mut out, end.as_nanos());
        }
    }
    for group in &timelines.by_outcome {
        put_varint(&mut out, u64::from(group.runs));
        put_varint(&mut out, group.sums.len() as u64);
        for &sum in &group.sums {
            put_varint(&mut out, ((sum as u128) >> 64) as u64);
            put_varint(&mut out, sum as u64);
        }
    }
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

/// Decodes a point file, checking its magic and checksum; the message says what is wrong.
pub fn decode(bytes: &[u8]) -> Result<PointRecord, String> {
    if bytes.len() < MAGIC.len() + 2 * DIGEST_BYTES || &bytes[..MAGIC.len()] != MAGIC {
        return Err("not a retrylab point file".into());
    }
    let (body, digest) = bytes.split_at(bytes.len() - DIGEST_BYTES);
    if Sha256::digest(body).as_slice() != digest {
        return Err("damaged: its checksum does not match its contents".into());
    }
    let mut reader = Reader { bytes: &body[MAGIC.len()..] };
    let fingerprint: [u8; 32] = reader.take(DIGEST_BYTES)?.try_into().map_err(|_| "truncated")?;
    let point = reader.count()?;
    let point_hash = reader.u64()?;
    let run_count = reader.count()?;
    let mut runs = Vec::with_capacity(run_count.min(1 << 16));
    for _ in 0..run_count {
        let replicate = u32::try_from(reader.varint()?).map_err(|_| "replicate out of range")?;
        let seed = reader.u64()?;
        let flags = reader.take(1)?[0];
        let events = reader.varint()?;
        let metrics = reader.values()?;
        let latency = if flags & HAS_LATENCY != 0 {
            let entries = (0..reader.count()?)
                .map(|_| Ok((u32::try_from(reader.varint()?).map_err(|_| "bucket out of range")?, reader.varint()?)))
                .collect::<Result<Vec<_>, String>>()?;
            let total = reader.varint()?;
            let sum_nanos = u128::from_le_bytes(reader.take(16)?.try_into().map_err(|_| "truncated")?);
            Some(SparseHistogram::from_parts(entries, total, sum_nanos).ok_or("inconsistent latency histogram")?)
        } else {
            None
        };
        let highlights = (0..reader.count()?)
            .map(|_| Ok((SimTime::from_nanos(reader.varint()?), SimTime::from_nanos(reader.varint()?))))
            .collect::<Result<Vec<_>, String>>()?;
        let output = RunOutput {
            metrics,
            timeline: Vec::new(),
            events,
            truncated: flags & TRUNCATED != 0,
            latency,
            highlights,
            spans: Vec::new(),
        };
        runs.push(Run { point, replicate, seed, output });
    }
    let mut timelines = PointTimelines::default();
    for group in &mut timelines.by_outcome {
        let runs = u32::try_from(reader.varint()?).map_err(|_| "run count out of range")?;
        let sums = (0..reader.count()?)
            .map(|_| Ok((u128::from(reader.varint()?) << 64 | u128::from(reader.varint()?)) as i128))
            .collect::<Result<Vec<_>, String>>()?;
        *group = TimelineSum { runs, sums };
    }
    if !reader.bytes.is_empty() {
        return Err("has bytes after its timelines".into());
    }
    Ok(PointRecord { fingerprint, point, point_hash, runs, timelines })
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_values(out: &mut Vec<u8>, values: &[f64]) {
    put_varint(out, values.len() as u64);
    for &value in values {
        if value >= 0.0 && value.is_sign_positive() && value < WHOLE_LIMIT && value == value.trunc() {
            put_varint(out, (value as u64) << 1);
        } else {
            put_varint(out, 1);
            out.extend_from_slice(&value.to_bits().to_le_bytes());
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.bytes.len() < n {
            return Err("truncated".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| "truncated")?))
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number is too long".into())
    }

    /// A length, bounded by the bytes left so a damaged length cannot ask for a huge allocation.
    fn count(&mut self) -> Result<usize, String> {
        let count = self.varint()?;
        usize::try_from(count).ok().filter(|&count| count <= self.bytes.len()).ok_or_else(|| "bad length".into())
    }

    fn values(&mut self) -> Result<Vec<f64>, String> {
        (0..self.count()?)
            .map(|_| {
                let tagged = self.varint()?;
                Ok(if tagged & 1 == 0 { (tagged >> 1) as f64 } else { f64::from_bits(self.u64()?) })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LatencyHistogram;
    use crate::time::SimDuration;

    fn sample_timelines() -> PointTimelines {
        let mut timelines = PointTimelines::default();
        timelines.by_outcome[0] = TimelineSum { runs: 2, sums: vec![0, 3 << 64, -1, i128::MAX, i128::MIN, 1] };
        timelines.by_outcome[2] = TimelineSum { runs: 1, sums: Vec::new() };
        timelines
    }

    fn sample_runs() -> Vec<Run> {
        let mut histogram = LatencyHistogram::default();
        for ms in [1, 5, 5, 120, 40_000] {
            histogram.record(SimDuration::from_millis(ms));
        }
        let odd_values = vec![0.0, -0.0, 1.0, 0.1 + 0.2, -3.0, f64::NAN, f64::INFINITY, 1e300, 9_007_199_254_740_993.0];
        vec![
            Run {
                point: 7,
                replicate: 2,
                seed: u64::MAX - 5,
                output: RunOutput {
                    metrics: odd_values.clone(),
                    timeline: Vec::new(),
                    events: 123_456_789,
                    truncated: true,
                    latency: Some(histogram.sparse()),
                    highlights: vec![(SimTime::from_nanos(2_000_000_000), SimTime::from_nanos(5_000_000_000))],
                    spans: Vec::new(),
                },
            },
            Run {
                point: 7,
                replicate: 5,
                seed: 0,
                output: RunOutput {
                    metrics: odd_values,
                    timeline: Vec::new(),
                    events: 0,
                    truncated: false,
                    latency: None,
                    highlights: Vec::new(),
                    spans: Vec::new(),
                },
            },
        ]
    }

    #[test]
    fn every_value_round_trips_bit_for_bit() {
        let runs = sample_runs();
        let bytes = encode(&[9; 32], 7, 0xdead_beef_0123_4567, &runs, &sample_timelines());
        let record = decode(&bytes).unwrap();
        assert_eq!(record.timelines, sample_timelines());
        assert_eq!((record.fingerprint, record.point, record.point_hash), ([9; 32], 7, 0xdead_beef_0123_4567));
        assert_eq!(record.runs.len(), runs.len());
        for (got, want) in record.runs.iter().zip(&runs) {
            assert_eq!((got.point, got.replicate, got.seed), (want.point, want.replicate, want.seed));
            let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.output.metrics), bits(&want.output.metrics));
            assert_eq!(got.output.events, want.output.events);
            assert_eq!(got.output.truncated, want.output.truncated);
            assert_eq!(got.output.latency, want.output.latency);
            assert_eq!(got.output.highlights, want.output.highlights);
        }
    }

    #[test]
    fn summed_counts_take_two_bytes_each() {
        let run = sample_runs().remove(1);
        let mut timelines = PointTimelines::default();
        let empty = encode(&[0; 32], 0, 0, std::slice::from_ref(&run), &timelines).len();
        let mut output = run.output.clone();
        output.timeline = vec![3.0; 1000];
        timelines.add(&output, None);
        // The length takes one byte more; each sum of counts, two (its count, and low bits 0).
        assert_eq!(encode(&[0; 32], 0, 0, std::slice::from_ref(&run), &timelines).len(), empty + 2000 + 1);
    }

    #[test]
    fn damage_is_detected_not_misread() {
        let bytes = encode(&[1; 32], 3, 4, &sample_runs(), &sample_timelines());
        for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        flipped[bytes.len() / 2] ^= 0x10;
        assert!(decode(&flipped).unwrap_err().contains("checksum"));
        assert!(decode(b"a,b\n1,2\n").unwrap_err().contains("not a retrylab point file"));
    }
}
