//! JNI exports for heap profiles: `dev.nativemem.HeapProfile` through `NativeBridge`.

use super::exports::{from_java, json_to_java, to_java};
use super::{guard, BridgeError};
use crate::profile::{self, Analysis, Format};
use jni::objects::{JClass, JString};
use jni::sys::{jint, jstring};
use jni::JNIEnv;
use std::path::PathBuf;

fn path_arg(env: &mut JNIEnv, value: &JString, what: &str) -> Result<PathBuf, BridgeError> {
    from_java(env, value, what).map(PathBuf::from)
}

/// The dump, analysed alone or against a base dump (`base` may be null).
fn open(env: &mut JNIEnv, dump: &JString, base: &JString) -> Result<Analysis, BridgeError> {
    let dump = path_arg(env, dump, "dump")?;
    let base = match base.is_null() {
        true => None,
        false => Some(path_arg(env, base, "base")?),
    };
    Ok(Analysis::open(&dump, base.as_deref())?)
}

fn format_arg(env: &mut JNIEnv, format: &JString) -> Result<Format, BridgeError> {
    Ok(from_java(env, format, "format")?.parse()?)
}

fn top_arg(top: jint) -> Result<usize, BridgeError> {
    usize::try_from(top)
        .ok()
        .filter(|&t| t > 0)
        .ok_or_else(|| BridgeError::InvalidArgument(format!("top must be positive, got {top}")))
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_profileSummaryJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    dump: JString<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let dump = path_arg(env, &dump, "dump")?;
        json_to_java(env, &profile::summary(&dump)?)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_profileReportJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    dump: JString<'l>,
    base: JString<'l>,
    top: jint,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let top = top_arg(top)?;
        let report = open(env, &dump, &base)?.report(top);
        json_to_java(env, &report)
    })
}

/// Text and collapsed output, returned as a string.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_profileRender<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    dump: JString<'l>,
    base: JString<'l>,
    format: JString<'l>,
    top: jint,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let format = format_arg(env, &format)?;
        if matches!(format, Format::Svg | Format::Pprof) {
            return Err(BridgeError::InvalidArgument(
                "svg and pprof are binary or large: write them to a file".into(),
            ));
        }
        let bytes = open(env, &dump, &base)?.render(format, top_arg(top)?)?;
        to_java(env, &String::from_utf8_lossy(&bytes))
    })
}

/// Any format, written to a new file (0600, never replacing one).
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_profileWrite<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    dump: JString<'l>,
    base: JString<'l>,
    format: JString<'l>,
    top: jint,
    out: JString<'l>,
) {
    guard(&mut env, (), |env| {
        let format = format_arg(env, &format)?;
        let out = path_arg(env, &out, "output file")?;
        Ok(open(env, &dump, &base)?.write(format, top_arg(top)?, &out)?)
    })
}
