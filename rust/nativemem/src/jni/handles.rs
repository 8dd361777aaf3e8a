//! Exports for the native-handle registry (`NativeBridge.handles*`).

use super::exports::{from_java as text, json_to_java};
use super::stack_keys::{self, StackSite};
use super::{guard, BridgeError};
use crate::handles::{registry, End};
use jni::objects::{JClass, JString};
use jni::sys::{jboolean, jint, jlong, jstring};
use jni::JNIEnv;

fn id(value: jlong, what: &str) -> Result<u64, BridgeError> {
    u64::try_from(value)
        .map_err(|_| BridgeError::InvalidArgument(format!("{what} must not be negative")))
}

fn small_id(value: jint, what: &str) -> Result<u32, BridgeError> {
    u32::try_from(value)
        .map_err(|_| BridgeError::InvalidArgument(format!("{what} must not be negative")))
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesInternKind<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kind: JString<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let kind = text(env, &kind, "kind")?;
        Ok(registry().intern_kind(&kind) as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesInternSite<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    stack: JString<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let stack = text(env, &stack, "stack")?;
        Ok(registry().intern_site(&stack) as jint)
    })
}

/// The site id of the calling thread's stack if it was seen before; -1 if new (walk it in Java,
/// then call `handlesInternSiteOfStack`); -2 if this JVM offers no JVMTI.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesSiteOfStack<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jint {
    guard(&mut env, -2, |env| {
        Ok(match stack_keys::site_of_current_stack(env) {
            StackSite::Known(site) => site as jint,
            StackSite::New => -1,
            StackSite::Unavailable => -2,
        })
    })
}

/// Interns `stack` (the text of the calling thread's stack) and remembers it for this stack.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesInternSiteOfStack<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    stack: JString<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let stack = text(env, &stack, "stack")?;
        let site = registry().intern_site(&stack);
        stack_keys::bind(env, site);
        Ok(site as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesInternThread<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
) -> jint {
    guard(&mut env, 0, |env| {
        let name = text(env, &name, "thread name")?;
        Ok(registry().intern_thread(&name) as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesSiteText<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    site: jint,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let text = registry().site_text(small_id(site, "site")?);
        Ok(env.new_string(text)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesCreated<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kind: jint,
    address: jlong,
    site: jint,
    thread: jint,
) -> jlong {
    guard(&mut env, 0, |_| {
        let id = registry().created(
            small_id(kind, "kind")?,
            address as u64,
            small_id(site, "site")?,
            small_id(thread, "thread")?,
        );
        Ok(id as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesEnded<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    how: jint,
) -> jboolean {
    guard(&mut env, 0, |_| {
        let how = End::from_code(how).ok_or_else(|| {
            BridgeError::InvalidArgument(format!(
                "end code {how} is not 0 (closed), 1 (transferred), 2 (leaked) or 3 (leaked, \
                 freed by the finalizer)"
            ))
        })?;
        Ok(registry().ended(id(handle, "handle")?, how) as jboolean)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesCounted<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    kind: jint,
    site: jint,
    created: jlong,
    closed: jlong,
    leaked: jlong,
) {
    guard(&mut env, (), |_| {
        registry().counted(
            small_id(kind, "kind")?,
            small_id(site, "site")?,
            id(created, "created")?,
            id(closed, "closed")?,
            id(leaked, "leaked")?,
        );
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesReassign<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    site: jint,
    thread: jint,
    pooled: jboolean,
) {
    guard(&mut env, (), |_| {
        registry().reassign(
            id(handle, "handle")?,
            small_id(site, "site")?,
            small_id(thread, "thread")?,
            pooled != 0,
        );
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesLeakedIntoPool<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        registry().leaked_into_pool(id(handle, "handle")?);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesFinalized<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    kind: jint,
    site: jint,
) {
    guard(&mut env, (), |_| {
        registry().finalized(
            id(handle, "handle")?,
            small_id(kind, "kind")?,
            small_id(site, "site")?,
        );
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesSetCapacity<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    bytes: jlong,
) {
    guard(&mut env, (), |_| {
        registry().set_capacity(id(handle, "handle")?, id(bytes, "capacity")?);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesRetain<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    holder: jlong,
    cache: jlong,
) {
    guard(&mut env, (), |_| {
        registry().retain(id(holder, "holder")?, id(cache, "cache")?);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesInherit<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    target: jlong,
    source: jlong,
) {
    guard(&mut env, (), |_| {
        registry().inherit(id(target, "target")?, id(source, "source")?);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_handlesReportJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        json_to_java(env, &registry().report())
    })
}
