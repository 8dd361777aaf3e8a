//! The native-handle registry's events of every handle (`NativeBridge.handles*`), typed because
//! they run on the application's thread at each creation and end; what is told once per kind,
//! thread, site or batch is a job ([`super::jobs`]).

use super::BridgeError;
use crate::handles::site_keys::{self, StackSite};
use crate::handles::{registry, End};
use jni::sys::{jboolean, jint, jlong};

fn id(value: jlong, what: &str) -> Result<u64, BridgeError> {
    u64::try_from(value)
        .map_err(|_| BridgeError::InvalidArgument(format!("{what} must not be negative")))
}

fn small_id(value: jint, what: &str) -> Result<u32, BridgeError> {
    u32::try_from(value)
        .map_err(|_| BridgeError::InvalidArgument(format!("{what} must not be negative")))
}

export! {
    /// The site id of the calling thread's stack if it was seen before; -1 if new (walk it in Java,
    /// then call `handlesInternSiteOfStack`); -2 if this JVM offers no JVMTI.
    fn handlesSiteOfStack(env) -> jint {
        Ok(match site_keys::site_of_current_stack(env) {
            StackSite::Known(site) => site as jint,
            StackSite::New => -1,
            StackSite::Unavailable => -2,
        })
    }
}

export! {
    fn handlesCreated(_, kind: jint, address: jlong, site: jint, thread: jint) -> jlong {
        let id = registry().created(
            small_id(kind, "kind")?,
            address as u64,
            small_id(site, "site")?,
            small_id(thread, "thread")?,
        );
        Ok(id as jlong)
    }
}

export! {
    fn handlesEnded(_, handle: jlong, how: jint) -> jboolean {
        let how = End::from_code(how).ok_or_else(|| {
            BridgeError::InvalidArgument(format!(
                "end code {how} is not 0 (closed), 1 (transferred), 2 (leaked) or 3 (leaked, \
                 freed by the finalizer)"
            ))
        })?;
        Ok(registry().ended(id(handle, "handle")?, how) as jboolean)
    }
}

export! {
    fn handlesReassign(_, handle: jlong, site: jint, thread: jint, pooled: jboolean) {
        registry().reassign(
            id(handle, "handle")?,
            small_id(site, "site")?,
            small_id(thread, "thread")?,
            pooled != 0,
        );
        Ok(())
    }
}

export! {
    fn handlesSetCapacity(_, handle: jlong, bytes: jlong) {
        registry().set_capacity(id(handle, "handle")?, id(bytes, "capacity")?);
        Ok(())
    }
}

export! {
    fn handlesRetain(_, holder: jlong, cache: jlong) {
        registry().retain(id(holder, "holder")?, id(cache, "cache")?);
        Ok(())
    }
}

export! {
    fn handlesInherit(_, target: jlong, source: jlong) {
        registry().inherit(id(target, "target")?, id(source, "source")?);
        Ok(())
    }
}
