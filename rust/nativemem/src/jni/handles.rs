//! Exports for the native-handle registry (`NativeBridge.handles*`).

use super::exports::{from_java as text, json_to_java};
use super::BridgeError;
use crate::handles::site_keys::{self, StackSite};
use crate::handles::{registry, End};
use jni::objects::JString;
use jni::sys::{jboolean, jint, jlong, jstring};

fn id(value: jlong, what: &str) -> Result<u64, BridgeError> {
    u64::try_from(value)
        .map_err(|_| BridgeError::InvalidArgument(format!("{what} must not be negative")))
}

fn small_id(value: jint, what: &str) -> Result<u32, BridgeError> {
    u32::try_from(value)
        .map_err(|_| BridgeError::InvalidArgument(format!("{what} must not be negative")))
}

export! {
    fn handlesInternKind(env, kind: JString<'l>) -> jint {
        let kind = text(env, &kind, "kind")?;
        Ok(registry().intern_kind(&kind) as jint)
    }
}

export! {
    fn handlesInternSite(env, stack: JString<'l>) -> jint {
        let stack = text(env, &stack, "stack")?;
        Ok(registry().intern_site(&stack) as jint)
    }
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
    /// Interns `stack` (the text of the calling thread's stack) and remembers it for this stack.
    fn handlesInternSiteOfStack(env, stack: JString<'l>) -> jint {
        let stack = text(env, &stack, "stack")?;
        let site = registry().intern_site(&stack);
        site_keys::bind(env, site);
        Ok(site as jint)
    }
}

export! {
    fn handlesInternThread(env, name: JString<'l>) -> jint {
        let name = text(env, &name, "thread name")?;
        Ok(registry().intern_thread(&name) as jint)
    }
}

export! {
    fn handlesSiteText(env, site: jint) -> jstring {
        let text = registry().site_text(small_id(site, "site")?);
        Ok(env.new_string(text)?.into_raw())
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
    fn handlesCounted(_, kind: jint, site: jint, created: jlong, closed: jlong, leaked: jlong) {
        registry().counted(
            small_id(kind, "kind")?,
            small_id(site, "site")?,
            id(created, "created")?,
            id(closed, "closed")?,
            id(leaked, "leaked")?,
        );
        Ok(())
    }
}

export! {
    /// `pooled` of the handles counted at `site` rest now in the pool noted by `pool_site`.
    fn handlesCountedPooled(_, kind: jint, site: jint, pool_site: jint, pooled: jlong) {
        registry().counted_pooled(
            small_id(kind, "kind")?,
            small_id(site, "site")?,
            small_id(pool_site, "pool site")?,
            id(pooled, "pooled")?,
        );
        Ok(())
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
    fn handlesLeakedIntoPool(_, handle: jlong) {
        registry().leaked_into_pool(id(handle, "handle")?);
        Ok(())
    }
}

export! {
    fn handlesFinalized(_, handle: jlong, kind: jint, site: jint) {
        registry().finalized(
            id(handle, "handle")?,
            small_id(kind, "kind")?,
            small_id(site, "site")?,
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

export! {
    /// Counts per kind and cache capacities, for the memory breakdown: no sites or stacks.
    fn handlesSummaryJson(env) -> jstring {
        json_to_java(env, &registry().summary())
    }
}

export! {
    fn handlesReportJson(env) -> jstring {
        json_to_java(env, &registry().report())
    }
}
