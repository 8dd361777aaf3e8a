//! JNI exports for heap profiles: `dev.nativemem.HeapProfile` and `ProfileRequest` through
//! `NativeBridge`.

use super::exports::{from_java, json_to_java};
use super::BridgeError;
use crate::profile::export::ExportRequest;
use crate::profile::{self, Request};
use jni::objects::JString;
use jni::sys::{jbyteArray, jstring};
use std::path::PathBuf;

export! {
    fn profileSummaryJson(env, dump: JString<'l>) -> jstring {
        let dump = PathBuf::from(from_java(env, &dump, "dump")?);
        json_to_java(env, &profile::summary(&dump)?)
    }
}

export! {
    /// A [`Request`] as JSON in, its [`profile::Outcome`] as JSON out: one analysis per call.
    fn profileRequestJson(env, request: JString<'l>) -> jstring {
        let request: Request = serde_json::from_str(&from_java(env, &request, "request")?)
            .map_err(|e| BridgeError::InvalidArgument(format!("malformed profile request: {e}")))?;
        json_to_java(env, &request.run()?)
    }
}

export! {
    /// An [`ExportRequest`] as JSON in, the request body to send out.
    fn exportPayload(env, request: JString<'l>) -> jbyteArray {
        let request: ExportRequest = serde_json::from_str(&from_java(env, &request, "request")?)
            .map_err(|e| BridgeError::InvalidArgument(format!("malformed export request: {e}")))?;
        let body = request.render()?;
        Ok(env.byte_array_from_slice(&body)?.into_raw())
    }
}
