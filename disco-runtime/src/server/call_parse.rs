//! A `tools/call` request parsed straight into rmcp's `CallToolRequest`.
//!
//! rmcp's `ClientJsonRpcMessage` is an untagged enum of untagged enums: serde buffers the
//! whole message, then tries each request type in turn, and every type whose method constant
//! refuses the method name builds a formatted error that is thrown away. For a `tools/call`
//! that is thirteen refusals before the type that matches, about a fifth of the instructions
//! of an exact call (BENCHMARKS.md, "Where the gateway's instructions go"). The message this
//! module builds is the one rmcp's parse builds; anything it does not accept (another method,
//! a shape it is unsure of) returns `None` and the caller takes rmcp's parse.

use std::sync::OnceLock;

use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage,
    ClientRequest, JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, RequestId,
};
use serde::Deserialize;

/// The message rmcp's `serde_json::from_slice::<ClientJsonRpcMessage>` would build from
/// `line`, if `line` is a `tools/call` request this parse accepts; `None` otherwise (then the
/// caller parses it with rmcp's type, which may still accept it).
pub(crate) fn tools_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    // The method appears verbatim in nearly every call; a line without it (another method,
    // or the name written with escapes) is left to rmcp's parse without trying this one.
    static NEEDLE: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    NEEDLE
        .get_or_init(|| memchr::memmem::Finder::new(b"\"tools/call\""))
        .find(line)?;
    // serde reads a derived struct from an array too, by position; rmcp's message is an object
    // only (a batch or a positional line is refused there).
    if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let CallLine {
        id,
        params: ObjectOnly(mut params),
        result,
        error,
        ..
    } = serde_json::from_slice(line).ok()?;
    // rmcp's message is a request only when `method` and `id` are present and `result` and
    // `error` are not (its `JsonRpcMessageShape`); with either, rmcp refuses the message.
    if result.0 || error.0 {
        return None;
    }
    // rmcp's `Request` reads `params._meta` into its extensions and the rest into the params,
    // whose own `meta` then stays empty.
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        id,
        ClientRequest::CallToolRequest(request),
    )))
}

/// The wire form of a `tools/call` request, each field read by rmcp's own type.
#[derive(Deserialize)]
struct CallLine {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(rename = "method")]
    _method: CallToolRequestMethod,
    params: ObjectOnly<CallToolRequestParams>,
    #[serde(default)]
    result: Present,
    #[serde(default)]
    error: Present,
}

/// A value read only from a JSON object: serde's derived structs also take an array, by
/// position, where rmcp's params (read through its flattened types) take objects only.
struct ObjectOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Object<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_map(Object(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

/// Whether a key was present, whatever its value (`null` included).
#[derive(Default)]
pub(crate) struct Present(pub(crate) bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer)?;
        Ok(Present(true))
    }
}

#[cfg(test)]
mod tests;
