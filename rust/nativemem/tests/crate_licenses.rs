//! The Rust crates compiled into the two shipped libraries (libnativemem.so and
//! libnativemem_jemalloc.so) and their licenses: the list the core jar carries as
//! META-INF/licenses/rust-crates.txt must be the one Cargo.lock gives today, and every license must
//! be in the allowed list below.
//!
//! Regenerate the list after a dependency change:
//!   NATIVEMEM_UPDATE_CRATE_LIST=1 cargo test -p nativemem --test crate_licenses

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates whose cdylibs the jar ships.
const SHIPPED: [&str; 2] = ["nativemem", "nativemem-jemalloc"];
/// The platform the jar's libraries are built for (`native.platform` linux-x86_64 in the POM).
const TARGET: &str = "x86_64-unknown-linux-gnu";
/// Permissive licenses whose terms a binary distribution meets by carrying the notices, and
/// CDDL-1.0 (inferno, the flame graph writer): weak, file-level copyleft, which a binary
/// distribution meets by naming it and where its source is (the core jar's NOTICE does).
const ALLOWED: [&str; 13] = [
    "Apache-2.0",
    "MIT",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "Zlib",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "BSL-1.0",
    "CC0-1.0",
    "Unlicense",
    "0BSD",
    "CDDL-1.0",
];
/// Exceptions that only widen what a license allows.
const ALLOWED_EXCEPTIONS: [&str; 1] = ["LLVM-exception"];

const LIST: &str = "../../java/nativemem/src/main/resources/META-INF/licenses/rust-crates.txt";

struct Crate {
    name: String,
    version: String,
    license: Option<String>,
    repository: String,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace_root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
            TARGET,
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// Third-party crates linked into the shipped libraries: normal dependencies, followed from the
/// shipped crates, without proc macros (they run in the compiler and are not linked) and without
/// build or dev dependencies.
fn shipped_crates(meta: &Value) -> Vec<Crate> {
    let packages: BTreeMap<&str, &Value> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p))
        .collect();
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let is_proc_macro = |p: &Value| {
        p["targets"].as_array().unwrap().iter().any(|t| {
            t["kind"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k == "proc-macro")
        })
    };
    let mut queue: VecDeque<&str> = packages
        .iter()
        .filter(|(_, p)| p["source"].is_null() && SHIPPED.contains(&p["name"].as_str().unwrap()))
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(
        queue.len(),
        SHIPPED.len(),
        "both shipped crates are in the workspace"
    );
    let mut seen: BTreeSet<&str> = queue.iter().copied().collect();
    while let Some(id) = queue.pop_front() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null());
            let pkg = dep["pkg"].as_str().unwrap();
            if normal && !is_proc_macro(packages[pkg]) && seen.insert(pkg) {
                queue.push_back(pkg);
            }
        }
    }
    let mut crates: Vec<Crate> = seen
        .iter()
        .map(|id| packages[id])
        .filter(|p| !p["source"].is_null()) // our own workspace crates are Apache-2.0, as LICENSE
        .map(|p| Crate {
            name: p["name"].as_str().unwrap().to_owned(),
            version: p["version"].as_str().unwrap().to_owned(),
            license: p["license"].as_str().map(str::to_owned),
            repository: p["repository"].as_str().unwrap_or("").to_owned(),
        })
        .collect();
    crates.sort_by(|a, b| (&a.name, &a.version).cmp(&(&b.name, &b.version)));
    crates
}

fn render(crates: &[Crate]) -> String {
    let mut text = String::from(
        "# Rust crates compiled into libnativemem.so and libnativemem_jemalloc.so, for\n\
         # x86_64-unknown-linux-gnu: name, version, SPDX license expression, source repository.\n\
         # Generated from Cargo.lock by rust/nativemem/tests/crate_licenses.rs; do not edit.\n\
         # Each crate's full license text is in its source package on crates.io.\n",
    );
    for c in crates {
        text.push_str(&format!(
            "{} {} {} {}\n",
            c.name,
            c.version,
            c.license.as_deref().unwrap_or("(none)"),
            c.repository
        ));
    }
    text
}

/// Whether an SPDX expression (OR, AND, WITH, parentheses) is satisfiable with allowed licenses.
fn allowed(expression: &str) -> Result<bool, String> {
    let spaced = expression.replace('(', " ( ").replace(')', " ) ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut pos = 0;
    let value = or_expr(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("unexpected '{}' in '{expression}'", tokens[pos]));
    }
    Ok(value)
}

fn or_expr(t: &[&str], pos: &mut usize) -> Result<bool, String> {
    let mut value = and_expr(t, pos)?;
    while t.get(*pos) == Some(&"OR") {
        *pos += 1;
        value |= and_expr(t, pos)?;
    }
    Ok(value)
}

fn and_expr(t: &[&str], pos: &mut usize) -> Result<bool, String> {
    let mut value = term(t, pos)?;
    while t.get(*pos) == Some(&"AND") {
        *pos += 1;
        value &= term(t, pos)?;
    }
    Ok(value)
}

fn term(t: &[&str], pos: &mut usize) -> Result<bool, String> {
    let token = *t.get(*pos).ok_or("expression ends early")?;
    *pos += 1;
    let mut value = if token == "(" {
        let inner = or_expr(t, pos)?;
        if t.get(*pos) != Some(&")") {
            return Err("unbalanced parenthesis".into());
        }
        *pos += 1;
        inner
    } else {
        // `/` is the old crates.io spelling of OR.
        token
            .split('/')
            .any(|id| ALLOWED.contains(&id.trim_end_matches('+')))
    };
    if t.get(*pos) == Some(&"WITH") {
        let exception = *t.get(*pos + 1).ok_or("WITH without an exception")?;
        *pos += 2;
        value &= ALLOWED_EXCEPTIONS.contains(&exception);
    }
    Ok(value)
}

#[test]
fn shipped_crates_have_allowed_licenses_and_the_jar_lists_them() {
    let crates = shipped_crates(&metadata());
    assert!(
        crates.iter().any(|c| c.name == "tikv-jemalloc-sys")
            && crates.iter().any(|c| c.name == "jni"),
        "the walk reaches the crates both libraries link"
    );
    let refused: Vec<String> = crates
        .iter()
        .filter(|c| {
            !c.license
                .as_deref()
                .map(allowed)
                .unwrap_or(Ok(false))
                .unwrap_or(false)
        })
        .map(|c| {
            format!(
                "{} {}: {}",
                c.name,
                c.version,
                c.license.as_deref().unwrap_or("no license expression")
            )
        })
        .collect();
    assert!(
        refused.is_empty(),
        "crates linked into the shipped libraries under a license outside the allowed list \
         ({ALLOWED:?}): {refused:?}. Replace the crate, or review the license and add it to \
         ALLOWED in {}",
        file!()
    );

    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join(LIST);
    let expected = render(&crates);
    if std::env::var_os("NATIVEMEM_UPDATE_CRATE_LIST").is_some() {
        std::fs::write(&list, &expected).expect("write the crate list");
    }
    let committed = std::fs::read_to_string(&list).unwrap_or_default();
    assert!(
        committed == expected,
        "{} is not the list Cargo.lock gives; regenerate it with \
         NATIVEMEM_UPDATE_CRATE_LIST=1 cargo test -p nativemem --test crate_licenses",
        list.display()
    );
}

#[test]
fn license_expressions_are_evaluated_as_spdx() {
    assert_eq!(allowed("MIT OR Apache-2.0"), Ok(true));
    assert_eq!(allowed("MIT/Apache-2.0"), Ok(true));
    assert_eq!(
        allowed("Apache-2.0 WITH LLVM-exception OR Apache-2.0 OR MIT"),
        Ok(true)
    );
    assert_eq!(allowed("(MIT OR Apache-2.0) AND Unicode-3.0"), Ok(true));
    assert_eq!(allowed("GPL-3.0-only"), Ok(false));
    assert_eq!(allowed("MIT AND GPL-2.0-only"), Ok(false));
    assert_eq!(allowed("GPL-2.0-only OR MIT"), Ok(true));
    assert_eq!(allowed("GPL-2.0-only WITH LLVM-exception"), Ok(false));
    assert_eq!(allowed("MIT WITH Some-exception"), Ok(false));
    assert!(allowed("(MIT").is_err());
}
