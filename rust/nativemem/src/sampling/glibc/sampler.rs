//! Which allocations are sampled: a Poisson process over the bytes each thread allocates, as
//! jemalloc's `lg_prof_sample` (the gap to the next sample is drawn from an exponential
//! distribution with the interval as mean), so an allocation of X bytes is sampled with
//! probability 1 - exp(-X / interval) and jeprof's unbiasing applies unchanged.
//!
//! Per thread, in thread-local cells without destructors (no registration, no lock): the bytes
//! left before the next sample, the random state, and whether the thread is inside the engine
//! already (an allocation made while recording a sample is never sampled).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Mean bytes between samples; 1 samples every allocation.
static INTERVAL: AtomicU64 = AtomicU64::new(DEFAULT_INTERVAL);
/// Bumped when the interval changes: each thread redraws its gap on its next allocation.
static GENERATION: AtomicU64 = AtomicU64::new(1);

/// jemalloc's default, `lg_prof_sample:19`.
pub const DEFAULT_INTERVAL: u64 = 512 * 1024;

thread_local! {
    static LEFT: Cell<i64> = const { Cell::new(0) };
    static SEEN_GENERATION: Cell<u64> = const { Cell::new(0) };
    static RANDOM: Cell<u64> = const { Cell::new(0) };
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

pub fn set_interval(bytes: u64) {
    INTERVAL.store(bytes.max(1), Ordering::Release);
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

pub fn interval() -> u64 {
    INTERVAL.load(Ordering::Acquire)
}

/// Counts `size` bytes against the calling thread's gap; true when this allocation is sampled.
/// Never true for a thread inside the engine.
#[inline]
pub fn take(size: usize) -> bool {
    take_at(size, &INTERVAL, &GENERATION)
}

#[inline]
fn take_at(size: usize, interval: &AtomicU64, generation: &AtomicU64) -> bool {
    LEFT.with(|left| {
        let now = left.get() - size as i64;
        if now > 0 {
            left.set(now);
            return false;
        }
        if INSIDE.with(Cell::get) {
            return false;
        }
        let generation = generation.load(Ordering::Relaxed);
        let fresh = SEEN_GENERATION.with(|seen| seen.replace(generation)) != generation;
        let interval = interval.load(Ordering::Acquire);
        left.set(next_gap(interval));
        // A thread's first allocation after a (re)start only starts its count: it was not
        // sampled by a process that began counting just now.
        !fresh || interval <= 1
    })
}

/// Marks the calling thread as inside the engine until the guard is dropped; None when it is
/// already (an allocation made by the engine's own work).
pub struct Inside(());

impl Inside {
    pub fn enter() -> Option<Inside> {
        // `then`, not `then_some`: a guard built and dropped would clear the mark.
        INSIDE.with(|inside| (!inside.replace(true)).then(|| Inside(())))
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|inside| inside.set(false));
    }
}

/// An exponentially distributed gap with mean `interval`, at least 1 byte.
fn next_gap(interval: u64) -> i64 {
    if interval <= 1 {
        return 1;
    }
    let u = uniform();
    // -ln(u) * mean, with u in (0, 1]: never infinite.
    let gap = -(u.ln()) * interval as f64;
    (gap as i64).clamp(1, i64::MAX / 2)
}

/// A uniform draw in (0, 1] from the thread's xorshift64* state, seeded from the thread.
fn uniform() -> f64 {
    RANDOM.with(|state| {
        let mut x = state.get();
        if x == 0 {
            let here = &x as *const u64 as u64;
            // SAFETY: pthread_self has no preconditions.
            let thread = unsafe { libc::pthread_self() } as u64;
            x = (here ^ thread.rotate_left(17) ^ GENERATION.load(Ordering::Relaxed))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        state.set(x);
        let bits = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (bits as f64 + 1.0) / (1u64 << 53) as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_exponential_with_the_interval_as_mean() {
        let n = 200_000;
        let mean = (0..n).map(|_| next_gap(4096) as f64).sum::<f64>() / n as f64;
        assert!((mean - 4096.0).abs() < 4096.0 * 0.02, "mean {mean}");
        // P(gap > mean) = e^-1 for an exponential distribution.
        let above = (0..n).filter(|_| next_gap(4096) > 4096).count() as f64 / n as f64;
        assert!((above - (-1.0f64).exp()).abs() < 0.01, "above {above}");
    }

    #[test]
    fn sampled_share_matches_the_poisson_probability() {
        // An allocation of X bytes is sampled with probability 1 - exp(-X / interval).
        let handle = std::thread::spawn(|| {
            // Its own interval and generation: other tests may change the process's.
            let (interval, generation) = (AtomicU64::new(8192), AtomicU64::new(u64::MAX));
            let n = 400_000;
            let sampled = (0..n)
                .filter(|_| take_at(1024, &interval, &generation))
                .count() as f64
                / n as f64;
            let expected = 1.0 - (-1024.0f64 / 8192.0).exp();
            (sampled, expected)
        });
        let (sampled, expected) = handle.join().unwrap();
        assert!(
            (sampled - expected).abs() < expected * 0.03,
            "{sampled} vs {expected}"
        );
    }

    #[test]
    fn a_thread_inside_the_engine_is_never_sampled() {
        std::thread::spawn(|| {
            let inside = Inside::enter().unwrap();
            assert!(Inside::enter().is_none());
            assert!((0..10_000).all(|_| !take(1 << 20)));
            drop(inside);
            assert!(Inside::enter().is_some());
        })
        .join()
        .unwrap();
    }
}
