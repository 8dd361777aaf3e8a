//! Undoes jemalloc's sampling bias exactly as jeprof's `AdjustSamples` (heap_v2) does.
//!
//! jemalloc samples one allocation per `interval` bytes on average (a Poisson process), so an
//! allocation of size X is sampled with probability 1 - exp(-X / interval). Each stack's counts
//! are scaled by the inverse of that probability, using the stack's mean object size as X.

/// Unbiased `(objects, bytes)` for one stack's sampled counts.
pub fn unbias(objects: u64, bytes: u64, interval: u64) -> (f64, f64) {
    let (n, s) = (objects as f64, bytes as f64);
    // jeprof skips the adjustment for a zero interval and for stacks without objects; a stack
    // with objects but no bytes has nothing to scale (jeprof would divide by zero there).
    if interval == 0 || objects == 0 || bytes == 0 {
        return (n, s);
    }
    let ratio = (s / n) / interval as f64;
    let scale = 1.0 / (1.0 - (-ratio).exp());
    // Objects so small against the interval that exp() rounds to 1: jeprof would divide by
    // zero; the sampled counts are the only finite answer.
    if !scale.is_finite() {
        return (n, s);
    }
    (n * scale, s * scale)
}

#[cfg(test)]
mod tests {
    use super::unbias;

    #[test]
    fn large_objects_are_barely_scaled() {
        let (n, s) = unbias(1, 64 << 20, 512 << 10);
        assert_eq!((n, s), (1.0, (64 << 20) as f64));
    }

    #[test]
    fn small_objects_follow_the_poisson_inverse() {
        // One 1 KiB object sampled at 512 KiB: probability 1 - e^(-1/512).
        let (n, s) = unbias(1, 1024, 512 << 10);
        let p = 1.0 - (-1024.0f64 / (512.0 * 1024.0)).exp();
        assert!((n - 1.0 / p).abs() < 1e-9);
        assert!((s - 1024.0 / p).abs() < 1e-6);
    }

    #[test]
    fn degenerate_counts_stay_finite() {
        assert_eq!(unbias(0, 0, 1024), (0.0, 0.0));
        assert_eq!(unbias(3, 0, 1024), (3.0, 0.0));
        assert_eq!(unbias(3, 300, 0), (3.0, 300.0));
        assert_eq!(unbias(u64::MAX, 1, 1 << 40), (u64::MAX as f64, 1.0));
    }
}
