//! Exports for `dev.nativemem.internal.DiagnosticCommands`: HotSpot's diagnostic commands run
//! in-process through the JVM's management interface (`crate::diagnostic_commands`).

use super::exports::to_java;
use super::BridgeError;
use crate::diagnostic_commands;
use jni::objects::JString;
use jni::sys::jstring;

export! {
    /// Why the diagnostic commands cannot run in this JVM, or null when they can.
    fn diagnosticCommandsAbsence(env) -> jstring {
        // SAFETY: the export's own JNIEnv, on its thread.
        match unsafe { diagnostic_commands::absence(env.get_raw()) } {
            None => Ok(std::ptr::null_mut()),
            Some(why) => to_java(env, &why.to_string()),
        }
    }
}

export! {
    /// The text of one `jcmd` command line, as `jcmd` prints it.
    fn diagnosticCommand(env, command: JString<'l>) -> jstring {
        if command.is_null() {
            return Err(BridgeError::InvalidArgument("command must not be null".into()));
        }
        // SAFETY: the export's own JNIEnv, on its thread; `command` is its live argument.
        let text = unsafe { diagnostic_commands::execute(env.get_raw(), command.as_raw())? };
        // A command the JVM refused left its exception pending, which the guard keeps.
        if text.is_null() || env.exception_check()? {
            return Err(BridgeError::InvalidArgument("the JVM refused the command".into()));
        }
        Ok(text)
    }
}
