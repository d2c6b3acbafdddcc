//! Why a server could not start, or stopped: [`Error`].

use crate::catalog::CatalogError;

/// Why a server could not start, or stopped with an error. A plain error type: `?` turns it
/// into `Box<dyn std::error::Error>` (or `anyhow::Error`), and [`Error::catalog`] gives the
/// catalog's problems when that is what stopped the start.
///
/// ```
/// # use disco_runtime::server::Error;
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     # fn serve() -> Result<(), Error> { Ok(()) }
///     serve()?; // disco_runtime::server::Error into Box<dyn Error>
///     Ok(())
/// }
/// ```
///
/// Its `Debug` form is its `Display` form followed by its causes, so that a `main` returning
/// it prints a message to read.
#[non_exhaustive]
pub enum Error {
    /// The catalog could not be built: conflicting names, defaults that do not fit, state
    /// that was not registered (see [`CatalogError`]).
    Catalog(CatalogError),
    /// Binding or serving a socket, or reading and writing stdio.
    Io(std::io::Error),
    /// The MCP session failed: the client's initialization or the transport.
    Protocol(Box<dyn std::error::Error + Send + Sync + 'static>),
    /// [`ServerHandle::reload`](super::ServerHandle::reload) before a `serve_*` call built
    /// the server.
    NotRunning,
    /// [`Server::wrap`](super::Server::wrap) was given a handler that declares tools of its
    /// own (rmcp's `#[tool_handler]` does): one server answers `tools/list` with one catalog.
    HandlerHasTools {
        /// The handler's type.
        handler: &'static str,
    },
}

impl Error {
    /// The catalog's problems, when the catalog is what failed.
    pub fn catalog(&self) -> Option<&CatalogError> {
        match self {
            Error::Catalog(e) => Some(e),
            _ => None,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The catalog's own text starts with "the tool catalog has N problem(s):".
            Error::Catalog(e) => write!(f, "{e}"),
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Protocol(e) => write!(f, "MCP session failed: {e}"),
            Error::NotRunning => f.write_str("the server is not running yet"),
            Error::HandlerHasTools { handler } => write!(
                f,
                "`{handler}` declares tools of its own (its `get_info` has the tools \
                 capability, as rmcp's `#[tool_handler]` gives it): the wrapped server's tools \
                 are disco's catalog, so make them `#[mcp_tool]` functions or a `ToolProvider`, \
                 or forward the hooks to `Tools` by hand"
            ),
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        if let Error::Protocol(e) = self {
            let mut source = e.source();
            while let Some(s) = source {
                write!(f, ": {s}")?;
                source = s.source();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Catalog(e) => Some(e),
            Error::Io(e) => Some(e),
            Error::Protocol(e) => Some(&**e),
            Error::NotRunning | Error::HandlerHasTools { .. } => None,
        }
    }
}

impl From<CatalogError> for Error {
    fn from(e: CatalogError) -> Self {
        Error::Catalog(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<rmcp::service::ServerInitializeError> for Error {
    fn from(e: rmcp::service::ServerInitializeError) -> Self {
        Error::Protocol(Box::new(e))
    }
}

impl From<tokio::task::JoinError> for Error {
    fn from(e: tokio::task::JoinError) -> Self {
        Error::Protocol(Box::new(e))
    }
}
