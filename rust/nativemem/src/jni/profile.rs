//! JNI exports for heap profiles: `dev.nativemem.HeapProfile` and `ProfileRequest` through
//! `NativeBridge`.

use super::exports::{from_java, json_to_java};
use super::{guard, BridgeError};
use crate::profile::export::ExportRequest;
use crate::profile::{self, Request};
use jni::objects::{JClass, JString};
use jni::sys::{jbyteArray, jstring};
use jni::JNIEnv;
use std::path::PathBuf;

#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_profileSummaryJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    dump: JString<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let dump = PathBuf::from(from_java(env, &dump, "dump")?);
        json_to_java(env, &profile::summary(&dump)?)
    })
}

/// A [`Request`] as JSON in, its [`profile::Outcome`] as JSON out: one analysis per call.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_profileRequestJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    request: JString<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let request: Request = serde_json::from_str(&from_java(env, &request, "request")?)
            .map_err(|e| BridgeError::InvalidArgument(format!("malformed profile request: {e}")))?;
        json_to_java(env, &request.run()?)
    })
}

/// An [`ExportRequest`] as JSON in, the request body to send out.
#[no_mangle]
pub extern "system" fn Java_dev_nativemem_internal_NativeBridge_exportPayload<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    request: JString<'l>,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let request: ExportRequest = serde_json::from_str(&from_java(env, &request, "request")?)
            .map_err(|e| BridgeError::InvalidArgument(format!("malformed export request: {e}")))?;
        let body = request.render()?;
        Ok(env.byte_array_from_slice(&body)?.into_raw())
    })
}
