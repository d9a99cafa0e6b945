//! Closed-loop load: N callers, each sending its next operation as soon as the last one is
//! answered, for a while or for a number of operations; and what the server process uses.

use crate::driver::Error;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When a run stops.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// Start no operation after this long.
    After(Duration),
    /// Run exactly this many operations.
    Count(u64),
    /// Run this many operations, but start none after this long.
    CountWithin(u64, Duration),
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Operations completed.
    pub ops: u64,
    /// JSON-RPC round trips they took.
    pub trips: u64,
    /// From the first operation sent to the last answered.
    pub elapsed: Duration,
    /// Each operation's latency in nanoseconds, sorted.
    pub latencies: Vec<u64>,
    /// For a run whose server shares the bench's process: the CPU time the process's threads ran
    /// during it (nanoseconds) and how often they were switched out ([`cpu_and_switches`]).
    pub process: Option<(u64, u64)>,
}

impl Sample {
    /// Operations per second.
    pub fn per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }

    /// Latency at quantile `q` (0..=1), in microseconds.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        self.latencies[i] as f64 / 1e3
    }

    /// Round trips per operation.
    pub fn trips_per_op(&self) -> f64 {
        self.trips as f64 / self.ops as f64
    }

    /// Merges several runs: counts and times add up, latencies pool.
    pub fn merge(samples: &[Sample]) -> Sample {
        let mut out = Sample::default();
        for s in samples {
            out.ops += s.ops;
            out.trips += s.trips;
            out.elapsed += s.elapsed;
            out.latencies.extend_from_slice(&s.latencies);
        }
        // The process's figures add up when every run has them.
        out.process = samples
            .iter()
            .try_fold((0, 0), |(cpu, switches), s| {
                s.process.map(|(c, n)| (cpu + c, switches + n))
            })
            .filter(|_| !samples.is_empty());
        out.latencies.sort_unstable();
        out
    }
}

/// Runs `op(i)` from `concurrency` callers until `stop`. `op` returns the round trips it took.
pub async fn closed_loop<F, Fut>(concurrency: usize, stop: Stop, op: F) -> Result<Sample, Error>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<u32, Error>> + Send + 'static,
{
    let op = Arc::new(op);
    let tickets = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let op = op.clone();
        let tickets = tickets.clone();
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut trips = 0u64;
            loop {
                let i = tickets.fetch_add(1, Ordering::Relaxed);
                match stop {
                    Stop::After(d) if start.elapsed() >= d => break,
                    Stop::Count(n) if i >= n => break,
                    Stop::CountWithin(n, d) if i >= n || start.elapsed() >= d => break,
                    _ => {}
                }
                let t = Instant::now();
                trips += u64::from(op(i).await?);
                latencies.push(t.elapsed().as_nanos() as u64);
            }
            Ok::<_, Error>((latencies, trips))
        }));
    }
    let mut sample = Sample::default();
    for w in workers {
        let (latencies, trips) = w.await??;
        sample.ops += latencies.len() as u64;
        sample.trips += trips;
        sample.latencies.extend(latencies);
    }
    sample.elapsed = start.elapsed();
    sample.latencies.sort_unstable();
    Ok(sample)
}

/// The median of some numbers (NaN for none).
pub fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// A process's resident memory now and at its peak, in KiB (`VmRSS`, `VmHWM`).
pub fn memory_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// The CPU time a process's threads have run (nanoseconds) and how often they were switched out
/// (voluntarily and not), summed over its threads alive now, from `/proc/PID/task/*/schedstat`
/// and `status`. Threads that have exited are not counted.
pub fn cpu_and_switches(pid: u32) -> Option<(u64, u64)> {
    let (mut cpu_ns, mut switches) = (0u64, 0u64);
    for thread in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let dir = thread.path();
        let Ok(sched) = std::fs::read_to_string(dir.join("schedstat")) else {
            continue;
        };
        cpu_ns += sched
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        switches += status
            .lines()
            .filter(|l| l.contains("ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    Some((cpu_ns, switches))
}

/// The bytes a process has written with `write` and its kin (`wchar` in `/proc/PID/io`): to its
/// pipes and sockets as well as to files.
pub fn written_bytes(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let line = io.lines().find(|l| l.starts_with("wchar:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A small deterministic generator (xorshift64*): the same task ids are read in every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ops: u64, process: Option<(u64, u64)>) -> Sample {
        Sample {
            ops,
            elapsed: Duration::from_millis(ops),
            process,
            ..Sample::default()
        }
    }

    #[test]
    fn merged_runs_add_the_process_figures_only_when_every_run_has_them() {
        let both = Sample::merge(&[run(10, Some((100, 3))), run(20, Some((50, 1)))]);
        assert_eq!((both.ops, both.process), (30, Some((150, 4))));
        let one_without = Sample::merge(&[run(10, Some((100, 3))), run(20, None)]);
        assert_eq!(one_without.process, None);
        let first_without = Sample::merge(&[run(10, None), run(20, Some((50, 1)))]);
        assert_eq!(first_without.process, None);
        assert_eq!(Sample::merge(&[]).process, None);
    }
}
