//! The `.proto` files built into the compiler, served after the user's include path:
//! heapwire's own `heapwire/options.proto`, and protobuf's current
//! `google/protobuf/descriptor.proto` and feature protos (`vendor/protobuf/HEAPWIRE.md`),
//! which protox's well-known types lack or carry in an older version. The remaining
//! well-known types come from protox.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use protox::file::{ChainFileResolver, FileResolver, GoogleFileResolver, IncludeFileResolver};

use crate::objgraph::{OPTIONS_PROTO, OPTIONS_PROTO_NAME};

/// The name of protobuf's descriptor.proto, loaded before a schema's own files so that
/// options are interpreted against it.
pub const DESCRIPTOR_PROTO_NAME: &str = "google/protobuf/descriptor.proto";

/// (import name, source) of every built-in file.
pub const FILES: &[(&str, &str)] = &[
    (DESCRIPTOR_PROTO_NAME, include_str!("../../../vendor/protobuf/google/protobuf/descriptor.proto")),
    (
        "google/protobuf/cpp_features.proto",
        include_str!("../../../vendor/protobuf/google/protobuf/cpp_features.proto"),
    ),
    (
        "google/protobuf/java_features.proto",
        include_str!("../../../vendor/protobuf/google/protobuf/java_features.proto"),
    ),
    (
        "google/protobuf/go_features.proto",
        include_str!("../../../vendor/protobuf/google/protobuf/go_features.proto"),
    ),
    (OPTIONS_PROTO_NAME, OPTIONS_PROTO),
];

/// `google/protobuf/descriptor.proto` compiled (by protox, from [`FILES`], options
/// interpreted, no source info) as a one-file `FileDescriptorSet`: loaded before every
/// schema, it costs a decode (a fraction of a millisecond) rather than a compile (several).
/// Regenerate with `HEAPWIRE_REGEN=1 cargo test -p heapwire-schema --lib bundled`.
const DESCRIPTOR_PROTO_SET: &[u8] = include_bytes!("descriptor.proto.gen.binpb");

/// A protox file resolver serving [`FILES`].
pub(crate) struct Resolver;

impl FileResolver for Resolver {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == DESCRIPTOR_PROTO_NAME {
            // The set's one record: tag, length, then the FileDescriptorProto.
            let mut i = 1;
            while DESCRIPTOR_PROTO_SET.get(i).is_some_and(|b| b & 0x80 != 0) {
                i += 1;
            }
            return protox::file::File::decode_file_descriptor_proto(&DESCRIPTOR_PROTO_SET[i + 1..]).map_err(protox::Error::new);
        }
        match FILES.iter().find(|(n, _)| *n == name) {
            Some((n, src)) => protox::file::File::from_source(n, src),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// Serves the built-in descriptor.proto only.
struct BuiltinDescriptorProto;

impl FileResolver for BuiltinDescriptorProto {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match name {
            DESCRIPTOR_PROTO_NAME => Resolver.open_file(name),
            _ => Err(protox::Error::file_not_found(name)),
        }
    }
}

/// Wraps the resolver chain so that [`DESCRIPTOR_PROTO_NAME`], given as a path to
/// `protox::Compiler::open_file`, is looked up by name rather than as a path under an
/// include directory.
struct ByName<R>(R);

impl<R: FileResolver> FileResolver for ByName<R> {
    fn resolve_path(&self, path: &std::path::Path) -> Option<String> {
        if path == std::path::Path::new(DESCRIPTOR_PROTO_NAME) {
            return None;
        }
        self.0.resolve_path(path)
    }
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        self.0.open_file(name)
    }
}

/// `includes`, then the built-in files, then protox's well-known types.
fn chain(includes: &[PathBuf]) -> ChainFileResolver {
    let mut r = ChainFileResolver::new();
    for i in includes {
        r.add(IncludeFileResolver::new(i.clone()));
    }
    r.add(Resolver);
    r.add(GoogleFileResolver::new());
    r
}

/// Whether the files named `roots` import descriptor.proto, directly or not (imports
/// found through `r`; a file that does not parse imports nothing here, and compiling it
/// reports the error).
fn imports_descriptor_proto(r: &impl FileResolver, roots: &[String]) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut todo = roots.to_vec();
    while let Some(n) = todo.pop() {
        if n == DESCRIPTOR_PROTO_NAME {
            return true;
        }
        if seen.insert(n.clone()) {
            if let Ok(f) = r.open_file(&n) {
                todo.extend(f.file_descriptor_proto().dependency.iter().cloned());
            }
        }
    }
    false
}

/// A protox compiler for the files named `roots`, searching `includes`, then the built-in
/// files, then protox's well-known types, with descriptor.proto already in its pool when
/// `preload` (the descriptor library interprets options against the pool's
/// descriptor.proto, else its own older copy). As protoc: the include path's
/// descriptor.proto when the schema imports it, else the built-in one (a copy on the
/// include path the schema does not import changes nothing). Files are recorded in
/// `editions` as they are opened.
pub(crate) fn compiler(
    includes: &[PathBuf],
    roots: &[String],
    editions: Arc<Mutex<crate::features::Editions>>,
    preload: bool,
) -> Result<protox::Compiler, protox::Error> {
    let users_own = includes.iter().any(|i| i.join(DESCRIPTOR_PROTO_NAME).is_file())
        && imports_descriptor_proto(&chain(includes), roots);
    let mut r = ChainFileResolver::new();
    if !users_own {
        r.add(BuiltinDescriptorProto);
    }
    r.add(chain(includes));
    let r = crate::features::EditionRecorder { inner: ByName(r), seen: editions };
    let mut c = protox::Compiler::with_file_resolver(r);
    c.include_imports(true);
    if preload {
        c.open_file(DESCRIPTOR_PROTO_NAME)?;
    }
    Ok(c)
}

/// Whether compiling failed because a schema file declares what the preloaded
/// descriptor.proto does: the schema holds a copy of descriptor.proto under another name
/// (`heapwire compile .../google/protobuf/descriptor.proto` names it `descriptor.proto`).
/// Compiled without the preload, its own copy then serves, as with protoc.
pub(crate) fn clashes_with_preload(e: &protox::Error) -> bool {
    e.to_string().contains(&format!("already defined in file '{DESCRIPTOR_PROTO_NAME}'"))
}

/// A descriptor pool holding only the built-in descriptor.proto.
pub(crate) fn descriptor_proto_pool() -> Result<prost_reflect::DescriptorPool, crate::SchemaError> {
    prost_reflect::DescriptorPool::decode(DESCRIPTOR_PROTO_SET)
        .map_err(|e| crate::SchemaError::Invalid(format!("built-in {DESCRIPTOR_PROTO_NAME}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `DESCRIPTOR_PROTO_SET` must hold: the bundled source compiled by protox.
    fn compiled() -> Vec<u8> {
        struct Source;
        impl FileResolver for Source {
            fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
                match FILES.iter().find(|(n, _)| *n == name) {
                    Some((n, src)) => protox::file::File::from_source(n, src),
                    None => Err(protox::Error::file_not_found(name)),
                }
            }
        }
        let mut c = protox::Compiler::with_file_resolver(Source);
        c.include_source_info(false);
        c.open_file(DESCRIPTOR_PROTO_NAME).unwrap();
        c.encode_file_descriptor_set()
    }

    #[test]
    fn committed_descriptor_proto_set_is_fresh() {
        let want = compiled();
        if std::env::var_os("HEAPWIRE_REGEN").is_some() {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/descriptor.proto.gen.binpb");
            std::fs::write(p, &want).unwrap();
        }
        assert!(
            DESCRIPTOR_PROTO_SET == want.as_slice(),
            "crates/schema/src/descriptor.proto.gen.binpb is stale: regenerate it (see DESCRIPTOR_PROTO_SET)"
        );
    }

    #[test]
    fn built_in_descriptor_proto_has_edition_2024_features() {
        let pool = descriptor_proto_pool().unwrap();
        let fs = pool.get_message_by_name("google.protobuf.FeatureSet").unwrap();
        for f in ["enforce_naming_style", "default_symbol_visibility", "field_presence"] {
            assert!(fs.get_field_by_name(f).is_some(), "FeatureSet.{f}");
        }
        let f = Resolver.open_file(DESCRIPTOR_PROTO_NAME).unwrap();
        assert_eq!(f.name(), DESCRIPTOR_PROTO_NAME);
    }
}
