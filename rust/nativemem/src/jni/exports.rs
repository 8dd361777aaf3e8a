//! The `native` methods of `dev.nativemem.internal.NativeBridge`, one function each.

use super::BridgeError;
use crate::allocator::{AllocatorError, ProcessAllocator};
use crate::files::{self, FileError, Purpose};
use jni::objects::{JByteArray, JString};
use jni::sys::{jboolean, jlong, jstring, JNI_FALSE, JNI_TRUE};
use jni::JNIEnv;
use std::path::PathBuf;

pub(super) fn to_java(env: &mut JNIEnv, text: &str) -> Result<jstring, BridgeError> {
    Ok(env.new_string(text)?.into_raw())
}

pub(super) fn from_java(
    env: &mut JNIEnv,
    value: &JString,
    what: &str,
) -> Result<String, BridgeError> {
    if value.is_null() {
        return Err(BridgeError::InvalidArgument(format!(
            "{what} must not be null"
        )));
    }
    Ok(env.get_string(value)?.into())
}

export! {
    fn version(env) -> jstring {
        to_java(env, crate::VERSION)
    }
}

export! {
    fn mallctlRead(env, key: JString<'l>) -> jlong {
        let key = from_java(env, &key, "mallctl key")?;
        crate::allocator::keys::check_plain_read(&key)?;
        let ctl = ProcessAllocator::get()
            .jemalloc()
            .ok_or_else(|| AllocatorError::NotJemalloc { key: key.clone() })?;
        Ok(ctl.read_integer(&key)?)
    }
}

export! {
    /// Writes a new file for the Java side (the agent's report) by the rules of [`crate::files`]:
    /// returns false, writing nothing, if `path` exists, so the caller can pick another name.
    fn writeNewFile(
        env,
        path: JString<'l>,
        contents: JByteArray<'l>,
        noun: JString<'l>,
        example: JString<'l>,
    ) -> jboolean {
        let path = PathBuf::from(from_java(env, &path, "path")?);
        let (noun, example) = (
            from_java(env, &noun, "noun")?,
            from_java(env, &example, "example")?,
        );
        if contents.is_null() {
            return Err(BridgeError::InvalidArgument(
                "contents must not be null".into(),
            ));
        }
        let bytes = env.convert_byte_array(&contents)?;
        let purpose = Purpose {
            noun: &noun,
            example: &example,
        };
        match files::write_new(&path, &bytes, purpose) {
            Ok(()) => Ok(JNI_TRUE),
            Err(FileError::Exists { .. }) => Ok(JNI_FALSE),
            Err(e) => Err(e.into()),
        }
    }
}
