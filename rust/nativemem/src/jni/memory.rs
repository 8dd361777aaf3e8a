//! The memory watch's sample, the one memory reading that is not a job ([`super::jobs`]): it runs
//! every second and makes no garbage.

use super::BridgeError;
use crate::native_view::NativeViewError;
use crate::watch_sample;
use jni::objects::JLongArray;

impl From<NativeViewError> for BridgeError {
    fn from(e: NativeViewError) -> Self {
        match e {
            NativeViewError::Process(e) => e.into(),
            NativeViewError::Allocator(e) => e.into(),
        }
    }
}

export! {
    /// One sample of the memory watch into `out` (at least `watch_sample::SLOTS` longs, -1 where
    /// unknown): no JSON and no Java object, so a sample every second makes no garbage.
    fn watchSample(env, out: JLongArray<'l>) {
        if out.is_null() || (env.get_array_length(&out)? as usize) < watch_sample::SLOTS {
            return Err(BridgeError::InvalidArgument(format!(
                "out must hold at least {} longs",
                watch_sample::SLOTS
            )));
        }
        let sample = watch_sample::read()?;
        env.set_long_array_region(&out, 0, &sample)?;
        Ok(())
    }
}
